-- tests/graph/specs_linalg.lua -- gradcheck cases for matrix products and
-- torch.linalg (see test_gradcheck.lua).
local G = require "gradlib"
local R, NC = G.R, G.NC

return {
  matmul = {
    {fn = function(a, b) return a:matmul(b) end, inputs = function() return {R(2, 3), R(3, 4)} end, second_order = true},
    {fn = function(a, b) return a:matmul(b) end, inputs = function() return {R(3), R(3, 2)} end, second_order = true},
    {fn = function(a, b) return a:matmul(b) end, inputs = function() return {R(2, 3), R(3)} end},
    {fn = function(a, b) return a:matmul(b) end, inputs = function() return {R(3), R(3)} end},
    {fn = function(a, b) return a:matmul(b) end, inputs = function() return {R(2, 2, 3), R(3, 2)} end, second_order = true},
    {fn = function(a, b) return a:matmul(b) end, inputs = function() return {NC(2, 3), R(1, 3, 2)} end},
  },
}
