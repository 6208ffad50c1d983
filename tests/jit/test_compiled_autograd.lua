-- tests/jit/test_compiled_autograd.lua -- compiled functions whose results
-- require grad (`model = torch.compile(model)` in an eager training loop):
-- the forward graph runs compiled and one autograd node runs the compiled
-- backward. Results, gradients and trained parameters agree with the same
-- model run eagerly; the node behaves as eager autograd does (retain_graph,
-- in-place changes to saved tensors, gradients of non-leaf inputs, unused
-- results); train()/eval() and grad mode select their own graphs.
local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"

local TOL = {atol = 2e-5, rtol = 1e-4}

-- two copies of a model built with the same seed: eager and compiled
local function pair(build)
  torch.manual_seed(11)
  local a = build()
  torch.manual_seed(11)
  local b = build()
  return a, b, torch.compile(b)
end

-- n steps of loss = mean(out^2), backward, SGD on both; everything agrees
local function train_agree(build, xshape, n)
  local a, b, c = pair(build)
  local oa, ob = optim.SGD(a:parameters(), {lr = 0.05, momentum = 0.9}), optim.SGD(b:parameters(), {lr = 0.05, momentum = 0.9})
  local s0 = torch.compiler.stats()
  for i = 1, n do
    local x = torch.randn(xshape)
    torch.manual_seed(100 + i) -- dropout draws the same masks
    local ya = a(x)
    torch.manual_seed(100 + i)
    local yc = c(x)
    check_close(yc, ya, TOL)
    check(yc.requires_grad, "a compiled result has autograd history")
    oa:zero_grad(); ob:zero_grad()
    ;(ya * ya):mean():backward()
    ;(yc * yc):mean():backward()
    local pa, pb = a:parameters(), b:parameters()
    for k = 1, #pa do check_close(pb[k].grad, pa[k].grad, TOL) end
    oa:step(); ob:step()
    for k = 1, #pa do check_close(pb[k], pa[k], TOL) end
  end
  local s1 = torch.compiler.stats()
  check(s1.compiled_calls - s0.compiled_calls >= n - 1, "compiled calls: " .. (s1.compiled_calls - s0.compiled_calls))
  check_eq(s1.fallbacks - s0.fallbacks, 0)
  return a, b, c
end

test("MLP with GELU: compiled forward and backward train as eager does", function()
  train_agree(function() return nn.Sequential(nn.Linear(10, 24), nn.GELU(), nn.Linear(24, 3)) end, {6, 10}, 5)
end)

test("CNN (conv, relu, max pool, linear)", function()
  train_agree(function()
    return nn.Sequential(nn.Conv2d(1, 4, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
      nn.Linear(64, 5))
  end, {3, 1, 8, 8}, 4)
end)

test("dropout: the compiled forward draws the masks eager draws", function()
  train_agree(function() return nn.Sequential(nn.Linear(10, 32), nn.Dropout(0.3), nn.Tanh(), nn.Linear(32, 4)) end,
    {5, 10}, 4)
end)

test("batch norm: running statistics updated as eager; eval uses them", function()
  local a, b, c = train_agree(function()
    return nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 3))
  end, {4, 2, 6, 6}, 4)
  check_close(b[2].running_mean, a[2].running_mean, TOL)
  check_close(b[2].running_var, a[2].running_var, TOL)
  check_eq(b[2].num_batches_tracked:item(), a[2].num_batches_tracked:item())
  a:eval(); b:eval()
  local x = torch.randn(4, 2, 6, 6)
  for _ = 1, 2 do check_close(c(x), a(x), TOL) end -- eval gets its own graph (training flags are guarded)
  torch.no_grad(function() check_close(c(x), a(x), TOL) end)
  check_close(b[2].running_mean, a[2].running_mean, TOL) -- eval leaves them alone
  a:train(); b:train()
  x = torch.randn(4, 2, 6, 6)
  check_close(c(x), a(x), TOL)
  check_close(b[2].running_mean, a[2].running_mean, TOL)
end)

test("layer norm, SiLU and a transformer encoder layer", function()
  train_agree(function() return nn.Sequential(nn.Linear(10, 16), nn.LayerNorm(16), nn.SiLU(), nn.Linear(16, 3)) end,
    {7, 10}, 3)
  train_agree(function()
    return nn.TransformerEncoderLayer(16, 2, {dim_feedforward = 32, dropout = 0, batch_first = true})
  end, {2, 5, 16}, 3)
end)

