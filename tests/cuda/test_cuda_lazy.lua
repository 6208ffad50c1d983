-- tests/cuda/test_cuda_lazy.lua -- eager elementwise ops waiting to go out
-- as one fused kernel (tensor/cuda/lazy.c): every sequence below runs on the
-- GPU and on the CPU, and the results must agree; the statistics show that
-- fused kernels really ran. Sequences run three times, since a group's
-- kernel is compiled the second time its shape of ops is seen.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; lazy fusion tests skipped\n")
  test("lazy_fusion is a switch even without a GPU", function()
    local was = torch.cuda.lazy_fusion()
    check_eq(type(was), "boolean")
    check_eq(torch.cuda.lazy_fusion(false), was)
    check_eq(torch.cuda.lazy_fusion(), false)
    torch.cuda.lazy_fusion(was)
  end)
  return
end

local function stats() return torch.cuda.memory_stats() end

-- runs fn(device) three times on the GPU and once on the CPU; fn returns a
-- list of tensors, compared (on the host) after each GPU run
local function agree(fn, tol)
  local want = fn("cpu")
  for run = 1, 3 do
    local got = fn("cuda")
    check_eq(#got, #want)
    for i = 1, #want do
      check_eq(got[i].dtype, want[i].dtype, "result " .. i)
      check_close(got[i]:cpu():double(), want[i]:double(), {atol = tol or 1e-5, rtol = tol or 1e-5})
    end
  end
end

local function seeded(n, dev, dt)
  torch.manual_seed(7)
  return torch.randn(n):to(dt or "float32"):to(dev)
end

test("a chain of dependent ops gives each op's result, fused", function()
  local before = stats().lazy_fused_ops
  agree(function(dev)
    local x = seeded(1000, dev)
    local a = x * 2 + 1
    local b = a:relu():sigmoid()
    local c = b * a - x:gelu()
    return {a, b, c, x:exp():log1p():tanh()}
  end)
  check(stats().lazy_fused_ops > before, "no fused kernel ran")
end)

test("in-place chains and exact aliases read the latest values", function()
  agree(function(dev)
    local x = seeded(777, dev)
    local v = x:view(777)
    x:mul_(2)
    local w = v + 1 -- v is x: it sees the doubled values
    x:add_(w, {alpha = 0.5})
    x:neg_()
    local y = x:clone()
    y:sub_(x):add_(3)
    return {x, w, y}
  end)
end)

test("dtypes round at every op as they do alone", function()
  agree(function(dev)
    local h = seeded(300, dev, "bfloat16")
    local a = h * 3 + 0.1
    local b = a:float() * 1.0001
    local i = torch.arange(300):to(dev)
    local q = (i * 3) // 7 - i % 5
    local m = i:lt(150)
    local n = m:logical_not()
    local f = seeded(300, dev, "float16"):abs():sqrt()
    return {a, b, q, m, n, f}
  end, 1e-3)
end)

test("overlapping views at different places keep their order", function()
  agree(function(dev)
    local x = torch.arange(1, 21):double():to(dev)
    local a = x[{{1, 10}}]
    local b = x[{{6, 15}}]
    local c = a + 1 -- reads a
    b:mul_(2) -- writes over half of a: a fused kernel cannot order this
    local d = a * 1 -- sees the doubled half
    local e = x[{{11, 20}}]:add_(a) -- reads a, writes elsewhere
    return {c, d, e, x}
  end)
end)

test("groups break at other lengths, many buffers and many numbers", function()
  agree(function(dev)
    local r = {}
    local xs = {}
    for i = 1, 60 do xs[i] = torch.full({33}, i, {dtype = torch.float64, device = dev}) end
    local acc = torch.zeros(33, {dtype = torch.float64, device = dev})
    for i = 1, 60 do acc:add_(xs[i] * (i / 7)) end
    r[1] = acc
    local y = torch.ones(5, {dtype = torch.float64, device = dev})
    for i = 1, 45 do y = y * 1.01 + i / 100 end
    r[2] = y
    local z = torch.ones(8, {device = dev}) + torch.ones(8, {device = dev})
    r[3] = torch.ones(9, {device = dev}) * 3
    r[4] = z
    return r
  end, 1e-9)
end)

test("host reads, syncs, events and other kernels see the waiting ops", function()
  local x = torch.zeros(64, {device = "cuda"})
  x:add_(1)
  check_eq(x:sum():item(), 64) -- a reduction kernel
  x:add_(1)
  check_eq(x[3]:item(), 2) -- a host read
  x:mul_(3)
  local m = x:view(8, 8):matmul(torch.eye(8, {device = "cuda"})) -- cuBLAS
  check_eq(m:cpu()[1][1]:item(), 6)
  local s0, s1 = torch.cuda.Event({enable_timing = true}), torch.cuda.Event({enable_timing = true})
  s0:record()
  for _ = 1, 10 do x:add_(1) end
  s1:record()
  s1:synchronize()
  check(s0:elapsed_time(s1) >= 0)
  check_eq(x:cpu()[1]:item(), 16)
  local s = torch.cuda.Stream()
  x:add_(1)
  torch.cuda.set_stream(s) -- the waiting op goes out on the stream it was queued on
  local done = torch.cuda.Event()
  done:record(torch.cuda.default_stream()) -- s must wait for it, as in PyTorch (s:wait_stream)
  s:wait_event(done)
  local y = x * 2
  s:synchronize()
  torch.cuda.set_stream(torch.cuda.default_stream())
  check_eq(y:cpu()[1]:item(), 34)
end)

test("gradients through fused ops match the CPU", function()
  agree(function(dev)
    local x = seeded(500, dev):requires_grad_()
    local y = ((x * 1.5):tanh() * x + x:sigmoid()):sum()
    y:backward()
    return {x.grad:detach()}
  end)
end)

test("lazy_fusion(false) launches op by op with the same results", function()
  local was = torch.cuda.lazy_fusion(false)
  local before = stats().lazy_ops
  agree(function(dev)
    local x = seeded(100, dev)
    return {x * 2 + 1, (x - 1):abs()}
  end)
  check_eq(stats().lazy_ops, before)
  torch.cuda.lazy_fusion(was)
  check_eq(torch.cuda.lazy_fusion(), was)
end)

test("an error in the group's neighbourhood names the op and the session goes on", function()
  local a = torch.ones(4, {device = "cuda"})
  local b = a * 2
  check_error(function() return b + torch.ones(5, {device = "cuda"}) end, "add")
  check_close(b:cpu(), {2, 2, 2, 2})
end)
