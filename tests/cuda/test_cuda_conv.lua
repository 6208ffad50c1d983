-- tests/cuda/test_cuda_conv.lua -- convolutions and max pools on CUDA
-- (tensor/cuda/conv.c: im2col + cuBLAS, col2im, pooling kernels) against
-- the CPU's results on the same random data: values, indices and the
-- gradients autograd gets for input, weight and bias; then one Adam step of
-- the Fashion-MNIST CNN. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU conv/pool tests skipped\n")
  return
end

local nn = require "torch.nn"
local optim = require "torch.optim"

local function tol(dt)
  if dt == torch.float16 then return {atol = 2e-2, rtol = 2e-2} end
  if dt == torch.float32 then return {atol = 2e-4, rtol = 2e-4} end
  return {atol = 1e-10, rtol = 1e-10}
end

local function same(g, c, dt, what)
  check(g.is_cuda, what .. " stays on cuda")
  check_eq(g.dtype, c.dtype, what)
  check_close(g:cpu():double(), c:double(), tol(dt))
end

-- runs f(x, w, b) on the CPU and on CUDA with gradients for all three and
-- compares outputs and gradients (the upstream gradient is random too)
local function compare(f, xs, ws, bs, dt, what)
  local x, w = torch.randn(table.unpack(xs)):to(dt), torch.randn(table.unpack(ws)):to(dt)
  local b = bs and torch.randn(bs):to(dt) or nil
  local function run(dev)
    local xd, wd = x:to(dev):requires_grad_(), w:to(dev):requires_grad_()
    local bd = b and b:to(dev):requires_grad_() or nil
    local y = f(xd, wd, bd)
    local g = torch.randn(table.unpack(y:size())):to(dt):to(dev)
    ;(y * g):sum():backward()
    return y, xd.grad, wd.grad, bd and bd.grad
  end
  torch.manual_seed(7)
  local yc, gxc, gwc, gbc = run("cpu")
  torch.manual_seed(7)
  local yg, gxg, gwg, gbg = run("cuda")
  same(yg, yc, dt, what .. " output")
  same(gxg, gxc, dt, what .. " grad input")
  same(gwg, gwc, dt, what .. " grad weight")
  if b then same(gbg, gbc, dt, what .. " grad bias") end
end

test("conv2d forward and gradients equal the CPU's for strides, paddings, dilations, bias and dtypes", function()
  torch.manual_seed(1)
  local cases = {
    {{4, 1, 28, 28}, {32, 1, 3, 3}, {padding = 1}},
    {{4, 32, 14, 14}, {64, 32, 3, 3}, {padding = 1}},
    {{2, 3, 9, 11}, {5, 3, 3, 3}, nil},
    {{2, 3, 9, 11}, {5, 3, 3, 2}, {stride = 2, padding = 1}},
    {{2, 3, 10, 10}, {4, 3, 3, 3}, {stride = {2, 3}, padding = {2, 0}, dilation = 2}},
    {{3, 2, 7, 7}, {6, 2, 1, 1}, {stride = 2}},
    {{2, 8, 8}, {4, 2, 3, 3}, {padding = 1}}, -- unbatched
  }
  for i, c in ipairs(cases) do
    for _, dt in ipairs{torch.float32, torch.float64} do
      for _, bias in ipairs{true, false} do
        compare(function(x, w, b) return torch.conv2d(x, w, b, c[3]) end, c[1], c[2], bias and c[2][1] or nil, dt,
                ("conv2d case %d %s bias=%s"):format(i, tostring(dt), bias))
      end
    end
  end
  -- float16 computes in float32 and comes back as float16
  local x, w = torch.randn(2, 3, 8, 8):half(), torch.randn(4, 3, 3, 3):half()
  same(torch.conv2d(x:cuda(), w:cuda(), nil, {padding = 1}), torch.conv2d(x, w, nil, {padding = 1}), torch.float16,
       "conv2d float16")
end)

