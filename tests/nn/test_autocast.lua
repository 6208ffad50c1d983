-- tests/nn/test_autocast.lua -- torch.autocast (lua/torch/amp/autocast.lua,
-- the per-op policies of lua_bindings/l_autocast.c) and torch.amp.GradScaler
-- (lua/torch/amp/grad_scaler.lua, tensor/amp.c). Runs on DEVICE: on the CPU
-- autocast uses PyTorch's CPU op lists, under MOONTORCH_TEST_DEVICE=cuda the
-- CUDA lists (both with bfloat16 here; float16 is in tests/cuda/).
local nn = torch.nn
local F = nn.functional
local optim = require "torch.optim"

local bf16, f32, f64 = torch.bfloat16, torch.float32, torch.float64
local cuda = DEVICE == "cuda"

-- fn() unless it needs an op that has no CUDA path yet (then a note, and nil).
local function unless_cuda_gap(what, fn)
  local ok, err = pcall(fn)
  if not ok and tostring(err):find("not implemented on CUDA yet", 1, true) then
    io.write("note: ", what, " skipped: ", tostring(err):match("[%w_]+: not implemented on CUDA yet"), "\n")
    return nil
  end
  if not ok then error(err, 0) end
  return err
end

-- A module built on the CPU (where its initializers draw) and moved to DEVICE.
local function build(fn)
  torch.set_default_device("cpu")
  local ok, m = pcall(fn)
  torch.set_default_device(DEVICE)
  if not ok then error(m, 0) end
  return m:to(DEVICE)
end

-- Checks the dtype of each result of ops {name = fn}, skipping CUDA gaps.
local function check_dtypes(ops, want)
  for name, fn in pairs(ops) do
    local y = unless_cuda_gap(name, fn)
    if y ~= nil then check_eq(y.dtype, want, name) end
  end
end

test("autocast regions nest and restore the previous state on close", function()
  check(not torch.is_autocast_enabled(DEVICE))
  local default = torch.get_autocast_dtype(DEVICE)
  check_eq(default, cuda and torch.float16 or bf16)
  do
    local ac <close> = torch.autocast(DEVICE, bf16)
    check(torch.is_autocast_enabled(DEVICE))
    check_eq(torch.get_autocast_dtype(DEVICE), bf16)
    do
      local off <close> = torch.autocast(DEVICE, {enabled = false})
      check(not torch.is_autocast_enabled(DEVICE))
      check_eq(torch.mm(torch.randn(2, 3), torch.randn(3, 2)).dtype, f32)
    end
    check(torch.is_autocast_enabled(DEVICE))
    do
      local h <close> = torch.autocast(DEVICE, {dtype = torch.float16, cache_enabled = false})
      check_eq(torch.get_autocast_dtype(DEVICE), torch.float16)
      check(not torch.is_autocast_cache_enabled())
      check_eq(torch.mm(torch.randn(2, 3), torch.randn(3, 2)).dtype, torch.float16)
    end
    check(torch.is_autocast_cache_enabled())
    check_eq(torch.get_autocast_dtype(DEVICE), bf16)
  end
  check(not torch.is_autocast_enabled(DEVICE))
  check_eq(torch.get_autocast_dtype(DEVICE), default)
  -- the other device type is not touched
  local other = cuda and "cpu" or "cuda"
  do
    local ac <close> = torch.autocast(DEVICE, bf16)
    check(not torch.is_autocast_enabled(other))
  end
end)

test("an error unwinding through the region restores the state", function()
  local ok, err = pcall(function()
    local ac <close> = torch.autocast(DEVICE, bf16)
    check(torch.is_autocast_enabled(DEVICE))
    error("boom in the region")
  end)
  check(not ok and tostring(err):find("boom in the region", 1, true))
  check(not torch.is_autocast_enabled(DEVICE))
  ok, err = pcall(torch.autocast, DEVICE, bf16, function() error("boom in fn") end)
  check(not ok and tostring(err):find("boom in fn", 1, true))
  check(not torch.is_autocast_enabled(DEVICE))
  -- an error inside an F function called in a region, caught there, leaves autocast on
  do
    local ac <close> = torch.autocast(DEVICE, bf16)
    check(not pcall(F.mse_loss, torch.randn(2), torch.randn(3)))
    check_eq(torch.mm(torch.randn(2, 3), torch.randn(3, 2)).dtype, bf16)
  end
end)

