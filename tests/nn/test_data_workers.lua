-- tests/nn/test_data_workers.lua -- DataLoader(num_workers > 0) over Lua
-- datasets: worker processes (nn/data/l_workers.c, _processes.lua) give
-- the batches loading in the loop gives, values of every kind travel back
-- (big tensors through shared memory, tv_tensor attributes too), workers
-- are seeded and identified as PyTorch's, and failures are errors naming
-- the worker while the session goes on.
local D = torch.utils.data
cpu_only("worker processes make CPU batches")

local function class(name, len, get)
  local C = D.Dataset:extend(name)
  function C:__len() return len end
  C.__getitem = get
  return C
end

-- every kind of value a sample may hold; tensors small (inline) and big
-- (shared memory), contiguous or not, of several dtypes
local Mixed = class("Mixed", 23, function(_, i)
  local g = torch.Generator():manual_seed(i)
  local big = torch.rand(3, 64, 64, {generator = g}) -- 48 KiB as float32, 96 KiB as double
  return {
    img = (big * 255):to(torch.uint8),
    dbl = big:double():transpose(2, 3), -- not contiguous, over the shared-memory bound
    small = torch.tensor({i, -i}, {dtype = torch.int64}),
    flag = torch.tensor(i % 2 == 0),
    half = torch.full({2}, i / 4, {dtype = torch.float16}),
    u16 = torch.full({4}, 60000 + i, {dtype = torch.uint16}),
    n = i, f = i / 3, ok = i % 3 == 0, name = ("s%02d"):format(i),
    nested = {list = {i, i + 1}, deep = {deeper = {x = i * 10}}},
  }
end)

local function same(a, b, where)
  if torch.is_tensor(a) then
    check(torch.is_tensor(b), where .. ": a tensor")
    check_eq(tostring(a.dtype), tostring(b.dtype), where .. " dtype")
    check_eq(a:size(), b:size(), where .. " shape")
    check(a:equal(b), where .. " values")
  elseif type(a) == "table" then
    check_eq(type(b), "table", where)
    for k, v in pairs(a) do same(v, b[k], where .. "." .. tostring(k)) end
    for k in pairs(b) do check(a[k] ~= nil, where .. ": extra key " .. tostring(k)) end
  else
    check_eq(b, a, where)
  end
end

