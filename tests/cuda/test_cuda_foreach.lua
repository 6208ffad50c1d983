-- tests/cuda/test_cuda_foreach.lua -- the CUDA kernels behind
-- torch.gelu_backward (the elementwise family) and torch._foreach_norm /
-- torch._foreach_mul_ (cuda/foreach.cu) against the CPU: every floating
-- dtype, lists longer than one launch's table (128 tensors), tensors longer
-- than one chunk, non-contiguous and empty ones, a device scale, mixed
-- dtypes; clip_grad_norm_ on the GPU against the CPU; device errors.
-- Skips without a GPU.
if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; CUDA foreach/gelu_backward tests skipped\n")
  return
end

local nn = require "torch.nn"
local TOL = {[torch.float64] = {atol = 1e-12, rtol = 1e-12}, [torch.float32] = {atol = 1e-5, rtol = 1e-5},
             [torch.float16] = {atol = 2e-3, rtol = 2e-3}, [torch.bfloat16] = {atol = 1.6e-2, rtol = 1e-2}}

test("gelu_backward on CUDA matches the CPU in every floating dtype, both forms, strided and broadcast", function()
  torch.manual_seed(1)
  for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
    for _, ap in ipairs{"none", "tanh"} do
      local x, g = (torch.randn(300, 129) * 3):to(dt), torch.randn(300, 129):to(dt)
      local got = torch.gelu_backward(g:cuda(), x:cuda(), ap)
      check_eq(got.dtype, dt)
      check(got.device.type == "cuda", "stays on the GPU")
      check_close(got:cpu():double(), torch.gelu_backward(g, x, ap):double(), TOL[dt])
      local xs = x:t() -- strided, and a broadcast gradient row
      check_close(torch.gelu_backward(g[1]:cuda():narrow(1, 1, 1), xs:cuda(), ap):cpu():double(),
                  torch.gelu_backward(g[1]:narrow(1, 1, 1), xs, ap):double(), TOL[dt])
    end
  end
end)

test("gelu's gradient on CUDA (eager and create_graph) matches the CPU", function()
  torch.manual_seed(2)
  for _, ap in ipairs{"none", "tanh"} do
    local x = torch.randn(64, 33, {dtype = torch.float64})
    local function grads(dev)
      local xx = x:to(dev):requires_grad_()
      local y = ap == "tanh" and torch.gelu_tanh(xx) or torch.gelu(xx)
      local g1 = torch.autograd.grad({y:pow(2):sum()}, {xx}, {create_graph = true})[1]
      local g2 = torch.autograd.grad({g1:sum()}, {xx})[1]
      return g1:detach():cpu(), g2:cpu()
    end
    local a1, a2 = grads("cuda")
    local b1, b2 = grads("cpu")
    check_close(a1, b1, {atol = 1e-12, rtol = 1e-12})
    check_close(a2, b2, {atol = 1e-11, rtol = 1e-11})
  end
end)

-- 150 tensors (two launch tables) of varied sizes, one longer than a chunk, some non-contiguous, one empty
local function many(dt)
  torch.manual_seed(3)
  local l = {}
  for i = 1, 150 do
    local n = (i * 37) % 200 + 1
    if i == 7 then n = 70000 end
    if i == 9 then n = 0 end
    l[i] = torch.randn(n):to(dt)
    if i % 10 == 3 then l[i] = torch.randn(n, 3):to(dt):t() end
  end
  return l
end

local function to_dev(l, dev)
  local o = {}
  for i, t in ipairs(l) do o[i] = (t:is_contiguous() and t or t:t():to(dev):t()):to(dev) end
  return o
end

