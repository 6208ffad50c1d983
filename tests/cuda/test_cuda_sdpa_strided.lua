-- tests/cuda/test_cuda_sdpa_strided.lua -- cuDNN attention on strided
-- inputs (tensor/attention_cudnn.c reads q, k, v, out and grad_out with
-- their strides instead of copying them): q, k, v unbound from one qkv
-- projection (interleaved), BSHD views, GQA, masks, rank 3, and layouts
-- cuDNN cannot address (odd strides, misaligned data) which are copied.
-- Each against the contiguous inputs through cuDNN and against the math
-- backend in float32; the output of a strided query is laid out BSHD and
-- the gradients of q, k, v of one buffer land in one buffer, which
-- unbind's backward hands on without a copy. Skips without a GPU or cuDNN.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; strided cuDNN attention tests skipped\n")
  return
end
if not torch.backends.cudnn.is_available() then
  io.write("note: cuDNN not found; strided cuDNN attention tests skipped\n")
  return
end

local F = torch.nn.functional
local sel = torch.backends.sdp_selected

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local rel = require("flashlib").rel -- ||a - b|| / ||b|| in float64
local function close(a, b, what, tol)
  local r = rel(a, b)
  check(r <= (tol or 1e-2), ("%s: relative error %.3g"):format(what, r))
end

-- out and grads of (q, k, v) through cudnn as given, through cudnn on
-- contiguous clones and through math in float32; gy is the output's grad
local function against(q, k, v, o, label)
  local backend, notes = sel(q, k, v, o)
  check_eq(backend, "cudnn", label .. " selects cudnn (" .. table.concat(notes, "; ") .. ")")
  local y = F.scaled_dot_product_attention(q, k, v, o)
  local gy = torch.randn(table.unpack(y:size())):cuda():to(q.dtype)
  local g = torch.autograd.grad({y}, {q, k, v}, {grad_outputs = {gy}})
  local qc, kc, vc = q:detach():clone():requires_grad_(), k:detach():clone():requires_grad_(),
    v:detach():clone():requires_grad_()
  local yc = F.scaled_dot_product_attention(qc, kc, vc, o)
  local gc = torch.autograd.grad({yc}, {qc, kc, vc}, {grad_outputs = {gy:contiguous()}})
  local q32, k32, v32 = q:detach():float():requires_grad_(), k:detach():float():requires_grad_(),
    v:detach():float():requires_grad_()
  local o32 = {is_causal = o.is_causal, enable_gqa = o.enable_gqa}
  if o.attn_mask then o32.attn_mask = o.attn_mask.dtype == torch.bool and o.attn_mask or o.attn_mask:float() end
  local y32 = torch._sdpa_math(q32, k32, v32, o32)
  local g32 = torch.autograd.grad({y32}, {q32, k32, v32}, {grad_outputs = {gy:float()}})
  close(y, yc, label .. " out vs contiguous", 2e-3)
  close(y, y32, label .. " out vs math")
  for i, n in ipairs{"dq", "dk", "dv"} do
    close(g[i], gc[i], label .. " " .. n .. " vs contiguous", 2e-3)
    close(g[i], g32[i], label .. " " .. n .. " vs math")
  end
  return y, g
end

-- q, k, v of shape (B, H, T, D) unbound from one (B, T, 3, H, D) projection
local function qkv_split(B, T, H, D, dt)
  local base = torch.randn(B, T, 3 * H * D):cuda():to(dt):requires_grad_()
  local qkv = base:view(B, T, 3, H, D):permute(3, 1, 4, 2, 5)
  local q, k, v = table.unpack(qkv:unbind(1))
  return base, qkv, q, k, v
end

test("strided q, k, v unbound from one qkv projection (the GPT's attention)", function()
  torch.manual_seed(1)
  for _, dt in ipairs{torch.bfloat16, torch.float16} do
    for _, causal in ipairs{true, false} do
      for _, shp in ipairs{{4, 64, 6, 64}, {2, 77, 3, 128}} do
        local B, T, H, D = table.unpack(shp)
        local _, qkv, q, k, v = qkv_split(B, T, H, D, dt)
        check(not q:is_contiguous(), "q is a strided view")
        local label = ("%s causal=%s B%d T%d H%d D%d"):format(tostring(dt), tostring(causal), B, T, H, D)
        local y = against(q, k, v, {is_causal = causal}, label)
        check(y:transpose(2, 3):is_contiguous(), label .. ": out is laid out BSHD")
        -- the gradient reaching the (3, B, H, T, D) view is dq, dk, dv in one (B, T, 3, H, D) buffer
        local yy = F.scaled_dot_product_attention(q, k, v, {is_causal = causal})
        local gy = torch.randn(B, T, H * D):cuda():to(dt)
        local loss = (yy:transpose(2, 3):reshape(B, T, H * D) * gy):sum()
        local gqkv = torch.autograd.grad({loss}, {qkv}, {retain_graph = true})[1]
        check(gqkv:permute(2, 4, 1, 3, 5):is_contiguous(), label .. ": grad of qkv is one (B, T, 3, H, D) buffer")
        local gs = torch.autograd.grad({loss}, {q, k, v})
        close(gqkv, torch.stack(gs, 1), label .. " grad of qkv = stack of dq, dk, dv", 1e-6)
      end
    end
  end
end)