test("worker processes give the in-loop batches: every kind of value, shuffled, short last batch", function()
  for _, opts in ipairs({{batch_size = 4, shuffle = true, num_workers = 2}, {batch_size = 5, num_workers = 3},
    {batch_size = 4, drop_last = true, num_workers = 1, prefetch_factor = 1}}) do
    local plain = {}
    torch.manual_seed(3)
    local inline = {}
    for k, v in pairs(opts) do if k ~= "num_workers" and k ~= "prefetch_factor" then inline[k] = v end end
    for b in D.DataLoader(Mixed(), inline):iter() do plain[#plain + 1] = b end
    torch.manual_seed(3)
    local k = 0
    for b in D.DataLoader(Mixed(), opts):iter() do
      k = k + 1
      same(plain[k], b, "batch " .. k)
    end
    check_eq(k, #plain, "number of batches")
  end
end)

test("big tensors come back in shared memory, writable, and outlive the loader", function()
  local ds = class("Big", 4, function(_, i) return torch.full({256, 256}, i) end)()
  local kept = {}
  for b in D.DataLoader(ds, {batch_size = 2, num_workers = 2}):iter() do kept[#kept + 1] = b end
  collectgarbage()
  check_eq(kept[2][{2, 1, 1}]:item(), 4)
  kept[1]:add_(1)
  check_eq(kept[1]:sum():item(), (2 + 3) * 256 * 256)
  check_eq((kept[1] + kept[2]):sum():item(), (2 + 3 + 3 + 4) * 256 * 256)
end)

test("tv_tensor attributes travel with their tensors", function()
  local tv = torch.vision.tv_tensors
  local ds = class("Boxes", 3, function(_, i)
    return {tv.Image(torch.zeros(3, 4, 5, {dtype = torch.uint8})),
      tv.BoundingBoxes(torch.tensor({{0, 0, i, i}}), {format = "XYWH", canvas_size = {4, 5}})}
  end)()
  local b = D.DataLoader(ds, {batch_size = 1, num_workers = 2, collate_fn = function(s) return s[1] end}):iter()()
  check_eq(b[2].format, "XYWH")
  check_eq(b[2].canvas_size, {4, 5})
  check_eq(b[2]:totable(), {{0, 0, 1, 1}})
end)

test("get_worker_info, worker ids and the batch each worker makes", function()
  check_eq(D.get_worker_info(), nil, "nil in the main process")
  local ds = class("Who", 12, function(self, i)
    local info = D.get_worker_info()
    return {id = info.id, n = info.num_workers, same = info.dataset == self, i = i}
  end)()
  local k = 0
  for b in D.DataLoader(ds, {batch_size = 2, num_workers = 3}):iter() do
    k = k + 1
    check_eq(b.id:totable(), {(k - 1) % 3 + 1, (k - 1) % 3 + 1}, "batch " .. k .. " from worker (k-1)%3+1")
    check_eq(b.n:totable(), {3, 3})
    check_eq(b.same:totable(), {true, true})
  end
end)

test("workers are seeded from the loader's generator: same seed, same draws; other workers, other draws", function()
  local ds = class("Rand", 8, function() return torch.rand(2) end)()
  local function run(seed)
    torch.manual_seed(seed)
    local out = {}
    for b in D.DataLoader(ds, {batch_size = 1, num_workers = 2}):iter() do out[#out + 1] = b:totable() end
    return out
  end
  local a, b, c = run(7), run(7), run(8)
  check_eq(a, b, "reproducible")
  check(not pcall(check_eq, a, c), "another seed, other draws")
  check(not pcall(check_eq, a[1], a[2]), "worker 1 and worker 2 draw differently")
  local g = torch.Generator():manual_seed(7)
  local seeds = {}
  local with_gen = D.DataLoader(ds, {num_workers = 2, generator = g, worker_init_fn = function(id)
    seeds[id] = D.get_worker_info().seed -- (in the worker: its copy of `seeds`)
    if torch.initial_seed() ~= seeds[id] then error("torch is not seeded with the worker's seed") end
  end})
  local n = 0
  for _ in with_gen:iter() do n = n + 1 end
  check_eq(n, 8)
  check_eq(next(seeds), nil, "worker_init_fn ran in the workers, not here")
end)

test("errors in a worker name it and the batch, carry the traceback, and the session goes on", function()
  local ds = class("Broken", 9, function(_, i)
    if i == 7 then error("sample 7 is broken") end
    return i
  end)()
  local got = 0
  local err = check_error(function()
    for _ in D.DataLoader(ds, {batch_size = 2, num_workers = 2}):iter() do got = got + 1 end
  end, "failed on batch 4: ")
  check(err:find("sample 7 is broken", 1, true), err)
  check(err:find("stack traceback", 1, true), "with the worker's traceback")
  check(not err:find("_workers.spawn", 1, true), "the main process's frames are cut: " .. err)
  check_eq(got, 3)
  local init = D.DataLoader(class("Fine", 2, function(_, i) return i end)(), {num_workers = 1,
    worker_init_fn = function() error("no init today") end})
  check_error(function() for _ in init:iter() do end end, "worker_init_fn: ")
  local fn = class("Fn", 2, function(_, i) return {f = function() return i end, p = print} end)()
  check_error(function()
    for _ in D.DataLoader(fn, {num_workers = 1, collate_fn = function(s) return s end}):iter() do end
  end, "a function (one that is no field of a loaded module) cannot be sent back from a worker process (found at [1].f)")
  local named = class("Named", 1, function() return {p = print, sq = math.sqrt} end)()
  local got_fns = D.DataLoader(named, {num_workers = 1, collate_fn = function(s) return s[1] end}):iter()()
  check(got_fns.p == print and got_fns.sq == math.sqrt, "module functions travel by name")
  local gpu = class("Gpu", 2, function() return torch.zeros(2, {device = "cuda"}) end)()
  check_error(function() for _ in D.DataLoader(gpu, {num_workers = 1}):iter() do end end,
    "CUDA cannot be used in a DataLoader worker process")
  local after = 0
  for b in D.DataLoader(class("Ok", 5, function(_, i) return i end)(), {batch_size = 2, num_workers = 2}):iter() do
    after = after + b:numel()
  end
  check_eq(after, 5, "a loader after the failures works")
end)

local function my_pid()
  local f = assert(io.open("/proc/self/stat"))
  local pid = f:read("n")
  f:close()
  return pid
end

local function children()
  local pid = my_pid()
  local f = io.open(("/proc/%d/task/%d/children"):format(pid, pid))
  if not f then return nil end
  local s = f:read("a")
  f:close()
  local n = 0
  for _ in s:gmatch("%d+") do n = n + 1 end
  return n
end

test("a worker that dies is an error saying how; loops left early leave no processes", function()
  local exits = class("Exits", 4, function(_, i) if i == 3 then os.exit(3) end return i end)()
  check_error(function() for _ in D.DataLoader(exits, {num_workers = 2}):iter() do end end,
    "exited unexpectedly with status 3")
  local killed = class("Killed", 4, function(_, i)
    if i == 2 then os.execute("kill -9 " .. my_pid()) end
    return i
  end)()
  check_error(function() for _ in D.DataLoader(killed, {num_workers = 2}):iter() do end end,
    "was killed by signal 9")
  local slow = class("Slow", 4, function(_, i)
    local t = os.clock() + 3
    while os.clock() < t do end
    return i
  end)()
  check_error(function() for _ in D.DataLoader(slow, {num_workers = 1, timeout = 0.3}):iter() do end end,
    "timed out after 0.3 s")
  local ds = class("Many", 100, function(_, i) return i end)()
  for _ = 1, 3 do
    for b in D.DataLoader(ds, {batch_size = 2, num_workers = 3}):iter() do break end
  end
  collectgarbage()
  collectgarbage()
  local n = children()
  if n then check_eq(n, 0, "child processes left") end
end)

test("persistent_workers keep their state across epochs, and an epoch left early is drained", function()
  local ds = class("Count", 6, function(self, i)
    self.calls = (self.calls or 0) + 1
    return self.calls
  end)()
  local function epoch(loader, stop)
    local out = {}
    for b in loader:iter() do
      out[#out + 1] = b:totable()
      if stop and #out == stop then break end
    end
    return out
  end
  local p = D.DataLoader(ds, {batch_size = 2, num_workers = 1, persistent_workers = true})
  check_eq(epoch(p), {{1, 2}, {3, 4}, {5, 6}})
  check_eq(epoch(p, 1), {{7, 8}})
  check_eq(epoch(p), {{11, 12}, {13, 14}, {15, 16}}, "the 2 batches made ahead (9, 10) were drained")
  local q = D.DataLoader(ds, {batch_size = 2, num_workers = 1})
  check_eq(epoch(q), {{1, 2}, {3, 4}, {5, 6}}, "fresh workers each epoch")
  check_eq(epoch(q), {{1, 2}, {3, 4}, {5, 6}})
  check_eq(ds.calls, nil, "the main process's dataset is untouched")
end)

test("a Subset of a Lua dataset and a custom collate_fn run in the workers", function()
  local ds = class("Sq", 10, function(_, i) return i * i end)()
  local sub = D.Subset(ds, torch.tensor({10, 2, 7}))
  local out = {}
  local l = D.DataLoader(sub, {batch_size = 2, num_workers = 2, collate_fn = function(s)
    return {sum = s[1] + (s[2] or 0), pid_differs = D.get_worker_info() ~= nil}
  end})
  for b in l:iter() do out[#out + 1] = b end
  check_eq(out, {{sum = 104, pid_differs = true}, {sum = 49, pid_differs = true}})
end)

test("bad worker options are errors naming them", function()
  local ds = class("E", 2, function(_, i) return i end)()
  check_error(function() D.DataLoader(ds, {prefetch_factor = 2}) end, "prefetch_factor needs num_workers > 0")
  check_error(function() D.DataLoader(ds, {num_workers = 1, prefetch_factor = 0}) end,
    "prefetch_factor must be a positive integer")
  check_error(function() D.DataLoader(ds, {persistent_workers = true}) end, "persistent_workers needs num_workers > 0")
  check_error(function() D.DataLoader(ds, {num_workers = 1, timeout = -1}) end, "timeout must be a non-negative")
  check_error(function() D.DataLoader(ds, {num_workers = 1, worker_init_fn = 3}) end,
    "worker_init_fn must be a function")
  check_error(function() D.DataLoader(ds, {num_workers = 1, workers = 2}) end, "workers")
end)
