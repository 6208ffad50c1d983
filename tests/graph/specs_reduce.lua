-- tests/graph/specs_reduce.lua -- gradcheck cases for reductions, scans,
-- sorting and softmax (see test_gradcheck.lua).
local G = require "gradlib"
local R, NC = G.R, G.NC

return {
  sum = {
    {fn = function(x) return x:sum() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:sum(2) end, inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:sum({1, 3}, {keepdim = true}) end, inputs = function() return {R(2, 3, 4)} end},
  },
  mean = {
    {fn = function(x) return x:mean() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:mean(1, {keepdim = true}) end, inputs = function() return {R(3, 4)} end},
  },
  softmax = {
    {fn = function(x) return x:softmax(2) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.softmax(x, 1) end, inputs = function() return {NC(3, 4)} end},
  },
  log_softmax = {
    {fn = function(x) return x:log_softmax(2) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.log_softmax(x, 1) end, inputs = function() return {NC(3, 4)} end},
  },
}
