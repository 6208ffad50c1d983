-- tests/jit/test_train_step.lua -- a whole training step compiled as one
-- graph (forward, loss:backward(), optimizer:step(), zero_grad()) against
-- the same step run eagerly on an identical model: parameters, gradients,
-- optimizer state and losses agree step by step; learning-rate changes
-- reuse the graph; replaced parameters are noticed by the guards.
local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/jit"
package.path = here .. "/?.lua;" .. package.path
local J = require "jitlib"

local TOL = {atol = 2e-5, rtol = 1e-4}

local function mlp() return nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 5)) end
local function cnn()
  return nn.Sequential(nn.Conv2d(1, 4, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 6, 3),
    nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(6, 5))
end

local setup = J.train_setup -- a model, its optimizer and a step function

-- runs n steps eagerly and compiled on the same data; compares as it goes
local function agree(make, make_opt, xs, y, n, between)
  local me, oe, se = setup(make, make_opt, 7)
  local mc, oc, sc = setup(make, make_opt, 7)
  local c = torch.compile(sc)
  for i = 1, n do
    if between then between(i, oe, oc) end
    local le, lc = se(xs, y), c(xs, y)
    check_close(lc, le, TOL)
    local pe, pc = me:parameters(), mc:parameters()
    for k = 1, #pe do
      check_close(pc[k], pe[k], TOL)
      check_close(pc[k].grad, pe[k].grad, TOL)
    end
  end
  return c, oe, oc
end

test("MLP + Adam: compiled steps match eager ones", function()
  torch.compiler.reset()
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  agree(mlp, function(p) return optim.Adam(p, {lr = 1e-2}) end, x, y, 6)
  local s = torch.compiler.stats()
  check(s.compiled_calls >= 3, "compiled calls: " .. s.compiled_calls)
  check_eq(s.fallbacks, 0)
end)

test("CNN (conv, max/avg pool) + SGD with momentum: compiled steps match eager ones", function()
  torch.compiler.reset()
  local x, y = torch.randn(6, 1, 8, 8), torch.randint(1, 6, {6})
  agree(cnn, function(p) return optim.SGD(p, {lr = 0.05, momentum = 0.9}) end, x, y, 6)
  local s = torch.compiler.stats()
  check(s.compiled_calls >= 3, "compiled calls: " .. s.compiled_calls)
  check_eq(s.fallbacks, 0)
end)

test("AdamW state (step count, moments) matches eager after compiled steps", function()
  torch.compiler.reset()
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  local _, oe, oc = agree(mlp, function(p) return optim.AdamW(p, {lr = 1e-2, weight_decay = 0.1}) end, x, y, 5)
  local pe, pc = oe.param_groups[1].params, oc.param_groups[1].params
  for k = 1, #pe do
    local se, sc = oe.state[pe[k]], oc.state[pc[k]]
    check_close(sc.exp_avg, se.exp_avg, TOL)
    check_close(sc.exp_avg_sq, se.exp_avg_sq, TOL)
    check_eq(tonumber(torch.is_tensor(sc.step) and sc.step:item() or sc.step), se.step)
  end
end)

test("an MSE loss written with ^2 (pow's backward masks its exponent) compiles with no fallback", function()
  torch.compiler.reset()
  local function mse_setup(seed)
    torch.manual_seed(seed)
    local m = mlp()
    local opt = optim.AdamW(m:parameters(), {lr = 1e-2, weight_decay = 0.1})
    return m, function(x, y)
      opt:zero_grad()
      local loss = ((m(x) - y) ^ 2):mean() + (m(x):abs() + 1):pow(1.5):mean()
      loss:backward()
      opt:step()
      return loss
    end
  end
  local me, se = mse_setup(4)
  local mc, sc = mse_setup(4)
  local c = torch.compile(sc)
  local x, y = torch.randn(8, 12), torch.randn(8, 5)
  for _ = 1, 5 do
    check_close(c(x, y), se(x, y), TOL)
    local pe, pc = me:parameters(), mc:parameters()
    for k = 1, #pe do check_close(pc[k], pe[k], TOL) end
  end
  local s = torch.compiler.stats()
  check(s.compiled_calls >= 3, "compiled calls: " .. s.compiled_calls)
  check_eq(s.fallbacks, 0)
end)

