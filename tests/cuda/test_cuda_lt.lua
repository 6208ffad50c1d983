-- tests/cuda/test_cuda_lt.lua -- cuBLASLt epilogues (tensor/cuda/blaslt.c):
-- F.linear / nn.Linear / addmm with a 1-D bias on CUDA as one Lt call with
-- the bias epilogue, the weight and bias gradients as one call (BGRADB),
-- and the JIT's folded matmul + bias + relu/GELU, against the CPU in
-- float64 (forward and gradients) for float32 (full and TF32), float16 and
-- bfloat16, odd shapes, no bias, non-contiguous operands, and the fallback
-- with Lt switched off. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; cuBLASLt tests skipped\n")
  test("the cuBLASLt switch exists without a GPU", function()
    check_eq(type(torch._cublaslt_stats()), "table")
    torch._set_cublaslt_enabled(true)
  end)
  return
end

local F = torch.nn.functional
-- check_close naming the case on failure
local function close(got, want, tol, what)
  local ok, err = pcall(check_close, got, want, tol)
  if not ok then error((what or "") .. ": " .. tostring(err), 2) end
end
F.linear(torch.randn(2, 3):cuda(), torch.randn(4, 3):cuda(), torch.randn(4):cuda()) -- loads cuBLASLt
local lt0 = torch._cublaslt_stats()
if not lt0.loaded then io.write("note: cuBLASLt not loaded (", lt0.load_error, "); fallback only\n") end

local TOL = {
  [torch.float32] = {atol = 1e-4, rtol = 1e-4},
  tf32 = {atol = 3e-2, rtol = 1e-2},
  [torch.float16] = {atol = 3e-2, rtol = 1e-2},
  [torch.bfloat16] = {atol = 2e-1, rtol = 3e-2},
}

-- y = F.linear(x, w, b) and its gradients for an upstream gradient g, on
-- dev in dtype dt (inputs given on the CPU in float64; views made by view())
local function run_linear(x, w, b, g, dev, dt, view)
  local xd, wd = view.x(x:to(dt):to(dev)), view.w(w:to(dt):to(dev))
  xd:requires_grad_()
  wd:requires_grad_()
  local bd = b and b:to(dt):to(dev):requires_grad_() or nil
  local y = F.linear(xd, wd, bd)
  y:backward(g:to(dt):to(dev))
  return y, xd.grad, wd.grad, bd and bd.grad
end

local views = {
  contiguous = {x = function(t) return t end, w = function(t) return t end},
  -- x and w as transposed views of contiguous storage (column-major operands)
  transposed = {x = function(t) return t:transpose(-1, -2):contiguous():transpose(-1, -2) end,
                w = function(t) return t:t():contiguous():t() end},
  -- every other row of a wider storage (a leading dimension larger than the row)
  strided = {x = function(t) return torch.cat({t, t}, -1):narrow(-1, 1, t:size(-1)) end,
             w = function(t) return t end},
}

