-- bench/conv.lua -- float32 convolution: forward (torch.conv2d) and
-- backward (grad input + grad weight and bias, the two ops autograd calls)
-- for the Fashion-MNIST CNN's layers (batch 64: 1->32 channels on 28x28,
-- 32->64 on 14x14, 3x3, padding 1) and a ResNet-like 64->64 3x3 layer on
-- 56x56 (batch 32); max_pool2d(x, 2) on the CNN's 64x32x28x28 activations:
-- values alone (inference), with indices (what autograd runs) and the
-- backward from those indices (results `<close>`d: back in the allocator
-- before the next call, as PyTorch frees its own). Peer: bench/peers/conv.py.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == name end

local shapes = {
  {"conv_fmnist1", 64, 1, 32, 28, 20},
  {"conv_fmnist2", 64, 32, 64, 14, 10},
  {"conv_resnet56", 32, 64, 64, 56, 2},
}

for _, s in ipairs(shapes) do
  local name, n, c, k, hw, reps = table.unpack(s)
  local x, w, b = torch.randn(n, c, hw, hw), torch.randn(k, c, 3, 3), torch.randn(k)
  local flops = 2 * n * k * hw * hw * c * 9
  if want(name .. "_fwd") then
    local t = B.time(function() local _ = torch.conv2d(x, w, b, {padding = 1}) end, reps)
    B.report(name .. "_fwd", t, flops / t / 1e9, "GFLOP/s")
  end
  if want(name .. "_bwd") then
    local g = torch.randn(n, k, hw, hw)
    local t = B.time(function()
      local _ = torch._backward.conv_input(g, w, x.shape, {padding = 1})
      local _, _ = torch._backward.conv_weight(g, x, w.shape, {padding = 1})
    end, reps)
    B.report(name .. "_bwd", t, 2 * flops / t / 1e9, "GFLOP/s")
  end
end

-- GB/s: input read and output written (values, plus int64 indices)
local pn, pc, phw = 64, 32, 28
if want("pool_fmnist_fwd") or want("pool_fmnist_fwd_idx") or want("pool_fmnist_bwd") then
  local x = torch.randn(pn, pc, phw, phw)
  local nin, nout = pn * pc * phw * phw, pn * pc * (phw // 2) ^ 2
  if want("pool_fmnist_fwd") then
    local t = B.time(function() local _ <close> = torch.max_pool2d(x, 2) end, 50)
    B.report("pool_fmnist_fwd", t, 4 * (nin + nout) / t / 1e9, "GB/s")
  end
  if want("pool_fmnist_fwd_idx") then
    local t = B.time(function()
      local y, i = torch.max_pool2d_with_indices(x, 2)
      local _ <close> = y
      local _ <close> = i
    end, 50)
    B.report("pool_fmnist_fwd_idx", t, (4 * nin + 12 * nout) / t / 1e9, "GB/s")
  end
  if want("pool_fmnist_bwd") then
    local _, idx = torch.max_pool2d_with_indices(x, 2)
    local g = torch.randn(pn, pc, phw // 2, phw // 2)
    local t = B.time(function() local _ <close> = torch._backward.max_pool(g, idx, x.shape, 2) end, 50)
    B.report("pool_fmnist_bwd", t, (12 * nout + 4 * nin) / t / 1e9, "GB/s")
  end
end
