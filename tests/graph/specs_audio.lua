-- tests/graph/specs_audio.lua -- gradcheck cases for the audio filter ops
-- (lfilter in its three modes, forward and reversed, and its coefficient
-- correlation lfilter_corr; see test_gradcheck.lua). The a coefficients
-- are kept stable (a0 away from 0, small feedback) so the finite
-- differences stay well conditioned.
local G = require "gradlib"
local R = G.R
local Fi = require "torch.audio._filter"

-- a [C, K] with a0 = 2 and feedback taps of 0.2 times normal draws
local function stable(C, K)
  local a = torch.randn(C, K, {dtype = torch.float64}) * 0.2
  a:select(2, 1):fill_(2.0)
  return a:requires_grad_(true)
end

return {
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
