-- tests/cuda/test_cuda_conv.lua -- convolutions and max pools on CUDA
-- (tensor/cuda/conv.c: cuDNN where installed, else im2col + cuBLAS and
-- col2im; pooling kernels) against
-- the CPU's results on the same random data: values, indices and the
-- gradients autograd gets for input, weight and bias; then three SGD steps
-- of the Fashion-MNIST CNN. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU conv/pool tests skipped\n")
  return
end

local nn = require "torch.nn"
local optim = require "torch.optim"

-- max |g - c| <= rel * max(1, max |c|): cuDNN's float32 algorithms
-- (Winograd, FFT) differ from the CPU's sums by ~1e-5 of the largest value,
-- not of each value (TF32 would give ~3e-4)
local REL = {[torch.float16] = 1e-2, [torch.float32] = 1e-4, [torch.float64] = 1e-10}
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local same, compare, worst = require("convlib").new({check = check, check_eq = check_eq}, REL)

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
  -- float16 stays float16 (cuDNN, float32 accumulation; im2col: float32 copies)
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

test("grouped convolutions run through cuDNN, and per group through im2col without it", function()
  local x, w, b = torch.randn(2, 4, 5, 5), torch.randn(6, 2, 3, 3), torch.randn(6)
  local want = torch.conv2d(x, w, b, {groups = 2, padding = 1})
  same(torch.conv2d(x:cuda(), w:cuda(), b:cuda(), {groups = 2, padding = 1}), want, torch.float32, "grouped conv2d")
  local old = torch.backends.cudnn.enabled
  torch.backends.cudnn.enabled = false
  local ok, err = pcall(function()
    same(torch.conv2d(x:cuda(), w:cuda(), b:cuda(), {groups = 2, padding = 1}), want, torch.float32, "im2col groups")
  end)
  torch.backends.cudnn.enabled = old
  if not ok then error(err, 0) end
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

-- SGD with momentum: Adam divides each gradient by its own magnitude, so a
-- near-zero gradient that differs in the last bits moves its parameter by
-- up to 2 lr; SGD keeps the devices' differences as small as the gradients'
test("three SGD steps of the Fashion-MNIST CNN equal the CPU's", function()
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
    local opt = optim.SGD(m:parameters(), {lr = 0.05, momentum = 0.9})
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

test("float32 differences from the CPU stay far below TF32's", function()
  io.write(("note: worst float32 difference over the file: %.2g of the largest value\n"):format(worst()))
  check(worst() < 1e-4, "worst " .. worst())
end)
