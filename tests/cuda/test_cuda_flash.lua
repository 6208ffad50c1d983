-- tests/cuda/test_cuda_flash.lua -- the flash attention kernels on CUDA
-- (tensor/cuda/flash.cu through tensor/attention_cuda.c) against the math
-- backend run in float32 on the same (16-bit rounded) inputs: forward and
-- the gradients of q, k and v for bfloat16 and float16, head dims 64 and 128
-- (256 forward), causal, bool and additive masks, GQA and odd lengths; lse
-- against logsumexp of the math scores; dropout against the math backend
-- drawing the same keep mask from the same seed, and its keep rate; NaN
-- inputs; the selection rule on the GPU. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU flash attention tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved
local F = require("torch.nn").functional

local function with_backend(name, fn)
  local g <close> = torch.backends.sdp_kernel{flash = name == "flash", math = name == "math"}
  return fn()
end

-- ||a - b|| / ||b|| in float64 on the host
local function rel(a, b)
  local x, y = a:detach():cpu():double(), b:detach():cpu():double()
  return ((x - y):norm() / y:norm()):item()
end

local function close(a, b, what, tol)
  local ref = b:detach():cpu():double()
  if ref:norm():item() == 0 then -- (dq when every row sees one key): absolute
    local m = a:detach():cpu():double():abs():max():item()
    check(m < 1e-2, ("%s: the reference is zero, got max |x| %.3g"):format(what, m))
    return
  end
  local r = rel(a, b)
  check(r < (tol or 1e-2), ("%s: relative error %.3g"):format(what, r))
end

-- q (B, H, L, E), k and v (B, Hk, S, E) of dtype dt on cuda, and their
-- float32 copies (same rounded values)
local function inputs(dt, B, H, Hk, L, S, E, grad)
  local function mk(...)
    local t = torch.randn(...):to(dt):to("cuda")
    local f = t:float()
    if grad then t:requires_grad_(); f:requires_grad_() end
    return t, f
  end
  local q, qf = mk(B, H, L, E)
  local k, kf = mk(B, Hk, S, E)
  local v, vf = mk(B, Hk, S, E)
  return {q, k, v}, {qf, kf, vf}
end

local function opts_for(c, dt, B, L, S)
  local o = {is_causal = c.causal, enable_gqa = c.gqa, dropout_p = c.drop}
  local of = {is_causal = c.causal, enable_gqa = c.gqa, dropout_p = c.drop}
  if c.mask == "bool" then
    local m = torch.rand(L, S):gt(0.2):to("cuda")
    o.attn_mask, of.attn_mask = m, m
  elseif c.mask == "add" then
    local m = (torch.randn(B, 1, L, S) * 2):to(dt):to("cuda")
    o.attn_mask, of.attn_mask = m, m:float()
  end
  return o, of
end

-- flash (dt) against math (float32) forward and, when grad, backward
local function compare(dt, c)
  local B, H, Hk, L, S, E = c.B or 2, c.H or 4, c.Hk or c.H or 4, c.L, c.S, c.E
  local x, xf = inputs(dt, B, H, Hk, L, S, E, c.grad)
  local o, of = opts_for(c, dt, B, L, S)
  local what = ("%s E=%d L=%d S=%d H=%d/%d%s%s%s"):format(tostring(dt), E, L, S, H, Hk, c.causal and " causal" or "",
    c.mask and (" mask=" .. c.mask) or "", c.drop and (" dropout=" .. c.drop) or "")
  check_eq(torch.backends.sdp_selected(x[1], x[2], x[3], o), "flash", what .. " selects flash")
  local seed = 1000 + L + S
  torch.manual_seed(seed)
  local y = with_backend("flash", function() return F.scaled_dot_product_attention(x[1], x[2], x[3], o) end)
  torch.manual_seed(seed)
  local yf = with_backend("math", function() return F.scaled_dot_product_attention(xf[1], xf[2], xf[3], of) end)
  check_eq(y.dtype, dt, what .. " dtype")
  close(y, yf, what .. " forward")
  if not c.grad then return end
  local g = torch.randn(table.unpack(yf:size())):to(dt):to("cuda")
  y:backward(g)
  yf:backward(g:float())
  for i, n in ipairs({"dq", "dk", "dv"}) do close(x[i].grad, xf[i].grad, what .. " " .. n) end
end

