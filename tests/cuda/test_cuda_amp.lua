-- tests/cuda/test_cuda_amp.lua -- mixed precision on the GPU: float16 and
-- bfloat16 autocast with PyTorch's CUDA op lists, GradScaler training an
-- MLP in float16, and the fused unscale kernel (tensor/cuda/amp.cu) against
-- the CPU path. Skipped without a GPU.
if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU amp tests skipped\n")
  test("torch.cuda.amp exists without a GPU; its GradScaler is disabled", function()
    check(torch.cuda.amp.autocast ~= nil)
    local s = torch.cuda.amp.GradScaler()
    check(not s:is_enabled())
    check_eq(s:get_scale(), 1.0)
  end)
  return
end

local nn, F = torch.nn, torch.nn.functional
local optim = require "torch.optim"
local f16, bf16, f32 = torch.float16, torch.bfloat16, torch.float32
local function gpu(...) return torch.randn(...):cuda() end

test("float16 autocast on CUDA: op dtypes per PyTorch's CUDA lists", function()
  local a, b = gpu(8, 16), gpu(16, 4)
  local x = gpu(4, 6)
  local ac <close> = torch.cuda.amp.autocast()
  check_eq(torch.get_autocast_dtype("cuda"), f16)
  local function dtypes(ops, want)
    for k, fn in pairs(ops) do
      local ok, y = pcall(fn)
      if not ok and tostring(y):find("not implemented on CUDA yet", 1, true) then
        io.write("note: ", k, " skipped: ", tostring(y):match("[%w_]+: not implemented on CUDA yet"), "\n")
      elseif not ok then
        error(y, 0)
      else
        check_eq(y.dtype, want, k)
      end
    end
  end
  dtypes({mm = function() return torch.mm(a, b) end, matmul = function() return a:matmul(b) end,
          linear = function() return nn.Linear(16, 3):cuda()(a) end,
          conv2d = function() return nn.Conv2d(2, 3, 3):cuda()(gpu(1, 2, 5, 5)) end,
          bmm = function() return torch.bmm(gpu(2, 3, 4), gpu(2, 4, 5)) end}, f16)
  dtypes({exp = function() return x:exp() end, log = function() return x:abs():log() end,
          softmax = function() return x:softmax(2) end, log_softmax = function() return x:log_softmax(2) end,
          sum = function() return x:half():sum() end, layer_norm = function() return F.layer_norm(x:half(), {6}) end,
          mse = function() return F.mse_loss(x:half(), x) end, pow = function() return x:half() ^ 2 end,
          ce = function() return F.cross_entropy(x:half(), torch.tensor{1, 2, 3, 6}:cuda()) end,
          cat = function() return torch.cat{x:half(), x} end}, f32)
  check_eq((x:half() + x:half()).dtype, f16)
  -- values against the CPU in float32
  check_close(torch.mm(a, b):float():cpu(), torch.mm(a:cpu(), b:cpu()), {atol = 0.05, rtol = 0.01})
end)

test("bfloat16 autocast on CUDA agrees with the CPU's", function()
  torch.manual_seed(3)
  local lin = nn.Linear(32, 8)
  local x = torch.randn(16, 32)
  local cpu_y = torch.autocast("cpu", bf16, function() return lin(x) end)
  lin:cuda()
  local y = torch.autocast("cuda", bf16, function() return lin(x:cuda()) end)
  check_eq(y.dtype, bf16)
  check_eq(cpu_y.dtype, bf16)
  check_close(y:float():cpu(), cpu_y:float(), {atol = 0.05, rtol = 0.02})
  -- gradients reach the float32 parameters as float32
  torch.autocast("cuda", bf16, function() return F.mse_loss(lin(x:cuda()), torch.zeros(16, 8):cuda()) end):backward()
  check_eq(lin.weight.grad.dtype, f32)
  check(lin.weight.grad.is_cuda)
end)

