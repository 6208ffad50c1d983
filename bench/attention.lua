-- bench/attention.lua -- float32 scaled dot product attention, B=4 H=8
-- L=S=512 E=64: forward, and forward + backward (gradients of q, k, v),
-- through F.scaled_dot_product_attention (the flash backend). Then one head
-- at L=S=8192 forward + backward, reporting the peak resident set (VmHWM)
-- to show memory linear in L: the L x S score matrix alone would be 256 MB.
-- Peer: bench/peers/attention.py (PyTorch's math composition).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local F = torch.nn.functional
local only = arg and arg[1]
local function want(name) return not only or only == name end

local function vmhwm_mb()
  local f = io.open("/proc/self/status")
  if not f then return 0 end
  local s = f:read("a")
  f:close()
  return tonumber(s:match("VmHWM:%s*(%d+)")) / 1024
end

local b, h, l, e = 4, 8, 512, 64
local flops = 4 * b * h * l * l * e -- q k^T and p v
if want("sdpa_512_fwd") or want("sdpa_512_fwdbwd") then
  local q, k, v = torch.randn(b, h, l, e), torch.randn(b, h, l, e), torch.randn(b, h, l, e)
  if want("sdpa_512_fwd") then
    local t = torch.no_grad(function()
      return B.time(function() local _ = F.scaled_dot_product_attention(q, k, v) end, 5)
    end)
    B.report("sdpa_512_fwd", t, flops / t / 1e9, "GFLOP/s")
  end
  if want("sdpa_512_fwdbwd") then
    q:requires_grad_(); k:requires_grad_(); v:requires_grad_()
    local g = torch.randn(b, h, l, e)
    local t = B.time(function()
      local y = F.scaled_dot_product_attention(q, k, v)
      local _ = torch.autograd.grad({y}, {q, k, v}, {grad_outputs = {g}})
    end, 3)
    B.report("sdpa_512_fwdbwd", t, 3.5 * flops / t / 1e9, "GFLOP/s") -- backward: 2.5x the forward's products
  end
end

if want("sdpa_8192_fwdbwd") then
  local n = 8192
  local q, k, v = torch.randn(1, 1, n, e), torch.randn(1, 1, n, e), torch.randn(1, 1, n, e)
  q:requires_grad_(); k:requires_grad_(); v:requires_grad_()
  local before = vmhwm_mb()
  local t0 = torch.time()
  local y = F.scaled_dot_product_attention(q, k, v)
  local gq = torch.autograd.grad({y:sum()}, {q, k, v})
  local t = torch.time() - t0
  local peak = vmhwm_mb()
  B.report("sdpa_8192_fwdbwd", t, 3.5 * 4 * n * n * e / t / 1e9, "GFLOP/s")
  print(("NOTE sdpa_8192: peak RSS %.0f MB (%.0f MB before; the %d x %d float32 score matrix alone is %.0f MB)")
    :format(peak, before, n, n, n * n * 4 / 2 ^ 20))
  local _ = gq
end
