-- tests/graph/specs_nn.lua -- gradcheck cases for convolution, pooling and
-- normalization and their backward ops (see test_gradcheck.lua). Shapes are
-- tiny: gradcheck runs one backward per output element and two forwards
-- per input element.
local G = require "gradlib"
local R, NC, D, C = G.R, G.NC, G.D, G.C

local f64 = {dtype = torch.float64}
local function randn(...) return C(torch.randn({...}, f64)) end
local bwd = torch._backward

-- first result only (ops returning statistics or indices too)
local function first(f) return function(...) return (f(...)) end end

-- fixed 1-based max positions of a max pool over a (1, 2, 5, 5) input
local function pool_indices(k, s)
  local x = torch.randperm(50):double():view(1, 2, 5, 5)
  local _, ix = torch.max_pool2d_with_indices(x, k, s)
  return ix
end

return {
  convolution = {
    {fn = function(x, w, b) return torch.conv2d(x, w, b) end,
     inputs = function() return {R(2, 2, 4, 4), R(3, 2, 2, 2), R(3)} end, second_order = true},
    {fn = function(x, w) return torch.conv2d(x, w, nil, {stride = 2, padding = 1}) end,
     inputs = function() return {R(1, 2, 5, 5), R(2, 2, 3, 3)} end, second_order = true},
    {fn = function(x, w, b) return torch.conv2d(x, w, b, {dilation = 2, groups = 2}) end,
     inputs = function() return {R(1, 4, 5, 5), R(4, 2, 2, 2), R(4)} end, second_order = true},
    -- "same" with an even kernel pads asymmetrically (0 before, 1 after)
    {fn = function(x, w, b) return torch.conv2d(x, w, b, {padding = "same"}) end,
     inputs = function() return {R(1, 2, 4, 4), R(2, 2, 2, 2), R(2)} end, second_order = true},
    {fn = function(x, w, b) return torch.conv2d(x, w, b, {padding = "same", dilation = 2}) end,
     inputs = function() return {R(1, 1, 5, 4), R(2, 1, 2, 3), R(2)} end},
    {fn = function(x, w, b) return torch.conv1d(x, w, b, {stride = 2}) end,
     inputs = function() return {R(2, 2, 7), R(3, 2, 3), R(3)} end, second_order = true},
    {fn = function(x, w, b) return torch.conv3d(x, w, b, {padding = 1, stride = 2}) end,
     inputs = function() return {R(1, 2, 3, 3, 3), R(2, 2, 2, 2, 2), R(2)} end},
    {fn = function(x, w, b) return torch.conv2d(x, w, b, {padding = {1, 0}}) end,
     inputs = function() return {NC(1, 2, 5, 4), NC(2, 2, 3, 2), R(2)} end},
    -- unbatched input (C, H, W)
    {fn = function(x, w, b) return torch.conv2d(x, w, b) end,
     inputs = function() return {R(2, 4, 4), R(2, 2, 3, 3), R(2)} end, second_order = true},
    -- only the bias requires grad; only the weight
    {fn = function(x, w, b) return torch.conv2d(x, w, b) end,
     inputs = function() return {randn(2, 2, 3, 3), randn(2, 2, 2, 2), R(2)} end},
    {fn = function(x, w) return torch.conv2d(x, w) end,
     inputs = function() return {randn(2, 2, 3, 3), R(2, 2, 2, 2)} end, second_order = true},
  },
  conv_transpose = {
    {fn = function(x, w, b) return torch.conv_transpose2d(x, w, b, {stride = 2}) end,
     inputs = function() return {R(1, 2, 3, 3), R(2, 3, 2, 2), R(3)} end, second_order = true},
    {fn = function(x, w, b)
       return torch.conv_transpose2d(x, w, b, {stride = 2, padding = 1, output_padding = 1, groups = 2})
     end,
     inputs = function() return {R(1, 4, 3, 3), R(4, 1, 3, 3), R(2)} end},
    {fn = function(x, w) return torch.conv_transpose1d(x, w, nil, {dilation = 2, padding = 1}) end,
     inputs = function() return {R(2, 2, 4), R(2, 2, 3)} end, second_order = true},
    {fn = function(x, w, b) return torch.conv_transpose3d(x, w, b) end,
     inputs = function() return {R(1, 2, 2, 2, 2), R(2, 1, 2, 2, 2), R(1)} end},
  },
  conv_backward_input = {
    {fn = function(g, w) return bwd.conv_input(g, w, {1, 2, 5, 5}, {stride = 2, padding = 1}) end,
     inputs = function() return {R(1, 3, 3, 3), R(3, 2, 3, 3)} end, second_order = true},
    {fn = function(g, w) return bwd.conv_input(g, w, {2, 4, 4}, {groups = 2, padding = {0}, pad_hi = {1}}) end,
     inputs = function() return {R(2, 2, 4), R(2, 2, 2)} end, second_order = true},
  },
  conv_backward_weight = {
    {fn = function(g, x)
       local gw, gb = bwd.conv_weight(g, x, {3, 2, 3, 3}, {stride = 2, padding = 1})
       return {gw, gb}
     end,
     inputs = function() return {R(1, 3, 3, 3), R(1, 2, 5, 5)} end, second_order = true},
    {fn = function(g, x)
       local gw, gb = bwd.conv_weight(g, x, {4, 1, 2}, {groups = 2, dilation = 2})
       return {gw, gb}
     end,
     inputs = function() return {R(2, 4, 3), R(2, 2, 5)} end, second_order = true},
  },
  max_pool = {
    {fn = function(x) return torch.max_pool2d(x, 2, 1) end, inputs = function() return {D(1, 2, 4, 4)} end,
     second_order = true},
    {fn = function(x) return torch.max_pool2d(x, 3, 2, 1, {dilation = 1, ceil_mode = true}) end,
     inputs = function() return {D(2, 1, 5, 5)} end},
    {fn = function(x) return torch.max_pool2d(x, {2, 3}, {1, 2}, 0, 2) end,
     inputs = function() return {D(1, 2, 5, 6)} end},
    {fn = function(x) return torch.max_pool1d(x, 3, 2, 1) end, inputs = function() return {D(2, 2, 6)} end},
    {fn = function(x) return torch.max_pool3d(x, 2) end, inputs = function() return {D(1, 2, 3, 4, 4)} end},
    {fn = function(x) return torch.max_pool2d(x, 2) end, inputs = function() return {G.NCof(D, 1, 2, 4, 6)} end},
  },
  max_pool_backward = {
    {fn = function(g, ix) return bwd.max_pool(g, ix, {1, 2, 5, 5}, 2) end,
     inputs = function() return {R(1, 2, 3, 3), pool_indices(3, 1)} end, second_order = true},
    {fn = function(g, ix) return bwd.max_pool(g, ix, {1, 2, 5, 5}, 2) end,
     inputs = function() return {R(1, 2, 2, 2), pool_indices(2, 2)} end, second_order = true},
  },
  avg_pool = {
    {fn = function(x) return torch.avg_pool2d(x, 2) end, inputs = function() return {R(1, 2, 4, 4)} end,
     second_order = true},
    {fn = function(x) return torch.avg_pool2d(x, 3, 2, 1, {count_include_pad = false, ceil_mode = true}) end,
     inputs = function() return {R(2, 1, 6, 5)} end, second_order = true},
    {fn = function(x) return torch.avg_pool2d(x, 2, 1, 1, {divisor_override = 3}) end,
     inputs = function() return {NC(1, 2, 4, 3)} end},
    {fn = function(x) return torch.avg_pool1d(x, 3, 1, 1) end, inputs = function() return {R(2, 5)} end},
    {fn = function(x) return torch.avg_pool3d(x, 2, 1) end, inputs = function() return {R(1, 1, 3, 3, 3)} end},
  },
  avg_pool_backward = {
    {fn = function(g) return bwd.avg_pool(g, {1, 2, 5, 5}, 2, 3, 2, 1) end,
     inputs = function() return {R(1, 2, 3, 3)} end, second_order = true},
    {fn = function(g) return bwd.avg_pool(g, {2, 6}, 1, 2, {count_include_pad = false, padding = 1}) end,
     inputs = function() return {R(2, 4)} end, second_order = true},
  },
  adaptive_avg_pool = {
    {fn = function(x) return torch.adaptive_avg_pool2d(x, {3, 4}) end, inputs = function() return {R(1, 2, 5, 7)} end,
     second_order = true},
    {fn = function(x) return torch.adaptive_avg_pool1d(x, 4) end, inputs = function() return {NC(2, 6, 3)} end},
    {fn = function(x) return torch.adaptive_avg_pool3d(x, 2) end, inputs = function() return {R(1, 3, 3, 4)} end},
  },
  adaptive_avg_pool_backward = {
    {fn = function(g) return bwd.adaptive_avg_pool(g, {1, 2, 5, 7}, 2) end,
     inputs = function() return {R(1, 2, 3, 4)} end, second_order = true},
  },
  image_resize = {
    {fn = function(x) return torch._image_resize(x, 3, 4, "bilinear", true) end,
     inputs = function() return {R(2, 5, 7)} end, second_order = true},
    {fn = function(x) return torch._image_resize(x, 6, 2, "bicubic", false) end,
     inputs = function() return {NC(1, 4, 5)} end},
    {fn = function(x) return torch._image_resize(x, 7, 3, "nearest-exact", false) end,
     inputs = function() return {R(2, 4, 5)} end},
  },
  image_resize_backward = {
    {fn = function(g) return bwd.image_resize(g, 5, 7, "bicubic", true) end,
     inputs = function() return {R(2, 3, 4)} end, second_order = true},
  },
  adaptive_max_pool = {
    {fn = first(function(x) return torch.adaptive_max_pool2d(x, {2, 3}) end),
     inputs = function() return {D(1, 2, 5, 7)} end, second_order = true},
    {fn = first(function(x) return torch.adaptive_max_pool1d(x, 3) end), inputs = function() return {D(2, 2, 7)} end},
  },
  batch_norm = {
    {fn = first(function(x, w, b) return torch.batch_norm(x, w, b, nil, nil, true) end),
     inputs = function() return {R(4, 3, 2), R(3), R(3)} end, second_order = true},
    {fn = first(function(x) return torch.batch_norm(x, nil, nil, nil, nil, true, 0.1, 1e-3) end),
     inputs = function() return {NC(3, 2, 2, 3)} end, second_order = true},
    -- training with running statistics: they are updated, never differentiated
    {fn = first(function(x, w, b, rm, rv) return torch.batch_norm(x, w, b, rm, rv, true) end),
     inputs = function() return {R(5, 2), R(2), R(2), torch.zeros(2, f64), torch.ones(2, f64)} end},
    -- eval: the running statistics normalize, so the map is affine in x
    {fn = first(function(x, w, b, rm, rv) return torch.batch_norm(x, w, b, rm, rv, false) end),
     inputs = function()
       return {R(3, 2, 4), R(2), R(2), randn(2), C(torch.rand(2, f64) + 0.5)}
     end, second_order = true},
    {fn = first(function(x, rm, rv) return torch.batch_norm(x, nil, nil, rm, rv, false) end),
     inputs = function() return {NC(2, 3, 2), randn(3), C(torch.rand(3, f64) + 0.5)} end, second_order = true},
  },
  layer_norm = {
    {fn = first(function(x, w, b) return torch.layer_norm(x, {3, 4}, w, b) end),
     inputs = function() return {R(2, 3, 4), R(3, 4), R(3, 4)} end, second_order = true},
    {fn = first(function(x) return torch.layer_norm(x, 4) end), inputs = function() return {NC(3, 4)} end,
     second_order = true},
    {fn = first(function(x, b) return torch.layer_norm(x, {2, 3}, nil, b, 1e-3) end),
     inputs = function() return {R(2, 2, 3), R(2, 3)} end, second_order = true},
    -- every dim normalized: the parameter gradients sum over nothing
    {fn = first(function(x, w, b) return torch.layer_norm(x, {2, 3}, w, b) end),
     inputs = function() return {R(2, 3), R(2, 3), R(2, 3)} end, second_order = true},
  },
  group_norm = {
    {fn = first(function(x, w, b) return torch.group_norm(x, 2, w, b) end),
     inputs = function() return {R(2, 4, 3), R(4), R(4)} end, second_order = true},
    {fn = first(function(x) return torch.group_norm(x, 3) end), inputs = function() return {NC(2, 6, 2, 2)} end,
     second_order = true},
    {fn = first(function(x, w) return torch.group_norm(x, 1, w) end), inputs = function() return {R(3, 2, 3), R(2)} end,
     second_order = true},
    {fn = first(function(x, b) return torch.group_norm(x, 2, nil, b) end),
     inputs = function() return {R(3, 4), R(4)} end, second_order = true},
  },
}
