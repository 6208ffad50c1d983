-- tests/graph/test_reduce_grad.lua -- gradients of reductions, scans and
-- sorting against PyTorch's values (tests/ref/reduce_grad.lua, made by
-- gen_reduce_grad.py) where finite differences cannot check them: ties,
-- norms at zero, products with zeros, NaNs and infinities; plus integer
-- inputs, which must still reduce and get no history.
local cases = ref("reduce_grad")

-- k * (1, 2, 3, ...) shaped like t: the seed of result k
local function seed(t, k)
  return (torch.arange(1, t:numel() + 1, {dtype = t.dtype}) * k):view(t.shape)
end

-- the flat gradient (and with second, the gradient of <grad, v>) of the
-- differentiable results of expr at x
local function grads(c, second)
  local x = torch.tensor(c.x, {dtype = torch.float64}):view(c.shape):requires_grad_()
  local fn = assert(load("local x = ...; return " .. c.expr, c.name, "t", {math = math}))
  local res = table.pack(fn(x))
  local outs, seeds = {}, {}
  for k = 1, res.n do
    if res[k].requires_grad then
      outs[#outs + 1] = res[k]
      seeds[#seeds + 1] = seed(res[k], #outs)
    end
  end
  local g = torch.autograd.grad(outs, {x}, {grad_outputs = seeds, create_graph = second})[1]
  if not second then return g:reshape(-1) end
  local g2 = torch.autograd.grad({g}, {x}, {grad_outputs = {seed(g, 0.1)}, allow_unused = true})[1]
  return g:reshape(-1), g2 and g2:reshape(-1) or torch.zeros(x:numel(), {dtype = torch.float64})
end

for _, c in ipairs(cases) do
  test("gradient of " .. c.expr .. ": " .. c.name, function()
    local g = grads(c, false)
    check_close(g, c.grad, {rtol = 1e-12, atol = 1e-12})
    if c.grad2 then
      local g1, g2 = grads(c, true)
      check_close(g1, c.grad, {rtol = 1e-12, atol = 1e-12})
      check_close(g2, c.grad2, {rtol = 1e-12, atol = 1e-12})
    end
  end)
end

test("results of float inputs requiring grad have a grad_fn named as in PyTorch", function()
  local x = torch.randn(3, 4):requires_grad_()
  local v, i = x:max(2)
  check_eq(tostring(v.grad_fn), "<MaxBackward0>")
  check(not i.requires_grad, "indices must not require grad")
  check_eq(tostring(x:sum().grad_fn), "<SumBackward0>")
  check_eq(tostring(x:prod(1).grad_fn), "<ProdBackward0>")
  check_eq(tostring(x:std().grad_fn), "<StdBackward0>")
  local s, m = x:var_mean(2)
  check(s.grad_fn == m.grad_fn, "var_mean's results share one node")
  check_eq(tostring(x:cummax(1).grad_fn), "<CummaxBackward0>")
  check_eq(tostring(x:sort().grad_fn), "<SortBackward0>")
  check_eq(tostring(x:norm().grad_fn), "<NormBackward0>")
end)

test("with tied values, the gradient goes to the index that kthvalue, median and mode return", function()
  local x = torch.tensor({{3.0, 1.0, 3.0, 2.0, 3.0}, {2.0, 2.0, 1.0, 2.0, 0.0}}, {requires_grad = true})
  for _, f in ipairs({function() return x:kthvalue(4) end, function() return x:median(2) end,
                      function() return x:mode(2) end, function() return x:max(2) end}) do
    x.grad = nil
    local v, i = f()
    v:sum():backward()
    local want = torch.zeros(2, 5)
    for r = 1, 2 do want[{r, i[r]:item()}] = 1 end
    check_close(x.grad, want)
  end
end)

test("integer inputs still reduce and get no history", function()
  local x = torch.tensor({{3, 1, 2}, {0, 5, 5}})
  check_eq(x:sum():item(), 16)
  check_eq(x:prod(2):totable(), {6, 0})
  check_eq(x:cumsum(2):totable(), {{3, 4, 6}, {0, 5, 10}})
  check_eq(x:cumprod(1):totable(), {{3, 1, 2}, {0, 5, 10}})
  local v, i = x:max(2)
  check_eq(v:totable(), {3, 5})
  check_eq(i:totable(), {1, 2})
  local s, si = x:sort(2)
  check_eq(s:totable(), {{1, 2, 3}, {0, 5, 5}})
  check_eq(si.dtype, torch.int64)
  check_eq(x:amax():item(), 5)
  check_eq(x:median():item(), 2)
  check_eq(x:mode(2):totable(), {1, 5})
  for _, r in ipairs({x:sum(), x:prod(), x:amax(1), x:cumsum(1), (x:max(1)), (x:topk(2)), (x:cummax(2))}) do
    check(not r.requires_grad and r.grad_fn == nil, "an integer result has no history")
  end
end)

test("no_grad and detached inputs record nothing", function()
  local x = torch.randn(3, 4):requires_grad_()
  torch.no_grad(function()
    check(x:prod().grad_fn == nil, "prod under no_grad")
    check((x:max(1)).grad_fn == nil, "max under no_grad")
  end)
  check(x:detach():logsumexp(1).grad_fn == nil, "logsumexp of a detached tensor")
end)

test("a float result of an op with dtype= is differentiable, an integer one is not", function()
  local x = torch.randn(2, 3):requires_grad_()
  local s = x:sum({dtype = torch.float64})
  check_eq(s.dtype, torch.float64)
  s:backward()
  check_eq(x.grad.dtype, torch.float32)
  check_close(x.grad, torch.ones(2, 3))
  local c = x:cumsum(2, {dtype = torch.int64})
  check(not c.requires_grad, "an int64 cumsum has no history")
end)

test("out= with an input requiring grad is an error", function()
  local x = torch.randn(3):requires_grad_()
  check_error(function() x:prod(1, {out = torch.empty({})}) end, "out= cannot be used when an input requires grad")
  check_error(function() x:max(1, {out = {torch.empty({}), torch.empty({}, {dtype = torch.int64})}}) end,
              "out= cannot be used when an input requires grad")
  check_error(function() x:max({out = torch.empty({})}) end, "max: out= cannot be used when an input requires grad")
end)

test("modifying the saved indices in place is caught by backward", function()
  local x = torch.randn(3, 4):requires_grad_()
  local v, i = x:max(2)
  i:fill_(1)
  check_error(function() v:sum():backward() end, "modified by an in-place operation")
end)

test("max along a dim backpropagates through a later op, twice with retain_graph", function()
  local x = torch.tensor({{1.0, 5.0, 2.0}, {7.0, 0.0, 3.0}}, {requires_grad = true})
  local v = x:max(2)
  local y = (v * v):sum()
  y:backward({retain_graph = true})
  check_close(x.grad, {{0, 10, 0}, {14, 0, 0}})
  y:backward()
  check_close(x.grad, {{0, 20, 0}, {28, 0, 0}})
end)

test("create_graph through sort gives second derivatives (d2/dx2 of sum(sort(x)^3))", function()
  local x = torch.tensor({0.5, -1.0, 2.0}, {dtype = torch.float64, requires_grad = true})
  local v = x:sort()
  local g = torch.autograd.grad({(v ^ 3):sum()}, {x}, {create_graph = true})[1]
  check_close(g, {0.75, 3.0, 12.0})
  local h = torch.autograd.grad({g:sum()}, {x})[1]
  check_close(h, {3.0, -6.0, 12.0})
end)
