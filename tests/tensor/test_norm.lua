-- tests/tensor/test_norm.lua -- batch_norm (training and eval, running
-- statistics), layer_norm and group_norm with their backward ops
-- (torch._backward.batch_norm / layer_norm / group_norm) against PyTorch's
-- values and autograd gradients (tests/ref/norm.lua, made by gen_norm.py).
local R = ref("norm")
local f32, f64 = torch.float32, torch.float64

local function gen(spec, dtype)
  local shape, seed = {}, spec[#spec]
  for i = 1, #spec - 1 do shape[i] = spec[i] end
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for k = 0, n - 1 do flat[k + 1] = ((37 * k + 11 * seed) % 101 - 50) / 32 end
  return torch.tensor(flat, {dtype = dtype or f64}):reshape(shape)
end

local function shape_of(spec) return {table.unpack(spec, 1, #spec - 1)} end
local function with_seed(shape, seed) local s = {table.unpack(shape)}; s[#s + 1] = seed; return s end

local TOL = {[f64] = {atol = 1e-12, rtol = 1e-12}, [f32] = {atol = 2e-5, rtol = 1e-5}}

for _, name in ipairs{"bn_train_4d", "bn_train_2d", "bn_train_3d_noaffine", "bn_eval_4d", "bn_train_noncontig",
                      "bn_train_batch1"} do
  test(name .. ": batch_norm, its running statistics and backward op match PyTorch", function()
    local c = R[name]
    local seed, xs = c.x[#c.x], shape_of(c.x)
    for _, dt in ipairs{f32, f64} do
      local x = gen(c.x, dt)
      if c.view == "transpose" then x = x:transpose(-1, -2) end
      local C = xs[2]
      local w = c.affine and gen({C, seed + 1}, dt) or nil
      local b = c.affine and gen({C, seed + 2}, dt) or nil
      local rm, rv = torch.tensor(c.rm, {dtype = dt}), torch.tensor(c.rv, {dtype = dt})
      local y, mean, invstd = torch.batch_norm(x, w, b, rm, rv, c.training, c.momentum, c.eps)
      check_eq(y.dtype, dt)
      check_close(y, c.y, TOL[dt])
      check_close(rm, c.rm_after, TOL[dt])
      check_close(rv, c.rv_after, TOL[dt])
      if c.mean then
        check_close(mean, c.mean, TOL[dt])
        check_close(invstd, c.invstd, TOL[dt])
      end
      local g = gen(with_seed(x.shape, 99), dt)
      local gx, gw, gb = torch._backward.batch_norm(g, x, w, mean, invstd, c.training)
      check_close(gx, c.gx, TOL[dt])
      if c.gw then
        check_close(gw, c.gw, TOL[dt])
        check_close(gb, c.gb, TOL[dt])
      end
    end
  end)
end

for _, name in ipairs{"ln_last", "ln_two_dims", "ln_noaffine", "ln_all_dims"} do
  test(name .. ": layer_norm, its statistics and backward op match PyTorch", function()
    local c = R[name]
    local seed, xs = c.x[#c.x], shape_of(c.x)
    local ns = {table.unpack(xs, #xs - c.nnorm + 1)}
    for _, dt in ipairs{f32, f64} do
      local x = gen(c.x, dt)
      local w = c.affine and gen(with_seed(ns, seed + 1), dt) or nil
      local b = c.affine and gen(with_seed(ns, seed + 2), dt) or nil
      local y, mean, rstd = torch.layer_norm(x, ns, w, b, c.eps)
      check_close(y, c.y, TOL[dt])
      check_shape(mean, c.stat_shape)
      check_close(mean, c.mean, TOL[dt])
      check_close(rstd, c.rstd, TOL[dt])
      local g = gen(with_seed(xs, 99), dt)
      local gx, gw, gb = torch._backward.layer_norm(g, x, ns, mean, rstd, w)
      check_close(gx, c.gx, TOL[dt])
      if c.gw then
        check_close(gw, c.gw, TOL[dt])
        check_close(gb, c.gb, TOL[dt])
        check_shape(gw, ns)
      end
    end
  end)
end

for _, name in ipairs{"gn_4d", "gn_one_group", "gn_instance", "gn_2d"} do
  test(name .. ": group_norm, its statistics and backward op match PyTorch", function()
    local c = R[name]
    local seed, xs = c.x[#c.x], shape_of(c.x)
    for _, dt in ipairs{f32, f64} do
      local x = gen(c.x, dt)
      local w = c.affine and gen({xs[2], seed + 1}, dt) or nil
      local b = c.affine and gen({xs[2], seed + 2}, dt) or nil
      local y, mean, rstd = torch.group_norm(x, c.groups, w, b, c.eps)
      check_close(y, c.y, TOL[dt])
      check_shape(mean, {xs[1], c.groups})
      check_close(mean, c.mean, TOL[dt])
      check_close(rstd, c.rstd, TOL[dt])
      local gx, gw, gb = torch._backward.group_norm(gen(with_seed(xs, 99), dt), x, c.groups, mean, rstd, w)
      check_close(gx, c.gx, TOL[dt])
      if c.gw then
        check_close(gw, c.gw, TOL[dt])
        check_close(gb, c.gb, TOL[dt])
      end
    end
  end)
end

test("options by name; half inputs keep their dtype with float32 statistics", function()
  local x = gen({4, 3, 2, 2, 7}, f32)
  local rm, rv = torch.zeros(3), torch.ones(3)
  local y1 = torch.batch_norm(x, nil, nil, rm, rv, {training = true, momentum = 0.5})
  local rm2, rv2 = torch.zeros(3), torch.ones(3)
  local y2 = torch.batch_norm(x, nil, nil, rm2, rv2, true, 0.5)
  check(torch.equal(y1, y2) and torch.equal(rm, rm2) and torch.equal(rv, rv2))
  local yh, m = torch.layer_norm(x:half(), 2)
  check_eq(yh.dtype, torch.float16)
  check_eq(m.dtype, f32)
  check_close(yh:float(), torch.layer_norm(x, 2), {atol = 1e-2, rtol = 1e-2})
end)

test("bad normalization arguments raise errors naming the op and shapes", function()
  local x = torch.zeros(2, 3, 4)
  check_error(function() torch.batch_norm(torch.zeros(3), nil, nil, nil, nil, true) end,
              "batch_norm: expected an input of at least 2 dimensions")
  check_error(function() torch.batch_norm(x, torch.ones(4), nil, nil, nil, true) end,
              "batch_norm: weight must have 3 elements (one per channel), got shape 4")
  check_error(function() torch.batch_norm(x, nil, nil, nil, nil, false) end, "running_mean and running_var are needed")
  check_error(function() torch.batch_norm(torch.zeros(1, 3), nil, nil, nil, nil, true) end,
              "expected more than 1 value per channel when training, got input of shape 1x3")
  check_error(function() torch.batch_norm(x:long(), nil, nil, nil, nil, true) end, "batch_norm: input must be a floating")
  check_error(function() torch.batch_norm(x, nil, nil, torch.zeros(2), torch.ones(3), true) end, "running_mean")
  check_error(function() torch.layer_norm(x, {3}) end, "layer_norm: normalized_shape 3 does not match the trailing dims of input 2x3x4")
  check_error(function() torch.layer_norm(x, 4, torch.ones(3)) end, "layer_norm: weight must have shape 4, got 3")
  check_error(function() torch.layer_norm(x:int(), 4) end, "layer_norm: input must be a floating tensor, got int32")
  check_error(function() torch.group_norm(x, 2) end, "group_norm: the number of channels must be divisible by num_groups")
  check_error(function() torch.group_norm(x, 0) end, "num_groups=0")
  check_error(function() torch.group_norm(x, 3, torch.ones(2)) end, "group_norm: weight must have 3 elements")
  local y, m, r = torch.group_norm(x, 3)
  check_error(function() torch._backward.group_norm(torch.zeros(2, 3, 5), x, 3, m, r) end,
              "group_norm_backward: grad_output has shape 2x3x5 but input has shape 2x3x4")
  check_error(function() torch._backward.group_norm(y, x, 1, m, r) end, "mean and rstd must have 2 elements")
  check_error(function() torch._backward.batch_norm(y, x, nil, nil, nil) end, "save_mean and save_invstd are required")
end)
