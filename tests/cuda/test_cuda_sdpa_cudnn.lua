-- tests/cuda/test_cuda_sdpa_cudnn.lua -- scaled dot product attention
-- through cuDNN's fused attention (tensor/cuda/cudnn_attn.c): forward,
-- logsumexp and backward of float16/bfloat16 inputs against the math
-- backend run in float32 on the same (rounded) inputs, for head dims 64 and
-- 128, causal or not, odd lengths, GQA, bool and additive masks; NaN
-- inputs; the selection rule and its notes. Skips without a GPU or cuDNN.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; cuDNN attention tests skipped\n")
  return
end
if not torch.backends.cudnn.is_available() then
  io.write("note: cuDNN not found; cuDNN attention tests skipped\n")
  return
end

local F = torch.nn.functional
local sel = torch.backends.sdp_selected

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local rel = require("flashlib").rel -- ||a - b|| / ||b|| in float64

local worst = {}
local function close(a, b, what, tol)
  local r = rel(a, b)
  local kind = what:match("(%S+)$")
  if not worst[kind] or r > worst[kind][1] then worst[kind] = {r, what} end
  check(r <= (tol or 1e-2), ("%s: relative error %.3g"):format(what, r))
end

local function inputs(dt, shq, shk, seed)
  torch.manual_seed(seed or 1)
  local q = torch.randn(table.unpack(shq)):cuda():to(dt)
  local k = torch.randn(table.unpack(shk)):cuda():to(dt)
  local v = torch.randn(table.unpack(shk)):cuda():to(dt)
  return q, k, v
end

-- forward and gradients of q, k, v: through the selected backend (must be
-- cudnn) and through math in float32 on the same values
local function compare(dt, shq, shk, o, label)
  local q, k, v = inputs(dt, shq, shk)
  local backend, notes = sel(q:requires_grad_(), k:requires_grad_(), v:requires_grad_(), o)
  check_eq(backend, "cudnn", label .. " selects cudnn (" .. table.concat(notes, "; ") .. ")")
  local y = F.scaled_dot_product_attention(q, k, v, o)
  check_eq(y.dtype, dt)
  local gy = torch.randn(table.unpack(y:size())):cuda():to(dt)
  local g = torch.autograd.grad({y}, {q, k, v}, {grad_outputs = {gy}})
  local q32, k32, v32 = q:detach():float():requires_grad_(), k:detach():float():requires_grad_(),
    v:detach():float():requires_grad_()
  local o32 = {is_causal = o.is_causal, enable_gqa = o.enable_gqa, scale = o.scale}
  if o.attn_mask then o32.attn_mask = o.attn_mask.dtype == torch.bool and o.attn_mask or o.attn_mask:float() end
  local y32 = torch._sdpa_math(q32, k32, v32, o32)
  local g32 = torch.autograd.grad({y32}, {q32, k32, v32}, {grad_outputs = {gy:float()}})
  close(y, y32, label .. " out")
  close(g[1], g32[1], label .. " dq")
  close(g[2], g32[2], label .. " dk")
  close(g[3], g32[3], label .. " dv")
end

local DTS = {torch.bfloat16, torch.float16}
local SHAPES = { -- q, k/v
  {{2, 3, 77, 64}, {2, 3, 77, 64}},
  {{1, 2, 100, 64}, {1, 2, 37, 64}},
  {{2, 4, 128, 64}, {2, 4, 256, 64}},
  {{3, 1, 33, 64}, {3, 1, 200, 64}},
}

for _, dt in ipairs(DTS) do
  for _, E in ipairs{64, 128} do
    for _, causal in ipairs{false, true} do
      test(("cudnn matches math (float32) forward and backward: %s E=%d causal=%s"):format(tostring(dt), E,
                                                                                       tostring(causal)), function()
        for _, s in ipairs(SHAPES) do
          local shq, shk = {table.unpack(s[1])}, {table.unpack(s[2])}
          shq[4], shk[4] = E, E
          compare(dt, shq, shk, {is_causal = causal},
                  ("%s E=%d causal=%s q%s k%s"):format(tostring(dt), E, tostring(causal), table.concat(shq, "x"),
                                                      table.concat(shk, "x")))
        end
      end)
    end
  end
end

test("cudnn: GQA, rank-3 and 5-d inputs, explicit scale", function()
  compare(torch.bfloat16, {2, 8, 64, 64}, {2, 2, 64, 64}, {enable_gqa = true}, "gqa 8/2")
  compare(torch.float16, {1, 6, 50, 128}, {1, 3, 90, 128}, {enable_gqa = true, is_causal = true}, "gqa causal 6/3")
  compare(torch.bfloat16, {4, 40, 64}, {4, 30, 64}, {scale = 0.3}, "rank 3")
  compare(torch.bfloat16, {2, 2, 3, 20, 64}, {2, 2, 3, 24, 64}, {}, "rank 5")
end)

