-- tests/tensor/test_pool.lua -- max, average and adaptive pools (1-D to
-- 3-D) and their backward ops (torch._backward.max_pool / avg_pool /
-- adaptive_avg_pool) against PyTorch's values and autograd gradients
-- (tests/ref/pool.lua, made by gen_pool.py); indices are 1-based.
local R = ref("pool")
local f32, f64 = torch.float32, torch.float64

-- gen_pool.py's gen(): mods "floor" gives few integer values (ties), "nan"
-- also NaN where k % 7 == 3 and -inf where k % 11 == 5, "nans" NaN where
-- k % 3 == 0 (k: flat position).
local function gen(spec, dtype, mods)
  local shape, seed = {}, spec[#spec]
  for i = 1, #spec - 1 do shape[i] = spec[i] end
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for k = 0, n - 1 do
    local v = ((37 * k + 11 * seed) % 101 - 50) / 32
    if mods == "floor" or mods == "nan" then v = math.floor(v) + 0.0 end
    if mods == "nan" then
      if k % 7 == 3 then v = 0 / 0 elseif k % 11 == 5 then v = -math.huge end
    end
    if mods == "nans" and k % 3 == 0 then v = 0 / 0 end
    flat[k + 1] = v
  end
  return torch.tensor(flat, {dtype = dtype or f64}):reshape(shape)
end

local TOL = {[f64] = {atol = 1e-12, rtol = 1e-12}, [f32] = {atol = 1e-5, rtol = 1e-6}}

-- an options table, or nil when every field is absent
local function opt(t) return next(t) and t or nil end

local function nsp_of(kind) return tonumber(kind:match("(%d)d$")) end

local function run_case(name)
  local c = R[name]
  local nsp = nsp_of(c.kind)
  for _, dt in ipairs{f32, f64} do
    local x = gen(c.x, dt, c.mods)
    local tol = {atol = TOL[dt].atol, rtol = TOL[dt].rtol, equal_nan = c.mods ~= nil}
    if c.view == "transpose" then x = x:transpose(-1, -2) end
    local y, idx
    if c.kind:match("^adaptive") then
      y, idx = torch[c.kind](x, c.output_size)
    elseif c.kind:match("^max") then
      y, idx = torch[c.kind](x, c.kernel_size, {stride = c.stride, padding = c.padding, dilation = c.dilation,
                                                 ceil_mode = c.ceil_mode, return_indices = true})
    else
      y = torch[c.kind](x, c.kernel_size, opt{stride = c.stride, padding = c.padding, ceil_mode = c.ceil_mode,
                                              count_include_pad = c.count_include_pad,
                                              divisor_override = c.divisor_override})
    end
    if c.kind == "max_pool2d" then -- values alone take another route through the kernel
      local v = torch.max_pool2d(x, c.kernel_size, opt{stride = c.stride, padding = c.padding,
                                                        ceil_mode = c.ceil_mode, dilation = c.dilation})
      check_close(v, c.y, tol)
    end
    check_eq(y.dtype, dt)
    check_shape(y, c.y_shape)
    check_close(y, c.y, tol)
    local s = {table.unpack(c.y_shape)}
    s[#s + 1] = 99
    local g = gen(s, dt)
    local gx
    if idx then
      check_eq(idx.dtype, torch.int64)
      check_close(idx, c.idx, {atol = 0, rtol = 0})
      gx = torch._backward.max_pool(g, idx, x.shape, nsp)
    elseif c.kind:match("^adaptive") then
      gx = torch._backward.adaptive_avg_pool(g, x.shape, nsp)
    else
      gx = torch._backward.avg_pool(g, x.shape, nsp, c.kernel_size,
                                    opt{stride = c.stride, padding = c.padding, ceil_mode = c.ceil_mode,
                                        count_include_pad = c.count_include_pad, divisor_override = c.divisor_override})
    end
    check_shape(gx, x.shape)
    check_close(gx, c.gx, TOL[dt])
  end
end

for _, name in ipairs{"max2d_basic", "max2d_stride_pad", "max2d_dilation_ceil", "max2d_overlap", "max2d_noncontig",
                      "max2d_unbatched", "max1d", "max3d", "avg2d_basic", "avg2d_pad_include", "avg2d_pad_exclude",
                      "avg2d_ceil", "avg2d_ceil_exclude", "avg2d_divisor", "avg2d_noncontig", "avg1d", "avg3d",
                      "adaptive_avg2d", "adaptive_avg2d_up", "adaptive_avg2d_global", "adaptive_avg1d",
                      "adaptive_max2d", "adaptive_max1d", "max2d_tiled_odd", "max2d_tiled_3x3", "max2d_tiled_rect",
                      "max2d_tiled_kw5", "max2d_tiled_ties", "max2d_tiled_ties3", "max2d_tiled_nan", "max2d_tiled_nan3",
                      "max2d_tiled_nans", "max2d_tiled_wide", "max2d_general_ties", "max2d_general_nan"} do
  test(name .. ": forward (and indices) and the backward op match PyTorch", function() run_case(name) end)
end

test("NaN wins a max window (the last NaN); an all -inf window picks a real position", function()
  local n, inf = 0 / 0, math.huge
  local x = torch.tensor({{{{1, n, 3, -inf}, {n, 0, -inf, -inf}}}})
  local y, idx = torch.max_pool2d_with_indices(x, 2)
  check_close(y, R.nan.y)
  check_close(idx, R.nan.idx, {atol = 0, rtol = 0})
end)

test("max_pool2d without return_indices gives one result; half types keep their dtype", function()
  local x = gen({1, 2, 4, 4, 3}, f32)
  local a, b = torch.max_pool2d(x, 2)
  check(b == nil)
  local h = torch.max_pool2d(x:half(), 2)
  check_eq(h.dtype, torch.float16)
  check_close(h:float(), a, {atol = 1e-2, rtol = 1e-3})
  check_shape(torch.adaptive_avg_pool2d(x, {false, 2}), {1, 2, 4, 2})
end)

test("bad pooling arguments raise errors naming the op and shapes", function()
  local x = torch.zeros(2, 3, 6, 6)
  check_error(function() torch.max_pool2d(torch.zeros(6, 6), 2) end, "max_pool2d: expected a 3D or 4D (batched) input, got 6x6")
  check_error(function() torch.max_pool2d(x, 0) end, "max_pool2d: kernel_size, stride and dilation must be positive")
  check_error(function() torch.max_pool2d(x, 2, -1) end, "max_pool2d: kernel_size, stride and dilation must be positive")
  check_error(function() torch.max_pool2d(x, 2, 2, 2) end, "padding must be between 0 and half the kernel size")
  check_error(function() torch.max_pool2d(x, 2, 2, -1) end, "padding must be between 0")
  check_error(function() torch.max_pool2d(x, 7) end, "max_pool2d: input 2x3x6x6 gives output size 2x3x0x0: too small")
  check_error(function() torch.max_pool2d(x:long(), 2) end, "max_pool2d: needs a floating tensor, got int64")
  check_error(function() torch.max_pool2d(x) end, "kernel_size is required")
  check_error(function() torch.max_pool2d(torch.zeros(2, 0, 4, 4), 2) end, "empty non-batch dimension")
  check_error(function() torch.avg_pool2d(x, 3, 1, 2) end, "avg_pool2d: padding must be between 0 and half")
  check_error(function() torch.avg_pool2d(x, 2, {divisor_override = 0}) end, "divisor_override must be a positive")
  check_error(function() torch.avg_pool1d(x, 2) end, "avg_pool1d: expected a 2D or 3D (batched) input")
  check_error(function() torch.adaptive_avg_pool2d(x, {2, -1}) end, "adaptive_avg_pool2d: output_size must be non-negative")
  check_error(function() torch.adaptive_avg_pool2d(x, {1, 2, 3}) end, "output_size must be an integer or a list of 2")
  check_error(function() torch.adaptive_max_pool2d(x:int(), 2) end, "adaptive_max_pool2d: needs a floating tensor")
  local y, idx = torch.max_pool2d_with_indices(x, 2)
  check_error(function() torch._backward.max_pool(y, idx:float(), x.shape, 2) end, "indices must be int64")
  check_error(function() torch._backward.max_pool(y, idx + 100, x.shape, 2) end, "outside the input plane")
  check_error(function() torch._backward.max_pool(y, idx, {2, 4, 6, 6}, 2) end, "do not fit together")
  check_error(function() torch._backward.avg_pool(y, {2, 3, 6, 6}, 2, 3) end,
              "avg_pool2d_backward: grad_output has shape 2x3x3x3, but the pool's output has shape 2x3x2x2")
  check_error(function() torch._backward.max_pool(y, idx, x.shape, 4) end, "spatial dims must be 1, 2 or 3")
end)

test("stride == kernel (the tiled 2-D kernel) agrees with the general 3-D loop: large data, ties, NaN", function()
  torch.manual_seed(7)
  -- 37x45 planes are pooled one by one; 12x12 planes whose rows the kernel
  -- tiles exactly are stacked into tall planes (indices rebased per plane)
  for _, shape in ipairs{{3, 5, 37, 45}, {4, 70, 12, 12}} do
  for _, dt in ipairs{f32, f64} do
    for _, k in ipairs{{2, 2}, {3, 3}, {2, 3}, {4, 1}, {2, 5}} do
      local x = (torch.randn(shape, {dtype = dt}) * 2):floor()
      x = x:masked_fill(torch.rand(x.shape):lt(0.02), 0 / 0) -- windows with one NaN
      x[1][1]:copy_(x[1][1]:masked_fill(torch.rand(shape[3], shape[4]):lt(0.4), 0 / 0)) -- and with several
      local y, idx = torch.max_pool2d_with_indices(x, k)
      -- depth 2 keeps the 3-D pool off the 2-D paths; depth slice 1 has the same flat indices
      local y3, idx3 = torch.max_pool3d_with_indices(torch.stack({x, x}, 3), {1, k[1], k[2]})
      check_close(y, y3:select(3, 1), {atol = 0, rtol = 0, equal_nan = true})
      check(torch.equal(idx, idx3:select(3, 1)), "indices differ for kernel " .. k[1] .. "x" .. k[2])
      check_close(torch.max_pool2d(x, k), y, {atol = 0, rtol = 0, equal_nan = true})
    end
  end
  end
end)