test("the function form returns fn's results and closes the region", function()
  local a, b = torch.randn(3, 4), torch.randn(4, 5)
  local y, n = torch.autocast(DEVICE, bf16, function() return torch.mm(a, b), 42 end)
  check_eq(y.dtype, bf16)
  check_eq(n, 42)
  check(not torch.is_autocast_enabled(DEVICE))
  y = torch.autocast(DEVICE, {dtype = "bfloat16"}, function() return a:matmul(b) end)
  check_eq(y.dtype, bf16)
  check_close(y:float(), a:matmul(b), {atol = 0.1, rtol = 0.02})
  check_eq(torch.mm(a, b).dtype, f32)
end)

test("bad arguments raise clear errors", function()
  check_error(function() return torch.autocast("xpu", bf16) end, "unsupported device type 'xpu'")
  check_error(function() return torch.autocast(DEVICE, torch.float32) end, "must be torch.float16 or torch.bfloat16")
  check_error(function() return torch.autocast(DEVICE, 3) end, "expected a dtype")
  check(not torch.is_autocast_enabled(DEVICE))
end)

test("products and convolutions run in the low-precision dtype", function()
  local ac <close> = torch.autocast(DEVICE, bf16)
  local a, b = torch.randn(3, 4), torch.randn(4, 5)
  check_dtypes({
    mm = function() return torch.mm(a, b) end, matmul = function() return a:matmul(b) end,
    bmm = function() return torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 4, 5)) end,
    addmm = function() return torch.addmm(torch.randn(5), a, b) end,
    baddbmm = function() return torch.baddbmm(torch.randn(2, 3, 5), torch.randn(2, 3, 4), torch.randn(2, 4, 5)) end,
    linear = function() return F.linear(a, torch.randn(6, 4), torch.randn(6)) end,
    module = function() return build(function() return nn.Linear(4, 2) end)(a) end,
    conv1d = function() return F.conv1d(torch.randn(2, 3, 8), torch.randn(4, 3, 3)) end,
    conv2d = function() return build(function() return nn.Conv2d(3, 4, 3) end)(torch.randn(2, 3, 6, 6)) end,
  }, bf16)
  -- the result matches the computation with explicit casts
  check_close(torch.mm(a, b):float(), torch.mm(a:bfloat16(), b:bfloat16()):float())
  -- float64 and integer arguments are not eligible
  check_eq(torch.mm(a:double(), b:double()).dtype, f64)
  local i64 = torch.ones(2, 2, {dtype = torch.int64})
  check_eq((i64 + 1).dtype, torch.int64)
  check_dtypes({cat_int = function() return torch.cat{i64, i64} end}, torch.int64)
  unless_cuda_gap("sdpa under autocast", function()
    local q = torch.randn(1, 2, 3, 4)
    check_eq(F.scaled_dot_product_attention(q, q, q).dtype, bf16)
  end)
end)

test("float32 ops run in float32 per the device's list", function()
  local ac <close> = torch.autocast(DEVICE, bf16)
  local x = torch.randn(3, 4):bfloat16()
  local t = torch.randn(3, 4):bfloat16()
  check_dtypes({
    mse_loss = function() return F.mse_loss(x, t) end, l1_loss = function() return F.l1_loss(x, t) end,
    smooth_l1_loss = function() return F.smooth_l1_loss(x, t) end,
    cross_entropy = function() return F.cross_entropy(x, torch.tensor{1, 2, 4}) end,
    nll_loss = function() return F.nll_loss(x:float():log_softmax(2):bfloat16(), torch.tensor{1, 2, 4}) end,
    bce_with_logits = function() return F.binary_cross_entropy_with_logits(x, t:float():sigmoid():bfloat16()) end,
    prod = function() return x:prod() end, kl_div = function() return F.kl_div(x, t) end,
  }, f32)
  -- PyTorch's CUDA list adds the exp/log family, softmax, norms and sums; the CPU's does not
  check_dtypes({
    exp = function() return x:exp() end, log = function() return x:abs():log() end,
    pow = function() return x:pow(2) end, pow_op = function() return x ^ 2 end,
    rsqrt = function() return x:abs():rsqrt() end, softmax = function() return x:softmax(2) end,
    log_softmax = function() return x:log_softmax(2) end, sum = function() return x:sum() end,
    cumsum = function() return x:cumsum(1) end, layer_norm = function() return F.layer_norm(x, {4}) end,
    group_norm = function() return F.group_norm(x:view(3, 4, 1), 2) end,
  }, cuda and f32 or bf16)
  -- elementwise ops outside the lists keep their inputs' types
  check_eq((x + x).dtype, bf16)
  check_eq(x:relu().dtype, bf16)
  -- an explicit dtype is respected
  check_dtypes({sum_dtype = function() return x:sum({dtype = f64}) end,
                softmax_dtype = function() return F.softmax(x, 2, f64) end}, f64)
  -- values: the float32 op on the float32 values
  check_close(F.mse_loss(x, t), F.mse_loss(x:float(), t:float()))
  -- binary_cross_entropy: float32 on the CPU, banned under CUDA autocast (as in PyTorch)
  local p = t:float():sigmoid():bfloat16()
  if cuda then
    check_error(function() return F.binary_cross_entropy(p, p) end, "unsafe to autocast")
  else
    check_dtypes({binary_cross_entropy = function() return F.binary_cross_entropy(p, p) end}, f32)
  end
end)

