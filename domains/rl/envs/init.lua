-- torch.rl.envs -- environments stepped in C, on TorchRL's and
-- Gymnasium's names. The families live in the files named below; this
-- table gathers them (a name defined twice is an error).
local T = {}

local FAMILIES = {
  "_mujoco",
}

for _, family in ipairs(FAMILIES) do
  for name, v in pairs(require("torch.rl.envs." .. family)) do
    if T[name] ~= nil then error("torch.rl.envs: " .. name .. " defined twice") end
    T[name] = v
  end
end

return T
