-- tests/cuda/test_cuda_flash_f32.lua -- the float32 flash attention kernels
-- (tensor/cuda/flash_f32.cu, SIMT FMA) against the math backend run in
-- float64 on the same values: forward, lse and the gradients of q, k and v
-- for head dims 64 and 128, causal or not, odd lengths (1, 17, 255, 300,
-- L != S), GQA, rank-3 and strided inputs, a given scale; NaN inputs; the
-- selection rule and its notes; the autograd node; torch.compile. The
-- error of math in float32 is printed beside ours. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU float32 flash attention tests skipped\n")
  return
end

local F = require("torch.nn").functional
local sel = torch.backends.sdp_selected
local TOL = 1e-5 -- ||ours - math64|| / ||math64||
local worst = {}

local function with_backend(name, fn)
  local g <close> = torch.backends.sdp_kernel{flash = name == "flash", math = name == "math"}
  return fn()
end

-- ||a - b|| / ||b|| in float64 on the host (absolute when b is zero)
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local rel = require("flashlib").rel -- ||a - b|| / ||b|| in float64

local function close(a, b, what, base)
  local r = rel(a, b)
  local key = what:match("^(%S+)")
  if not worst[key] or r > worst[key][1] then worst[key] = {r, what, base} end
  check(r < TOL, ("%s: relative error %.3g (math in float32: %s)"):format(what, r, base and ("%.3g"):format(base) or "-"))
end

-- Runs SDPA with backend name on float32 copies of xs (cuda), returning
-- out and the gradients for gy.
local function run(name, xs, o, gy, dt)
  local ins = {}
  for i = 1, 3 do ins[i] = xs[i]:to(dt or torch.float32):clone():requires_grad_() end
  return with_backend(name, function()
    local y = F.scaled_dot_product_attention(ins[1], ins[2], ins[3], o)
    local g = torch.autograd.grad({y}, ins, {grad_outputs = {gy:to(dt or torch.float32)}})
    return y, g
  end)
end

-- flash (float32) against math (float64), forward and backward
local function compare(c)
  local B, H, Hk, L, S, E = c.B or 2, c.H or 3, c.Hk or c.H or 3, c.L, c.S, c.E
  local xs = {torch.randn(B, H, L, E):cuda(), torch.randn(B, Hk, S, E):cuda(), torch.randn(B, Hk, S, E):cuda()}
  local gy = torch.randn(B, H, L, E):cuda()
  local o = {is_causal = c.causal, enable_gqa = Hk ~= H, scale = c.scale}
  check_eq(sel(xs[1], xs[2], xs[3], o), "flash")
  local what = ("E=%d L=%d S=%d H=%d/%d%s"):format(E, L, S, H, Hk, c.causal and " causal" or "")
  local y, g = run("flash", xs, o, gy)
  local y64, g64 = run("math", xs, o, gy, torch.float64)
  local y32, g32 = run("math", xs, o, gy)
  check_eq(y.dtype, torch.float32)
  close(y, y64, "out " .. what, rel(y32, y64))
  for i, n in ipairs({"dq", "dk", "dv"}) do close(g[i], g64[i], n .. " " .. what, rel(g32[i], g64[i])) end
end

for _, E in ipairs({64, 128}) do
  for _, causal in ipairs({false, true}) do
    test(("float32 flash matches math (float64) forward and backward: E=%d causal=%s"):format(E, tostring(causal)),
         function()
      torch.manual_seed(E + (causal and 1 or 0))
      for _, ls in ipairs({{1, 1}, {17, 17}, {255, 255}, {300, 300}, {77, 200}, {200, 77}, {64, 64}, {130, 129}}) do
        compare({L = ls[1], S = ls[2], E = E, causal = causal})
      end
    end)
  end
end