test("cat, stack and where promote to the widest input type", function()
  local ac <close> = torch.autocast(DEVICE, bf16)
  local h, s = torch.randn(2, 3):bfloat16(), torch.randn(2, 3)
  check_dtypes({
    cat = function() return torch.cat{h, s} end, cat_dim = function() return torch.cat({h, s}, 2) end,
    stack = function() return torch.stack{h, s} end, where = function() return torch.where(s:gt(0), h, s) end,
  }, f32)
  check_dtypes({cat_same = function() return torch.cat{h, h} end}, bf16)
  unless_cuda_gap("cat values", function()
    local list = {h, s}
    torch.cat(list)
    check(rawequal(list[1], h), "the caller's list is not changed")
    check_close(torch.cat{h, s}, torch.cat{h:float(), s})
  end)
end)

test("gradients of float32 parameters are float32 and match explicit casts", function()
  torch.manual_seed(1)
  local lin = build(function() return nn.Linear(4, 3) end)
  local x, target = torch.randn(5, 4), torch.randn(5, 3)
  local loss
  do
    local ac <close> = torch.autocast(DEVICE, bf16)
    local y = lin(x)
    check_eq(y.dtype, bf16)
    loss = F.mse_loss(y, target)
    check_eq(loss.dtype, f32)
  end
  loss:backward()
  check_eq(lin.weight.grad.dtype, f32)
  check_eq(lin.bias.grad.dtype, f32)
  -- the same computation with the casts written out
  local w = lin.weight:detach():clone():requires_grad_()
  local b = lin.bias:detach():clone():requires_grad_()
  local y = x:bfloat16():matmul(w:bfloat16():t()) + b:bfloat16()
  F.mse_loss(y:float(), target):backward()
  -- on CUDA the linear is one cuBLASLt call whose weight and bias gradients
  -- (one call too) sum in another order: the bfloat16 results may be a
  -- couple of units in the last place (0.4% each) apart
  local tol = DEVICE == "cuda" and {atol = 1e-6, rtol = 2e-2} or {atol = 1e-6}
  check_close(lin.weight.grad, w.grad, tol)
  check_close(lin.bias.grad, b.grad, tol)
  -- and close to the float32 gradient
  local w32 = lin.weight:detach():clone():requires_grad_()
  F.mse_loss(x:matmul(w32:t()) + lin.bias:detach(), target):backward()
  check_close(lin.weight.grad, w32.grad, {atol = 0.05, rtol = 0.05})
end)

test("a weight's cast is cached within a region and follows in-place updates", function()
  local w = torch.randn(3, 4, {requires_grad = true})
  local x = torch.randn(2, 4)
  for _, cache in ipairs{true, false} do
    w.grad = nil
    local y1, y2, y3
    do
      local ac <close> = torch.autocast(DEVICE, bf16, {cache_enabled = cache})
      y1 = F.linear(x, w)
      y2 = F.linear(x, w) -- the cached cast when cache is on
      torch.no_grad(function() w:mul_(2) end)
      y3 = F.linear(x, w) -- a changed weight is cast again
    end
    check_close(y1, y2)
    check_close(y3:float(), y1:float() * 2, {atol = 0.05, rtol = 0.02})
    ;(y1:float():sum() + y2:float():sum()):backward()
    check_close(w.grad, x:bfloat16():float():sum(1):expand(3, 4) * 2, {atol = 1e-2, rtol = 1e-2})
    torch.no_grad(function() w:div_(2) end)
  end
end)

