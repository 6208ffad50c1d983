-- tests/graph/specs_movement.lua -- gradcheck cases for the movement ops that
-- copy (see test_gradcheck.lua). The composites built on them are checked
-- under the op they record: hstack/vstack/dstack under cat, rot90/fliplr
-- under flip, tile under repeat; in-place tril_/triu_ under tril/triu.
local G = require "gradlib"
local R, NC = G.R, G.NC

local f64 = {dtype = torch.float64}

return {
  cat = {
    {fn = function(a, b) return torch.cat({a, b}, 2) end, inputs = function() return {R(2, 3), R(2, 2)} end,
     second_order = true},
    {fn = function(a, b) return torch.cat({a, b, a}) end, inputs = function() return {NC(2, 3), R(1, 3)} end},
    {fn = function(a, b) return torch.cat({a, b}, -1) end, inputs = function() return {R(2, 1, 2), R(2, 1, 3)} end},
    -- 1-D empty tensors are skipped, as in PyTorch
    {fn = function(a, b) return torch.cat({a, torch.zeros(0, f64), b}) end,
     inputs = function() return {R(2, 3), R(1, 3)} end},
    {fn = function(a, b) return torch.cat{a, b, dim = 1} end, inputs = function() return {R(3), R(0)} end},
    {fn = function(a, b) return torch.hstack({a, b}) end, inputs = function() return {R(3), R(2)} end},
    {fn = function(a, b) return torch.hstack({a, b}) end, inputs = function() return {R(2, 2), NC(2, 3)} end},
    {fn = function(a, b) return torch.vstack({a, b}) end, inputs = function() return {R(3), R(2, 3)} end},
    {fn = function(a, b) return torch.dstack({a, b}) end, inputs = function() return {R(2, 3), R(2, 3, 2)} end},
  },
  stack = {
    {fn = function(a, b) return torch.stack({a, b}) end, inputs = function() return {R(2, 3), R(2, 3)} end,
     second_order = true},
    {fn = function(a, b) return torch.stack({a, b, a}, 3) end, inputs = function() return {NC(2, 3), R(2, 3)} end},
    {fn = function(a, b) return torch.stack({a, b}, -2) end, inputs = function() return {R(3), R(3)} end},
  },
  flip = {
    {fn = function(x) return x:flip({1, 3}) end, inputs = function() return {R(2, 3, 4)} end, second_order = true},
    {fn = function(x) return torch.flip(x, 2) end, inputs = function() return {NC(3, 4)} end},
    {fn = function(x) return x:fliplr() end, inputs = function() return {R(2, 3)} end},
    {fn = function(x) return x:flipud() end, inputs = function() return {NC(3, 2)} end},
    {fn = function(x) return x:rot90() end, inputs = function() return {R(3, 4)} end},
    {fn = function(x) return x:rot90(2, {2, 3}) end, inputs = function() return {R(2, 3, 4)} end},
    {fn = function(x) return x:rot90(-1) end, inputs = function() return {NC(2, 3)} end},
    {fn = function(x) return torch.rot90(x, 4) end, inputs = function() return {R(2, 3)} end},
  },
  roll = {
    {fn = function(x) return x:roll(1, 2) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:roll({1, -2}, {1, 2}) end, inputs = function() return {NC(3, 4)} end},
    {fn = function(x) return x:roll(5) end, inputs = function() return {R(3, 4)} end}, -- flattened
    {fn = function(x) return x:roll({2, 3}, {2, 2}) end, inputs = function() return {R(2, 4)} end},
  },
  tril = {
    {fn = function(x) return x:tril() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.tril(x, -1) end, inputs = function() return {R(2, 3, 4)} end},
    {fn = function(x) return x:tril{diagonal = 1} end, inputs = function() return {NC(4, 3)} end},
    {fn = function(x) return (x * 2):tril_() end, inputs = function() return {R(3, 3)} end},
    {fn = function(x)
      local y = x * 1
      y[{{2, 3}}]:tril_(1) -- in place on a view: CopySlices
      return y
    end, inputs = function() return {R(3, 4)} end},
  },
  triu = {
    {fn = function(x) return x:triu() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.triu(x, 2) end, inputs = function() return {NC(2, 4, 3)} end},
    {fn = function(x) return (x + 0):triu_(-1) end, inputs = function() return {R(4, 3)} end},
  },
  diag = {
    {fn = function(x) return x:diag() end, inputs = function() return {R(3)} end, second_order = true},
    {fn = function(x) return torch.diag(x, -2) end, inputs = function() return {R(3)} end},
    {fn = function(x) return x:diag() end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return x:diag(1) end, inputs = function() return {NC(4, 3)} end},
    {fn = function(x) return x:diag{diagonal = -1} end, inputs = function() return {R(3, 3)} end},
  },
  diag_embed = {
    {fn = function(x) return x:diag_embed() end, inputs = function() return {R(2, 3)} end, second_order = true},
    {fn = function(x) return torch.diag_embed(x, 1, 1, 3) end, inputs = function() return {R(2, 3)} end},
    {fn = function(x) return x:diag_embed{offset = -1, dim1 = 3, dim2 = 1} end, inputs = function() return {NC(2, 3)} end},
  },
  ["repeat"] = {
    {fn = function(x) return x["repeat"](x, 2, 3) end, inputs = function() return {R(2, 3)} end, second_order = true},
    {fn = function(x) return x["repeat"](x, 2, 1, 2) end, inputs = function() return {NC(2, 3)} end}, -- new lead dim
    {fn = function(x) return x["repeat"](x, 0, 2) end, inputs = function() return {R(2, 3)} end},
    {fn = function(x) return x:tile(2) end, inputs = function() return {R(2, 3)} end}, -- numpy rule: pads with 1s
    {fn = function(x) return torch.tile(x, {3, 2}) end, inputs = function() return {R(2)} end},
    {fn = function(x) return x["repeat"](x, 1, 1, 1, 1, 1, 1, 2, 3) end, -- rank 8: summed block by block
     inputs = function() return {R(1, 1, 1, 1, 1, 1, 1, 2)} end},
  },
}