test("layer_norm: fused without grad; with grad one engine call whose statistics the backward keeps", function()
  local w, b = torch.randn(16), torch.randn(16)
  local f = function(x) return torch.relu((torch.layer_norm(x, 16, w, b))) end
  local x = torch.randn(5, 16)
  local text = torch.no_grad(function() return torch.compiler.explain(f, x) end)
  check(not text:find("extern.layer_norm", 1, true), "decomposed: " .. text:sub(1, 600))
  check(text:find("unary.rsqrt", 1, true), "its rsqrt in the kernel")
  w.requires_grad = true
  text = torch.compiler.explain(f, x)
  check(text:find("extern.layer_norm ", 1, true), "one call: " .. text:sub(1, 600))
  check(text:find("xout #1", 1, true) and text:find("xout #2", 1, true), "mean and rstd are results of the call")
  check(text:find("extern.layer_norm_backward", 1, true), "the backward uses them")
end)

test("explain shows the forward and the compiled backward", function()
  local m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
  local text = torch.compiler.explain(m, torch.randn(3, 4))
  check(text:find("2 graphs, compiled: the forward and its backward", 1, true), text:sub(1, 200))
  check(text:find("the compiled backward", 1, true), "backward section")
  check(text:find("extern.matmul", 1, true), "matmuls")
end)

test("gradients reach inputs that require grad, leaf or not", function()
  local w = torch.randn(5, 3, {requires_grad = true})
  local f = function(x) return x:matmul(w):tanh() end
  local c = torch.compile(f)
  for _ = 1, 3 do
    local a = torch.randn(4, 5, {requires_grad = true})
    local x = a * 2 -- not a leaf: the gradient flows on to a
    local g = torch.randn(4, 3)
    local ye = f(x)
    local ge = torch.autograd.grad({ye}, {a, w}, {grad_outputs = {g}, retain_graph = true})
    local yc = c(x)
    local gc = torch.autograd.grad({yc}, {a, w}, {grad_outputs = {g}})
    check_close(yc, ye, TOL)
    check_close(gc[1], ge[1], TOL)
    check_close(gc[2], ge[2], TOL)
  end
  check_eq(torch.compiler.stats().fallbacks, 0)
end)

test("several results, one of them unused by the loss (its gradient is zero)", function()
  local w = torch.randn(4, 4, {requires_grad = true})
  local f = function(x) local h = x:matmul(w); return h:relu(), h:sigmoid() end
  local c = torch.compile(f)
  local x = torch.randn(3, 4)
  for _ = 1, 2 do
    w.grad = nil
    local _, s = f(x)
    s:sum():backward()
    local ge = w.grad:clone()
    w.grad = nil
    local r, s2 = c(x)
    check(r.requires_grad and s2.requires_grad, "both results have history")
    s2:sum():backward()
    check_close(w.grad, ge, TOL)
  end
end)

test("retain_graph, a second backward, and in-place changes to saved tensors", function()
  local w = torch.randn(4, 4, {requires_grad = true})
  local c = torch.compile(function(x) return x:matmul(w):exp() end)
  local x = torch.randn(2, 4)
  c(x) -- capture
  local y = c(x)
  y:sum():backward({retain_graph = true})
  local g1 = w.grad:clone()
  y:sum():backward()
  check_close(w.grad, g1 * 2, TOL)
  check_error(function() y:sum():backward() end, "a second time")
  local y2 = c(x)
  y2:add_(1) -- exp saves its result: the backward must refuse, as eager autograd does
  check_error(function() y2:sum():backward() end, "modified by an in-place operation")
  local y3 = c(x)
  check_error(function() torch.autograd.grad({y3:sum()}, {w}, {create_graph = true}) end, "create_graph")
  local y4 = c(x) -- the session goes on
  y4:sum():backward()
end)

test("grad mode and requires_grad are guarded: no history under no_grad, none when inputs need none", function()
  local lin = nn.Linear(3, 2)
  local c = torch.compile(lin)
  local x = torch.randn(4, 3)
  check(c(x).requires_grad, "with grad")
  torch.no_grad(function()
    local y = c(x)
    check(not y.requires_grad, "no history under no_grad")
    check_close(y, lin(x), TOL)
  end)
  for _, p in ipairs(lin:parameters()) do p:requires_grad_(false) end
  local y = c(x)
  check(not y.requires_grad, "frozen parameters: no history")
  check_close(y, lin(x), TOL)
end)

test("a changed batch size reuses the compiled forward and backward", function()
  local m = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
  local c = torch.compile(m)
  c(torch.randn(4, 6)):sum():backward()
  c(torch.randn(5, 6)):sum():backward()
  local s0 = torch.compiler.stats()
  for n = 6, 12 do
    m:zero_grad()
    local x = torch.randn(n, 6)
    c(x):sum():backward()
    local g = m[1].weight.grad:clone()
    m:zero_grad()
    m(x):sum():backward()
    check_close(g, m[1].weight.grad, TOL)
  end
  local s1 = torch.compiler.stats()
  check_eq(s1.compiles - s0.compiles, 0)
  check_eq(s1.compiled_calls - s0.compiled_calls, 7)
end)
