-- tests/tensor/test_foreach.lua -- torch._foreach_norm and
-- torch._foreach_mul_ and nn.utils.clip_grad_norm_ on top of them: values
-- against the per-tensor ops and closed forms, every order the per-tensor
-- norm takes, mixed dtypes, non-contiguous and empty tensors, empty lists,
-- autograd (the recorded path), bad input. Runs on the default device (the
-- GPU suite runs it on CUDA, where order 2, 1 and inf take the multi-tensor
-- kernels).
local nn = require "torch.nn"

-- a list with a non-contiguous and an empty tensor and a long one
local function list(dt)
  torch.manual_seed(11)
  return {torch.randn(3, 4, {dtype = dt}), torch.randn(5, {dtype = dt}), torch.randn(4, 6, {dtype = dt}):t(),
          torch.randn(0, {dtype = dt}), torch.randn(40000, {dtype = dt}), torch.randn(1, {dtype = dt})}
end

test("_foreach_norm of order 2 against the closed form and the per-tensor norm", function()
  local ts = {torch.full({3, 4}, 2.0), torch.full({5}, -1.0), torch.ones(0)}
  local norms, total = torch._foreach_norm(ts)
  check_eq(#norms, 3)
  check_close(norms[1], torch.tensor(math.sqrt(12 * 4)), {atol = 1e-6, rtol = 1e-6})
  check_close(norms[2], torch.tensor(math.sqrt(5)), {atol = 1e-6, rtol = 1e-6})
  check_close(norms[3], torch.tensor(0.0), {atol = 0, rtol = 0})
  check_close(total, torch.tensor(math.sqrt(48 + 5)), {atol = 1e-6, rtol = 1e-6})
  check_eq(norms[1]:dim(), 0)
  check_eq(total:dim(), 0)
  for _, dt in ipairs{torch.float32, torch.float64} do
    local l = list(dt)
    local ns, tot = torch._foreach_norm(l, 2)
    local all = torch.cat((function()
      local f = {}
      for i, t in ipairs(l) do f[i] = t:reshape(-1) end
      return f
    end)())
    local tol = dt == torch.float64 and {atol = 1e-12, rtol = 1e-12} or {atol = 1e-5, rtol = 1e-5}
    for i, t in ipairs(l) do
      check_eq(ns[i].dtype, dt)
      check_close(ns[i], torch.linalg.vector_norm(t), tol)
    end
    check_eq(tot.dtype, dt)
    check_close(tot, torch.linalg.vector_norm(all), tol)
  end
end)

test("_foreach_norm of orders 1, inf, 3 and 0, and a list of mixed dtypes", function()
  local l = list(torch.float64)
  l[4] = torch.randn(2, {dtype = torch.float64}) -- the inf-norm of an empty tensor is an error
  for _, ord in ipairs{1, math.huge, 3, 0, -math.huge} do
    local ns, tot = torch._foreach_norm(l, ord)
    local flat = {}
    for i, t in ipairs(l) do
      check_close(ns[i], torch.linalg.vector_norm(t, ord), {atol = 1e-10, rtol = 1e-10})
      flat[i] = t:reshape(-1)
    end
    check_close(tot, torch.linalg.vector_norm(torch.cat(flat), ord), {atol = 1e-9, rtol = 1e-10})
  end
  check_error(function() torch._foreach_norm({torch.ones(0)}, math.huge) end, "empty")
  -- float32, float64, bfloat16 and float16 together: grouped by dtype, each norm in its tensor's dtype
  local a, b = torch.randn(100), torch.randn(50, {dtype = torch.float64})
  local c, d = torch.randn(70):bfloat16(), torch.randn(30):half()
  local ns, tot = torch._foreach_norm({a, b, c, d})
  check_eq(ns[1].dtype, torch.float32)
  check_eq(ns[2].dtype, torch.float64)
  check_eq(ns[3].dtype, torch.bfloat16)
  check_eq(ns[4].dtype, torch.float16)
  check_close(ns[3]:double(), torch.linalg.vector_norm(c:double()), {atol = 0, rtol = 8e-3})
  check_close(ns[4]:double(), torch.linalg.vector_norm(d:double()), {atol = 0, rtol = 1e-3})
  check_eq(tot.dtype, torch.float64)
  local want = torch.linalg.vector_norm(torch.cat({a:double(), b, c:double(), d:double()}))
  check_close(tot, want, {atol = 0, rtol = 2e-3}) -- the CPU adds the half-precision norms, rounded
end)

test("_foreach_norm of an empty list; its total is 0", function()
  local ns, tot = torch._foreach_norm({})
  check_eq(#ns, 0)
  check_eq(tot:item(), 0)
end)

test("_foreach_mul_ by a number, a 0-dim tensor and a CPU 0-dim tensor, in place", function()
  for _, dt in ipairs{torch.float32, torch.float64, torch.bfloat16, torch.float16} do
    local l, want = list(dt), {}
    for i, t in ipairs(l) do want[i] = t:double() * 0.5 * 3 * -2 end
    local v0 = l[1]:_version()
    local r = torch._foreach_mul_(l, 0.5)
    check(r == l, "returns the list")
    check(l[1]:_version() > v0, "the version moves")
    torch._foreach_mul_(l, torch.tensor(3.0, {device = l[1].device}))
    torch._foreach_mul_(l, torch.tensor(-2.0, {device = "cpu"}))
    local tol = (dt == torch.float32 or dt == torch.float64) and {atol = 1e-6, rtol = 1e-6} or {atol = 1e-2, rtol = 2e-2}
    for i, t in ipairs(l) do
      check_eq(t.dtype, dt)
      check_close(t:double(), want[i], tol)
    end
    check(not l[3]:is_contiguous(), "the strided view is scaled in place")
  end
  -- a tensor listed twice is scaled twice, as by two calls
  local x = torch.ones(4)
  torch._foreach_mul_({x, x}, 3)
  check_close(x, torch.full({4}, 9.0), {atol = 0, rtol = 0})
  -- integers by integers
  local i = torch.tensor({1, 2, 3})
  torch._foreach_mul_({i}, 2)
  check_eq(i:tolist(), {2, 4, 6})
  torch._foreach_mul_({}, 2)
end)

test("_foreach_norm and _foreach_mul_ under autograd take the recorded ops", function()
  local w = torch.randn(3, {dtype = torch.float64}):requires_grad_()
  local ns, tot = torch._foreach_norm({w, w * 2})
  tot:backward()
  -- total = sqrt(5) |w|: d/dw = 5 w / total
  check_close(w.grad, w:detach() * 5 / tot:detach(), {atol = 1e-12, rtol = 1e-12})
  check(ns[1].grad_fn ~= nil, "per-tensor norms are recorded")
  check_error(function() torch._foreach_mul_({w}, 2) end, "")
  torch.no_grad(function() torch._foreach_mul_({w}, 2) end)
end)

test("_foreach_norm and _foreach_mul_: bad input gives clear errors", function()
  check_error(function() torch._foreach_norm(torch.ones(2)) end, "_foreach_norm: argument #1 must be a list of tensors")
  check_error(function() torch._foreach_norm({torch.ones(2), 3}) end, "element 2 of the list is a number, not a tensor")
  check_error(function() torch._foreach_norm({torch.ones(2)}, {}) end, "ord must be a number")
  check_error(function() torch._foreach_norm({torch.ones(2), torch.ones(2, {dtype = torch.int64})}) end,
              "expected floating tensors, got int64 at position 2")
  check_error(function() torch._foreach_mul_({torch.ones(2)}, torch.ones(2)) end, "a number or a 0-dim tensor")
  check_error(function() torch._foreach_mul_({torch.ones(2)}, "x") end, "argument #2 must be a number or a 0-dim tensor")
  check_error(function() torch._foreach_mul_(3, 2) end, "_foreach_mul_: argument #1 must be a list of tensors")
  check_error(function() torch._foreach_mul_({torch.ones(2, {dtype = torch.int64})}, 0.5) end, "")
end)

test("clip_grad_norm_ through the foreach ops matches the per-tensor formula", function()
  for _, ord in ipairs{2, 1, math.huge, 3} do
    torch.manual_seed(21)
    local m = nn.Sequential(nn.Linear(7, 5), nn.ReLU(), nn.Linear(5, 3))
    m(torch.randn(4, 7)):pow(2):sum():backward()
    local ps, grads, norms = m:parameters(), {}, {}
    for i, p in ipairs(ps) do
      grads[i] = p.grad:clone()
      norms[i] = torch.linalg.vector_norm(p.grad, ord)
    end
    local want = torch.linalg.vector_norm(torch.stack(norms), ord)
    local total = nn.utils.clip_grad_norm_(ps, 0.1, ord)
    check_close(total, want, {atol = 1e-5, rtol = 1e-5})
    local coef = math.min(1, 0.1 / (want:item() + 1e-6))
    for i, p in ipairs(ps) do check_close(p.grad, grads[i] * coef, {atol = 1e-6, rtol = 1e-5}) end
    -- below the limit nothing changes
    local before = ps[1].grad:clone()
    nn.utils.clip_grad_norm_(ps, 1e9, ord)
    check_close(ps[1].grad, before, {atol = 0, rtol = 0})
  end
  local p = torch.ones(3):requires_grad_()
  p.grad = torch.tensor({1, 0 / 0, 1})
  check_error(function() nn.utils.clip_grad_norm_({p}, 1.0, 2, true) end, "non-finite")
end)
