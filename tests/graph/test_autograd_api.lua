-- tests/graph/test_autograd_api.lua -- the autograd API as API.md lists it:
-- requires_grad, grad, grad_fn, backward, torch.autograd.grad, no_grad and
-- enable_grad, detach, hooks, retain_grad; and the errors for misuse.
-- Expected values are closed-form derivatives of the small functions used.

local function T(t) return torch.tensor(t, {dtype = torch.float64}) end

test("requires_grad: option, property, method, and only for floating tensors", function()
  local x = torch.ones(3, {requires_grad = true})
  check(x.requires_grad and x.is_leaf)
  local y = torch.zeros(2)
  check(not y.requires_grad)
  y.requires_grad = true
  check(y.requires_grad)
  check(torch.ones(2):requires_grad_().requires_grad)
  check(not torch.ones(2):requires_grad_(false).requires_grad)
  check_error(function() torch.ones(2, {dtype = torch.int64}):requires_grad_() end,
    "only floating point tensors can require gradients")
  check_error(function() (x * 2).requires_grad = false end, "only leaf tensors")
end)

test("grad_fn names the op and prints; leaves have none", function()
  local x = torch.ones(3, {requires_grad = true})
  check_eq(x.grad_fn, nil)
  local y = x * 2
  check_eq(tostring(y.grad_fn), "<MulBackward0>")
  check_eq(y.grad_fn.name, "MulBackward0")
  check_eq(tostring((x + 1):sum().grad_fn), "<SumBackward0>")
  check(tostring(y):find("grad_fn=<MulBackward0>", 1, true))
  check(tostring(x):find("requires_grad=true", 1, true))
  check(not y.is_leaf)
end)

test("backward accumulates into leaves' .grad", function()
  local x = T({1, 2, 3}):requires_grad_()
  local y = (x * x):sum() -- dy/dx = 2x
  y:backward()
  check_close(x.grad, T({2, 4, 6}))
  ;(x * 3):sum():backward()
  check_close(x.grad, T({5, 7, 9}))
  x.grad = nil
  check_eq(x.grad, nil)
end)

test("backward with an explicit gradient for a non-scalar output", function()
  local x = T({1, 2, 3}):requires_grad_()
  local y = x:exp()
  y:backward(T({1, 0, 2}))
  check_close(x.grad, T({math.exp(1), 0, 2 * math.exp(3)}))
end)

test("torch.autograd.grad returns gradients without touching .grad", function()
  local x, w = T({1, 2}):requires_grad_(), T({3, 4}):requires_grad_()
  local y = (x * w):sum()
  local g = torch.autograd.grad(y, {x, w})
  check_close(g[1], T({3, 4}))
  check_close(g[2], T({1, 2}))
  check_eq(x.grad, nil)
  local z = T({5}):requires_grad_()
  check_error(function() torch.autograd.grad((x * 2):sum(), {x, z}) end, "not reached")
  local gs = torch.autograd.grad((x * 2):sum(), {x, z}, {allow_unused = true})
  check_close(gs[1], T({2, 2}))
  check_eq(gs[2], nil)
  local g2 = torch.autograd.grad(x * 2, x, {grad_outputs = T({1, 10})})
  check_close(g2[1], T({2, 20}))
end)

test("create_graph gives second derivatives", function()
  local x = T({0.5, 2}):requires_grad_()
  local y = (x ^ 3):sum()
  local g = torch.autograd.grad(y, x, {create_graph = true})[1] -- 3x^2
  check_close(g, T({0.75, 12}))
  check(g.requires_grad)
  local h = torch.autograd.grad(g:sum(), x)[1] -- 6x
  check_close(h, T({3, 12}))
end)

test("no_grad: function form, <close> guard, and nesting with enable_grad", function()
  local x = torch.ones(2, {requires_grad = true})
  local r = torch.no_grad(function(a) return a * 2 end, x)
  check(not r.requires_grad)
  check(torch.is_grad_enabled())
  do
    local g <close> = torch.no_grad()
    check(not torch.is_grad_enabled())
    check(not (x * 2).requires_grad)
    local e = torch.enable_grad(function() return x * 2 end)
    check(e.requires_grad)
  end
  check(torch.is_grad_enabled())
  check(pcall(torch.no_grad, function() error("boom") end) == false)
  check(torch.is_grad_enabled(), "grad mode restored after an error")
end)

test("detach shares data and leaves the graph", function()
  local x = T({1, 2}):requires_grad_()
  local y = x * 2
  local d = y:detach()
  check(not d.requires_grad and d.is_leaf)
  d[1] = 7
  check_eq(y[1]:item(), 7)
  local z = x * 3
  z:detach_()
  check(not z.requires_grad)
end)

test("hooks see and may replace gradients; handles remove them", function()
  local x = T({1, 2}):requires_grad_()
  local seen
  local y = x * 2
  local h = y:register_hook(function(g) seen = g:clone(); return g * 10 end)
  y:sum():backward()
  check_close(seen, T({1, 1}))
  check_close(x.grad, T({20, 20}))
  h:remove()
  x.grad = nil
  local y2 = x * 2
  y2:register_hook(function(g) return nil end)
  y2:sum():backward()
  check_close(x.grad, T({2, 2}))
  local lx = T({1}):requires_grad_()
  lx:register_hook(function(g) return g * 0 end)
  ;(lx * 5):sum():backward()
  check_close(lx.grad, T({0}))
  local hx = T({1}):requires_grad_()
  local hy = hx * 2
  hy:register_hook(function() error("bad hook") end)
  check_error(function() hy:sum():backward() end, "bad hook")
end)

test("retain_grad keeps a non-leaf's gradient", function()
  local x = T({1, 2}):requires_grad_()
  local y = x * 3
  y:retain_grad()
  check(y.retains_grad)
  ;(y * y):sum():backward()
  check_close(y.grad, T({6, 12}))
  check_close(x.grad, T({18, 36}))
end)