test("cudnn: bool and additive masks", function()
  torch.manual_seed(5)
  local m = torch.rand(45, 70):lt(0.7):cuda()
  m:select(2, 1):fill_(true) -- no row fully masked
  compare(torch.bfloat16, {2, 3, 45, 64}, {2, 3, 70, 64}, {attn_mask = m}, "bool mask (L, S)")
  local bias = torch.randn(2, 1, 45, 70):cuda():bfloat16()
  compare(torch.bfloat16, {2, 3, 45, 64}, {2, 3, 70, 64}, {attn_mask = bias}, "additive mask (B, 1, L, S)")
  local bias2 = torch.randn(1, 3, 45, 70):cuda():half()
  compare(torch.float16, {2, 3, 45, 128}, {2, 3, 70, 128}, {attn_mask = bias2}, "additive mask (1, H, L, S)")
  -- a mask broadcast along S is not a cuDNN shape: flash runs it, with a note
  local q, k, v = inputs(torch.bfloat16, {1, 2, 8, 64}, {1, 2, 8, 64})
  local b, notes = sel(q, k, v, {attn_mask = torch.zeros(8, 1):cuda():bfloat16()})
  check_eq(b, "flash")
  check(notes[1]:find("^cudnn: the mask broadcasts along L or S"), notes[1])
end)

test("cudnn: logsumexp and the explicit ops", function()
  local q, k, v = inputs(torch.bfloat16, {2, 2, 50, 64}, {2, 2, 70, 64})
  local y, lse = torch._sdpa_cudnn(q, k, v, {is_causal = true})
  check_eq(lse.dtype, torch.float32)
  check_eq(table.concat(lse:size(), "x"), "2x2x50")
  local s = torch.matmul(q:float(), k:float():transpose(-2, -1)) / 8
  s = s:masked_fill(torch.ones(50, 70):triu(1):bool():cuda(), -math.huge)
  close(lse, torch.logsumexp(s, -1), "lse", 1e-3)
  local gy = torch.randn(2, 2, 50, 64):cuda():bfloat16()
  local dq, dk, dv = torch._backward.sdpa_cudnn(gy, q, k, v, y, lse, {is_causal = true})
  local q32, k32, v32 = q:float():requires_grad_(), k:float():requires_grad_(), v:float():requires_grad_()
  local y32 = torch._sdpa_math(q32, k32, v32, {is_causal = true})
  local g = torch.autograd.grad({y32}, {q32, k32, v32}, {grad_outputs = {gy:float()}})
  close(y, y32, "out"); close(dq, g[1], "dq"); close(dk, g[2], "dk"); close(dv, g[3], "dv")
end)

test("cudnn: head dim 256 forward without grad", function()
  local q, k, v = inputs(torch.bfloat16, {1, 2, 65, 256}, {1, 2, 65, 256})
  local b = sel(q, k, v)
  if b ~= "cudnn" then
    io.write("note: head dim 256 not taken by cuDNN here\n")
    return
  end
  local y = F.scaled_dot_product_attention(q, k, v)
  close(y, torch._sdpa_math(q:float(), k:float(), v:float()), "E=256 out")
  local b2, notes = sel(q:requires_grad_(), k, v)
  check(b2 ~= "cudnn" and notes[1]:find("head dim 256 unsupported"), "E=256 with grad is not cudnn")
end)

test("cudnn: NaN inputs give NaN outputs, no hang", function()
  local q, k, v = inputs(torch.bfloat16, {1, 2, 64, 64}, {1, 2, 64, 64})
  q[1][1][3][5] = 0 / 0
  local y = F.scaled_dot_product_attention(q, k, v)
  check(y[1][1][3]:float():isnan():all():item(), "the NaN query row is NaN")
  check(not y[1][2]:float():isnan():any():item(), "the other head has no NaN")
  local k2 = k:clone()
  k2[1][1][7][1] = 0 / 0
  local y2 = F.scaled_dot_product_attention(q:clone():nan_to_num(0), k2, v)
  check(y2[1][1]:float():isnan():all():item(), "a NaN key poisons every row of its head")
  -- a row whose keys are all masked is NaN, as in the math backend
  for _, additive in ipairs{false, true} do
    local m = torch.ones(64, 64, {dtype = torch.bool})
    m[9]:fill_(false)
    m = m:cuda()
    local mask = additive and torch.zeros(64, 64):cuda():bfloat16():masked_fill(m:logical_not(), -math.huge) or m
    check_eq(sel(q, k, v, {attn_mask = mask}), "cudnn")
    local y3 = F.scaled_dot_product_attention(q:clone():nan_to_num(0), k, v, {attn_mask = mask}):float()
    check(y3[1][1][9]:isnan():all():item(), "a fully masked row is NaN (additive " .. tostring(additive) .. ")")
    check(not y3[1][1][10]:isnan():any():item(), "the next row is finite")
  end
end)

