-- tests/graph/specs_views.lua -- gradcheck cases for views (see
-- test_gradcheck.lua); slicing goes through x[{...}] as users write it.
local G = require "gradlib"
local R, NC = G.R, G.NC

return {
  view = {
    {fn = function(x) return x:view(6, 2) * 1 end, inputs = function() return {R(3, 4)} end, second_order = true},
  },
  reshape = {
    {fn = function(x) return x:reshape(2, 6) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:reshape(12) end, inputs = function() return {NC(3, 4)} end}, -- copies
    {fn = function(x) return x:flatten() end, inputs = function() return {R(2, 3, 2)} end},
  },
  permute = {
    {fn = function(x) return x:permute(3, 1, 2) end, inputs = function() return {R(2, 3, 4)} end, second_order = true},
    {fn = function(x) return x:t() end, inputs = function() return {R(2, 3)} end},
    {fn = function(x) return x:transpose(1, 3) end, inputs = function() return {R(2, 3, 4)} end},
  },
  expand = {
    {fn = function(x) return x:expand(3, 4) end, inputs = function() return {R(3, 1)} end, second_order = true},
    {fn = function(x) return x:expand(2, 3, 4) end, inputs = function() return {R(4)} end},
  },
  squeeze = {
    {fn = function(x) return x:squeeze() end, inputs = function() return {R(3, 1, 2)} end, second_order = true},
    {fn = function(x) return x:squeeze(2) end, inputs = function() return {R(3, 1, 2)} end},
  },
  unsqueeze = {
    {fn = function(x) return x:unsqueeze(2) end, inputs = function() return {R(3, 2)} end, second_order = true},
  },
  slice = {
    {fn = function(x) return x[{{2, 3}, {1, -1, 2}}] end, inputs = function() return {R(4, 5)} end, second_order = true},
    {fn = function(x) return x:narrow(2, 2, 2) end, inputs = function() return {NC(3, 4)} end},
  },
  select = {
    {fn = function(x) return x[2] end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x[{{}, -1}] end, inputs = function() return {R(3, 4)} end},
  },
  unfold = {
    {fn = function(x) return x:unfold(2, 3, 1) end, inputs = function() return {R(2, 6)} end, second_order = true},
    {fn = function(x) return x:unfold(1, 2, 2) end, inputs = function() return {R(5, 2)} end},
  },
  diagonal = {
    {fn = function(x) return x:diagonal() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:diagonal(1, 2, 3) end, inputs = function() return {R(2, 3, 4)} end},
  },
  contiguous = {
    {fn = function(x) return x:contiguous() end, inputs = function() return {NC(3, 4)} end},
  },
}
