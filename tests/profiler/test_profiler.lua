-- tests/profiler/test_profiler.lua -- torch.profiler: the guard and function
-- forms, op names and counts, record_function nesting and self times, input
-- shapes, memory, autograd nodes, the key_averages table, the Chrome trace,
-- the time breakdown, errors inside a profile, and that nothing stays
-- installed after a profile.
local profiler = torch.profiler

local function by_name(prof)
  local t = {}
  for _, a in ipairs(prof:key_averages()) do t[a.key] = a end
  return t
end

test("a <close> profile records each op call by name", function()
  local a, b = torch.ones(2, 3), torch.ones(2, 3)
  local p
  do
    local prof <close> = profiler.profile{activities = {"cpu"}}
    p = prof
    for _ = 1, 3 do local _ = a + b end
    local _ = torch.mul(a, b)
    local _ = a:sum()
  end
  local k = by_name(p)
  check_eq(k.add.count, 3)
  check_eq(k.mul.count, 1)
  check_eq(k.sum.count, 1)
  check(k.add.cpu_time_total > 0, "times are positive")
end)

test("the function form returns the stopped profile", function()
  local prof = profiler.profile({record_shapes = true}, function()
    local _ = torch.zeros(4):exp()
  end)
  check(not prof.running, "stopped")
  local k = by_name(prof)
  check_eq(k.exp.count, 1)
  check_eq(k.zeros.count, 1)
end)

test("no wrapper stays installed after a profile, and profiling off is the plain C function", function()
  local add, meta_add, method = torch.add, debug.getmetatable(torch.ones(1)).__add, torch.Tensor.relu
  local F = torch.nn.functional
  local conv = F.conv2d
  profiler.profile({}, function()
    check(torch.add ~= add, "wrapped while profiling")
    check(F.conv2d ~= conv, "aliases in loaded packages are wrapped too")
  end)
  check(torch.add == add and debug.getmetatable(torch.ones(1)).__add == meta_add and torch.Tensor.relu == method,
    "originals restored")
  check(F.conv2d == conv, "alias restored")
  check_eq(debug.getinfo(torch.add, "S").what, "C")
  check(not torch._profiler.active(), "recorder stopped")
end)

test("an error inside the function form stops the profile and passes the op's message", function()
  check_error(function()
    profiler.profile({}, function() torch.ones(2, 3):matmul(torch.ones(4, 5)) end)
  end, "matmul")
  check(not torch._profiler.active(), "stopped after the error")
  local ok = pcall(function()
    local prof <close> = profiler.profile{}
    error("boom")
  end)
  check(not ok and not torch._profiler.active(), "a <close> profile stops on error")
end)

test("an op that fails inside a pcall is closed and later ops nest correctly", function()
  local prof = profiler.profile({}, function()
    local r <close> = profiler.record_function("outer")
    pcall(function() torch.ones(2):matmul(torch.ones(3)) end)
    local _ = torch.ones(2) + 1
  end)
  local ev = prof:events()
  local outer
  for i, e in ipairs(ev) do if e.name == "outer" then outer = i end end
  for _, e in ipairs(ev) do
    if e.name == "add" or e.name == "matmul" then check_eq(e.parent, outer, e.name .. " inside outer") end
    check(e.end_us >= e.start_us, "closed")
  end
end)

test("record_function ranges nest ops, with self time excluding children", function()
  local prof = profiler.profile({}, function()
    local r <close> = profiler.record_function("block")
    local x = torch.randn(64, 64)
    for _ = 1, 5 do x = x:matmul(x):tanh() end
    local v = profiler.record_function("inner", function() return torch.ones(3):sum():item() end)
    check_eq(v, 3.0)
  end)
  local ev = prof:events()
  local block, inner
  for i, e in ipairs(ev) do
    if e.name == "block" then block = i end
    if e.name == "inner" then inner = i end
  end
  check(block and inner, "ranges recorded")
  check_eq(ev[block].kind, "range")
  check_eq(ev[inner].parent, block)
  local child = 0
  for _, e in ipairs(ev) do
    if e.parent == block then
      child = child + e.duration_us
      check(e.start_us >= ev[block].start_us and e.end_us <= ev[block].end_us, "child inside parent")
    end
  end
  check_close(ev[block].self_us, ev[block].duration_us - child, {atol = 1e-6})
  check(by_name(prof).matmul.count == 5, "5 matmuls")
end)