-- compares the CUDA run in dt with the float64 CPU run
local function check_linear(xs, n, bias, dt, view, tol, what)
  local k = xs[#xs]
  local x, w = torch.randn(table.unpack(xs)):double(), (torch.randn(n, k) / math.sqrt(k)):double()
  local b = bias and torch.randn(n):double() or nil
  local gs = {table.unpack(xs)}
  gs[#gs] = n
  local g = torch.randn(table.unpack(gs)):double()
  local y, gx, gw, gb = run_linear(x, w, b, g, "cuda", dt, views[view])
  local ry, rgx, rgw, rgb = run_linear(x, w, b, g, "cpu", torch.float64, views.contiguous)
  check(y.is_cuda and gx.is_cuda and gw.is_cuda, what .. " on cuda")
  check_eq(y.dtype, dt, what)
  close(y:cpu():double(), ry, tol, what .. " y")
  close(gx:cpu():double(), rgx, tol, what .. " grad x")
  close(gw:cpu():double(), rgw, tol, what .. " grad w")
  if view == "contiguous" then check(gw:is_contiguous(), what .. " grad w contiguous") end
  if bias then close(gb:cpu():double(), rgb, tol, what .. " grad b") end
end

test("F.linear on CUDA: forward and gradients against the CPU, every dtype, odd shapes, views, no bias", function()
  torch.manual_seed(1)
  local before = torch._cublaslt_stats()
  for _, case in ipairs{{torch.float32, "highest", TOL[torch.float32]}, {torch.float32, "high", TOL.tf32},
                        {torch.float16, "highest", TOL[torch.float16]},
                        {torch.bfloat16, "highest", TOL[torch.bfloat16]}} do
    local dt = case[1]
    torch.set_float32_matmul_precision(case[2])
    for _, shp in ipairs{{{33, 77}, 19}, {{4, 5, 77}, 19}, {{1, 8}, 1}, {{64, 256}, 128}, {{7, 3}, 5}} do
      for _, view in ipairs{"contiguous", "transposed", "strided"} do
        for _, bias in ipairs{true, false} do
          local what = ("%s/%s %s@%d %s bias=%s"):format(tostring(dt), case[2], table.concat(shp[1], "x"), shp[2],
                                                         view, bias)
          check_linear(shp[1], shp[2], bias, dt, view, case[3], what)
        end
      end
    end
  end
  torch.set_float32_matmul_precision("highest")
  local after = torch._cublaslt_stats()
  io.write(("note: cuBLASLt calls %d, declined %d\n"):format(after.calls - before.calls,
                                                             after.declined - before.declined))
  if before.loaded then
    check(after.calls - before.calls >= 60, "the biased cases ran through cuBLASLt")
    check(after.declined - before.declined <= (after.calls - before.calls) // 10, "cuBLASLt declined few cases")
  end
end)

test("nn.Linear MLP gradients with cuBLASLt on and off agree; off makes no Lt call", function()
  torch.manual_seed(2)
  local function grads(on)
    torch._set_cublaslt_enabled(on)
    torch.manual_seed(5)
    local m = torch.nn.Sequential(torch.nn.Linear(77, 40), torch.nn.ReLU(), torch.nn.Linear(40, 19)):cuda()
    local x = torch.randn(33, 77):cuda()
    m(x):pow(2):sum():backward()
    local out = {}
    for i, p in ipairs(m:parameters()) do out[i] = p.grad:cpu() end
    return out
  end
  local s0 = torch._cublaslt_stats()
  local off = grads(false)
  local s1 = torch._cublaslt_stats()
  check_eq(s1.calls, s0.calls, "no Lt call while switched off")
  local on = grads(true)
  for i = 1, #on do close(on[i], off[i], {atol = 1e-4, rtol = 1e-4}, "parameter " .. i) end
  torch._set_cublaslt_enabled(true)
end)

test("addmm with a 1-D bias (Lt), other betas and out= (cuBLAS) against the CPU", function()
  torch.manual_seed(3)
  for _, dt in ipairs{torch.float32, torch.float16, torch.bfloat16, torch.float64} do
    local tol = TOL[dt] or {atol = 1e-9, rtol = 1e-9}
    local b, m1, m2 = torch.randn(19), torch.randn(33, 77), torch.randn(77, 19)
    local function both(fn, what)
      local got = fn(b:to(dt):cuda(), m1:to(dt):cuda(), m2:to(dt):cuda())
      local want = fn(b:double(), m1:double(), m2:double())
      check_eq(got.dtype, dt, what)
      close(got:cpu():double(), want, tol, tostring(dt) .. " " .. what)
    end
    both(function(bb, x, y) return torch.addmm(bb, x, y) end, "addmm")
    both(function(bb, x, y) return torch.addmm(bb, x, y, {beta = 0.5, alpha = 2}) end, "addmm beta/alpha")
    both(function(bb, x, y) return torch.addmm(bb, x:t():contiguous():t(), y:t():contiguous():t()) end,
         "addmm transposed")
    both(function(bb, x, y)
      local o = torch.empty(33, 19, {dtype = x.dtype, device = x.device})
      torch.addmm(bb, x, y, {out = o})
      return o
    end, "addmm out=")
  end
  -- errors name the op and the shapes
  local ok, err = pcall(torch.addmm, torch.randn(5):cuda(), torch.randn(3, 4):cuda(), torch.randn(5, 5):cuda())
  check(not ok and tostring(err):find("addmm", 1, true), tostring(err))
end)

test("linear with create_graph: double backward goes through the recorded ops", function()
  torch.manual_seed(4)
  local x, w, b = torch.randn(6, 5):double(), torch.randn(4, 5):double(), torch.randn(4):double()
  local function gg(dev)
    local xd, wd = x:clone():to(dev):requires_grad_(), w:clone():to(dev):requires_grad_()
    local bd = b:clone():to(dev):requires_grad_()
    local y = F.linear(xd:float(), wd:float(), bd:float())
    local gw = torch.autograd.grad({y:pow(2):sum()}, {wd}, {create_graph = true})[1]
    gw:sum():backward()
    return xd.grad:cpu(), bd.grad:cpu()
  end
  local gx, gb = gg("cuda")
  local rx, rb = gg("cpu")
  close(gx, rx, {atol = 1e-3, rtol = 1e-3}, "second-order grad x")
  close(gb, rb, {atol = 1e-3, rtol = 1e-3}, "second-order grad b")
end)

test("torch.compile on CUDA: linear + relu / GELU fold into one cuBLASLt call", function()
  torch.compiler.reset()
  torch.manual_seed(6)
  local x, w, b = torch.randn(96, 160):cuda(), (torch.randn(130, 160) * 0.1):cuda(), torch.randn(130):cuda()
  local acts = {relu = F.relu, gelu = F.gelu, gelu_tanh = function(t) return F.gelu(t, "tanh") end,
                none = function(t) return t end, tanh = torch.tanh}
  for name, act in pairs(acts) do
    local fn = function(p, q, r) return act(F.linear(p, q, r)) end
    local c = torch.compile(fn, {fullgraph = true})
    local s0 = torch._cublaslt_stats()
    local want = torch.no_grad(function() return fn(x:cpu():double(), w:cpu():double(), b:cpu():double()) end)
    for call = 1, 3 do
      local got = torch.no_grad(function() return c(x, w, b) end)
      check(got.is_cuda, name)
      close(got:cpu():double(), want, {atol = 1e-3, rtol = 1e-3}, name .. " call " .. call)
    end
    local s1 = torch._cublaslt_stats()
    io.write(("note: compiled linear+%s: %d cuBLASLt calls\n"):format(name, s1.calls - s0.calls))
  end
  check_eq(torch.compiler.stats().fallbacks, 0)
end)
