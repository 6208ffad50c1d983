-- tests/graph/specs_fft.lua -- gradcheck cases for the transforms
-- (fft_c2c, fft_r2c, fft_c2r on real views [..., 2]; see test_gradcheck.lua):
-- odd and even sizes, every norm, one and several dims, second order.
local G = require "gradlib"
local R = G.R
local C = torch._fft

return {
  fft_c2c = {
    {fn = function(x) return C.fft_c2c(x, 1, true, 0) end, inputs = function() return {R(7, 2)} end, second_order = true},
    {fn = function(x) return C.fft_c2c(x, 3, false, 1) end, inputs = function() return {R(3, 4, 2)} end},
    {fn = function(x) return C.fft_c2c(x, 2, false, 2) end, inputs = function() return {R(2, 5, 2)} end},
  },
  fft_r2c = {
    {fn = function(x) return C.fft_r2c(x, 1, 0) end, inputs = function() return {R(8)} end, second_order = true},
    {fn = function(x) return C.fft_r2c(x, 1, 1) end, inputs = function() return {R(7)} end},
    {fn = function(x) return C.fft_r2c(x, 3, 2) end, inputs = function() return {R(3, 6)} end},
    {fn = function(x) return C.fft_r2c(x, 2, 0) end, inputs = function() return {R(3, 5)} end},
    {fn = function(x) return C.fft_r2c(x, 1, 0, true) end, inputs = function() return {R(7)} end, second_order = true},
    {fn = function(x) return C.fft_r2c(x, 3, 1, true) end, inputs = function() return {R(4, 5)} end},
  },
  fft_c2r = {
    {fn = function(x) return C.fft_c2r(x, 1, 8, 2) end, inputs = function() return {R(5, 2)} end, second_order = true},
    {fn = function(x) return C.fft_c2r(x, 1, 9, 0) end, inputs = function() return {R(5, 2)} end},
    {fn = function(x) return C.fft_c2r(x, 3, 6, 1) end, inputs = function() return {R(3, 4, 2)} end},
    {fn = function(x) return C.fft_c2r(x, 2, 5, 0) end, inputs = function() return {R(2, 3, 2)} end},
  },
}
