-- tests/cuda/test_cuda.lua -- the CUDA backend (tensor/cuda/, lua_bindings/l_cuda.c)
-- against the CPU path. Without a GPU only the "not available" behaviour is
-- checked and the rest is skipped with a note.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU tests skipped\n")
  test("without a GPU, CUDA requests fail with a clear message and the session goes on", function()
    check_eq(torch.cuda.device_count(), 0)
    check_error(function() return torch.zeros(2, {device = "cuda"}) end, "CUDA is not available")
    check_error(function() return torch.ones(2):cuda() end, "CUDA is not available")
    check_error(function() torch.set_default_device("cuda") end, "CUDA is not available")
    check_error(function() return torch.ones(2):pin_memory() end, "CUDA is not available")
    check_close(torch.ones(2) + 1, {2, 2})
  end)
  return
end

local function cpu(x) return x:cpu() end

test("device queries", function()
  check(torch.cuda.device_count() >= 1)
  check_eq(torch.cuda.current_device(), 0)
  check(#torch.cuda.get_device_name() > 0)
  local cap = torch.cuda.get_device_capability()
  check(cap[1] >= 5, "capability " .. cap[1])
  torch.cuda.set_device(0)
  torch.cuda.synchronize()
  local n = torch.cuda.device_count()
  check_error(function() torch.cuda.set_device(n) end, "CUDA device index " .. n .. " is out of range")
  check_error(function() return torch.zeros(2):cuda(n + 1) end, "out of range")
end)

test("tensors move between devices with their values, dtype and shape", function()
  for _, dt in ipairs{"float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool", "uint16"} do
    local x = torch.arange(0, 12):reshape(3, 4):to(dt)
    local g = x:cuda()
    check(g.is_cuda and not x.is_cuda)
    check_eq(tostring(g.device), "cuda:0")
    check_eq(g.dtype, x.dtype)
    check_shape(g, {3, 4})
    check_close(g:cpu():double(), x:double())
    check_close(x:to("cuda"):to("cpu"):double(), x:double())
  end
end)

test("creation with device= and set_default_device", function()
  check_close(cpu(torch.zeros(2, 3, {device = "cuda"})), torch.zeros(2, 3))
  check_close(cpu(torch.ones(4, {device = "cuda", dtype = torch.int32})), torch.ones(4, {dtype = torch.int32}))
  check_close(cpu(torch.full({2, 2}, 3.5, {device = "cuda"})), torch.full({2, 2}, 3.5))
  check_close(cpu(torch.arange(0, 10, {device = "cuda"})), torch.arange(0, 10))
  check_close(cpu(torch.tensor({{1, 2}, {3, 4}}, {device = "cuda"})), {{1, 2}, {3, 4}})
  torch.manual_seed(7)
  local r = torch.randn(5, {device = "cuda"})
  check(r.is_cuda and torch.rand(2, 3, {device = "cuda"}).is_cuda, "random draws land on device=")
  torch.manual_seed(7)
  check_close(cpu(r), torch.randn(5))
  check(torch.empty(3, {device = "cuda:0"}).is_cuda)
  torch.set_default_device("cuda")
  local d = torch.zeros(3)
  torch.set_default_device("cpu")
  check(d.is_cuda)
  check(not torch.zeros(3).is_cuda)
end)

test("printing and item copy to the host", function()
  local g = torch.tensor({1.5, 2.5}):cuda()
  check_eq(tostring(g), "tensor([1.5000, 2.5000], device='cuda:0')")
  check_eq(torch.tensor(7):cuda():item(), 7)
  check_eq(torch.tensor({true}):cuda():item(), true)
  check_eq(g:totable(), {1.5, 2.5})
end)

test("fill_, zero_, contiguous and copy_ across dtypes and strides", function()
  local x = torch.arange(0, 24):reshape(2, 3, 4):double()
  local g = x:cuda()
  check_close(cpu(g:transpose(1, 3):contiguous()), x:transpose(1, 3):contiguous())
  check(g:transpose(1, 3):contiguous():is_contiguous())
  local dst = torch.zeros(4, 3, 2, {device = "cuda", dtype = torch.float32})
  dst:copy_(g:transpose(1, 3))
  check_close(cpu(dst), x:transpose(1, 3):float())
  local h = torch.zeros(4, 3, 2, {dtype = torch.int64})
  h:copy_(g:transpose(1, 3)) -- device to host with a cast
  check_close(h, x:transpose(1, 3):long())
  local f = torch.empty(3, 4, {device = "cuda"}):fill_(2.25)
  check_close(cpu(f), torch.full({3, 4}, 2.25))
  f:narrow(2, 2, 2):fill_(-1)
  local ref = torch.full({3, 4}, 2.25); ref:narrow(2, 2, 2):fill_(-1)
  check_close(cpu(f), ref)
  check_close(cpu(f:zero_()), torch.zeros(3, 4))
  local b = torch.ones(4):cuda():half()
  check_eq(b.dtype, torch.float16)
  check_close(cpu(b):float(), torch.ones(4))
  local e = torch.zeros(2, 3, {device = "cuda"})
  e:copy_(torch.tensor({1, 2, 3})) -- host source broadcast
  check_close(cpu(e), {{1, 2, 3}, {1, 2, 3}})
end)

local unary = {"neg", "abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt",
  "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "gelu", "silu",
  "erf", "erfc", "floor", "ceil", "round", "trunc", "frac", "reciprocal", "square", "logit", "sinc"}

test("unary ops match the CPU (float32, float64, float16)", function()
  torch.manual_seed(1)
  local x = torch.rand(64) * 0.9 + 0.05
  for _, dt in ipairs{"float32", "float64", "float16"} do
    local xc = x:to(dt)
    local xg = xc:cuda()
    for _, op in ipairs(unary) do
      local want = torch[op](xc):double()
      local got = torch[op](xg):cpu():double()
      local tol = dt == "float16" and 2e-2 or (dt == "float32" and 1e-5 or 1e-12)
      check_close(got, want, {rtol = tol, atol = tol})
    end
    -- ops with a number parameter (p0 of the row's expression, the kernel's operand b)
    for _, c in ipairs{{"logit", xc, 0.2}, {"leaky_relu", xc - 0.5, 0.3}} do
      local tol = dt == "float16" and 2e-2 or (dt == "float32" and 1e-5 or 1e-12)
      check_close(torch[c[1]](c[2]:cuda(), c[3]):cpu():double(), torch[c[1]](c[2], c[3]):double(), {rtol = tol, atol = tol})
    end
  end
  local i = torch.tensor({-3, 0, 5}, {dtype = torch.int32})
  check_close(cpu(torch.neg(i:cuda())), torch.neg(i))
  check_close(cpu(torch.abs(i:cuda())), torch.abs(i))
  check_close(cpu(torch.exp(i:cuda())), torch.exp(i))
  check_eq(torch.exp(i:cuda()).dtype, torch.float32)
  local n = torch.tensor({0 / 0, 1 / 0, 1})
  check_eq(cpu(torch.isnan(n:cuda())):totable(), {true, false, false})
  check_eq(cpu(torch.isinf(n:cuda())):totable(), {false, true, false})
  check_eq(cpu(torch.isfinite(n:cuda())):totable(), {false, false, true})
  check_eq(cpu(torch.bitwise_not(torch.tensor({0, 5}):cuda())):totable(), {-1, -6})
end)

local binary = {"add", "sub", "mul", "div", "pow", "atan2", "hypot", "fmod", "remainder", "maximum", "minimum",
  "floor_divide"}
local compare = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"}

test("binary ops match the CPU, same shape, broadcast, strided and with numbers", function()
  torch.manual_seed(2)
  local a, b = torch.rand(4, 5) + 0.5, torch.rand(5) + 0.5
  local ag, bg = a:cuda(), b:cuda()
  for _, op in ipairs(binary) do
    check_close(cpu(torch[op](ag, bg)), torch[op](a, b), {rtol = 1e-5, atol = 1e-6})
    check_close(cpu(torch[op](ag, ag:t():t())), torch[op](a, a), {rtol = 1e-5, atol = 1e-6})
    check_close(cpu(torch[op](ag:t(), bg:reshape(5, 1))), torch[op](a:t(), b:reshape(5, 1)), {rtol = 1e-5, atol = 1e-6})
    check_close(cpu(torch[op](ag, 2)), torch[op](a, 2), {rtol = 1e-5, atol = 1e-6})
  end
  for _, op in ipairs(compare) do
    check_eq(cpu(torch[op](ag, bg)):totable(), torch[op](a, b):totable())
  end
  check_close(cpu(ag + bg * 2 - 1), a + b * 2 - 1, {rtol = 1e-6})
  check_close(cpu(-ag / 3), -a / 3, {rtol = 1e-6})
  local i, j = torch.tensor({7, -7, 9, -9}), torch.tensor({2, 2, -4, -4})
  for _, op in ipairs{"add", "sub", "mul", "floor_divide", "remainder", "fmod", "maximum", "bitwise_and", "bitwise_xor"} do
    check_eq(cpu(torch[op](i:cuda(), j:cuda())):totable(), torch[op](i, j):totable(), op)
  end
  check_eq(cpu(torch.pow(i:cuda(), 2)):totable(), torch.pow(i, 2):totable())
  local h = (ag:half() + bg:half())
  check_eq(h.dtype, torch.float16)
  check_close(cpu(h):float(), (a:half() + b:half()):float(), {rtol = 1e-3})
  local mixed = torch.tensor({1, 2}, {dtype = torch.int32}):cuda() + torch.tensor({0.5, 0.25}):cuda()
  check_eq(mixed.dtype, torch.float32)
  check_close(cpu(mixed), {1.5, 2.25})
  check_close(cpu(torch.add(ag, bg, {out = torch.empty(4, 5, {device = "cuda"})})), a + b, {rtol = 1e-6})
  local acc = torch.zeros(5):cuda()
  acc:add_(bg)
  acc:mul_(2)
  check_close(cpu(acc), b * 2, {rtol = 1e-6})
  check_close(cpu(ag + torch.tensor(1.5)), a + 1.5, {rtol = 1e-6}) -- a 0-dim CPU tensor goes with CUDA ones
end)

test("mixing devices and ops without a CUDA kernel raise clear errors; the session goes on", function()
  local g, c = torch.ones(3):cuda(), torch.ones(3)
  check_error(function() return g + c end, "expected all tensors on the same device, got cuda:0 and cpu")
  check_error(function() return torch.add(c, g) end, "expected all tensors on the same device")
  check_error(function() return torch.cat({g, c}) end, "cat: expected all tensors on the same device, got cuda:0 and cpu")
  local q = torch.randn(1, 4, 8):cuda() -- the CUDA flash kernels take head dims 64 and 128 (others go to math)
  check_error(function() return torch._sdpa_flash(q, q, q) end, "float32 on the GPU takes head dims 64 and 128")
  check_eq(g[1].is_cuda, true) -- indexing works on CUDA (tests/cuda/test_cuda_index.lua)
  check_close(cpu(g + 1), {2, 2, 2})
end)

test("caching allocator: stats, reuse, peak, empty_cache", function()
  collectgarbage()
  torch.cuda.synchronize()
  local base = torch.cuda.memory_allocated()
  local x = torch.empty(1024, 1024, {device = "cuda"}) -- 4 MiB
  check_eq(torch.cuda.memory_allocated() - base, 4 * 1024 * 1024)
  check(torch.cuda.memory_reserved() >= torch.cuda.memory_allocated())
  torch.cuda.reset_peak_memory_stats()
  local y = torch.empty(1024, 1024, {device = "cuda"})
  check(torch.cuda.max_memory_allocated() >= base + 8 * 1024 * 1024)
  local reserved = torch.cuda.memory_reserved()
  y = nil; collectgarbage()
  check_eq(torch.cuda.memory_allocated() - base, 4 * 1024 * 1024)
  check_eq(torch.cuda.memory_reserved(), reserved) -- cached, not freed
  local hits = torch.cuda.memory_stats().num_cache_hits
  local z = torch.empty(1024, 1024, {device = "cuda"})
  check_eq(torch.cuda.memory_stats().num_cache_hits, hits + 1)
  check_eq(torch.cuda.memory_reserved(), reserved) -- the block was reused
  z = nil; x = nil; collectgarbage()
  torch.cuda.empty_cache()
  check(torch.cuda.memory_reserved() < reserved)
end)

test("CUDA out of memory is a Lua error naming the sizes, and the session goes on", function()
  local free, total = torch.cuda.mem_get_info()
  check(free > 0 and total >= free)
  local ok, err = pcall(torch.empty, math.floor(total / 4) * 4, {device = "cuda", dtype = torch.float64})
  check(not ok)
  check(tostring(err):find("CUDA out of memory: tried to allocate", 1, true), tostring(err))
  check(torch.cuda.memory_stats().num_ooms >= 1)
  check_close(cpu(torch.ones(8, {device = "cuda"}) * 2), torch.full({8}, 2))
end)

test("pinned memory and asynchronous copies", function()
  local x = torch.arange(0, 1000):float()
  check(not x:is_pinned())
  local p = x:pin_memory()
  check(p:is_pinned())
  check_close(p, x)
  local g = p:cuda({non_blocking = true})
  local back = torch.empty(1000):pin_memory()
  back:copy_(g * 2)
  torch.cuda.synchronize()
  check_close(back, x * 2)
  check_close(g:to("cpu", {non_blocking = true}):double(), x:double()) -- pageable: waits
end)

test("streams and events", function()
  local s = torch.cuda.Stream()
  local cur = torch.cuda.current_stream()
  check(tostring(cur):find("default", 1, true))
  local e0, e1 = torch.cuda.Event({enable_timing = true}), torch.cuda.Event({enable_timing = true})
  e0:record()
  local y = torch.ones(1 << 20, {device = "cuda"})
  for _ = 1, 10 do y = y * 1.0001 end
  e1:record()
  e1:synchronize()
  check(e1:query())
  local ms = e0:elapsed_time(e1)
  check(ms >= 0 and ms < 10000, "elapsed " .. ms)
  torch.cuda.set_stream(s)
  local z = torch.ones(1000, {device = "cuda"}) + 1
  s:synchronize()
  check(s:query())
  torch.cuda.set_stream(torch.cuda.default_stream())
  check_close(cpu(z), torch.full({1000}, 2))
end)

test("kernels are compiled once and then cached", function()
  local st = torch.cuda.memory_stats()
  local x = torch.ones(10, {device = "cuda"})
  local _ = x + x
  local st2 = torch.cuda.memory_stats()
  check_eq(st2.kernel_compiles + st2.kernel_disk_hits, st.kernel_compiles + st.kernel_disk_hits)
  check(st2.kernel_mem_hits > st.kernel_mem_hits)
end)

test("the profiler times ops on the GPU with activity 'cuda'", function()
  local a = torch.randn(2048, 2048, {device = "cuda"})
  local prof = torch.profiler.profile({activities = {"cpu", "cuda"}}, function()
    for _ = 1, 3 do local c = a:matmul(a) end
  end)
  local mm
  for _, r in ipairs(prof:key_averages()) do if r.key == "matmul" then mm = r end end
  check(mm, "a matmul row")
  check_eq(mm.count, 3)
  -- 3 products of 2 * 2048^3 flops: at least 20 us even at 1 PFLOP/s, and well under a second
  check(mm.cuda_time_total > 20 and mm.cuda_time_total < 1e6, "matmul CUDA time " .. mm.cuda_time_total .. " us")
  check(mm.self_cuda_time_total <= mm.cuda_time_total + 1e-9)
  local t = prof:key_averages():table{sort_by = "cuda_time_total"}
  check(t:find("Self CUDA", 1, true) and t:find("Self CUDA time total", 1, true), t)
end)
