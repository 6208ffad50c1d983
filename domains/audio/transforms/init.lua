-- torch.audio.transforms -- torchaudio.transforms' modules (nn.Module
-- subclasses: m(x) calls m:forward(x)), with torchaudio's names and
-- defaults. The families live in the files named below; this table gathers
-- them (a name defined twice is an error).
local T = {}

local FAMILIES = {
  "_mel",
  "_spectral",
  "_resampling",
  "_filtering", "_misc",
  "_loudness", "_cmn", "_vad", "_beamforming",
}

for _, family in ipairs(FAMILIES) do
  for name, v in pairs(require("torch.audio.transforms." .. family)) do
    if T[name] ~= nil then error("torch.audio.transforms: " .. name .. " defined twice") end
    T[name] = v
  end
end

return T
