-- tests/tensor/test_conv.lua -- torch.conv1d/2d/3d, conv_transpose2d and
-- the conv backward ops (torch._backward.conv_input / conv_weight) against
-- PyTorch's forward values and autograd gradients (tests/ref/conv.lua, made
-- by gen_conv.py): float32 through oneDNN, float64 through the reference
-- loops (to 1e-12), strides, padding ('same', 'valid', asymmetric),
-- dilation, groups, no bias, non-contiguous and unbatched inputs.
local R = ref("conv")
local f32, f64 = torch.float32, torch.float64

-- gen(): the formula of gen_conv.py; spec = {dims..., seed}
local function gen(spec, dtype)
  local shape, seed = {}, spec[#spec]
  for i = 1, #spec - 1 do shape[i] = spec[i] end
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for k = 0, n - 1 do flat[k + 1] = ((37 * k + 11 * seed) % 101 - 50) / 32 end
  return torch.tensor(flat, {dtype = dtype or f64}):reshape(shape)
end

-- tolerances: float64 to 1e-12 of PyTorch; float32 to its rounding
local TOL = {[f64] = {atol = 1e-12, rtol = 1e-12}, [f32] = {atol = 2e-4, rtol = 2e-5}}

local function input(c, dt)
  local x = gen(c.x, dt)
  if c.view == "transpose" then x = x:transpose(-1, -2); check(not x:is_contiguous()) end
  return x
end

-- the case's options as an options table (nil when it has none)
local function opts(c)
  local o = {stride = c.stride, padding = c.padding, dilation = c.dilation, groups = c.groups,
             output_padding = c.output_padding}
  return next(o) and o or nil
end

-- the upstream gradient of gen_conv.py: gen(output shape, 99)
local function grad_for(c, dt)
  local s = {table.unpack(c.y_shape)}
  s[#s + 1] = 99
  return gen(s, dt)
end

-- the backward ops take resolved padding; 'same' is resolved here as PyTorch does
local function bwd_opts(c, w)
  local o = opts(c) or {}
  if c.padding == "valid" then o.padding = 0 end
  if c.padding == "same" then
    local lo, hi = {}, {}
    for i = 3, w:dim() do
      local d = type(c.dilation) == "table" and c.dilation[i - 2] or c.dilation or 1
      local total = d * (w:size(i) - 1)
      lo[#lo + 1], hi[#hi + 1] = total // 2, total - total // 2
    end
    o.padding, o.pad_hi = lo, hi
  end
  return o
end

local fns = {conv1d = torch.conv1d, conv2d = torch.conv2d, conv3d = torch.conv3d}

local function run_conv_case(name)
  local c = R[name]
  local fn = fns[name:match("^(conv%dd)")]
  for _, dt in ipairs{f32, f64} do
    local x, w = input(c, dt), gen(c.w, dt)
    local b = c.b and gen(c.b, dt) or nil
    local y = fn(x, w, b, opts(c))
    check_eq(y.dtype, dt)
    check_shape(y, c.y_shape)
    check_close(y, c.y, TOL[dt])
    local g = grad_for(c, dt)
    local o = bwd_opts(c, w) or {}
    local gx = torch._backward.conv_input(g, w, x.shape, o)
    check_shape(gx, x.shape)
    check_close(gx, c.gx, TOL[dt])
    local gw, gb = torch._backward.conv_weight(g, x, w.shape, o)
    check_close(gw, c.gw, TOL[dt])
    if c.gb then check_close(gb, c.gb, TOL[dt]) end
  end
end

for _, name in ipairs{"conv2d_basic", "conv2d_pad_stride", "conv2d_dilation", "conv2d_groups", "conv2d_depthwise",
                      "conv2d_same", "conv2d_same_even", "conv2d_valid", "conv2d_noncontig", "conv2d_batch1",
                      "conv2d_blocked", "conv2d_1x1_stride", "conv2d_unbatched", "conv1d_basic", "conv1d_groups_dil",
                      "conv3d_basic"} do
  test(name .. ": forward and both backward ops match PyTorch (float32, float64)", function() run_conv_case(name) end)
end

-- conv_transpose: forward, and its gradients through the conv ops as autograd will express them
for _, name in ipairs{"convT2d_basic", "convT2d_groups", "convT2d_dilation"} do
  test(name .. ": conv_transpose2d and its gradients (conv forward / conv weight-grad) match PyTorch", function()
    local c = R[name]
    for _, dt in ipairs{f32, f64} do
      local x, w = gen(c.x, dt), gen(c.w, dt)
      local b = c.b and gen(c.b, dt) or nil
      local y = torch.conv_transpose2d(x, w, b, opts(c))
      check_shape(y, c.y_shape)
      check_close(y, c.y, TOL[dt])
      local g = grad_for(c, dt)
      local o = {stride = c.stride, padding = c.padding, dilation = c.dilation, groups = c.groups}
      check_close(torch.conv2d(g, w, nil, o), c.gx, TOL[dt])              -- grad input
      local gw = torch._backward.conv_weight(x, g, w.shape, o)           -- x plays grad_out
      check_close(gw, c.gw, TOL[dt])
      if c.gb then check_close(g:sum({1, 3, 4}), c.gb, TOL[dt]) end       -- grad bias
    end
  end)
end

test("larger layers (gemm and winograd/direct paths) match PyTorch's float64 sums", function()
  for name, c in pairs(R.big) do
    local y = torch.conv2d(gen(c.x, f32), gen(c.w, f32), nil, {padding = 1})
    check_close(y:double():sum(), c.sum, {atol = 1e-3 * c.abs_sum / y:numel() * 100, rtol = 1e-5})
    check_close(y[1][1][1], c.first_row, {atol = 2e-3, rtol = 1e-4})
    local y64 = torch.conv2d(gen(c.x, f64), gen(c.w, f64), nil, {padding = 1})
    check_close(y64:sum(), c.sum, {atol = 1e-9, rtol = 1e-12})
  end
end)

test("repeated calls reuse the cached primitive and give identical results", function()
  local x, w = gen({2, 8, 9, 9, 5}, f32), gen({8, 8, 3, 3, 6}, f32)
  local a = torch.conv2d(x, w, nil, {padding = 1})
  for _ = 1, 3 do check(torch.equal(a, torch.conv2d(x, w, nil, {padding = 1}))) end
  if DEVICE == "cpu" then -- oneDNN's choice (CUDA convolutions report theirs in torch.backends.cudnn.stats())
    check_eq(torch._conv_algorithm(x, w, {padding = 1}), "direct")
    check_eq(torch._conv_algorithm(gen({2, 1, 9, 9, 5}, f32), gen({8, 1, 3, 3, 6}, f32)), "gemm")
    check_eq(torch._conv_algorithm(x:double(), w:double()), "ref")
  end
end)

test("half-precision inputs compute in float32 and keep their dtype", function()
  local c = R.conv2d_basic
  local y = torch.conv2d(gen(c.x, f32):bfloat16(), gen(c.w, f32):bfloat16(), gen(c.b, f32):bfloat16())
  check_eq(y.dtype, torch.bfloat16)
  check_close(y:float(), c.y, {atol = 0.1, rtol = 2e-2})
end)

test("out= receives the result; empty batches give empty results", function()
  local c = R.conv2d_basic
  local out = torch.empty(table.unpack(c.y_shape))
  local r = torch.conv2d(gen(c.x, f32), gen(c.w, f32), gen(c.b, f32), {out = out})
  check(rawequal(r, out))
  check_close(out, c.y, TOL[f32])
  check_shape(torch.conv2d(torch.zeros(0, 3, 6, 7), gen(c.w, f32)), {0, 4, 4, 5})
end)

test("bad convolution arguments raise errors naming the op and shapes", function()
  local x, w = torch.zeros(2, 3, 6, 6), torch.zeros(4, 3, 3, 3)
  check_error(function() torch.conv2d(torch.zeros(2, 3, 6), torch.zeros(4, 3, 3)) end, "conv2d: weight must have 4")
  check_error(function() torch.conv2d(torch.zeros(2, 5, 6, 6), w) end, "conv2d: input 2x5x6x6 has 5 channels")
  check_error(function() torch.conv2d(x, torch.zeros(4, 2, 3, 3), nil, {groups = 2}) end, "in_channels")
  check_error(function() torch.conv2d(torch.zeros(2, 4, 6, 6), torch.zeros(3, 2, 3, 3), nil, {groups = 2}) end,
              "out_channels (3) must be divisible by groups (2)")
  check_error(function() torch.conv2d(torch.zeros(2, 3, 2, 2), w) end, "larger than the padded input")
  check_error(function() torch.conv2d(x:long(), w:long()) end, "conv2d: needs floating tensors, got input int64")
  check_error(function() torch.conv2d(x, w:double()) end, "must have the same dtype")
  check_error(function() torch.conv2d(x, w, nil, {stride = -1}) end, "conv2d: stride and dilation must be positive")
  check_error(function() torch.conv2d(x, w, nil, {stride = 0}) end, "conv2d: stride")
  check_error(function() torch.conv2d(x, w, nil, {padding = -1}) end, "padding non-negative")
  check_error(function() torch.conv2d(x, w, nil, {dilation = 0}) end, "dilation")
  check_error(function() torch.conv2d(x, w, nil, {groups = 0}) end, "groups must be positive")
  check_error(function() torch.conv2d(x, w, torch.zeros(5)) end, "bias must have shape 4")
  check_error(function() torch.conv2d(x, w, nil, {padding = "full"}) end, "'same' or 'valid'")
  check_error(function() torch.conv2d(x, w, nil, {stride = 2, padding = "same"}) end, "strided")
  check_error(function() torch.conv2d(x, w, nil, {stride = {1, 2, 3}}) end, "list of 2 integers")
  check_error(function() torch.conv2d(torch.zeros(6, 6), w) end, "expected input of 3 or 4 dimensions")
  check_error(function() torch.conv_transpose2d(x, torch.zeros(4, 2, 3, 3)) end, "conv_transpose2d: input 2x3x6x6 has 3")
  check_error(function() torch.conv_transpose2d(x, torch.zeros(3, 2, 3, 3), nil, {stride = 2, output_padding = 2}) end,
              "output_padding")
  check_error(function() torch._backward.conv_input(torch.zeros(2, 4, 5, 5), w, {2, 3, 6, 6}) end,
              "conv2d_backward_input: grad_output has shape 2x4x5x5, but the convolution's output has shape 2x4x4x4")
  check_error(function() torch._backward.conv_weight(torch.zeros(2, 4, 4, 4), x, {4, 3, 3}) end, "conv1d_backward_weight")
end)