test("nn modules reach the autocast ops: MLP, CNN, attention, transformer layer", function()
  torch.manual_seed(2)
  local function grads_f32(m)
    for _, p in ipairs(m:parameters()) do check(p.grad == nil or p.grad.dtype == f32) end
  end
  local cnn = build(function()
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5))
  end)
  local x = torch.randn(2, 1, 8, 8)
  local out
  do
    local ac <close> = torch.autocast(DEVICE, bf16)
    out = cnn(x)
    check_eq(out.dtype, bf16)
    out = F.cross_entropy(out, torch.tensor{1, 5})
  end
  out:backward()
  grads_f32(cnn)
  check_close(out, F.cross_entropy(cnn(x), torch.tensor{1, 5}), {atol = 0.05, rtol = 0.05})
  unless_cuda_gap("attention modules under autocast", function()
    local mha = build(function() return nn.MultiheadAttention(8, 2, {batch_first = true}) end)
    local enc = build(function()
      return nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, dropout = 0, batch_first = true})
    end)
    local q = torch.randn(2, 3, 8)
    local ref_attn, ref_enc = mha(q, q, q), enc(q)
    local attn, y
    do
      local ac <close> = torch.autocast(DEVICE, bf16)
      attn = mha(q, q, q)
      check_eq(attn.dtype, bf16)
      y = enc(q)
    end
    check_close(attn:float(), ref_attn, {atol = 0.05, rtol = 0.05})
    check_close(y:float(), ref_enc, {atol = 0.1, rtol = 0.05})
    ;(attn:float():sum() + y:float():sum()):backward()
    grads_f32(mha)
    grads_f32(enc)
  end)
end)

-- ---- GradScaler ----

local function mlp_run(use_amp, steps)
  torch.manual_seed(7)
  local X = torch.randn(64, 8)
  local Y = (X:matmul(torch.randn(8, 1)) + 0.1 * torch.randn(64, 1)):tanh()
  local model = build(function() return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)) end)
  local opt = optim.SGD(model:parameters(), {lr = 0.1})
  local scaler = torch.amp.GradScaler(DEVICE, {enabled = use_amp, init_scale = 2 ^ 12})
  local losses = {}
  for i = 1, steps do
    opt:zero_grad()
    local loss = torch.autocast(DEVICE, bf16, {enabled = use_amp}, function() return F.mse_loss(model(X), Y) end)
    scaler:scale(loss):backward()
    scaler:step(opt)
    scaler:update()
    losses[i] = loss:item()
  end
  return losses, scaler
end

test("a small training loop with autocast and GradScaler follows the float32 one", function()
  local ref = mlp_run(false, 40)
  local amp, scaler = mlp_run(true, 40)
  check(ref[40] < 0.5 * ref[1], "float32 run learns")
  check(amp[40] < 0.5 * amp[1], "amp run learns")
  check(math.abs(amp[40] - ref[40]) < 0.1 * ref[1], ("final losses %g vs %g"):format(amp[40], ref[40]))
  check_eq(scaler:get_scale(), 2 ^ 12) -- no overflow, fewer than growth_interval steps
  check_eq(scaler:_get_growth_tracker(), 40)
end)

test("GradScaler scales, unscales, and skips a step on inf with the scale halving", function()
  local p = torch.tensor({1.0, 2.0}, {requires_grad = true})
  local opt = optim.SGD({p}, {lr = 1})
  local scaler = torch.amp.GradScaler(DEVICE)
  check_eq(scaler:get_scale(), 65536.0)
  check_close(scaler:scale(torch.tensor{2.0}), {131072.0})
  local l = scaler:scale({torch.tensor{1.0}, {torch.tensor{3.0}}})
  check_close(l[2][1], {196608.0})
  -- finite gradients: the step uses the unscaled values
  p.grad = torch.tensor{0.5, -1.0} * 65536
  scaler:step(opt)
  check_close(p, {0.5, 3.0})
  scaler:update()
  check_eq(scaler:get_scale(), 65536.0)
  check_eq(scaler:_get_growth_tracker(), 1)
  -- an inf (or NaN) gradient: no step, the scale halves, the tracker restarts
  for _, bad in ipairs{math.huge, 0 / 0} do
    p.grad = torch.tensor{bad, 1.0}
    local before = p:detach():clone()
    scaler:step(opt)
    check_close(p, before)
    scaler:update()
  end
  check_eq(scaler:get_scale(), 16384.0)
  check_eq(scaler:_get_growth_tracker(), 0)
  -- update(new_scale)
  p.grad = torch.tensor{1.0, 1.0}
  scaler:step(opt)
  scaler:update(1024.0)
  check_eq(scaler:get_scale(), 1024.0)
end)

