-- torch.audio.functional -- torchaudio.functional's ops as functions on
-- tensors [..., time] (or spectrograms [..., freq, time]), batched over the
-- leading dims. The families live in the files named below; this table
-- gathers them (a name defined twice is an error).
local F = {}

local FAMILIES = {
  "_mel",
  "_spectral",
  "_resampling",
  "_filtering", "_effects", "_masking", "_convolve",
  "_pitch", "_loudness", "_cmn", "_dither", "_effects_mod", "_vad", "_edit_distance", "_beamforming",
}

for _, family in ipairs(FAMILIES) do
  for name, v in pairs(require("torch.audio.functional." .. family)) do
    if F[name] ~= nil then error("torch.audio.functional: " .. name .. " defined twice") end
    F[name] = v
  end
end

return F