for _, dt in ipairs({torch.bfloat16, torch.float16}) do
  for _, E in ipairs({64, 128}) do
    test(("flash forward and backward match math in float32: %s E=%d"):format(tostring(dt), E), function()
      for _, c in ipairs({
        {L = 128, S = 128}, {L = 77, S = 77}, {L = 100, S = 37}, {L = 37, S = 100}, {L = 1, S = 64}, {L = 1, S = 1},
        {L = 200, S = 200, causal = true}, {L = 77, S = 130, causal = true}, {L = 130, S = 77, causal = true},
        {L = 96, S = 80, mask = "bool"}, {L = 65, S = 70, mask = "add"},
        {L = 100, S = 100, H = 8, Hk = 2, gqa = true}, {L = 64, S = 90, H = 6, Hk = 3, gqa = true, causal = true},
      }) do
        c.E, c.grad = E, true
        compare(dt, c)
      end
    end)
  end
  test(("flash forward with head dim 256 matches math: %s"):format(tostring(dt)), function()
    for _, c in ipairs({{L = 100, S = 77}, {L = 130, S = 130, causal = true}, {L = 50, S = 60, mask = "bool"}}) do
      c.E = 256
      compare(dt, c)
    end
  end)
end

test("flash with dropout equals math drawing the same mask from the same seed, forward and backward", function()
  for _, dt in ipairs({torch.bfloat16, torch.float16}) do
    for _, c in ipairs({{L = 100, S = 77, E = 64}, {L = 128, S = 128, E = 128, causal = true},
                        {L = 33, S = 45, E = 64, mask = "add", H = 4, Hk = 2, gqa = true}}) do
      c.drop, c.grad = 0.3, true
      compare(dt, c)
    end
  end
end)

test("flash dropout keeps about 1 - p of the probabilities, each draw anew", function()
  local B, H, L, S, E, p = 2, 4, 256, 256, 64, 0.25
  local q = torch.zeros(B, H, L, E, {dtype = torch.bfloat16}):to("cuda")
  local v = torch.ones(B, H, S, E, {dtype = torch.bfloat16}):to("cuda")
  -- uniform attention: each output = (kept keys / S) / (1 - p)
  local y1 = F.scaled_dot_product_attention(q, q, v, {dropout_p = p})
  local y2 = F.scaled_dot_product_attention(q, q, v, {dropout_p = p})
  local rate = (y1:float():mean() * (1 - p)):item()
  check(math.abs(rate - (1 - p)) < 0.01, ("keep rate %.4f, want %.2f"):format(rate, 1 - p))
  check(not torch.equal(y1, y2), "two calls draw different masks")
end)

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

test("flash selection on the GPU: 16-bit inputs take flash; float32, odd head dims and E=256 with grad take math", function()
  local x = inputs(torch.bfloat16, 1, 2, 2, 16, 16, 64, false)
  check_eq(torch.backends.sdp_selected(x[1], x[2], x[3]), "flash")
  check_eq(torch.backends.sdp_selected(x[1], x[2], x[3], {dropout_p = 0.1}), "flash")
  local f = x[1]:float()
  check_eq(torch.backends.sdp_selected(f, f, f), "math")
  local y = inputs(torch.float16, 1, 2, 2, 16, 16, 32, false)
  check_eq(torch.backends.sdp_selected(y[1], y[2], y[3]), "math")
  local z = inputs(torch.bfloat16, 1, 2, 2, 16, 16, 256, true)
  check_eq(torch.backends.sdp_selected(z[1], z[2], z[3]), "math")
  local g <close> = torch.backends.sdp_kernel{math = false}
  check_error(function() torch.backends.sdp_selected(f, f, f) end, "float32 and float64 take math")
  check_error(function() torch.backends.sdp_selected(y[1], y[2], y[3]) end, "head dims 64, 128 and 256")
end)

test("flash dropout under create_graph draws the forward's mask again (recorded math gradients)", function()
  local x = inputs(torch.bfloat16, 1, 2, 2, 40, 50, 64, true)
  local g = torch.randn(1, 2, 40, 64):to(torch.bfloat16):to("cuda")
  torch.manual_seed(11)
  local y = F.scaled_dot_product_attention(x[1], x[2], x[3], {dropout_p = 0.4})
  local a = torch.autograd.grad({y}, {x[1], x[2], x[3]}, {grad_outputs = {g}, retain_graph = true})
  local b = torch.autograd.grad({y}, {x[1], x[2], x[3]}, {grad_outputs = {g}, create_graph = true})
  for i, n in ipairs({"dq", "dk", "dv"}) do close(b[i], a[i], n .. " recorded vs kernel", 2e-2) end
end)