test("GradScaler grows the scale after growth_interval clean steps", function()
  local p = torch.zeros(3, {requires_grad = true})
  local opt = optim.SGD({p}, {lr = 0.1})
  local scaler = torch.amp.GradScaler(DEVICE, {init_scale = 4.0, growth_interval = 3})
  local seen = {}
  for i = 1, 7 do
    p.grad = i == 5 and torch.tensor{1.0, math.huge, 1.0} or torch.ones(3)
    scaler:step(opt)
    scaler:update()
    seen[i] = scaler:get_scale()
  end
  check_eq(seen, {4.0, 4.0, 8.0, 8.0, 4.0, 4.0, 4.0})
  check_eq(scaler:_get_growth_tracker(), 2)
  -- the unscaled gradients 1/scale: five steps at scale 4, one at 8, the inf step skipped
  check_close(p, torch.full({3}, -0.1 * (5 / 4 + 1 / 8)), {atol = 1e-6})
end)

test("GradScaler unscale_, errors, state_dict and the disabled scaler", function()
  local p = torch.ones(2, {requires_grad = true})
  local opt = optim.SGD({p}, {lr = 1})
  local scaler = torch.amp.GradScaler(DEVICE, {init_scale = 8.0})
  p.grad = torch.tensor{8.0, 16.0}
  scaler:unscale_(opt)
  check_close(p.grad, {1.0, 2.0})
  check_error(function() scaler:unscale_(opt) end, "unscale_() has already been called")
  scaler:step(opt) -- does not unscale again
  check_close(p, {0.0, -1.0})
  check_error(function() scaler:step(opt) end, "step() has already been called")
  scaler:update()
  check_error(function() scaler:update() end, "no inf checks were recorded")
  local sd = scaler:state_dict()
  check_eq(sd, {scale = 8.0, growth_factor = 2.0, backoff_factor = 0.5, growth_interval = 2000, _growth_tracker = 1})
  local other = torch.amp.GradScaler(DEVICE)
  other:load_state_dict(sd)
  check_eq(other:get_scale(), 8.0)
  check_eq(other:_get_growth_tracker(), 1)
  check_error(function() torch.amp.GradScaler(DEVICE, {growth_factor = 0.5}) end, "growth factor must be > 1.0")
  check_error(function() torch.amp.GradScaler(DEVICE, {backoff_factor = 2}) end, "backoff factor must be < 1.0")
  check_error(function() torch.amp.GradScaler(DEVICE, {growth_intervall = 2}) end, "unknown option")
  local off = torch.amp.GradScaler(DEVICE, {enabled = false})
  local loss = torch.tensor{3.0}
  check(rawequal(off:scale(loss), loss))
  check_eq(off:get_scale(), 1.0)
  check_eq(off:state_dict(), {})
  p.grad = torch.ones(2)
  off:step(opt)
  check_close(p, {-1.0, -2.0})
  off:update()
  check(torch.cuda.amp.GradScaler ~= nil and torch.amp.autocast == torch.autocast)
end)

test("the fused unscale and inf check", function()
  for _, dt in ipairs{f32, f64, torch.float16, bf16} do
    local a = torch.tensor({2.0, -4.0, 8.0}, {dtype = dt})
    local b = torch.tensor({{1.0, 2.0}, {3.0, 4.0}}, {dtype = dt}):t() -- not contiguous
    local found = torch.zeros(1)
    torch._amp_foreach_non_finite_check_and_unscale_({a, b}, found, 0.5)
    check_close(a:double(), {1.0, -2.0, 4.0})
    check_close(b:double(), {{0.5, 1.5}, {1.0, 2.0}})
    check_eq(found:item(), 0.0)
    local c = torch.tensor({1.0, 0 / 0, 2.0}, {dtype = dt})
    torch._amp_foreach_non_finite_check_and_unscale_({c}, found, 1.0)
    check_eq(found:item(), 1.0)
    found:zero_()
    local d = torch.tensor({1.0, -math.huge}, {dtype = dt})
    torch._amp_foreach_non_finite_check_and_unscale_({a, d}, found, 0.25)
    check_eq(found:item(), 1.0)
  end
  check_error(function()
    torch._amp_foreach_non_finite_check_and_unscale_({torch.ones(2, {dtype = torch.int64})}, torch.zeros(1), 1.0)
  end, "expected floating gradients")
  check_error(function()
    torch._amp_foreach_non_finite_check_and_unscale_({torch.ones(2)}, torch.zeros(2), 1.0)
  end, "found_inf must be a float32 tensor of one element")
end)

test("torch.compile guards on the autocast state", function()
  if cuda then return end -- calls with CUDA arguments run eagerly
  local g = torch.compile(function(x) return (x * 3):prod(1) + 1 end)
  local x = torch.randn(3, 4)
  g(x)
  g(x)
  local before = torch.compiler.stats(g).recompiles
  local y = torch.autocast(DEVICE, bf16, function() return g(x) end)
  check(torch.compiler.stats(g).recompiles > before, "entering a region recompiles")
  check_close(y, (x * 3):prod(1) + 1)
end)
