-- tests/cuda/test_cuda_flash.lua -- the flash attention kernels on CUDA
-- (tensor/cuda/flash.cu through tensor/attention_cuda.c) in bfloat16
-- against the math backend run in float32 on the same (16-bit rounded)
-- inputs (tests/cuda/flashlib.lua): forward and the gradients of q, k and v
-- for head dims 64 and 128 (256 forward), causal, bool and additive masks,
-- GQA and odd lengths; lse against logsumexp of the math scores; NaN
-- inputs; the selection rule on the GPU. float16 and dropout have their own
-- files (test_cuda_flash_fp16.lua, test_cuda_flash_dropout.lua), so the
-- three can run side by side. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU flash attention tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local L = require "flashlib"
L.use({check = check, check_eq = check_eq})
local F = require("torch.nn").functional
local inputs, close, compare = L.inputs, L.close, L.compare

L.dtype_tests(test, torch.bfloat16)

test("flash lse is logsumexp of the scaled, masked scores", function()
  for _, c in ipairs({{L = 77, S = 100, E = 64}, {L = 64, S = 64, E = 128, causal = true}}) do
    local x, xf = inputs(torch.bfloat16, 2, 3, 3, c.L, c.S, c.E, false)
    local y, lse = torch._sdpa_flash(x[1], x[2], x[3], {is_causal = c.causal})
    check_eq(lse.dtype, torch.float32, "lse is float32")
    local s = torch.matmul(xf[1], xf[2]:transpose(-2, -1)) * (1 / math.sqrt(c.E))
    if c.causal then s = s:masked_fill(torch.ones(c.L, c.S):tril():logical_not():to("cuda"), -math.huge) end
    close(lse, torch.logsumexp(s, -1), "lse", 1e-3)
  end
end)

test("flash: NaN inputs give NaN outputs; a fully masked row gives NaN", function()
  local g <close> = torch.backends.sdp_kernel{cudnn = false} -- cuDNN would come first
  local x = inputs(torch.bfloat16, 1, 2, 2, 70, 70, 64, false)
  local q = x[1]:cpu()
  q[1][1][5]:narrow(1, 3, 1):fill_(0 / 0)
  local y = F.scaled_dot_product_attention(q:to("cuda"), x[2], x[3]):float():cpu()
  check(y[1][1][5]:isnan():all():item(), "the NaN query's row is NaN")
  check(not y[1][1][6]:isnan():any():item(), "other rows are finite")
  local m = torch.ones(70, 70, {dtype = torch.bool})
  m[9]:fill_(false)
  y = F.scaled_dot_product_attention(x[1], x[2], x[3], {attn_mask = m:to("cuda")}):float():cpu()
  check(y[1][1][9]:isnan():all():item(), "a row with every key masked is NaN")
  check(not y[1][1][10]:isnan():any():item(), "the next row is finite")
end)

test("flash selection on the GPU: 16-bit take cudnn, else flash; float64, odd head dims and E=256 with grad take math", function()
  local x = inputs(torch.bfloat16, 1, 2, 2, 16, 16, 64, false)
  check_eq(torch.backends.sdp_selected(x[1], x[2], x[3]), torch.backends.cudnn.is_available() and "cudnn" or "flash")
  check_eq(torch.backends.sdp_selected(x[1], x[2], x[3], {dropout_p = 0.1}), "flash") -- cuDNN has no dropout here
  do
    local g0 <close> = torch.backends.sdp_kernel{cudnn = false}
    check_eq(torch.backends.sdp_selected(x[1], x[2], x[3]), "flash")
  end
  local f = x[1]:float()
  check_eq(torch.backends.sdp_selected(f, f, f), "flash") -- float32: the SIMT kernels (test_cuda_flash_f32.lua)
  f = x[1]:double()
  check_eq(torch.backends.sdp_selected(f, f, f), "math")
  local y = inputs(torch.float16, 1, 2, 2, 16, 16, 32, false)
  check_eq(torch.backends.sdp_selected(y[1], y[2], y[3]), "math")
  local z = inputs(torch.bfloat16, 1, 2, 2, 16, 16, 256, true)
  check_eq(torch.backends.sdp_selected(z[1], z[2], z[3]), "math")
  local g <close> = torch.backends.sdp_kernel{math = false}
  check_error(function() torch.backends.sdp_selected(f, f, f) end, "float64 takes math")
  check_error(function() torch.backends.sdp_selected(y[1], y[2], y[3]) end, "head dims 64, 128 and 256")
end)
