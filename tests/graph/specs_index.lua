-- tests/graph/specs_index.lua -- gradcheck cases for the index ops (see
-- test_gradcheck.lua): gradients with respect to the data and to src /
-- values; index tensors and masks are constants. Repeated indices appear
-- wherever the op accumulates (index_add, put and index_put with
-- accumulate, take, gather, index_select, scatter_add); ops that overwrite
-- (scatter, index_copy, put) get distinct positions, where the result does
-- not depend on the order of the writes. Functional forms are a recorded
-- clone plus the in-place op, so they check both.
local G = require "gradlib"
local R, NC = G.R, G.NC

local function I(t) return torch.tensor(t) end -- int64 index tensor (1-based)
local function B(t) return torch.tensor(t, {dtype = torch.bool}) end

return {
  index = {
    {fn = function(x) return x[I{1, 3, 1}] end, inputs = function() return {R(4, 3)} end, second_order = true},
    {fn = function(x) return x[{{}, I{2, -1, 2}}] end, inputs = function() return {NC(3, 4)} end},
    {fn = function(x) return x[{I{{1}, {2}}, I{3, 1}}] end, inputs = function() return {R(3, 4)} end}, -- broadcast
    {fn = function(x) return x[{I{1, 2}, {}, I{4, 1}}] end, inputs = function() return {R(2, 3, 4)} end}, -- apart
    {fn = function(x) return x[B{true, false, true}] end, inputs = function() return {R(3, 4)} end}, -- leading mask
    {fn = function(x) return x[{2, I{1, 1}}] end, inputs = function() return {R(3, 4)} end},
  },
  index_put = {
    {fn = function(x, v) return torch.index_put(x, {I{1, 3}}, v) end, inputs = function() return {R(4, 3), R(2, 3)} end,
     second_order = true},
    {fn = function(x, v) return x:index_put({I{1, 3, 1}}, v, true) end, -- accumulate with a repeated index
     inputs = function() return {R(4, 3), R(3, 3)} end},
    {fn = function(x, v) return x:index_put({I{2, 1}, I{3, 3}}, v, {accumulate = true}) end, -- broadcast values
     inputs = function() return {NC(3, 4), R(1)} end},
    {fn = function(x, v)
      local y = x * 1
      y[I{2, 4}] = v -- assignment through an index tensor on a non-leaf
      return y
    end, inputs = function() return {R(4, 2), R(2)} end},
    {fn = function(x, v)
      local y = x * 1
      y[B{{true, false}, {false, true}, {true, true}}] = v -- a same-shape mask
      return y
    end, inputs = function() return {R(3, 2), R(4)} end},
  },
  index_select = {
    {fn = function(x) return x:index_select(1, I{3, 1, 3}) end, inputs = function() return {R(4, 3)} end,
     second_order = true},
    {fn = function(x) return torch.index_select(x, 2, I{2, 2, 1}) end, inputs = function() return {NC(3, 4)} end},
    {fn = function(x) return x:index_select(-1, I{1}) end, inputs = function() return {R(2, 3, 2)} end},
  },
  gather = {
    {fn = function(x) return x:gather(2, I{{1, 1, 4}, {2, 3, 2}, {4, 4, 1}}) end, inputs = function() return {R(3, 4)} end,
     second_order = true},
    {fn = function(x) return torch.gather(x, 1, I{{2, 1}, {2, 2}}) end, inputs = function() return {NC(3, 4)} end},
  },
  take = {
    {fn = function(x) return x:take(I{{1, 12}, {-1, 5}}) end, inputs = function() return {R(3, 4)} end,
     second_order = true},
    {fn = function(x) return torch.take(x, I{2, 2, 6}) end, inputs = function() return {NC(2, 3)} end},
  },
  scatter = {
    {fn = function(x, s) return x:scatter(2, I{{3, 1}, {2, 4}, {1, 2}}, s) end,
     inputs = function() return {R(3, 4), R(3, 2)} end, second_order = true},
    {fn = function(x, s) return torch.scatter(x, 1, I{{2, 1, 3}}, s) end, -- src larger than index
     inputs = function() return {R(3, 3), NC(2, 4)} end},
    {fn = function(x) return x:scatter(2, I{{2}, {1}}, 1.5) end, inputs = function() return {R(2, 3)} end},
    {fn = function(x, s) return x:scatter(2, I{{1, 1, 2}}, s, {reduce = "add"}) end,
     inputs = function() return {R(2, 3), R(1, 3)} end},
    {fn = function(x, s)
      local y = x * 1
      y:scatter_(1, I{{2, 1}}, s)
      return y
    end, inputs = function() return {R(2, 2), R(1, 2)} end},
  },
  scatter_add = {
    {fn = function(x, s) return x:scatter_add(2, I{{1, 1, 4}, {2, 2, 2}}, s) end,
     inputs = function() return {R(2, 4), R(2, 3)} end, second_order = true},
    {fn = function(x, s) return torch.scatter_add(x, 1, I{{3, 3}, {1, 3}}, s) end, -- src larger than index
     inputs = function() return {NC(3, 2), R(3, 3)} end},
    {fn = function(x, s)
      local y = x * 1
      y:scatter_add_(1, I{{2, 2, 1}}, s)
      return y
    end, inputs = function() return {R(2, 3), R(1, 3)} end},
  },
  index_add = {
    {fn = function(x, s) return x:index_add(1, I{1, 3, 1}, s) end, inputs = function() return {R(4, 3), R(3, 3)} end,
     second_order = true},
    {fn = function(x, s) return torch.index_add(x, 2, I{2, 2}, s, {alpha = -2.5}) end,
     inputs = function() return {NC(3, 4), R(3, 2)} end},
    {fn = function(x, s)
      local y = x * 1
      y:index_add_(2, I{3, 1}, s, 2)
      return y
    end, inputs = function() return {R(2, 3), R(2, 2)} end},
  },
  index_copy = {
    {fn = function(x, s) return x:index_copy(1, I{3, 1}, s) end, inputs = function() return {R(4, 3), R(2, 3)} end,
     second_order = true},
    {fn = function(x, s) return torch.index_copy(x, 2, I{4, 2, 1}, s) end,
     inputs = function() return {NC(2, 4), R(2, 3)} end},
  },
  index_fill = {
    {fn = function(x) return x:index_fill(1, I{3, 1}, 2.5) end, inputs = function() return {R(4, 3)} end,
     second_order = true},
    {fn = function(x) return torch.index_fill(x, 2, I{-1, 2, 2}, 0) end, inputs = function() return {NC(3, 4)} end},
    {fn = function(x)
      local y = x * 1
      y:index_fill_(2, I{1}, -1)
      return y
    end, inputs = function() return {R(2, 3)} end},
    {fn = function(x, v) return x:index_fill(2, I{3, 1}, v) end, -- a 0-dim tensor value gets a gradient
     inputs = function() return {R(2, 3), R()} end},
  },
  put = {
    {fn = function(x, s) return x:put(I{1, 6, 3}, s) end, inputs = function() return {R(2, 3), R(3)} end,
     second_order = true},
    {fn = function(x, s) return torch.put(x, I{{2, 2}, {-1, 1}}, s, true) end, -- accumulate, repeats
     inputs = function() return {NC(3, 2), R(4)} end},
    {fn = function(x, s) return x:put(I{5, 2, 1, 4}, s, {accumulate = false}) end, -- src shaped unlike index
     inputs = function() return {R(2, 3), R(2, 2)} end},
  },
  masked_fill = {
    {fn = function(x) return x:masked_fill(B{{true, false, false}, {false, true, true}}, 2.5) end,
     inputs = function() return {R(2, 3)} end, second_order = true},
    {fn = function(x) return torch.masked_fill(x, B{false, true, false, true}, -1) end, -- mask broadcast
     inputs = function() return {NC(3, 4)} end, second_order = true},
    {fn = function(x) return x:masked_fill(B{{true, false}, {false, false}, {true, true}}, 0) end, -- x broadcast
     inputs = function() return {R(1, 2)} end},
    {fn = function(x)
      local y = x * 1
      y:masked_fill_(B{true, false, true}, 7)
      return y
    end, inputs = function() return {R(2, 3)} end},
    {fn = function(x)
      local y = x * 1
      y[B{false, true}] = 3 -- x[mask] = number over the leading dims
      return y
    end, inputs = function() return {R(2, 3)} end},
    {fn = function(x, v) return x:masked_fill(B{true, false, true}, v) end, -- a 0-dim tensor value gets a gradient
     inputs = function() return {R(2, 3), R()} end},
    {fn = function(x, v)
      local y = x * 1
      y:masked_fill_(B{{true, false}, {false, true}}, v)
      return y
    end, inputs = function() return {R(2, 2), R()} end},
  },
  masked_select = {
    {fn = function(x) return x:masked_select(B{{true, false, true}, {false, true, true}}) end,
     inputs = function() return {R(2, 3)} end, second_order = true},
    {fn = function(x) return torch.masked_select(x, B{{true, false}, {true, true}, {false, true}}) end, -- x broadcast
     inputs = function() return {R(3, 1)} end},
    {fn = function(x) return x[B{{true, false, true}, {false, false, true}}] end,
     inputs = function() return {NC(2, 3)} end},
  },
  masked_scatter = {
    {fn = function(x, s) return x:masked_scatter(B{{true, false, true}, {false, true, false}}, s) end,
     inputs = function() return {R(2, 3), R(2, 3)} end, second_order = true}, -- src has more elements
    {fn = function(x, s) return torch.masked_scatter(x, B{true, false, true}, s) end, -- mask broadcast
     inputs = function() return {NC(2, 3), R(4)} end},
    {fn = function(x, s)
      local y = x * 1
      y:masked_scatter_(B{{false, true}, {true, true}}, s)
      return y
    end, inputs = function() return {R(2, 2), R(3)} end},
  },
}