local function train(use_amp, init_scale, steps)
  torch.manual_seed(11)
  local X = torch.randn(256, 20)
  local Y = (X:matmul(torch.randn(20, 1)) * 0.3):sin()
  X, Y = X:cuda(), Y:cuda()
  local model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1)):cuda()
  local opt = optim.SGD(model:parameters(), {lr = 0.05, momentum = 0.9})
  local scaler = torch.cuda.amp.GradScaler({enabled = use_amp, init_scale = init_scale})
  local losses, skipped = {}, 0
  for i = 1, steps do
    opt:zero_grad()
    local loss = torch.autocast("cuda", f16, {enabled = use_amp}, function() return F.mse_loss(model(X), Y) end)
    scaler:scale(loss):backward()
    local before = scaler:get_scale()
    scaler:step(opt)
    scaler:update()
    if scaler:get_scale() < before then skipped = skipped + 1 end
    losses[i] = loss:item()
  end
  return losses, scaler, skipped, model
end

test("float16 autocast + GradScaler trains an MLP on CUDA like float32", function()
  local ref = train(false, nil, 60)
  local amp, scaler, skipped, model = train(true, 2 ^ 16, 60)
  check(ref[60] < 0.3 * ref[1], "float32 learns")
  check(amp[60] < 0.3 * amp[1], "float16 learns")
  check(math.abs(amp[60] - ref[60]) < 0.05 * ref[1] + 0.2 * ref[60], ("final %g vs %g"):format(amp[60], ref[60]))
  for _, p in ipairs(model:parameters()) do
    check_eq(p.dtype, f32)
    check(p:isfinite():all():item())
  end
  check(scaler:get_scale() <= 2 ^ 16)
  io.write(("note: fp16 loss %.4f -> %.4f (fp32 %.4f -> %.4f), %d skipped steps\n"):format(amp[1], amp[60], ref[1],
           ref[60], skipped))
end)

test("an overflowing scale is backed off: float16 gradients overflow, steps are skipped, training goes on", function()
  local amp, scaler, skipped, model = train(true, 2 ^ 40, 60)
  check(skipped >= 10, "skipped " .. skipped)
  check(scaler:get_scale() < 2 ^ 40 / 2 ^ 9)
  check(amp[60] < 0.5 * amp[1], ("loss %g -> %g"):format(amp[1], amp[60]))
  for _, p in ipairs(model:parameters()) do check(p:isfinite():all():item()) end
end)

test("the fused unscale kernel matches the CPU for every floating dtype", function()
  torch.manual_seed(5)
  for _, dt in ipairs{f32, torch.float64, f16, bf16} do
    for _, n in ipairs{7, 1000003} do
      local h = (torch.randn(n) * 100):to(dt)
      local g = h:cuda()
      local fh, fg = torch.zeros(1), torch.zeros(1, {device = "cuda"})
      torch._amp_foreach_non_finite_check_and_unscale_({h}, fh, 1 / 64)
      torch._amp_foreach_non_finite_check_and_unscale_({g}, fg, 1 / 64)
      check_close(g:cpu():double(), h:double(), {atol = 0, rtol = 0})
      check_eq(fg:item(), 0.0)
      -- one bad value far into the tensor, in a second tensor of the list
      local bad = torch.ones(n):to(dt)
      bad[n] = (n % 2 == 0) and math.huge or 0 / 0
      torch._amp_foreach_non_finite_check_and_unscale_({g, bad:cuda()}, fg, 1.0)
      check_eq(fg:item(), 1.0)
    end
    -- a transposed (non-contiguous) gradient
    local t = gpu(3, 5):to(dt):t()
    local want = t:cpu():double() * 0.5
    torch._amp_foreach_non_finite_check_and_unscale_({t}, torch.zeros(1, {device = "cuda"}), 0.5)
    check_close(t:cpu():double(), want, {atol = 0, rtol = 0})
  end
  check_error(function()
    torch._amp_foreach_non_finite_check_and_unscale_({gpu(2)}, torch.zeros(1), 1.0)
  end, "same device")
end)

test("GradScaler skips the step on CUDA when a gradient holds inf", function()
  local p = torch.ones(4, {device = "cuda", requires_grad = true})
  local opt = optim.SGD({p}, {lr = 1})
  local scaler = torch.amp.GradScaler("cuda", {init_scale = 2.0})
  p.grad = torch.tensor({2.0, 2.0, math.huge, 2.0}):cuda()
  scaler:step(opt)
  scaler:update()
  check_close(p:cpu(), {1, 1, 1, 1})
  check_eq(scaler:get_scale(), 1.0)
  p.grad = torch.full({4}, 3.0):cuda()
  scaler:step(opt)
  scaler:update()
  check_close(p:cpu(), {-2, -2, -2, -2})
end)
