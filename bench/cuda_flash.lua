-- bench/cuda_flash.lua -- the flash attention kernels (tensor/cuda/flash.cu)
-- on bfloat16 (B, H, L, E) inputs: forward and forward + backward of
-- F.scaled_dot_product_attention, median ms and TFLOP/s counting
-- 4·B·H·L·S·E for the forward (halved when causal) and 2.5 times that for
-- the backward. Rows: B=4 H=16 L=S=2048 E=128, the same causal, E=64, and
-- L=S=8192 forward. `cuda_flash.lua fwd` runs the forward rows only.
-- Peer: bench/peers/cuda_flash.py (same rows; PyTorch's flash backend and
-- its best one).

package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local time_ms = require("common").cuda_ms
local F = require("torch.nn").functional

local only = arg and arg[1]
-- cuDNN comes first on CUDA (docs/attention.md): switch it off to time our kernels
local no_cudnn <close> = torch.backends.sdp_kernel{cudnn = false}

local function row(name, B, H, L, E, causal, backward)
  torch.manual_seed(0)
  local function mk() return torch.randn(B, H, L, E, {device = "cuda"}):to(torch.bfloat16) end
  local q, k, v = mk(), mk(), mk()
  local o = {is_causal = causal}
  local fl = 4 * B * H * L * L * E * (causal and 0.5 or 1)
  assert(torch.backends.sdp_selected(q, k, v, o) == "flash", "flash is not selected")
  local fwd = time_ms(function() F.scaled_dot_product_attention(q, k, v, o) end, 10)
  local line = ("flash_%s fwd %.3f ms (%.1f TFLOP/s)"):format(name, fwd, fl / fwd / 1e9)
  if backward then
    local g = mk()
    q:requires_grad_(); k:requires_grad_(); v:requires_grad_()
    local both = time_ms(function()
      q.grad, k.grad, v.grad = nil, nil, nil
      F.scaled_dot_product_attention(q, k, v, o):backward(g)
    end, 10)
    line = line .. (", fwd+bwd %.3f ms (%.1f TFLOP/s; bwd alone %.1f TFLOP/s)"):format(both, 3.5 * fl / both / 1e9,
      2.5 * fl / (both - fwd) / 1e9)
  end
  print(line)
end

local bwd = only ~= "fwd"
row("b4h16_l2048_e128", 4, 16, 2048, 128, false, bwd)
row("b4h16_l2048_e128_causal", 4, 16, 2048, 128, true, bwd)
row("b4h16_l2048_e64", 4, 16, 2048, 64, false, bwd)
row("b4h16_l8192_e128", 4, 16, 8192, 128, false, false)