test("broadcasting, views and slicing are differentiable", function()
  local x = T({{1, 2, 3}, {4, 5, 6}}):requires_grad_()
  local b = T({1, 2, 3}):requires_grad_()
  local y = ((x + b) * x[{{}, {2, 3}}]:sum()):sum()
  y:backward()
  -- y = sum(x + b) * s with s = x[:, 2:3].sum() = 16; sum(x + b) = 21 + 12 = 33
  check_close(b.grad, T({32, 32, 32}))
  check_close(x.grad, T({{16, 49, 49}, {16, 49, 49}}))
end)

test("assigning into a slice of a fresh tensor carries gradients", function()
  local w = T({1, 2}):requires_grad_()
  local z = torch.zeros(3, 3, {dtype = torch.float64})
  z[{2, {1, 2}}] = w * 2
  check_eq(tostring(z.grad_fn), "<CopySlices>")
  ;(z * z):sum():backward() -- d/dw of sum(4 w^2) = 8 w
  check_close(w.grad, T({8, 16}))
end)

test("second-order gradients through an assignment into a slice", function()
  local w = torch.randn(2, {dtype = torch.float64}):requires_grad_()
  check(torch.autograd.gradgradcheck(function(v)
    local z = torch.zeros(3, 3, {dtype = torch.float64})
    z[{2, {1, 2}}] = v * v
    return z * z:sum()
  end, {w}))
end)

test("bad uses of backward raise clear errors and the session goes on", function()
  local x = T({1, 2}):requires_grad_()
  check_error(function() (x * 2):backward() end, "only for outputs with one element")
  check_error(function() torch.ones(2):sum():backward() end, "does not require grad")
  local y = (x * x):sum()
  y:backward()
  check_error(function() y:backward() end, "a second time")
  local y2 = (x * x):sum()
  y2:backward({retain_graph = true})
  y2:backward()
  check_error(function() torch.autograd.grad((x * 2):sum(), torch.ones(2)) end, "does not require grad")
  check_error(function() (x * 2):backward(T({1, 2, 3})) end, "has shape 3 but output 1 has shape 2")
  check_error(function() x:add_(1) end, "leaf tensor that requires grad")
  check_error(function() x[1] = 5 end, "leaf tensor that requires grad")
  torch.no_grad(function() x:add_(1) end) -- allowed without recording
  check_close(x:detach(), T({2, 3}))
end)

test("modifying a saved tensor in place is caught at backward", function()
  local x = T({1, 2}):requires_grad_()
  local y = x:exp()
  local z = y * 1
  y:add_(1) -- exp saved its result
  check_error(function() y:sum():backward() end, "modified by an in-place operation")
  local a = T({1, 2}):requires_grad_()
  local b = a * 2
  local c = b * b -- saves b
  b:mul_(3)
  check_error(function() c:sum():backward() end, "is at version")
  local _ = z
end)

test("in-place ops on non-leaf tensors are differentiable", function()
  local x = T({1, 2, 3}):requires_grad_()
  local y = x * 2
  y:mul_(3) -- y = 6x
  y:add_(x) -- + x
  y:sum():backward()
  check_close(x.grad, T({7, 7, 7}))
  local y1 = x * 2
  y1:mul_(y1) -- saves y1 as the other operand, then changes it: as in PyTorch, an error
  check_error(function() y1:sum():backward() end, "modified by an in-place operation")
  local x2 = T({1, 2, 3, 4}):requires_grad_()
  local y2 = x2 * 1
  y2:narrow(1, 2, 2):mul_(10)
  y2:sum():backward()
  check_close(x2.grad, T({1, 10, 10, 1}))
end)

test("autograd.grad runs only the nodes that lead to the requested inputs", function()
  local a = torch.randn(3, {requires_grad = true})
  local x = a:exp()
  x:sum():backward() -- frees ExpBackward's saved result
  local hits = 0
  a:register_hook(function() hits = hits + 1 end)
  local y = (x * x):sum()
  local g = torch.autograd.grad({y}, {x})[1] -- needs nothing past x
  check_close(g, x * 2, {atol = 1e-6, rtol = 1e-6})
  check_eq(hits, 0)
  -- asking for a as well runs ExpBackward again: an error now, as its saved tensor is gone
  check_error(function() torch.autograd.grad({(x * x):sum()}, {x, a}) end, "a second time")
end)

test("leaf gradients are taken over without a copy, and never shared between leaves", function()
  -- add's backward hands the same gradient to both inputs: each leaf gets its own .grad
  local a, b = torch.randn(5):requires_grad_(), torch.randn(5):requires_grad_()
  local l = ((a + b) * 3):sum()
  l:backward()
  check_close(a.grad, torch.full({5}, 3.0))
  check_close(b.grad, torch.full({5}, 3.0))
  a.grad:mul_(2) -- in place on one leaf's gradient
  check_close(b.grad, torch.full({5}, 3.0), {}, "b.grad untouched")
  -- a user's gradient tensor is never taken as .grad
  local x = torch.randn(4):requires_grad_()
  local g = torch.ones(4)
  x:backward(g)
  g:mul_(5)
  check_close(x.grad, torch.ones(4), {}, "x.grad is not the caller's tensor")
  -- a second backward accumulates into a new tensor
  local w = torch.randn(3, 2):requires_grad_()
  local l1 = (w * 2):sum()
  l1:backward()
  local first = w.grad
  local l2 = (w * 2):sum()
  l2:backward()
  check_close(w.grad, torch.full({3, 2}, 4.0))
  check_close(first, torch.full({3, 2}, 2.0), {}, "the earlier .grad is unchanged")
end)
