-- tests/cuda/devcompare.lua -- the CPU-against-CUDA comparison that the
-- normalization tests share (test_cuda_norm.lua, test_cuda_cudnn_pool_norm.lua).
-- new(check_eq, same) returns compare(f, inputs, dt, what): f(...) runs on
-- the CPU and on CUDA with the same inputs (tensors moved; those that
-- require grad keep requiring it); every tensor result is compared by
-- same(gpu, cpu, dt, what), and, when the first result requires grad, so
-- are the gradients of sum(y * g) (g random, the same on both devices) of
-- the inputs that require grad.
local torch = require "torch"
local M = {}

function M.new(check_eq, same)
  return function(f, inputs, dt, what)
    local function run(dev)
      local ins = {}
      for i, t in ipairs(inputs) do
        if torch.is_tensor(t) then
          ins[i] = t:detach():to(dev)
          if t.requires_grad then ins[i]:requires_grad_() end
        else
          ins[i] = t
        end
      end
      local outs = {f(table.unpack(ins))}
      local grads = {}
      if outs[1].requires_grad then
        torch.manual_seed(11)
        local g = torch.randn(table.unpack(outs[1]:size())):to(outs[1].dtype):to(dev)
        ;(outs[1] * g):sum():backward()
        for _, t in ipairs(ins) do
          if torch.is_tensor(t) and t.requires_grad then grads[#grads + 1] = t.grad end
        end
      end
      return outs, grads
    end
    local oc, gc = run("cpu")
    local og, gg = run("cuda")
    for i = 1, #oc do
      if torch.is_tensor(oc[i]) then same(og[i], oc[i], dt, what .. " result " .. i) end
    end
    check_eq(#gg, #gc, what .. " gradient count")
    for i = 1, #gc do same(gg[i], gc[i], dt, what .. " gradient " .. i) end
  end
end

return M
