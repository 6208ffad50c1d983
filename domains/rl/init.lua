-- torch.rl: reinforcement learning on TorchRL's names and defaults --
-- TensorDict, environments stepped in C (envs), collectors, replay buffers
-- (data), modules and objectives. Submodules load on first use;
-- torch.rl.TensorDict is a field, as tensordict's import is.
local R = require("torch")._package("torch.rl")
local mt = getmetatable(R)
local load_sub = mt.__index
mt.__index = function(t, k)
  if k == "TensorDict" then
    local v = require("torch.rl.tensordict").TensorDict
    rawset(t, k, v)
    return v
  end
  return load_sub(t, k)
end
return R