test("clip_grad_norm_ inside a compiled step: the same total norm and clipped gradients", function()
  torch.compiler.reset()
  local function clip_setup()
    torch.manual_seed(6)
    local m = nn.Sequential(nn.Linear(12, 16), nn.Tanh(), nn.Linear(16, 5))
    return m, function(x, y)
      m:zero_grad()
      local loss = nn.CrossEntropyLoss()(m(x) * 5, y)
      loss:backward()
      return nn.utils.clip_grad_norm_(m:parameters(), 0.05)
    end
  end
  local me, se = clip_setup()
  local mc, sc = clip_setup()
  local c = torch.compile(sc)
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  for _ = 1, 4 do
    local ne, nc = se(x, y), c(x, y)
    check(ne:item() > 0.05, "the norm is clipped: " .. ne:item())
    check_close(nc, ne, TOL)
    local pe, pc = me:parameters(), mc:parameters()
    for k = 1, #pe do check_close(pc[k].grad, pe[k].grad, TOL) end
  end
  check_eq(torch.compiler.stats().fallbacks, 0)
  check(torch.compiler.stats().compiled_calls >= 2, "compiled")
end)

test("a learning-rate change reuses the compiled graph", function()
  torch.compiler.reset()
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  local c = agree(mlp, function(p) return optim.Adam(p, {lr = 1e-2}) end, x, y, 8, function(i, oe, oc)
    if i >= 4 then
      local lr = 1e-2 / i
      oe.param_groups[1].lr, oc.param_groups[1].lr = lr, lr
    end
  end)
  local s = torch.compiler.stats()
  check_eq(s.recompiles, 0)
  check(s.compiled_calls >= 5, "compiled calls: " .. s.compiled_calls)
  check(tostring(c):match("1 graph"), tostring(c))
end)

test("lr_scheduler steps between compiled steps need no recompile", function()
  torch.compiler.reset()
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  local sche, schc
  agree(mlp, function(p) return optim.SGD(p, {lr = 0.1}) end, x, y, 6, function(i, oe, oc)
    if i == 1 then
      sche = optim.lr_scheduler.StepLR(oe, 1, 0.5)
      schc = optim.lr_scheduler.StepLR(oc, 1, 0.5)
    else
      sche:step(); schc:step()
    end
  end)
  check_eq(torch.compiler.stats().recompiles, 0)
end)

test("zero_grad(set_to_none=false) zeroes the existing .grad tensors in place", function()
  torch.compiler.reset()
  torch.manual_seed(3)
  local m = mlp()
  local opt = optim.SGD(m:parameters(), {lr = 0.1})
  local lf = nn.CrossEntropyLoss()
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  local c = torch.compile(function()
    opt:zero_grad(false)
    local loss = lf(m(x), y)
    loss:backward()
    opt:step()
    return loss
  end)
  for _ = 1, 4 do c() end
  -- eager reference from the same weights: one more step by hand
  local w0 = m:parameters()[1]:clone()
  local loss = lf(m(x), y)
  opt:zero_grad(false)
  loss:backward()
  local g = m:parameters()[1].grad:clone()
  c()
  check_close(m:parameters()[1], w0 - g * 0.1, TOL)
  check(torch.compiler.stats().compiled_calls >= 2, "compiled")
end)

test("a replaced parameter is caught by the guards (no stale tensor is updated)", function()
  torch.compiler.reset()
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  local m, _, step = setup(mlp, function(p) return optim.SGD(p, {lr = 0.1}) end, 1)
  local c = torch.compile(step)
  for _ = 1, 3 do c(x, y) end
  local old = m[1].weight
  local before = old:clone()
  torch.no_grad(function() m[1].weight = nn.Parameter(torch.zeros(16, 12)) end)
  c(x, y)
  check_close(old, before) -- the old tensor is no longer updated
  check(m[1].weight:abs():sum():item() >= 0)
end)

test("a compiled step ending in a host read (loss:item()) returns the loss of each step", function()
  torch.compiler.reset()
  local m, opt = setup(mlp, function(p) return optim.SGD(p, {lr = 0.1}) end, 1)
  local lf = nn.CrossEntropyLoss()
  local x, y = torch.randn(8, 12), torch.randint(1, 6, {8})
  local c = torch.compile(function()
    opt:zero_grad()
    local loss = lf(m(x), y)
    loss:backward()
    opt:step()
    return loss:item() -- a host read: a graph break (the graph runs, then item() reads its loss)
  end)
  local l1 = c()
  local l2 = c()
  check(type(l1) == "number" and type(l2) == "number" and l2 < l1 + 1, "losses")
  check(torch.compiler.stats().graph_breaks >= 1, "break counted")
end)

