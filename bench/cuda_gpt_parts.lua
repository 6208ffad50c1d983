-- bench/cuda_gpt_parts.lua -- two parts of the char GPT's training step on
-- the GPU, in ms (median of event-timed runs after warm-up):
--   gelu_backward_bf16: gelu's backward on 16384 x 1536 bfloat16 (the MLP
--     of batch 64 x block 256 x 4*384): the fused torch.gelu_backward, the
--     whole GeluBackward0 node through autograd, and the old composition of
--     ~12 elementwise ops it replaced;
--   clip_grad_norm: nn.utils.clip_grad_norm_(params, 1.0) over the 77
--     float32 gradients of scripts/train_char_gpt.lua's GPT (6 layers, width
--     384): eager (torch._foreach_norm + torch._foreach_mul_) and the old
--     per-tensor path (77 vector_norms, stack, norm, 77 mul_).
-- Writes the gradient shapes to /tmp/gpt_grad_shapes.txt for the peer,
-- bench/peers/cuda_gpt_parts.py (run both in one call on the GPU machine).
package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local torch = require "torch"
local nn = require "torch.nn"
if not torch.cuda.is_available() then print("cuda_gpt_parts: no CUDA GPU here; skipped") return end
local time_ms = require("common").cuda_ms

-- the composition gelu's derivative used before the fused op
local function composed(g, x)
  local cdf = (torch.erf(x * (1 / math.sqrt(2))) + 1) * 0.5
  local pdf = torch.exp(x * x * -0.5) * 0.39894228040143267794
  return g * (cdf + x * pdf)
end

do
  torch.manual_seed(0)
  local x = torch.randn(16384, 1536, {device = "cuda"}):bfloat16()
  local g = torch.randn(16384, 1536, {device = "cuda"}):bfloat16()
  local fused = time_ms(function() torch.gelu_backward(g, x) end, 21, 10)
  local tanh = time_ms(function() torch.gelu_backward(g, x, "tanh") end, 21, 10)
  local old = time_ms(function() composed(g, x) end, 21, 10)
  local xr = x:clone():requires_grad_()
  local node = time_ms(function() torch.autograd.grad({torch.gelu(xr)}, {xr}, {grad_outputs = {g}}) end, 21, 5)
  local bytes = 3 * x:numel() * 2
  print(("gelu_backward_bf16 16384x1536: fused %.3f ms (%.0f GB/s), tanh form %.3f ms, old composition %.3f ms; "
    .. "gelu forward+GeluBackward0 via autograd.grad %.3f ms"):format(fused, bytes / fused / 1e6, tanh, old, node))
end

do
  local lib = assert(loadfile("scripts/train_char_gpt.lua"))("--lib")
  torch.manual_seed(0)
  local m = lib.GPT{vocab_size = 65, block_size = 256, n_layer = 6, n_head = 6, n_embd = 384, dropout = 0, tied = true}
  m:to("cuda")
  local ps = m:parameters()
  local f = io.open("/tmp/gpt_grad_shapes.txt", "w")
  local numel = 0
  for _, p in ipairs(ps) do
    p.grad = torch.randn(p.shape, {device = "cuda"}) * 1e-3
    numel = numel + p:numel()
    if f then f:write(table.concat(p.shape, " "), "\n") end
  end
  if f then f:close() end
  local grads = {}
  for i, p in ipairs(ps) do grads[i] = p.grad end
  local function old_path()
    torch.no_grad(function()
      local norms = {}
      for i, g in ipairs(grads) do norms[i] = torch.linalg.vector_norm(g, 2) end
      local total = torch.linalg.vector_norm(torch.stack(norms), 2)
      local coef = (1.0 / (total + 1e-6)):clamp(nil, 1.0)
      for _, g in ipairs(grads) do g:mul_(coef) end
    end)
  end
  local new = time_ms(function() nn.utils.clip_grad_norm_(ps, 1.0) end, 21, 10)
  local old = time_ms(old_path, 21, 10)
  local norm_only = time_ms(function() torch._foreach_norm(grads) end, 21, 10)
  local t0 = torch.time()
  for _ = 1, 100 do nn.utils.clip_grad_norm_(ps, 1.0) end
  local host = (torch.time() - t0) / 100 * 1e3
  torch.cuda.synchronize()
  print(("clip_grad_norm %d grads (%d elements, float32): foreach %.3f ms (host %.3f ms/call; _foreach_norm alone %.3f ms), "
    .. "old per-tensor path %.3f ms"):format(#ps, numel, new, host, norm_only, old))
end
