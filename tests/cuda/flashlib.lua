-- tests/cuda/flashlib.lua -- shared by the GPU flash attention tests
-- (test_cuda_flash*.lua): inputs in a 16-bit dtype with float32 copies of
-- the same values, relative errors on the host, and `compare`, which runs
-- flash on the 16-bit inputs and math in float32 (same seed) and checks
-- the output and the gradients of q, k and v.
local F = require("torch.nn").functional
local M = {}

-- The runner's assertions live in each test file's environment: a file
-- calls use{check = check, check_eq = check_eq} after requiring this.
function M.use(env)
  M.check, M.check_eq = env.check, env.check_eq
end

function M.with_backend(name, fn)
  local g <close> = torch.backends.sdp_kernel{flash = name == "flash", math = name == "math", cudnn = name == "cudnn"}
  return fn()
end

-- ||a - b|| / ||b|| in float64 on the host (max |a| where b is all zeros)
function M.rel(a, b)
  local x, y = a:detach():cpu():double(), b:detach():cpu():double()
  local n = y:norm():item()
  if n == 0 then return x:abs():max():item() end
  return (x - y):norm():item() / n
end

function M.close(a, b, what, tol)
  local ref = b:detach():cpu():double()
  if ref:norm():item() == 0 then -- (dq when every row sees one key): absolute
    local m = a:detach():cpu():double():abs():max():item()
    M.check(m < 1e-2, ("%s: the reference is zero, got max |x| %.3g"):format(what, m))
    return
  end
  local r = M.rel(a, b)
  M.check(r < (tol or 1e-2), ("%s: relative error %.3g"):format(what, r))
end

-- q (B, H, L, E), k and v (B, Hk, S, E) of dtype dt on cuda, and their
-- float32 copies (same rounded values)
function M.inputs(dt, B, H, Hk, L, S, E, grad)
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
function M.compare(dt, c)
  local B, H, Hk, L, S, E = c.B or 2, c.H or 4, c.Hk or c.H or 4, c.L, c.S, c.E
  local x, xf = M.inputs(dt, B, H, Hk, L, S, E, c.grad)
  local o, of = opts_for(c, dt, B, L, S)
  local what = ("%s E=%d L=%d S=%d H=%d/%d%s%s%s"):format(tostring(dt), E, L, S, H, Hk, c.causal and " causal" or "",
    c.mask and (" mask=" .. c.mask) or "", c.drop and (" dropout=" .. c.drop) or "")
  M.check_eq(M.with_backend("flash", function() return torch.backends.sdp_selected(x[1], x[2], x[3], o) end), "flash",
    what .. " flash takes it")
  local seed = 1000 + L + S
  torch.manual_seed(seed)
  local y = M.with_backend("flash", function() return F.scaled_dot_product_attention(x[1], x[2], x[3], o) end)
  torch.manual_seed(seed)
  local yf = M.with_backend("math", function() return F.scaled_dot_product_attention(xf[1], xf[2], xf[3], of) end)
  M.check_eq(y.dtype, dt, what .. " dtype")
  M.close(y, yf, what .. " forward")
  if not c.grad then return end
  local g = torch.randn(table.unpack(yf:size())):to(dt):to("cuda")
  y:backward(g)
  yf:backward(g:float())
  for i, n in ipairs({"dq", "dk", "dv"}) do M.close(x[i].grad, xf[i].grad, what .. " " .. n) end
end

-- Registers with test() the cases both 16-bit dtypes run: forward and
-- gradients for head dims 64 and 128 over odd lengths, causal, both mask
-- kinds and GQA, and the head-dim-256 forward.
function M.dtype_tests(test, dt)
  for _, E in ipairs({64, 128}) do
    test(("flash forward and backward match math in float32: %s E=%d"):format(tostring(dt), E), function()
      for _, c in ipairs({
        {L = 128, S = 128}, {L = 77, S = 77}, {L = 100, S = 37}, {L = 37, S = 100}, {L = 1, S = 64}, {L = 1, S = 1},
        {L = 200, S = 200, causal = true}, {L = 77, S = 130, causal = true}, {L = 130, S = 77, causal = true},
        {L = 96, S = 80, mask = "bool"}, {L = 65, S = 70, mask = "add"},
        {L = 100, S = 100, H = 8, Hk = 2, gqa = true}, {L = 64, S = 90, H = 6, Hk = 3, gqa = true, causal = true},
      }) do
        c.E, c.grad = E, true
        M.compare(dt, c)
      end
    end)
  end
  test(("flash forward with head dim 256 matches math: %s"):format(tostring(dt)), function()
    for _, c in ipairs({{L = 100, S = 77}, {L = 130, S = 130, causal = true}, {L = 50, S = 60, mask = "bool"}}) do
      c.E = 256
      M.compare(dt, c)
    end
  end)
end

return M