test("conv1d, conv3d and conv_transpose2d forward and gradients equal the CPU's", function()
  torch.manual_seed(2)
  compare(function(x, w, b) return torch.conv1d(x, w, b, {stride = 2, padding = 1}) end, {3, 4, 20}, {6, 4, 5}, 6,
          torch.float32, "conv1d")
  compare(function(x, w, b) return torch.conv3d(x, w, b, {padding = 1}) end, {2, 2, 5, 6, 7}, {3, 2, 3, 3, 3}, 3,
          torch.float32, "conv3d")
  compare(function(x, w, b) return torch.conv_transpose2d(x, w, b, {stride = 2, padding = 1}) end, {2, 4, 5, 5},
          {4, 3, 3, 3}, 3, torch.float64, "conv_transpose2d")
end)

test("max_pool2d values, indices and gradients equal the CPU's, overlapping windows included", function()
  torch.manual_seed(3)
  local cases = {
    {{4, 32, 28, 28}, 2, {}},
    {{2, 3, 9, 9}, 3, {stride = 2, padding = 1}},
    {{2, 3, 10, 11}, 3, {stride = 1}},
    {{2, 3, 11, 11}, 2, {dilation = 2, ceil_mode = true}},
    {{3, 8, 8}, 2, {}}, -- unbatched
  }
  for i, c in ipairs(cases) do
    for _, dt in ipairs{torch.float32, torch.float64} do
      local what = ("max_pool2d case %d %s"):format(i, tostring(dt))
      local x = torch.randn(table.unpack(c[1])):to(dt)
      local o = {return_indices = true}
      for k, v in pairs(c[3]) do o[k] = v end
      local yc, ic = torch.max_pool2d(x, c[2], o)
      local yg, ig = torch.max_pool2d(x:cuda(), c[2], o)
      same(yg, yc, dt, what .. " values")
      check(torch.equal(ig:cpu(), ic), what .. " indices")
      local g = torch.randn(table.unpack(yc:size())):to(dt)
      local xc, xg = x:clone():requires_grad_(), x:cuda():requires_grad_()
      local po = next(c[3]) and c[3] or nil
      ;(torch.max_pool2d(xc, c[2], po) * g):sum():backward()
      ;(torch.max_pool2d(xg, c[2], po) * g:cuda()):sum():backward()
      same(xg.grad, xc.grad, dt, what .. " grad")
    end
  end
  -- NaN wins its window, as on the CPU
  local x = torch.randn(1, 1, 4, 4)
  x[1][1][2][3] = 0 / 0
  local yc, ic = torch.max_pool2d(x, 2, {return_indices = true})
  local yg, ig = torch.max_pool2d(x:cuda(), 2, {return_indices = true})
  check_close(yg:cpu(), yc, {equal_nan = true})
  check(torch.equal(ig:cpu(), ic), "NaN index")
  -- the backward op itself, and an index outside the plane
  local gy = torch.randn(1, 1, 2, 2)
  check_close(torch._backward.max_pool(gy:cuda(), ig, {1, 1, 4, 4}, 2):cpu(),
              torch._backward.max_pool(gy, ic, {1, 1, 4, 4}, 2))
  check_error(function() torch._backward.max_pool(gy:cuda(), (ig * 10):cuda(), {1, 1, 4, 4}, 2):cpu() end,
              "outside the input plane")
end)

test("one Adam step of the Fashion-MNIST CNN equals the CPU's", function()
  local function build()
    torch.manual_seed(5)
    return nn.Sequential(
      nn.Conv2d(1, 32, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
      nn.Conv2d(32, 64, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
      nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
  end
  torch.manual_seed(6)
  local x, y = torch.randn(16, 1, 28, 28), torch.randint(1, 11, {16})
  local function step(dev)
    local m = build():to(dev)
    local opt = optim.Adam(m:parameters(), {lr = 1e-3})
    local losses = {}
    for i = 1, 3 do
      local loss = nn.CrossEntropyLoss()(m(x:to(dev)), y:to(dev))
      opt:zero_grad()
      loss:backward()
      opt:step()
      losses[i] = loss:item()
    end
    return m, losses
  end
  local mc, lc = step("cpu")
  local mg, lg = step("cuda")
  for i = 1, 3 do check_close(torch.tensor(lg[i]), torch.tensor(lc[i]), {atol = 1e-4, rtol = 1e-4}) end
  local pc, pg = mc:parameters(), mg:parameters()
  for i = 1, #pc do same(pg[i], pc[i], torch.float32, "parameter " .. i) end
  check_eq(mg(x:cuda()):argmax(2):cpu():eq(mc(x):argmax(2)):sum():item(), 16, "same predictions")
end)
