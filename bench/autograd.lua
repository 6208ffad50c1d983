-- bench/autograd.lua -- autograd benchmarks: a small graph
-- (w*a+b):sum():backward() on 16 floats, and forward+backward of a
-- 784-256-10 MLP (relu, log_softmax cross-entropy) on a batch of 128.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == name end

if want("backward_small16") then
  local w = torch.randn(16, {requires_grad = true})
  local a, b = torch.randn(16), torch.randn(16)
  B.report("backward_small16", B.time(function()
    ;(w * a + b):sum():backward()
  end, 20000))
end

if want("mlp_fwd_bwd") then
  torch.manual_seed(0)
  local n, d, h, c = 128, 784, 256, 10
  local x = torch.randn(n, d)
  local w1 = (torch.randn(d, h) * 0.05):requires_grad_()
  local b1 = torch.zeros(h, {requires_grad = true})
  local w2 = (torch.randn(h, c) * 0.05):requires_grad_()
  local b2 = torch.zeros(c, {requires_grad = true})
  local onehot = torch.zeros(n, c)
  for i = 1, n do onehot[{i, (i % c) + 1}] = 1 end
  local s = B.time(function()
    local logits = torch.relu(x:matmul(w1) + b1):matmul(w2) + b2
    local loss = -(logits:log_softmax(2) * onehot):sum() / n
    loss:backward()
  end, 50)
  B.report("mlp_fwd_bwd", s, n / s, "samples/s")
end
