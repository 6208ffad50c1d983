-- tests/tensor/test_gelu_backward.lua -- torch.gelu_backward(grad, x[,
-- approximate]), the one fused op behind gelu's derivative (both forms):
-- values against the composed closed forms in float64, every floating dtype
-- (halves computed in float32), broadcasting and strided operands, gelu's
-- gradient through it, double backward against finite differences, a
-- compiled training step, bad input. Runs on the default device (the GPU
-- suite runs it on CUDA).
local K, C = math.sqrt(2 / math.pi), 0.044715

-- grad * gelu'(x) composed of ordinary float64 ops
local function reference(g, x, approximate)
  g, x = g:double(), x:double()
  if approximate == "tanh" then
    local t = torch.tanh(K * (x + C * x * x * x))
    return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * C * x * x))
  end
  local cdf = 0.5 * (1 + torch.erf(x / math.sqrt(2)))
  local pdf = torch.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
  return g * (cdf + x * pdf)
end

local FORMS = {"none", "tanh"}

test("gelu_backward matches the composed formula in float64, both forms, edges included", function()
  torch.manual_seed(1)
  local x = torch.cat({torch.randn(200, {dtype = torch.float64}) * 3,
                       torch.tensor({0, -0.0, 1e-300, -8, 8, -30, 30, 5.5, -5.5}, {dtype = torch.float64})})
  local g = torch.randn(x:numel(), {dtype = torch.float64})
  for _, ap in ipairs(FORMS) do
    local got = torch.gelu_backward(g, x, ap)
    check_eq(got.dtype, torch.float64)
    check_close(got, reference(g, x, ap), {atol = 1e-14, rtol = 1e-13})
  end
  -- the default is the exact form; the option table works too
  check_close(torch.gelu_backward(g, x), reference(g, x, "none"), {atol = 1e-14, rtol = 1e-13})
  check_close(torch.gelu_backward(g, x, {approximate = "tanh"}), reference(g, x, "tanh"), {atol = 1e-14, rtol = 1e-13})
  -- gelu'(0) = 1/2 in both forms; far out it is 1 and 0
  local e = torch.gelu_backward(torch.ones(3, {dtype = torch.float64}), torch.tensor({0, 40, -40}, {dtype = torch.float64}))
  check_close(e, torch.tensor({0.5, 1, 0}, {dtype = torch.float64}), {atol = 1e-15, rtol = 0})
end)

test("gelu_backward in float32, float16 and bfloat16 keeps the dtype and rounds once", function()
  torch.manual_seed(2)
  local x64, g64 = torch.randn(4, 257, {dtype = torch.float64}) * 2, torch.randn(4, 257, {dtype = torch.float64})
  local tol = {[torch.float32] = {atol = 1e-6, rtol = 1e-5}, [torch.float16] = {atol = 2e-3, rtol = 2e-3},
               [torch.bfloat16] = {atol = 1.6e-2, rtol = 1e-2}}
  for _, dt in ipairs{torch.float32, torch.float16, torch.bfloat16} do
    for _, ap in ipairs(FORMS) do
      local g, x = g64:to(dt), x64:to(dt)
      local got = torch.gelu_backward(g, x, ap)
      check_eq(got.dtype, dt)
      -- computed in float32 from the rounded inputs, then rounded to dt once
      check_close(got:double(), reference(g, x, ap):to(dt):double(), tol[dt])
    end
  end
  -- integer operands promote to the default float dtype
  local i = torch.gelu_backward(torch.ones(3, {dtype = torch.int64}), torch.tensor({-1, 0, 2}))
  check_eq(i.dtype, torch.get_default_dtype())
  check_close(i:double(), reference(torch.ones(3), torch.tensor({-1.0, 0, 2})), {atol = 1e-6, rtol = 1e-6})
end)

test("gelu_backward broadcasts, takes strided operands and numbers", function()
  torch.manual_seed(3)
  local x = torch.randn(5, 4, {dtype = torch.float64}):t() -- 4 x 5, not contiguous
  local g = torch.randn(5, {dtype = torch.float64})
  for _, ap in ipairs(FORMS) do
    check_close(torch.gelu_backward(g, x, ap), reference(g:expand(4, 5), x, ap), {atol = 1e-14, rtol = 1e-13})
    check_close(torch.gelu_backward(2, x, ap), reference(torch.full({4, 5}, 2.0), x, ap), {atol = 1e-14, rtol = 1e-13})
  end
end)

test("gelu and gelu_tanh differentiate through the fused op; double backward matches finite differences", function()
  torch.manual_seed(4)
  for _, ap in ipairs(FORMS) do
    local x = (torch.randn(37, {dtype = torch.float64}) * 2):requires_grad_()
    local g = torch.randn(37, {dtype = torch.float64})
    local y = ap == "tanh" and torch.gelu_tanh(x) or torch.gelu(x)
    local gx = torch.autograd.grad({y}, {x}, {grad_outputs = {g}, create_graph = true})[1]
    check_close(gx:detach(), reference(g, x:detach(), ap), {atol = 1e-14, rtol = 1e-13})
    check(gx.grad_fn ~= nil, "create_graph records the fused op")
    check_eq(gx.grad_fn.name, ap == "tanh" and "GeluTanhBackwardBackward0" or "GeluBackwardBackward0")
    -- d/dx sum(w * g * gelu'(x)) against central differences of the op itself
    local w = torch.randn(37, {dtype = torch.float64})
    local gg = torch.autograd.grad({(gx * w):sum()}, {x})[1]
    local h, xd = 1e-6, x:detach()
    local fd = (torch.gelu_backward(g, xd + h, ap) - torch.gelu_backward(g, xd - h, ap)) * w / (2 * h)
    check_close(gg, fd, {atol = 1e-7, rtol = 1e-6})
  end
end)

test("a compiled training step with gelu matches eager", function()
  local function step(w, x)
    local loss = torch.gelu(x:matmul(w)):pow(2):sum()
    loss:backward()
    return loss
  end
  torch.manual_seed(5)
  local x = torch.randn(8, 6)
  local w0 = torch.randn(6, 5)
  local we = w0:clone():requires_grad_()
  step(we, x)
  local wc = w0:clone():requires_grad_()
  torch.compiler.reset()
  local c = torch.compile(step, {_quiet = true})
  c(wc, x)
  wc.grad = nil
  c(wc, x)
  check_close(wc.grad, we.grad, {atol = 1e-5, rtol = 1e-4})
  check(torch.compiler.stats().compiled_calls >= 1, "the step with gelu's fused backward compiles")
end)

test("gelu_backward: bad input gives clear errors", function()
  local a = torch.ones(2)
  check_error(function() torch.gelu_backward(a, a, "exact") end, "approximate must be 'none' or 'tanh', got 'exact'")
  check_error(function() torch.gelu_backward(a, a, 3) end, "approximate must be 'none' or 'tanh', got number")
  check_error(function() torch.gelu_backward(a, torch.ones(3)) end, "gelu_backward")
  check_error(function() torch.gelu_backward(1, 2) end, "at least one argument must be a tensor")
  check_error(function() torch.gelu_backward(a, "x") end, "gelu_backward")
end)