test("float32 flash: GQA (k/v heads dividing q heads), a given scale, longer sequences", function()
  torch.manual_seed(5)
  compare({H = 6, Hk = 2, L = 100, S = 150, E = 64})
  compare({H = 6, Hk = 3, L = 257, S = 257, E = 128, causal = true})
  compare({H = 4, Hk = 1, L = 70, S = 70, E = 64, causal = true})
  compare({L = 90, S = 111, E = 64, scale = 0.3})
  compare({B = 1, H = 2, L = 1024, S = 1024, E = 64, causal = true})
  compare({B = 1, H = 1, L = 600, S = 900, E = 128})
end)

test("float32 flash: rank-3 and strided inputs, lse is logsumexp of the scaled scores", function()
  torch.manual_seed(6)
  local q, k, v = torch.randn(3, 50, 64):cuda(), torch.randn(3, 70, 64):cuda(), torch.randn(3, 70, 64):cuda()
  check_eq(sel(q, k, v), "flash")
  local y = F.scaled_dot_product_attention(q, k, v)
  close(y, torch._sdpa_math(q:double(), k:double(), v:double()), "out rank-3")
  local x = torch.randn(2, 40, 4, 64):cuda() -- (B, L, H, E) viewed as (B, H, L, E)
  local t = x:transpose(1, 2)
  y = F.scaled_dot_product_attention(t, t, t, {is_causal = true})
  close(y, torch._sdpa_math(t:double(), t:double(), t:double(), {is_causal = true}), "out strided")
  local yf, lse = torch._sdpa_flash(q, k, v, {is_causal = true})
  check_eq(lse.dtype, torch.float32)
  local s = torch.matmul(q:double(), k:double():transpose(-2, -1)) * (1 / 8)
  s = s:masked_fill(torch.ones(50, 70):triu(1):bool():cuda(), -math.huge)
  close(lse, torch.logsumexp(s, -1), "lse")
  close(yf, torch._sdpa_math(q:double(), k:double(), v:double(), {is_causal = true}), "out causal L<S")
end)

test("float32 flash: NaN inputs give NaN outputs and gradients, never a hang", function()
  local q, k, v = torch.randn(1, 2, 70, 64), torch.randn(1, 2, 70, 64), torch.randn(1, 2, 70, 64)
  q[1][1][5]:narrow(1, 3, 1):fill_(0 / 0)
  local qc, kc, vc = q:cuda():requires_grad_(), k:cuda(), v:cuda()
  local y = F.scaled_dot_product_attention(qc, kc, vc)
  local yh = y:detach():cpu()
  check(yh[1][1][5]:isnan():all():item(), "the NaN query's row is NaN")
  check(not yh[1][1][6]:isnan():any():item(), "other rows are finite")
  check(not yh[1][2]:isnan():any():item(), "the other head is finite")
  local g = torch.autograd.grad({y:sum()}, {qc})[1]:cpu()
  check(g[1][1][5]:isnan():all():item(), "its dq row is NaN")
  k[1][2][9]:narrow(1, 1, 1):fill_(0 / 0)
  local y2 = F.scaled_dot_product_attention(q:cuda(), k:cuda(), v:cuda(), {is_causal = true}):cpu()
  check(not y2[1][2][8]:isnan():any():item(), "causal: rows before the NaN key are finite")
  check(y2[1][2][9]:isnan():all():item(), "causal: rows from the NaN key on are NaN")
  torch.cuda.synchronize()
end)