test("_foreach_norm on CUDA matches the CPU over 150 tensors: orders 2, 1, inf, 3, every dtype", function()
  for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
    local cpu = many(dt)
    local gpu = to_dev(cpu, "cuda")
    check(not gpu[3]:is_contiguous(), "a strided tensor on the GPU")
    for _, ord in ipairs{2, 1, math.huge, 3} do
      local c, g = cpu, gpu
      if ord == math.huge then -- no empty tensor for the inf-norm
        c, g = {table.unpack(cpu)}, {table.unpack(gpu)}
        table.remove(c, 9)
        table.remove(g, 9)
      end
      local nc, tc = torch._foreach_norm(c, ord)
      local ng, tg = torch._foreach_norm(g, ord)
      local exact = dt == torch.float32 or dt == torch.float64
      for i = 1, #c do
        check_eq(ng[i].dtype, dt)
        check_close(ng[i]:cpu():double(), nc[i]:double(), exact and TOL[dt] or {atol = 1e-2, rtol = 1e-2})
      end
      check_eq(#nc, #ng)
      local flat = {}
      for i, t in ipairs(c) do flat[i] = t:double():reshape(-1) end
      -- the total is in the list's dtype: float16 overflows past 65504 (as the norm of a float16 tensor would)
      local want = torch.linalg.vector_norm(torch.cat(flat), ord)
      if not exact then want = want:to(dt):double() end
      check_close(tg:cpu():double(), want, exact and TOL[dt] or {atol = 0, rtol = 1e-2})
    end
  end
end)

test("_foreach_mul_ on CUDA by a device scalar, a CPU scalar and a number matches the CPU", function()
  for _, dt in ipairs{torch.float32, torch.float64, torch.float16, torch.bfloat16} do
    local cpu = many(dt)
    local gpu = to_dev(cpu, "cuda")
    local s = torch.tensor(0.37, {dtype = torch.float64, device = "cuda"}) -- float64: the same value as the number
    torch._foreach_mul_(gpu, s)
    torch._foreach_mul_(gpu, torch.tensor(-1.5))
    torch._foreach_mul_(gpu, 2)
    torch._foreach_mul_(cpu, 0.37)
    torch._foreach_mul_(cpu, -1.5)
    torch._foreach_mul_(cpu, 2)
    for i = 1, #cpu do check_close(gpu[i]:cpu():double(), cpu[i]:double(), TOL[dt]) end
  end
  -- a bfloat16 scale read on the device
  local x = torch.ones(5, {device = "cuda"})
  torch._foreach_mul_({x}, torch.tensor(3.0, {dtype = torch.bfloat16, device = "cuda"}))
  check_close(x:cpu(), torch.full({5}, 3.0), {atol = 0, rtol = 0})
end)

test("clip_grad_norm_ on CUDA against float64 norms of the same gradients (float32 and bfloat16, several orders)", function()
  for _, dt in ipairs{torch.float32, torch.bfloat16} do
    for _, ord in ipairs{2, math.huge, 1} do
      torch.manual_seed(9)
      local m = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 8)):to(dt):to("cuda")
      m(torch.randn(4, 16):to(dt):to("cuda")):float():pow(2):sum():backward()
      local before, flat = {}, {}
      for i, p in ipairs(m:parameters()) do
        before[i] = p.grad:cpu():double()
        flat[i] = before[i]:reshape(-1)
      end
      local want = torch.linalg.vector_norm(torch.cat(flat), ord):item()
      local total = nn.utils.clip_grad_norm_(m:parameters(), 0.05, ord)
      check(total.device.type == "cuda", "the total stays on the GPU")
      local tol = dt == torch.float32 and {atol = 1e-6, rtol = 1e-5} or {atol = 1e-4, rtol = 1e-2}
      check_close(total:cpu():double(), torch.tensor(want, {dtype = torch.float64}), tol)
      local coef = math.min(1, 0.05 / (want + 1e-6))
      for i, p in ipairs(m:parameters()) do check_close(p.grad:cpu():double(), before[i] * coef, tol) end
    end
  end
end)

test("_foreach ops on CUDA: mixed devices and a scale on another device are refused", function()
  local a, b = torch.ones(3, {device = "cuda"}), torch.ones(3)
  check_error(function() torch._foreach_norm({a, b}) end, "device")
  check_error(function() torch._foreach_mul_({a, b}, 2) end, "device")
  check_error(function() torch._foreach_mul_({b}, torch.tensor(2.0, {device = "cuda"})) end, "device")
  -- past the gate's first 64 entries the engine still refuses
  local l = {}
  for i = 1, 70 do l[i] = torch.ones(2, {device = "cuda"}) end
  l[70] = torch.ones(2)
  check_error(function() torch._foreach_norm(l) end, "expected all tensors on the same device")
end)
