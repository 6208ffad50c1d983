-- bench/cuda_sdpa.lua -- scaled dot product attention on CUDA, bfloat16:
-- B=4 H=16 L=S=2048 E=128 forward and forward + backward, the same causal,
-- E=64, and L=S=8192 forward. Device ms (median of 20 after warm-up) and
-- TFLOP/s counting 4*B*H*L*S*E for the forward (halved when causal) and
-- 2.5 times that for the backward. Prints the backend that ran.
-- Peer: bench/peers/cuda_sdpa.py (PyTorch's cudnn, flash and efficient
-- backends, and the best of them).

package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local time_ms = require("common").cuda_ms
local F = torch.nn.functional

local ROWS = { -- name, B, H, L, E, causal, backward too
  {"b4_h16_l2048_e128", 4, 16, 2048, 128, false, true},
  {"b4_h16_l2048_e128_causal", 4, 16, 2048, 128, true, true},
  {"b4_h16_l2048_e64", 4, 16, 2048, 64, false, true},
  {"b4_h16_l8192_e128", 4, 16, 8192, 128, false, false},
}

print(("cuDNN %s"):format(tostring(torch.backends.cudnn.version())))
for _, r in ipairs(ROWS) do
  local name, B, H, L, E, causal, bwd = table.unpack(r)
  torch.manual_seed(0)
  local q = torch.randn(B, H, L, E, {device = "cuda"}):bfloat16()
  local k = torch.randn(B, H, L, E, {device = "cuda"}):bfloat16()
  local v = torch.randn(B, H, L, E, {device = "cuda"}):bfloat16()
  local o = {is_causal = causal}
  local flops = 4 * B * H * L * L * E / (causal and 2 or 1)
  local backend = torch.backends.sdp_selected(q, k, v, o)
  torch.cuda.synchronize()
  local t0 = torch.time()
  F.scaled_dot_product_attention(q, k, v, o) -- the first call builds the plan
  torch.cuda.synchronize()
  local first = (torch.time() - t0) * 1e3
  local fwd = time_ms(function() F.scaled_dot_product_attention(q, k, v, o) end, 20)
  local line = ("sdpa_%s [%s] fwd %.3f ms (%.0f TFLOP/s; first call %.0f ms)"):format(name, backend, fwd,
                                                                                    flops / fwd / 1e9, first)
  if bwd then
    local qr, kr, vr = q:clone():requires_grad_(), k:clone():requires_grad_(), v:clone():requires_grad_()
    local gy = torch.randn(B, H, L, E, {device = "cuda"}):bfloat16()
    torch.cuda.synchronize()
    t0 = torch.time()
    F.scaled_dot_product_attention(qr, kr, vr, o):backward(gy)
    torch.cuda.synchronize()
    first = (torch.time() - t0) * 1e3
    local both = time_ms(function()
      qr.grad, kr.grad, vr.grad = nil, nil, nil
      F.scaled_dot_product_attention(qr, kr, vr, o):backward(gy)
    end, 20)
    line = line .. (", fwd+bwd %.3f ms (%.0f TFLOP/s; first backward %.0f ms)"):format(both, 3.5 * flops / both / 1e9,
                                                                                     first)
  end
  print(line)
end
