-- specs_audio.lua -- gradcheck cases of the audio ops (graph/audio.c):
-- audio_resample (torchaudio's sinc filter, padded as resample pads it,
-- and unpadded as the streaming Resampler runs it) and its adjoint.
local R = require "torch.audio._resample"

local function x64(...) return torch.randn({...}, {dtype = torch.float64}):requires_grad_() end

return {
  audio_resample = {
    {fn = function(x) return R.audio_resample(x, 3, 1, 6, "sinc_interp_hann", 19, 10, 0.99, 0, false) end,
     inputs = function() return {x64(2, 30)} end, second_order = true},
    {fn = function(x) return R.audio_resample(x, 147, 160, 6, "sinc_interp_kaiser", 7, 30, 0.99, 14.77, false) end,
     inputs = function() return {x64(1, 2, 27)} end, second_order = true},
    {fn = function(x) return R.audio_resample(x, 2, 5, 4, "sinc_interp_hann", 0, 20, 0.9, 0, true) end,
     inputs = function() return {x64(3, 17)} end},
  },
  audio_resample_backward = {
    {fn = function(g) return R.audio_resample_backward(g, 3, 1, 6, "sinc_interp_hann", 19, 10, 0.99, 0, false, 30) end,
     inputs = function() return {x64(2, 10)} end, second_order = true},
    {fn = function(g) return R.audio_resample_backward(g, 160, 441, 6, "sinc_interp_kaiser", 7, 40, 0.99, 8, false, 15) end,
     inputs = function() return {x64(2, 40)} end},
  },
}