test("a GPT-like step through strided attention equals one through contiguous copies", function()
  torch.manual_seed(2)
  local B, T, H, D = 2, 40, 2, 64
  local x = torch.randn(B, T, H * D):cuda():bfloat16()
  local w = (torch.randn(3 * H * D, H * D) * 0.05):cuda():bfloat16()
  local function run(copy)
    local wl = w:clone():requires_grad_()
    local qkv = F.linear(x, wl):view(B, T, 3, H, D):permute(3, 1, 4, 2, 5)
    local q, k, v = table.unpack(qkv:unbind(1))
    if copy then q, k, v = q:contiguous(), k:contiguous(), v:contiguous() end
    local y = F.scaled_dot_product_attention(q, k, v, {is_causal = true})
    local loss = y:transpose(2, 3):reshape(B, T, H * D):float():pow(2):sum()
    loss:backward()
    return loss, wl.grad
  end
  local l1, g1 = run(false)
  local l2, g2 = run(true)
  close(l1:reshape(1), l2:reshape(1), "loss", 1e-3)
  close(g1, g2, "weight grad", 5e-3)
end)

test("BSHD views, GQA, masks and rank 3 on strided inputs", function()
  torch.manual_seed(3)
  local function bshd(B, T, H, D, dt)
    return torch.randn(B, T, H, D):cuda():to(dt):transpose(2, 3):requires_grad_()
  end
  local dt = torch.bfloat16
  local q, k, v = bshd(2, 50, 4, 64, dt), bshd(2, 70, 4, 64, dt), bshd(2, 70, 4, 64, dt)
  against(q, k, v, {}, "BSHD q, k, v")
  against(q, k, v, {is_causal = true}, "BSHD causal")
  local m = torch.rand(50, 70):lt(0.7):cuda()
  m:select(2, 1):fill_(true)
  against(q, k, v, {attn_mask = m}, "BSHD bool mask")
  against(q, k, v, {attn_mask = torch.randn(2, 1, 50, 70):cuda():to(dt)}, "BSHD additive mask")
  local q8 = bshd(2, 50, 8, 64, dt)
  against(q8, k, v, {enable_gqa = true}, "BSHD GQA 8/4")
  -- rank 3: (H, T, D) views of (T, H, D)
  local r3 = function(T, H) return torch.randn(T, H, 64):cuda():to(dt):transpose(1, 2):requires_grad_() end
  against(r3(30, 2), r3(40, 2), r3(40, 2), {is_causal = true}, "rank 3 strided")
  -- a contiguous q with strided k, v
  local qc = torch.randn(2, 4, 50, 64):cuda():to(dt):requires_grad_()
  against(qc, k, v, {}, "contiguous q, BSHD k and v")
end)

test("layouts cuDNN cannot address are copied: odd strides, misaligned data, a strided last dim", function()
  torch.manual_seed(4)
  local dt = torch.float16
  -- row stride 65 (not a multiple of 8 elements)
  local wide = torch.randn(2, 3, 40, 65):cuda():to(dt)
  local q = wide:narrow(4, 1, 64):requires_grad_()
  local k = torch.randn(2, 3, 40, 64):cuda():to(dt):requires_grad_()
  against(q, k, k:detach():clone():requires_grad_(), {}, "row stride 65")
  -- data one element off 16-byte alignment
  local flat = torch.randn(2 * 3 * 40 * 64 + 1):cuda():to(dt)
  local qm = flat:narrow(1, 2, 2 * 3 * 40 * 64):view(2, 3, 40, 64):requires_grad_()
  against(qm, k, k:detach():clone():requires_grad_(), {is_causal = true}, "misaligned q")
  -- the head dim strided (every other element)
  local qe = torch.randn(2, 3, 40, 64, 2):cuda():to(dt):select(5, 1):requires_grad_()
  check_eq(qe:stride(4), 2)
  against(qe, k, k:detach():clone():requires_grad_(), {}, "head dim stride 2")
end)
