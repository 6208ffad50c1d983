-- tests/graph/test_unbind.lua -- unbind is one autograd node
-- (UnbindBackward0) whose backward stacks the pieces' gradients: values
-- and gradients equal those of select and stack, pieces without a gradient
-- count as zeros, gradients that already lie as one strided view become
-- that view (no copy), create_graph differentiates through it, and the JIT
-- replays it. Runs on the default device (cuda under MOONTORCH_TEST_DEVICE).

local function maxdiff(a, b) return (a:double() - b:double()):abs():max():item() end

test("unbind values and gradients equal select's", function()
  torch.manual_seed(1)
  for dim = 1, 3 do
    local x = torch.randn(4, 3, 5):requires_grad_()
    local p = x:unbind(dim)
    check_eq(#p, x:size(dim))
    check_eq(tostring(p[1].grad_fn), "<UnbindBackward0>")
    local x2 = x:detach():clone():requires_grad_()
    local loss, loss2 = 0, 0
    for i = 1, #p do
      check_eq(maxdiff(p[i], x:select(dim, i)), 0)
      local w = torch.randn(p[i]:size())
      loss = loss + (p[i] * w):sin():sum()
      loss2 = loss2 + (x2:select(dim, i) * w):sin():sum()
    end
    loss:backward()
    loss2:backward()
    check(maxdiff(x.grad, x2.grad) < 1e-6, "dim " .. dim)
  end
end)

test("unbind: unused pieces get zero gradients", function()
  local x = torch.randn(3, 2):requires_grad_()
  local u = x:unbind(1);
  (u[2] * 3):sum():backward()
  check_eq(maxdiff(x.grad, torch.tensor({{0, 0}, {3, 3}, {0, 0}})), 0)
end)

test("unbind backward of gradients that are one strided view is that view", function()
  torch.manual_seed(2)
  local x = torch.randn(4, 5, 3):requires_grad_()
  local s = torch.stack(x:unbind(3), 1) -- stack's backward hands out views of one gradient
  local g = torch.randn(s:size())
  local gx = torch.autograd.grad({s}, {x}, {grad_outputs = {g}})[1]
  check_eq(maxdiff(gx, g:permute(2, 3, 1)), 0)
  check(not gx:is_contiguous(), "the gradient is the permuted view of g, not a stacked copy")
  s:backward(g) -- into .grad: a copy of its own
  check_eq(maxdiff(x.grad, g:permute(2, 3, 1)), 0)
  -- the same through stack when the gradients are separate tensors
  local y = torch.randn(4, 5, 3):requires_grad_()
  local ps = y:unbind(3)
  local loss = 0
  for i = 1, 3 do loss = loss + (ps[i] * i):sum() end
  loss:backward()
  check(y.grad:is_contiguous())
  check_eq(maxdiff(y.grad, torch.ones(4, 5, 1) * torch.tensor({1, 2, 3}):view(1, 1, 3)), 0)
end)

test("unbind under create_graph", function()
  local x = torch.tensor({{0.5, -1, 2}, {1.5, 0.25, -2}}, {dtype = torch.float64}):requires_grad_()
  local u = x:unbind(1);
  local l = (u[1]:pow(2) + u[2]:pow(3)):sum()
  local g = torch.autograd.grad({l}, {x}, {create_graph = true})[1]
  local gg = torch.autograd.grad({g:sum()}, {x})[1]
  check_eq(maxdiff(gg, torch.cat({torch.full({1, 3}, 2, {dtype = torch.float64}), x[{{2}}]:detach() * 6}, 1)), 0)
  check(torch.autograd.gradcheck(function(t) local p = t:unbind(2) return p[1] * p[3] end,
    {torch.randn(3, 3, {dtype = torch.float64}):requires_grad_()}))
end)

test("unbind in a compiled function", function()
  torch.manual_seed(3)
  local function f(x, w)
    local q, k, v = table.unpack(x:unbind(2))
    return ((q * w + k) * v):sum()
  end
  local cf = torch.compile(f)
  for _ = 1, 3 do
    local x = torch.randn(4, 3, 6):requires_grad_()
    local w = torch.randn(4, 6)
    local x2 = x:detach():clone():requires_grad_()
    local a, b = cf(x, w), f(x2, w)
    check(maxdiff(a, b) < 1e-4)
    a:backward()
    b:backward()
    check(maxdiff(x.grad, x2.grad) < 1e-5)
  end
end)

test("unbind of an empty dim and errors", function()
  check_eq(#torch.zeros(0, 3):unbind(1), 0)
  check_error(function() return torch.zeros(2, 3):unbind(3) end, "unbind: dimension 3 out of range")
end)
