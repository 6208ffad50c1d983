-- tests/utils/test_data.lua -- torch.utils.data: datasets, collation and the
-- DataLoader (batching, shuffling with torch's RNG, drop_last, both
-- iteration forms, and background workers giving the same batches).
local D = torch.utils.data

local function ds10()
  return D.TensorDataset(torch.arange(1, 11):double():view(10, 1) * 10, torch.arange(1, 11))
end

local function collect(loader)
  local seen = {}
  for b in loader:iter() do seen[#seen + 1] = b[2]:totable() end
  return seen
end

test("TensorDataset: length, samples, and shape checks", function()
  local ds = ds10()
  check_eq(#ds, 10)
  check_eq(ds:get(3)[1]:item(), 30)
  check_eq(ds:get(3)[2]:item(), 3)
  check_error(function() D.TensorDataset(torch.ones(3), torch.ones(4)) end, "tensor 2 has 4 samples")
  check_error(function() D.TensorDataset(torch.ones(3), 5) end, "argument 2 is not a tensor")
end)

test("batches in order, the last one short unless drop_last", function()
  local l = D.DataLoader(ds10(), {batch_size = 4})
  check_eq(#l, 3)
  check_eq(collect(l), {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10}})
  local l2 = D.DataLoader{ds10(), batch_size = 4, drop_last = true}
  check_eq(#l2, 2)
  check_eq(collect(l2), {{1, 2, 3, 4}, {5, 6, 7, 8}})
end)

test("ipairs walks one epoch", function()
  local l = D.DataLoader(ds10(), {batch_size = 3})
  local n, total = 0, 0
  for i, b in ipairs(l) do
    n = i
    total = total + b[2]:sum():item()
  end
  check_eq(n, 4)
  check_eq(total, 55)
  n = 0
  for _ in ipairs(l) do n = n + 1 end
  check_eq(n, 4, "a second epoch")
end)

test("shuffle visits every sample once per epoch, reproducibly by seed", function()
  local l = D.DataLoader(ds10(), {batch_size = 3, shuffle = true})
  torch.manual_seed(5)
  local a = collect(l)
  local seen = {}
  for _, b in ipairs(a) do for _, v in ipairs(b) do seen[#seen + 1] = v end end
  table.sort(seen)
  check_eq(seen, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  torch.manual_seed(5)
  check_eq(collect(l), a)
  check(not pcall(check_eq, collect(l), a), "the next epoch has another order")
end)

test("num_workers > 0 gives the same batches as loading in the loop", function()
  -- datasets live on the host, as in PyTorch (workers feed pinned batches to a GPU)
  local x = torch.randn(1000, 3, 4, {device = "cpu"})
  local y = torch.randint(0, 10, {1000}, {device = "cpu"})
  local ds = D.TensorDataset(x, y)
  for _, shuffle in ipairs({false, true}) do
    torch.manual_seed(11)
    local plain = {}
    for b in D.DataLoader(ds, {batch_size = 64, shuffle = shuffle}):iter() do plain[#plain + 1] = b end
    torch.manual_seed(11)
    local k = 0
    for b in D.DataLoader(ds, {batch_size = 64, shuffle = shuffle, num_workers = 2}):iter() do
      k = k + 1
      check_close(b[1], plain[k][1])
      check_eq(b[2]:totable(), plain[k][2]:totable())
    end
    check_eq(k, #plain)
  end
end)

test("a loop left early leaves no stuck workers", function()
  local ds = D.TensorDataset(torch.randn(500, 2, {device = "cpu"}))
  for _ = 1, 5 do
    for b in D.DataLoader(ds, {batch_size = 10, num_workers = 3}):iter() do
      check_eq(b[1]:size(1), 10)
      break
    end
  end
  collectgarbage()
end)

test("user datasets and default_collate of numbers, booleans, strings and tables", function()
  local Squares = D.Dataset:extend("Squares")
  function Squares:__len() return 5 end
  function Squares:__getitem(i)
    return {x = torch.tensor({i, i * i}), n = i, f = i / 2, ok = i % 2 == 0, name = "s" .. i}
  end
  local l = D.DataLoader(Squares(), {batch_size = 2})
  local b = l:iter()()
  check_eq(b.x:totable(), {{1, 1}, {2, 4}})
  check_eq(b.n.dtype, torch.int64)
  check_eq(b.n:totable(), {1, 2})
  check_eq(b.f:totable(), {0.5, 1})
  check_eq(b.ok:totable(), {false, true})
  check_eq(b.name, {"s1", "s2"})
  local custom = D.DataLoader(Squares(), {batch_size = 5, collate_fn = function(s) return #s end})
  check_eq(custom:iter()(), 5)
  check_error(function() D.Dataset():get(1) end, "__getitem is not defined")
end)

test("Subset and random_split", function()
  local ds = ds10()
  local s = D.Subset(ds, {2, 4, 6})
  check_eq(#s, 3)
  check_eq(s:get(2)[2]:item(), 4)
  torch.manual_seed(1)
  local a, b = table.unpack(D.random_split(ds, {7, 3}))
  check_eq(#a + #b, 10)
  local all = {}
  for _, part in ipairs({a, b}) do
    for i = 1, #part do all[#all + 1] = part:get(i)[2]:item() end
  end
  table.sort(all)
  check_eq(all, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  check_error(function() D.random_split(ds, {5, 3}) end, "lengths sum to 8")
end)

test("bad DataLoader options are errors", function()
  check_error(function() D.DataLoader(ds10(), {batch_size = 0}) end, "batch_size must be a positive integer")
  check_error(function() D.DataLoader(ds10(), {num_workers = -1}) end, "num_workers")
end)

test("pin_memory: batches come page-locked on a GPU machine, unchanged otherwise", function()
  check_error(function() D.DataLoader(ds10(), {pin_memory = 1}) end, "pin_memory must be true or false")
  local host = {device = "cpu"} -- (the suite may run with the default device on a GPU)
  local ds = D.TensorDataset(torch.arange(1, 11, host):double():view(10, 1), torch.arange(1, 11, host))
  for _, workers in ipairs{0, 2} do
    local plain, pinned = {}, {}
    for b in D.DataLoader(ds, {batch_size = 4, num_workers = workers}):iter() do plain[#plain + 1] = b end
    for b in D.DataLoader(ds, {batch_size = 4, num_workers = workers, pin_memory = true}):iter() do
      pinned[#pinned + 1] = b
    end
    check_eq(#pinned, #plain)
    for i = 1, #plain do
      check_eq(pinned[i][1].device.type, "cpu")
      check_eq(pinned[i][1]:is_pinned(), torch.cuda.is_available(), "pinned only where a GPU is")
      check_eq(pinned[i][1]:totable(), plain[i][1]:totable())
      check_eq(pinned[i][2]:totable(), plain[i][2]:totable())
      if torch.cuda.is_available() then -- the asynchronous copy a pinned batch allows
        local g = pinned[i][1]:to("cuda", {non_blocking = true})
        check_eq(g:cpu():totable(), plain[i][1]:totable())
      end
    end
  end
end)
