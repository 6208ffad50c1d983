-- bench/cuda_sdpa.lua -- scaled dot product attention on CUDA, bfloat16:
-- B=4 H=16 L=S=2048 E=128 forward and forward + backward, the same causal,
-- E=64, and L=S=8192 forward. Device ms (median of 20 after warm-up) and
-- TFLOP/s counting 4*B*H*L*S*E for the forward (halved when causal) and
-- 2.5 times that for the backward. Prints the backend that ran.
-- Peer: bench/peers/cuda_sdpa.py (PyTorch's cudnn, flash and efficient
-- backends, and the best of them).
-- `cuda_sdpa.lua f32`: float32 rows instead (our SIMT flash kernels,
-- tensor/cuda/flash_f32.cu): the char GPT's attention (B=64 H=6 L=256 E=64
-- causal, with the math path beside it) and B=4 H=16 L=2048 E=64, forward
-- and forward + backward; then runs the peer (`cuda_sdpa.py f32`: PyTorch's
-- default fp32 backend, memory-efficient) with $PEER_PYTHON (default
-- /opt/torch/.venv/bin/python) and prints the ratios (peer ms / ours).

package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local time_ms = require("common").cuda_ms
local F = torch.nn.functional

local ROWS = { -- name, B, H, L, E, causal, backward too
  {"b4_h16_l2048_e128", 4, 16, 2048, 128, false, true},
  {"b4_h16_l2048_e128_causal", 4, 16, 2048, 128, true, true},
  {"b4_h16_l2048_e64", 4, 16, 2048, 64, false, true},
  {"b4_h16_l8192_e128", 4, 16, 8192, 128, false, false},
}

-- float32: our time per row name, then the peer's, and the ratios
local function f32_rows()
  local rows = {{"gpt_b64_h6_l256_e64_causal", 64, 6, 256, 64, true}, {"b4_h16_l2048_e64", 4, 16, 2048, 64, false},
                {"b4_h16_l2048_e64_causal", 4, 16, 2048, 64, true}, {"b4_h16_l2048_e128", 4, 16, 2048, 128, false}}
  local ours = {}
  local function time_row(name, B, H, L, E, causal)
    torch.manual_seed(0)
    local function mk() return torch.randn(B, H, L, E, {device = "cuda"}) end
    local q, k, v, gy = mk(), mk(), mk(), mk()
    local o = {is_causal = causal}
    local flops = 4 * B * H * L * L * E / (causal and 2 or 1)
    local backend = torch.backends.sdp_selected(q, k, v, o)
    local fwd = time_ms(function() F.scaled_dot_product_attention(q, k, v, o) end, 20)
    q:requires_grad_(); k:requires_grad_(); v:requires_grad_()
    local both = time_ms(function()
      q.grad, k.grad, v.grad = nil, nil, nil
      F.scaled_dot_product_attention(q, k, v, o):backward(gy)
    end, 20)
    print(("sdpa_f32_%s [%s] fwd %.3f ms (%.1f TFLOP/s), fwd+bwd %.3f ms (%.1f TFLOP/s; bwd alone %.3f ms)"):format(
      name, backend, fwd, flops / fwd / 1e9, both, 3.5 * flops / both / 1e9, both - fwd))
    return fwd, both
  end
  for _, r in ipairs(rows) do ours[r[1]] = {time_row(table.unpack(r))} end
  do -- the math path on the GPT shape, as before the float32 kernels
    local g <close> = torch.backends.sdp_kernel{flash = false}
    time_row(table.unpack(rows[1]))
  end
  local py = os.getenv("PEER_PYTHON") or "/opt/torch/.venv/bin/python"
  local here = arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench"
  local f = io.open(py, "r")
  if not f then return print("no peer: " .. py .. " not found") end
  f:close()
  local p = io.popen(py .. " " .. here .. "/peers/cuda_sdpa.py f32 2>&1")
  for line in p:lines() do
    print(line)
    local name, pf, pb = line:match("^peer sdpa_f32_(%S+) %S+ fwd ([%d.]+) ms.-fwd%+bwd ([%d.]+) ms")
    if name and ours[name] then
      print(("ratio sdpa_f32_%s fwd %.2f, fwd+bwd %.2f (peer ms / ours; above 1: ours faster)"):format(name,
        tonumber(pf) / ours[name][1], tonumber(pb) / ours[name][2]))
    end
  end
  p:close()
end

if arg and arg[1] == "f32" then return f32_rows() end

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
