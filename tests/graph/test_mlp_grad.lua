-- tests/graph/test_mlp_grad.lua -- gradients of a two-layer MLP with a
-- softmax cross-entropy written from core ops, and of an MSE on a softmax,
-- against PyTorch's on the same inputs (tests/ref/gen_autograd.py).
local R = ref("autograd")
local function T(v, grad)
  local t = torch.tensor(v, {dtype = torch.float64})
  if grad then t:requires_grad_() end
  return t
end

local function one_hot(labels, c)
  local o = torch.zeros(#labels, c, {dtype = torch.float64})
  for i, l in ipairs(labels) do o[{i, l}] = 1 end
  return o
end

test("MLP + cross-entropy from core ops: loss and every gradient match PyTorch", function()
  local x, w1, b1, w2, b2 = T(R.x, true), T(R.w1, true), T(R.b1, true), T(R.w2, true), T(R.b2, true)
  local h = torch.tanh(x:matmul(w1) + b1)
  local logits = h:matmul(w2) + b2
  local logp = logits - logits:exp():sum(2, {keepdim = true}):log()
  local loss = -(logp * one_hot(R.labels, 3)):sum(2):mean()
  check_close(loss:item(), R.loss, {rtol = 1e-12})
  loss:backward()
  for name, t in pairs({x = x, w1 = w1, b1 = b1, w2 = w2, b2 = b2}) do
    check_close(t.grad, T(R["g" .. name]), {rtol = 1e-10, atol = 1e-12})
  end
end)

test("the same loss through log_softmax gives the same gradients", function()
  local x, w1, b1, w2, b2 = T(R.x, true), T(R.w1, true), T(R.b1, true), T(R.w2, true), T(R.b2, true)
  local logits = torch.tanh(x:matmul(w1) + b1):matmul(w2) + b2
  local loss = -(logits:log_softmax(2) * one_hot(R.labels, 3)):sum() / 5
  loss:backward()
  check_close(w1.grad, T(R.gw1), {rtol = 1e-10, atol = 1e-12})
  check_close(b2.grad, T(R.gb2), {rtol = 1e-10, atol = 1e-12})
end)

test("MSE on a softmax over a relu layer: input gradient matches PyTorch", function()
  local x = T(R.x, true)
  local p = torch.relu(x:matmul(T(R.w1))):matmul(T(R.w2)):softmax(2)
  local mse = ((p - one_hot(R.labels, 3)) ^ 2):mean()
  check_close(mse:item(), R.mse, {rtol = 1e-12})
  local g = torch.autograd.grad(mse, x)[1]
  check_close(g, T(R.gx_mse), {rtol = 1e-10, atol = 1e-12})
end)