test("selection: notes for each backend passed over", function()
  local q, k, v = inputs(torch.bfloat16, {1, 2, 16, 96}, {1, 2, 16, 96})
  local b, notes = sel(q, k, v)
  check_eq(b, "math")
  check(notes[1]:find("^cudnn: head dim 96 unsupported"), notes[1])
  check(notes[2]:find("^flash: "), tostring(notes[2]))
  local q32 = torch.randn(1, 2, 16, 64):cuda()
  b, notes = sel(q32, q32, q32)
  check_eq(b, "flash") -- float32 runs the SIMT flash kernels
  check(notes[1]:find("^cudnn: it runs float16 and bfloat16 only %(got float32%)"), notes[1])
  local qb = q32:bfloat16()
  check_eq(sel(qb, qb, qb), "cudnn")
  b, notes = sel(qb, qb, qb, {dropout_p = 0.2})
  check(b ~= "cudnn" and notes[1]:find("^cudnn: it has no dropout"), notes[1])
  do
    local g <close> = torch.backends.sdp_kernel{cudnn = false}
    check_eq(torch.backends.sdp_enabled().cudnn, false)
    b, notes = sel(qb, qb, qb)
    check(b ~= "cudnn", "cudnn=false")
    check_eq(notes[1], "cudnn: disabled by torch.backends.sdp_kernel")
    local y = F.scaled_dot_product_attention(qb, qb, qb)
    close(y, torch._sdpa_math(qb:float(), qb:float(), qb:float()), "math fallback")
  end
  check_eq(torch.backends.sdp_enabled().cudnn, true)
  check_eq(sel(qb, qb, qb, {attn_mask = torch.zeros(16, 16):cuda():bfloat16():requires_grad_()}), "math")
  local g2 <close> = torch.backends.sdp_kernel{cudnn = false, flash = false, math = false}
  check_error(function() F.scaled_dot_product_attention(qb, qb, qb) end,
              "cudnn is disabled; flash is disabled; math is disabled")
end)

test("cudnn: repeated calls reuse the plan; double backward goes through math", function()
  local q, k, v = inputs(torch.float16, {2, 2, 40, 64}, {2, 2, 40, 64})
  local y1 = F.scaled_dot_product_attention(q, k, v, {is_causal = true})
  local y2 = F.scaled_dot_product_attention(q, k, v, {is_causal = true})
  check_eq((y1 - y2):abs():max():item(), 0)
  q:requires_grad_()
  local y = F.scaled_dot_product_attention(q, k, v)
  local g = torch.autograd.grad({y:float():pow(2):sum()}, {q}, {create_graph = true})[1]
  local gg = torch.autograd.grad({g:float():sum()}, {q})[1]
  check_eq(gg.dtype, torch.float16)
end)

test("cudnn under torch.compile: an extern op inside the compiled graph", function()
  local q, k, v = inputs(torch.bfloat16, {2, 4, 48, 64}, {2, 4, 48, 64})
  local function fn(a, b, c)
    return F.scaled_dot_product_attention(a * 2, b, c, {is_causal = true}):mul(3) + 1
  end
  local want = fn(q, k, v)
  local c = torch.compile(fn, {fullgraph = true})
  for call = 1, 4 do
    local got = c(q, k, v)
    check(got.is_cuda and got.dtype == torch.bfloat16, "compiled result on cuda, bfloat16")
    check_eq((got:float() - want:float()):abs():max():item(), 0, "call " .. call)
  end
end)

test("a compiled training step through cuDNN attention (forward and backward extern ops) equals the eager one",
     function()
  local function setup()
    torch.manual_seed(3)
    local w = (torch.randn(64, 64) * 0.1):cuda():bfloat16():requires_grad_()
    local opt = torch.optim.SGD({w}, {lr = 0.5})
    local function step(x)
      opt:zero_grad()
      local y = F.scaled_dot_product_attention(torch.matmul(x, w), x, x, {is_causal = true})
      local z = y:float()
      local loss = (z * z):mean() -- pow's derivative makes a scalar the JIT does not trace (it would run eagerly)
      loss:backward()
      opt:step()
      return loss
    end
    return w, step
  end
  local we, se = setup()
  local wc, sc = setup()
  local c = torch.compile(sc)
  torch.manual_seed(9)
  for i = 1, 5 do
    local x = torch.randn(2, 4, 40, 64):cuda():bfloat16()
    local le, lc = se(x), c(x)
    check(lc.is_cuda, "loss on cuda")
    close(lc:reshape(1), le:reshape(1), "step " .. i .. " loss", 1e-2)
  end
  close(wc:detach(), we:detach(), "trained weights", 1e-2)
end)

test("report: the largest relative errors seen (||ours - math32|| / ||math32||)", function()
  local kinds = {}
  for k in pairs(worst) do kinds[#kinds + 1] = k end
  table.sort(kinds)
  for _, k in ipairs(kinds) do io.write(("note: worst %s %.2e (%s)\n"):format(k, worst[k][1], worst[k][2])) end
end)
