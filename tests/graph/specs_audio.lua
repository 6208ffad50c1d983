-- tests/graph/specs_audio.lua -- gradcheck cases of the audio ops
-- (graph/audio.c; see test_gradcheck.lua): audio_resample (torchaudio's
-- sinc filter, padded as resample pads it, and unpadded as the streaming
-- Resampler runs it) and its adjoint; lfilter in its three modes, forward
-- and reversed, and its coefficient correlation lfilter_corr. The a
-- coefficients are kept stable (a0 away from 0, small feedback) so the
-- finite differences stay well conditioned.
local G = require "gradlib"
local R = G.R
local Fi = require "torch.audio._filter"
local Rs = require "torch.audio._resample"

-- a [C, K] with a0 = 2 and feedback taps of 0.2 times normal draws
local function stable(C, K)
  local a = torch.randn(C, K, {dtype = torch.float64}) * 0.2
  a:select(2, 1):fill_(2.0)
  return a:requires_grad_(true)
end

local function x64(...) return torch.randn({...}, {dtype = torch.float64}):requires_grad_() end

return {
  audio_resample = {
    {fn = function(x) return Rs.audio_resample(x, 3, 1, 6, "sinc_interp_hann", 19, 10, 0.99, 0, false) end,
     inputs = function() return {x64(2, 30)} end, second_order = true},
    {fn = function(x) return Rs.audio_resample(x, 147, 160, 6, "sinc_interp_kaiser", 7, 30, 0.99, 14.77, false) end,
     inputs = function() return {x64(1, 2, 27)} end, second_order = true},
    {fn = function(x) return Rs.audio_resample(x, 2, 5, 4, "sinc_interp_hann", 0, 20, 0.9, 0, true) end,
     inputs = function() return {x64(3, 17)} end},
  },
  audio_resample_backward = {
    {fn = function(g) return Rs.audio_resample_backward(g, 3, 1, 6, "sinc_interp_hann", 19, 10, 0.99, 0, false, 30) end,
     inputs = function() return {x64(2, 10)} end, second_order = true},
    {fn = function(g) return Rs.audio_resample_backward(g, 160, 441, 6, "sinc_interp_kaiser", 7, 40, 0.99, 8, false, 15) end,
     inputs = function() return {x64(2, 40)} end},
  },
  lfilter = {
    {fn = function(x, a, b) return Fi.lfilter(x, a, b) end, inputs = function() return {R(2, 3, 9), stable(3, 3), R(3, 3)} end,
     second_order = true},
    {fn = function(x, a, b) return Fi.lfilter(x, a, b, nil, 0, true) end,
     inputs = function() return {R(1, 2, 7), stable(2, 4), R(2, 4)} end},
    {fn = function(x, a, b) return Fi.lfilter(x, a, b, nil, 1, false) end,
     inputs = function() return {R(2, 1, 8), stable(1, 3), R(1, 3)} end, second_order = true},
    {fn = function(x, a, b) return Fi.lfilter(x, a, b, nil, 2, true) end,
     inputs = function() return {R(2, 2, 6), stable(2, 2), R(2, 2)} end},
  },
  lfilter_corr = {
    {fn = function(w, x) return Fi.lfilter_corr(w, x, 3) end, inputs = function() return {R(2, 3, 7), R(2, 3, 7)} end,
     second_order = true},
    {fn = function(w, x) return Fi.lfilter_corr(w, x, 4, true) end, inputs = function() return {R(1, 2, 6), R(1, 2, 6)} end},
  },
}