test("relu before max pooling is reordered (pooled relu) with the same values and gradients", function()
  torch.compiler.reset()
  local F = require "torch.nn.functional"
  -- windows that are all negative, ties at 0 and above, a NaN
  local base = torch.tensor({{{{-1, -2, 3, 3}, {-3, -4, 3, 1}, {0, 0, -1, 2}, {0, -5, 2, 2}}}}):float()
  base[1][1][4][4] = 0 / 0
  local function run(compiled)
    local x = nn.Parameter(base:clone())
    local w = torch.tensor({{{{1.5, -2}, {0.5, 3}}}})
    local function f()
      x.grad = nil
      local y = F.max_pool2d(F.relu(x), 2)
      local out = (y * w):nansum()
      out:backward()
      return y
    end
    local g = compiled and torch.compile(f) or f
    local y
    for _ = 1, 3 do y = g() end
    return y, x.grad
  end
  local ye, ge = run(false)
  local yc, gc = run(true)
  check_close(yc, ye, {equal_nan = true})
  check_close(gc, ge, {equal_nan = true})
  check(torch.compiler.stats().compiled_calls >= 1, "compiled")
  local txt = torch.compiler.explain(function(a) return F.max_pool2d(F.relu(a), 2):sum() end, torch.randn(1, 1, 4, 4))
  check(txt, "explain")
end)

test("an MLP forward compiled once serves 10 batch sizes without recompiling", function()
  torch.compiler.reset()
  torch.manual_seed(0)
  local m = nn.Sequential(nn.Linear(20, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 5))
  local c = torch.compile(function(x) return m(x):softmax(-1) end)
  torch.no_grad(function()
    for _, bs in ipairs({8, 16, 3, 5, 32, 7, 64, 11, 2, 9}) do
      local x = torch.randn(bs, 20)
      check_close(c(x), m(x):softmax(-1), TOL)
    end
  end)
  local s = torch.compiler.stats()
  check_eq(s.recompiles, 0)
  check_eq(s.compiled_calls, 9)
end)

test("a training step with convolutions: a second batch size makes its sizes dynamic, 9 more need no recompile", function()
  torch.compiler.reset()
  local xs, ys = {}, {}
  local sizes = {8, 8, 8, 16, 3, 5, 32, 7, 64, 11, 2, 9}
  for i, bs in ipairs(sizes) do xs[i], ys[i] = torch.randn(bs, 1, 8, 8), torch.randint(1, 6, {bs}) end
  local me, _, se = setup(cnn, function(p) return optim.Adam(p, {lr = 1e-2}) end, 5)
  local mc, _, sc = setup(cnn, function(p) return optim.Adam(p, {lr = 1e-2}) end, 5)
  local c = torch.compile(sc)
  local recompiles_after_first_change
  for i = 1, #sizes do
    check_close(c(xs[i], ys[i]), se(xs[i], ys[i]), TOL)
    if i == 4 then recompiles_after_first_change = torch.compiler.stats().recompiles end
  end
  local pe, pc = me:parameters(), mc:parameters()
  for k = 1, #pe do check_close(pc[k], pe[k], TOL) end
  local s = torch.compiler.stats()
  check_eq(recompiles_after_first_change, 1)
  check_eq(s.recompiles, 1) -- the eight later batch sizes reuse the dynamic graph
  check(s.compiled_calls >= 9, "compiled calls: " .. s.compiled_calls)
  check(torch.compiler.explain(sc, xs[1], ys[1]), "explain")
end)

test("torch.compile(module) returns a module whose calls are compiled", function()
  torch.compiler.reset()
  torch.manual_seed(0)
  local m = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 3))
  local cm = torch.compile(m)
  check_eq(#cm:parameters(), 4)
  check(cm._orig_mod == m, "_orig_mod")
  cm:eval()
  check(not m.training, "eval() reaches the module")
  torch.no_grad(function()
    for _ = 1, 3 do
      local x = torch.randn(2, 1, 8, 8)
      check_close(cm(x), m(x), TOL)
    end
  end)
  check(torch.compiler.stats().compiled_calls >= 2, "compiled")
  local ok, err = pcall(torch.compile, 42)
  check(not ok and tostring(err):find("expected a function or a module", 1, true), tostring(err))
end)

test("dropout in a compiled step draws its masks from torch's RNG as eager does", function()
  torch.compiler.reset()
  local function run(compiled)
    torch.manual_seed(0)
    local m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 16), nn.Dropout(0.2),
      nn.Linear(16, 3))
    local opt = optim.SGD(m:parameters(), {lr = 0.1})
    local lf = nn.CrossEntropyLoss()
    local f = function(x, y)
      opt:zero_grad()
      local l = lf(m(x), y)
      l:backward()
      opt:step()
      return l
    end
    local c = compiled and torch.compile(f) or f
    local x, y = torch.randn(6, 8), torch.randint(1, 4, {6})
    local out = {}
    for i = 1, 6 do out[i] = c(x, y) end
    return out, m:parameters()
  end
  local le, pe = run(false)
  local lc, pc = run(true)
  for i = 1, 6 do check_close(lc[i], le[i], TOL) end
  for k = 1, #pe do check_close(pc[k], pe[k], TOL) end
  check(torch.compiler.stats().compiled_calls >= 4, "compiled: " .. torch.compiler.stats().compiled_calls)
  check_eq(torch.compiler.stats().fallbacks, 0)
end)