test("float32 selection: flash for what the kernels take, else math with a note; sdp_kernel{flash=false}", function()
  local q = torch.randn(2, 2, 16, 64):cuda()
  local b, notes = sel(q, q, q)
  check_eq(b, "flash")
  check(notes[1]:find("^cudnn: "), tostring(notes[1]))
  local cases = {
    {{attn_mask = torch.ones(16, 16):bool():cuda()}, q, "float32 on the GPU takes no attn_mask"},
    {{dropout_p = 0.1}, q, "float32 on the GPU has no dropout"},
    {{}, torch.randn(2, 2, 16, 32):cuda(), "float32 on the GPU takes head dims 64 and 128"},
    {{}, torch.randn(2, 2, 16, 256):cuda(), "float32 on the GPU takes head dims 64 and 128"},
    {{}, q:double(), "float64 takes math"},
  }
  for _, c in ipairs(cases) do
    b, notes = sel(c[2], c[2], c[2], c[1])
    check_eq(b, "math")
    check(notes[2] and notes[2]:find("^flash: ") and notes[2]:find(c[3], 1, true), tostring(notes[2]))
  end
  local y = F.scaled_dot_product_attention(q, q, q, cases[1][1]) -- the math fallback runs
  close(y, torch._sdpa_math(q:double(), q:double(), q:double()), "out masked fallback")
  do
    local g <close> = torch.backends.sdp_kernel{flash = false}
    b, notes = sel(q, q, q)
    check_eq(b, "math")
    check_eq(notes[2], "flash: disabled by torch.backends.sdp_kernel")
  end
  check_eq(sel(q, q, q), "flash")
end)

test("float32 flash records the flash node (its backward op), double backward goes through math", function()
  local q = torch.randn(1, 2, 33, 64):cuda():requires_grad_()
  local k, v = torch.randn(1, 2, 33, 64):cuda(), torch.randn(1, 2, 33, 64):cuda()
  local y = F.scaled_dot_product_attention(q, k, v, {is_causal = true})
  check(tostring(y.grad_fn):find("Flash"), tostring(y.grad_fn))
  local g = torch.autograd.grad({(y * y):sum()}, {q}, {create_graph = true})[1]
  local gg = torch.autograd.grad({g:sum()}, {q})[1]
  local q64 = q:detach():double():requires_grad_()
  local y64 = torch._sdpa_math(q64, k:double(), v:double(), {is_causal = true})
  local g64 = torch.autograd.grad({(y64 * y64):sum()}, {q64}, {create_graph = true})[1]
  close(g, g64, "dq create_graph")
  close(gg, torch.autograd.grad({g64:sum()}, {q64})[1], "double backward")
end)

test("float32 flash under torch.compile: forward and a training step equal the eager ones", function()
  local q, k, v = torch.randn(2, 4, 48, 64):cuda(), torch.randn(2, 4, 48, 64):cuda(), torch.randn(2, 4, 48, 64):cuda()
  local function fn(a, b, c)
    return F.scaled_dot_product_attention(a * 2, b, c, {is_causal = true}):mul(3) + 1
  end
  local want = fn(q, k, v)
  local c = torch.compile(fn, {fullgraph = true})
  for call = 1, 3 do close(c(q, k, v), want, "out compiled call " .. call) end
  local function setup()
    torch.manual_seed(3)
    local w = (torch.randn(64, 64) * 0.1):cuda():requires_grad_()
    local opt = torch.optim.SGD({w}, {lr = 0.5})
    local function step(x)
      opt:zero_grad()
      local y = F.scaled_dot_product_attention(torch.matmul(x, w), x, x, {is_causal = true})
      local loss = (y * y):mean()
      loss:backward()
      opt:step()
      return loss
    end
    return w, step
  end
  local we, se = setup()
  local wc, sc = setup()
  local cs = torch.compile(sc)
  torch.manual_seed(9)
  for i = 1, 4 do
    local x = torch.randn(2, 4, 40, 64):cuda()
    close(cs(x):reshape(1), se(x):reshape(1), "loss compiled step " .. i)
  end
  close(wc:detach(), we:detach(), "weights compiled")
end)

test("report: the largest relative errors against math in float64 (math in float32 beside)", function()
  local kinds = {}
  for k in pairs(worst) do kinds[#kinds + 1] = k end
  table.sort(kinds)
  for _, k in ipairs(kinds) do
    local w = worst[k]
    io.write(("note: worst %s %.2e (%s; math float32 %s)\n"):format(k, w[1], w[2], w[3] and ("%.2e"):format(w[3]) or "-"))
  end
end)