test("record_shapes gives input shapes; group_by_input_shape splits them", function()
  local prof = profiler.profile({record_shapes = true}, function()
    local _ = torch.ones(2, 3) + torch.ones(2, 3)
    local _ = torch.ones(4) + torch.ones(4)
    local _ = torch.ones(4) + torch.ones(4)
    local _ = torch.ones(5):add(1)
  end)
  local shapes = {}
  for _, a in ipairs(prof:key_averages{group_by_input_shape = true}) do
    if a.key == "add" then shapes[a.input_shapes] = a.count end
  end
  check_eq(shapes, {["[[2, 3], [2, 3]]"] = 1, ["[[4], [4]]"] = 2, ["[[5], []]"] = 1})
  check_eq(by_name(prof).add.count, 4)
end)

test("profile_memory records the bytes an op allocates", function()
  torch.zeros(1000, {dtype = torch.float64}) -- first-use set-up (a device's kernels and state) is not the op's
  local prof = profiler.profile({profile_memory = true}, function()
    local keep = torch.zeros(1000, {dtype = torch.float64})
    check_eq(keep:numel(), 1000)
  end)
  local z = by_name(prof).zeros
  if DEVICE == "cpu" then
    check(z.cpu_memory_usage >= 8000 and z.cpu_memory_usage < 8000 + 4096, "about 8000 bytes: " .. z.cpu_memory_usage)
  else -- what the caching allocator counts for the same call
    local m0 = torch.cuda.memory_allocated()
    local again = torch.zeros(1000, {dtype = torch.float64})
    local want = torch.cuda.memory_allocated() - m0
    check(want >= 8000, "the allocator counts at least the 8000 bytes: " .. want)
    check(z.cuda_memory_usage >= want, "the profiler counts the call's CUDA bytes: " .. z.cuda_memory_usage)
    check(prof:key_averages():table():find("CUDA Mem", 1, true), "the table shows CUDA memory")
  end
end)

test("autograd nodes run by backward appear inside it", function()
  local prof = profiler.profile({}, function()
    local w = torch.randn(3, {requires_grad = true})
    local loss = (w * w):sum()
    loss:backward()
  end)
  local ev = prof:events()
  local bw, node
  for i, e in ipairs(ev) do
    if e.name == "backward" then bw = i end
    if e.name == "MulBackward0" then node = e end
  end
  check(bw and node, "backward and MulBackward0 recorded")
  check_eq(node.kind, "autograd")
  check_eq(node.parent, bw)
end)

test("the key_averages table has PyTorch's columns, sorting and row limit", function()
  local prof = profiler.profile({record_shapes = true, profile_memory = true}, function()
    local x = torch.ones(8)
    for _ = 1, 4 do x = x + 1 end
    for _ = 1, 2 do x = x * 2 end
    local _ = x:sum()
  end)
  local s = prof:key_averages():table{sort_by = "count", row_limit = 2}
  local lines = {}
  for l in s:gmatch("[^\n]+") do lines[#lines + 1] = l end
  check(lines[1]:match("^%-+  %-+"), lines[1])
  for _, h in ipairs{"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "CPU Mem",
    "Self CPU Mem", "# of Calls"} do
    check(lines[2]:find(h, 1, true), "header " .. h)
  end
  check(not lines[2]:find("Input Shapes", 1, true), "shapes only when grouped by them")
  check(lines[4]:match("^%s+add%s+[%d.]+%%%s+[%d.]+[mu]?s"), lines[4])
  check(lines[4]:match("%s4  $"), "4 calls of add first: " .. lines[4])
  check(lines[5]:match("^%s+mul.*%s2  $"), lines[5])
  check_eq(#lines, 7) -- sep, header, sep, 2 rows, sep, total
  check(lines[7]:match("^Self CPU time total: [%d.]+[mu]?s$"), lines[8])
  local g = prof:key_averages{group_by_input_shape = true}:table()
  check(g:find("Input Shapes", 1, true) and g:find("[[8], []]", 1, true), g)
  check_error(function() prof:key_averages():table{sort_by = "gpu_time"} end, "sort_by must be one of")
end)

test("export_chrome_trace writes complete events in microseconds", function()
  local path = os.tmpname()
  local prof = profiler.profile({record_shapes = true}, function()
    local r <close> = profiler.record_function("step \"1\"")
    local _ = torch.ones(3, 4):t():contiguous()
  end)
  check_eq(prof:export_chrome_trace(path), path)
  local f = io.open(path)
  local s = f:read("a")
  f:close()
  check(s:find('"traceEvents":[', 1, true), "traceEvents")
  check(s:find('"ph":"X","cat":"user_annotation","name":"step \\"1\\""', 1, true), "range event, escaped")
  check(s:find('"name":"contiguous"', 1, true) and s:find('"Input Dims":[[4, 3]]', 1, true), "op with shapes")
  if io.open("/usr/bin/python3") then
    local p = io.popen(("cd /tmp && /usr/bin/python3 -c \"import json\nd = json.load(open('%s'))\n"
      .. "ev = d['traceEvents']\nassert all(e['ph'] == 'X' and e['dur'] >= 0 and e['ts'] > 1e15 for e in ev)\n"
      .. "print(len(ev))\" 2>&1"):format(path))
    local out = p:read("a")
    p:close()
    check_eq(tonumber(out), #prof:events(), out)
  end
  os.remove(path)
end)

test("breakdown splits the profiled time into compute, memory copies and idle", function()
  local prof = profiler.profile({}, function()
    local x = torch.randn(256, 256)
    for _ = 1, 20 do
      local _ = x:t():contiguous()
      local _ = x:clone()
      local _ = x:matmul(x)
    end
    local t0 = torch.time()
    while torch.time() - t0 < 0.005 do end -- idle: no op runs
  end)
  local b = prof:breakdown{verbose = false}
  check_close(b.compute_us + b.memcpy_us + b.idle_us, b.total_us, {atol = 1e-6})
  check_close(b.compute_pct + b.memcpy_pct + b.idle_pct, 100, {atol = 1e-9})
  check(b.memcpy_us > 0 and b.compute_us > 0, "copies and compute both seen")
  check(b.idle_us >= 5000, "the busy-wait outside ops is idle: " .. b.idle_us)
  check(tostring(b):match("compute [%d.]+%%, memory copies [%d.]+%%, idle [%d.]+%%"), tostring(b))
end)

test("bad use gives clear errors", function()
  if torch.cuda.is_available() then -- the GPU is timed too (tests/cuda/test_cuda.lua checks the figures)
    local p = profiler.profile{activities = {"cuda"}}
    p:stop()
    check(p:key_averages().cuda, "a profile with activity 'cuda' has CUDA columns")
  else
    check_error(function() profiler.profile{activities = {"cuda"}} end, "activity 'cuda' is not available")
  end
  check_error(function() profiler.profile{activities = {"tpu"}} end, "unknown activity 'tpu'")
  check_error(function() profiler.profile{record_shape = true} end, "unknown option 'record_shape'")
  check_error(function() profiler.profile({}, 5) end, "must be a function")
  check_error(function() profiler.record_function(3) end, "record_function: name must be a string")
  local outer = profiler.profile{}
  check_error(function() profiler.profile{} end, "already running")
  check_error(function() outer:key_averages() end, "still running")
  outer:stop()
  outer:stop()
  check(#outer:events() >= 0, "usable after stop")
end)

test("ops in a coroutine are recorded", function()
  local prof = profiler.profile({}, function()
    local co = coroutine.wrap(function()
      local _ = torch.ones(2):neg()
      coroutine.yield()
    end)
    co()
  end)
  check_eq(by_name(prof).neg.count, 1)
end)

test("a range left open from an earlier profile cannot close an event of a later one", function()
  local stale
  local first = profiler.profile{}
  stale = profiler.record_function("left open")
  first:stop()
  local prof = profiler.profile({}, function()
    local r <close> = profiler.record_function("current")
    stale:exit() -- token of the first profile: ignored
    local _ = torch.ones(2):neg()
  end)
  local ev = prof:events()
  check_eq(ev[1].name, "current")
  check_eq(ev[#ev].parent, 1, "the op is still inside the current range")
end)

test("arithmetic on small (inline) tensors is recorded, and recording shapes keeps them inline", function()
  local a = torch.ones(2)
  local meta_inline = debug.getmetatable(a + a)
  local prof = profiler.profile({record_shapes = true}, function()
    local c = a + a
    local d = c * c -- c is an inline tensor: its metatable is the inline copy
    check(debug.getmetatable(c) == meta_inline, "still inline after its shape was read")
    check_eq(d:totable(), {4.0, 4.0})
  end)
  local k = by_name(prof)
  check_eq(k.add.count, 1)
  check_eq(k.mul.count, 1)
  check(debug.getmetatable(a + a).__add == meta_inline.__add, "inline metatable restored")
  check_eq(debug.getinfo(meta_inline.__add, "S").what, "C")
end)
