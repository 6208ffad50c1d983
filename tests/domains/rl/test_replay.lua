-- tests/domains/rl/test_replay.lua -- torch.rl.data: the segment trees
-- against brute-force Lua sums and minima; the samplers' statistics by
-- chi-square bounds at a fixed seed (prioritized: frequencies proportional
-- to (p + eps)^alpha; a wrong alpha must fail the same bound); importance
-- weights against the closed form (p_i / min p)^-beta; writers, storages,
-- slices, buffers, save/load and bad input by its message.
local D = torch.rl.data
local TensorDict = torch.rl.TensorDict
local f64 = torch.float64

local function same(a, b) check(torch.equal(a, b), "tensors differ:\n" .. tostring(a) .. "\n" .. tostring(b)) end

-- Pearson's statistic of the counts against probabilities probs (sum 1).
local function chi2(counts, probs, n)
  local s = 0
  for i = 1, #probs do
    local e = n * probs[i]
    s = s + (counts[i] - e) ^ 2 / e
  end
  return s
end

local function counts_of(index, k)
  local c = {}
  for i = 1, k do c[i] = 0 end
  for _, i in ipairs(index:totable()) do c[i] = c[i] + 1 end
  return c
end

-- the 0.999 quantiles of chi-square with df degrees of freedom
local CHI2_999 = {[3] = 16.27, [7] = 24.32, [9] = 27.88, [11] = 31.26}

---------------------------------------------------------------------------
test("sum and min segment trees match brute-force sums and minima", function()
  math.randomseed(3)
  local cap = 37
  local s, m = D.SumSegmentTree(cap), D.MinSegmentTree(cap)
  local vals, mins = {}, {} -- never-written leaves: 0 in a sum tree, +inf in a min tree
  for i = 1, cap do vals[i], mins[i] = 0, math.huge end
  for round = 1, 5 do
    local n = math.random(1, cap)
    local idx, v = {}, {}
    for k = 1, n do
      idx[k] = math.random(1, cap)
      v[k] = math.random(0, 20) + 0.0 -- integers (some 0): every sum exact, boundaries testable
    end
    for k = 1, n do vals[idx[k]], mins[idx[k]] = v[k], v[k] end -- later writes win, as in the tree
    s:update(torch.tensor(idx), torch.tensor(v, {dtype = f64}))
    m:update(torch.tensor(idx), torch.tensor(v, {dtype = f64}))
    for lo = 1, cap, 3 do
      for hi = lo, cap, 4 do
        local bs, bm = 0, math.huge
        for i = lo, hi do bs = bs + vals[i]; bm = math.min(bm, mins[i]) end
        check(s:query(lo, hi) == bs, ("round %d: sum %d..%d"):format(round, lo, hi))
        check(m:query(lo, hi) == bm, ("round %d: min %d..%d"):format(round, lo, hi))
      end
    end
  end
  same(s:values(), torch.tensor(vals, {dtype = f64}))
  same(s:get(torch.tensor({1, 37})), torch.tensor({vals[1], vals[37]}, {dtype = f64}))
  -- prefix search: the first i whose prefix sum exceeds the mass
  local total = s:query()
  local masses = {0, total * 0.25, total * 0.5, total - 0.5}
  local acc = 0
  for i = 1, cap - 1 do acc = acc + vals[i]; masses[#masses + 1] = acc; masses[#masses + 1] = acc + 0.5 end
  local got = s:scan_lower_bound(torch.tensor(masses, {dtype = f64})):totable()
  for k, mass in ipairs(masses) do
    local run, want = 0, cap
    for i = 1, cap do
      run = run + vals[i]
      if run > mass then want = i; break end
    end
    check_eq(got[k], want, "scan_lower_bound of " .. mass)
  end
  check_eq(#s, cap)
  check(tostring(s) == "SumSegmentTree(capacity=37)", tostring(s))
end)

test("scan_lower_bound agrees with a linear search at every capacity", function()
  math.randomseed(17)
  for _, cap in ipairs({1, 3, 7, 8, 9, 64, 100}) do
    local s = D.SumSegmentTree(cap)
    local vals = {}
    for i = 1, cap do vals[i] = math.random(0, 4) + 0.0 end
    vals[math.random(1, cap)] = 1.0 -- at least one positive leaf
    s:update(torch.arange(1, cap + 1), torch.tensor(vals, {dtype = f64}))
    local total, masses = 0, {}
    for i = 1, cap do total = total + vals[i] end
    for m = 0, total * 2 - 1 do masses[#masses + 1] = m / 2 end -- every boundary and midpoint
    local got = s:scan_lower_bound(torch.tensor(masses, {dtype = f64})):totable()
    for k, mass in ipairs(masses) do
      local run, want = 0, cap
      for i = 1, cap do
        run = run + vals[i]
        if run > mass then want = i; break end
      end
      check_eq(got[k], want, ("capacity %d, mass %g"):format(cap, mass))
    end
    -- scale and limit: uniforms times the sum, clamped to the first leaves
    local u = s:scan_lower_bound(torch.tensor({0.0, 0.999999}, {dtype = f64}), total, math.max(1, cap - 1)):totable()
    check(u[2] <= math.max(1, cap - 1), "limit clamps")
  end
end)

test("segment tree errors name the tree and the values", function()
  local s = D.SumSegmentTree(4)
  check_error(function() s:update(torch.tensor({5}), torch.tensor({1.0}, {dtype = f64})) end,
    "SumSegmentTree.update: index 5 is out of range 1..4")
  check_error(function() s:update(torch.tensor({1}), torch.tensor({0 / 0}, {dtype = f64})) end, "SumSegmentTree.update: value")
  check_error(function() s:update(torch.tensor({1}), torch.tensor({-1.0}, {dtype = f64})) end, "finite and non-negative")
  check_error(function() s:update(torch.tensor({1, 2}), torch.tensor({1.0, 2, 3}, {dtype = f64})) end, "2 indices but 3 values")
  check_error(function() s:query(0, 2) end, "range 0..2 is outside 1..4")
  check_error(function() D.MinSegmentTree(4):scan_lower_bound(torch.zeros(1, {dtype = f64})) end, "needs a sum tree")
  check_error(function() D.SumSegmentTree(0) end, "capacity must be between 1")
end)

---------------------------------------------------------------------------
local function storage_of(n) return {len = function() return n end} end

test("PrioritizedSampler draws entries in proportion to (p + eps)^alpha", function()
  torch.manual_seed(11)
  local pr = {0.5, 1, 2, 4, 8, 0.25, 3, 6}
  local alpha, eps = 0.7, 1e-8
  local ps = D.PrioritizedSampler(8, alpha, 0.5, eps)
  ps:update_priority(torch.arange(1, 9), torch.tensor(pr))
  local probs, z = {}, 0
  for i = 1, 8 do probs[i] = (pr[i] + eps) ^ alpha; z = z + probs[i] end
  for i = 1, 8 do probs[i] = probs[i] / z end
  local n = 200000
  local index = ps:sample(storage_of(8), n)
  local c = counts_of(index, 8)
  local x2 = chi2(c, probs, n)
  check(x2 < CHI2_999[7], ("chi-square %.2f above the 0.999 bound %.2f"):format(x2, CHI2_999[7]))
  -- the same bound rejects the frequencies of another alpha (the test has power)
  local wrong, zw = {}, 0
  for i = 1, 8 do wrong[i] = pr[i]; zw = zw + pr[i] end
  for i = 1, 8 do wrong[i] = wrong[i] / zw end
  check(chi2(c, wrong, n) > CHI2_999[7] * 10, "alpha = 1 frequencies are rejected")
  -- only stored entries are drawn: a buffer of 5 of the 8 slots
  local i5 = ps:sample(storage_of(5), 20000)
  check(i5:max():item() <= 5 and i5:min():item() >= 1, "indices within the stored entries")
  local c5, p5, z5 = counts_of(i5, 5), {}, 0
  for i = 1, 5 do p5[i] = probs[i]; z5 = z5 + probs[i] end
  for i = 1, 5 do p5[i] = p5[i] / z5 end
  check(chi2(c5, p5, 20000) < 18.47, "chi-square over 5 stored entries") -- df 4
end)

test("importance weights equal (p_i / min p)^-beta, as TorchRL computes them", function()
  torch.manual_seed(5)
  local pr = {0.3, 2.5, 1.0, 7.0, 0.9, 4.0}
  local alpha, beta, eps = 0.6, 0.4, 1e-6
  local ps = D.PrioritizedSampler(10, alpha, beta, eps)
  ps:update_priority(torch.arange(1, 7), torch.tensor(pr, {dtype = f64}))
  local index, info = ps:sample(storage_of(6), 64)
  local pmin = math.huge
  for i = 1, 6 do pmin = math.min(pmin, (pr[i] + eps) ^ alpha) end
  local want = {}
  for k, i in ipairs(index:totable()) do want[k] = ((pr[i] + eps) ^ alpha / pmin) ^ (-beta) end
  check(info._weight.dtype == torch.float32, "float32 weights")
  check_close(info._weight, want, {rtol = 1e-6, atol = 0})
  -- the entry of least priority has weight 1, the others less
  check(info._weight:max():item() <= 1 + 1e-6, "weights at most 1")
end)

test("new entries get (max priority + eps)^alpha; update_priority raises the max", function()
  local alpha, eps = 0.5, 1e-8
  local rb = D.PrioritizedReplayBuffer({alpha = alpha, beta = 1, storage = D.LazyTensorStorage(10)})
  rb:extend(torch.randn(4, 2))
  local s = rb._sampler
  check_close(s._sum:get(torch.arange(1, 5)), {1, 1, 1, 1}, {rtol = 1e-7}) -- (1 + eps)^0.5
  rb:update_priority(torch.tensor({2}), 9.0)
  check_close(s._sum:get(torch.tensor({2})), {(9 + eps) ^ alpha}, {rtol = 1e-12})
  rb:add(torch.randn(2))
  check_close(s._sum:get(torch.tensor({5})), {(9 + eps) ^ alpha}, {rtol = 1e-12})
  check_close(s._min:query(1, 5), (1 + eps) ^ alpha, {rtol = 1e-12})
end)

test("update_priority rejects NaN, negative, misplaced and mismatched priorities", function()
  local rb = D.TensorDictPrioritizedReplayBuffer({alpha = 0.7, beta = 0.5, storage = D.LazyTensorStorage(8)})
  rb:extend(TensorDict({x = torch.randn(4, 2)}, {4}))
  check_error(function() rb:update_priority(torch.tensor({1, 2}), torch.tensor({1, 0 / 0})) end,
    "PrioritizedSampler.update_priority: priority nan at position 2; priorities must be non-negative")
  check_error(function() rb:update_priority(torch.tensor({1, 2, 3}), torch.tensor({1, 2, -0.5})) end,
    "priority -0.5 at position 3")
  check_error(function() rb:update_priority(torch.tensor({9}), 1.0) end, "index 9 is out of range 1..8")
  check_error(function() rb:update_priority(torch.tensor({1, 2}), torch.tensor({1, 2, 3})) end,
    "2 indices but 3 priorities")
  check_error(function() rb:update_priority(torch.tensor({1}), math.huge) end, "priorities must be finite")
  check_error(function() D.ReplayBuffer():update_priority(1, 1) end, "the sampler RandomSampler has no priorities")
  check_error(function() D.PrioritizedSampler(0, 0.5, 0.5) end, "max_capacity must be a positive integer")
  check_error(function() D.PrioritizedReplayBuffer({beta = 0.5}) end, "alpha and beta are required")
end)

---------------------------------------------------------------------------
test("RandomSampler is uniform over the stored entries", function()
  torch.manual_seed(2)
  local n = 100000
  local index = D.RandomSampler():sample(storage_of(10), n)
  local p = {}
  for i = 1, 10 do p[i] = 0.1 end
  local x2 = chi2(counts_of(index, 10), p, n)
  check(x2 < CHI2_999[9], ("chi-square %.2f"):format(x2))
  check(index.dtype == torch.int64 and index:min():item() >= 1 and index:max():item() <= 10, "1-based int64")
end)

test("SamplerWithoutReplacement returns every entry once per epoch", function()
  torch.manual_seed(4)
  local s = D.SamplerWithoutReplacement()
  local st = storage_of(10)
  local seen = {}
  for _ = 1, 3 do
    for _, i in ipairs(s:sample(st, 3):totable()) do seen[i] = (seen[i] or 0) + 1 end
  end
  check(not s.ran_out, "one entry left")
  local last = s:sample(st, 3)
  check_eq(last:numel(), 1) -- the rest of the epoch, no drop_last
  seen[last[1]:item()] = (seen[last[1]:item()] or 0) + 1
  check(s.ran_out, "ran_out after the epoch")
  for i = 1, 10 do check_eq(seen[i], 1, "entry " .. i) end
  local dl = D.SamplerWithoutReplacement({drop_last = true})
  local got = {}
  for _ = 1, 3 do for _, i in ipairs(dl:sample(st, 3):totable()) do got[#got + 1] = i end end
  check(dl.ran_out, "drop_last: ran out with 1 left")
  local again = dl:sample(st, 3)
  check_eq(again:numel(), 3)
  table.sort(got)
  for k = 2, #got do check(got[k] ~= got[k - 1], "no repeats within an epoch") end
  local ordered = D.SamplerWithoutReplacement({shuffle = false})
  same(ordered:sample(st, 4), torch.tensor({1, 2, 3, 4}))
  check_error(function() s:sample(st, 11) end,
    "batch_size 11 is larger than the 10 entries in the buffer (sampling without replacement)")
  check_error(function() s:sample(storage_of(0), 1) end, "the buffer is empty")
  check_error(function() D.SamplerWithoutReplacement({droplast = true}) end, "drop_last")
end)

---------------------------------------------------------------------------
test("RoundRobinWriter wraps around and keeps the newest rows", function()
  local rb = D.ReplayBuffer({storage = D.LazyTensorStorage(5)})
  same(rb:extend(torch.arange(1, 4):float()), torch.tensor({1, 2, 3}))
  same(rb:extend(torch.arange(4, 8):float()), torch.tensor({4, 5, 1, 2}))
  check_eq(#rb, 5)
  same(rb._storage._data, torch.tensor({6, 7, 3, 4, 5}):float())
  check_eq(rb:add(torch.tensor(8.0)), 3)
  same(rb._storage._data, torch.tensor({6, 7, 8, 4, 5}):float())
  rb:extend(torch.arange(100, 112):float()) -- more rows than max_size: the last 5 stay
  local d = rb._storage._data:totable()
  table.sort(d)
  check_eq(d, {107, 108, 109, 110, 111})
  check_eq(rb._writer._cursor, (3 + 12) % 5 + 1)
end)

test("LazyTensorStorage allocates from the first batch and keeps dtypes and nesting", function()
  local st = D.LazyTensorStorage(6)
  check(st._data == nil, "nothing allocated before the first write")
  local rb = D.TensorDictReplayBuffer({storage = st, batch_size = 4})
  local td = TensorDict({obs = torch.randn(3, 2, 2), a = torch.tensor({1, 2, 3}),
                         next = {done = torch.tensor({{false}, {true}, {false}})}}, {3})
  rb:extend(td)
  check_shape(st._data.obs, {6, 2, 2})
  check(st._data.a.dtype == torch.int64 and st._data.next.done.dtype == torch.bool, "dtypes kept")
  same(st._data.obs:narrow(1, 1, 3), td.obs)
  torch.manual_seed(1)
  local s = rb:sample()
  check_eq(s.batch_size[1], 4)
  local idx = s:get("index")
  same(s.obs, td.obs:index_select(1, idx))
  same(s.next.done, td.next.done:index_select(1, idx))
  check_error(function() rb:extend(torch.zeros(2)) end, "expected a TensorDict, got a tensor")
  local ts = D.ReplayBuffer({storage = D.LazyTensorStorage(4)})
  ts:add(torch.ones(3))
  check_error(function() ts:extend(TensorDict({x = torch.zeros(2)}, {2})) end, "this storage holds tensors")
end)

test("LazyTensorStorage on CUDA keeps rows on the device", function()
  if not torch.cuda.is_available() then return end
  local rb = D.TensorDictReplayBuffer({storage = D.LazyTensorStorage(8, {device = "cuda"}), batch_size = 3})
  local td = TensorDict({x = torch.arange(1, 6):float()}, {5})
  rb:extend(td)
  local s = rb:sample()
  check(tostring(s.x.device):match("^cuda"), "sampled on cuda")
  same(s.x:cpu(), td.x:index_select(1, s:get("index"):cpu()))
  check_eq(rb:add(TensorDict({x = torch.tensor(9.0)}, {})), 6)
  check_eq(rb._storage._data.x[6]:item(), 9)
  local pr = D.TensorDictPrioritizedReplayBuffer({alpha = 0.5, beta = 0.5, storage = D.LazyTensorStorage(8, {device = "cuda"})})
  pr:extend(td)
  local ps = pr:sample(4)
  check(tostring(ps._weight.device):match("^cuda"), "weights on the storage's device")
end)

test("ListStorage keeps any values and collates tensors and TensorDicts", function()
  torch.manual_seed(3)
  local rb = D.ReplayBuffer({batch_size = 5})
  for i = 1, 4 do rb:add(torch.full({2}, i)) end
  local b = rb:sample()
  check_shape(b, {5, 2})
  local rs = D.ReplayBuffer({storage = D.ListStorage(3)})
  rs:extend({"a", "b", "c", "d"})
  check_eq(#rs, 3)
  local got = rs:sample(6)
  for _, v in ipairs(got) do check(v == "b" or v == "c" or v == "d", "oldest overwritten: " .. v) end
  local rt = D.TensorDictReplayBuffer()
  rt:add(TensorDict({x = torch.ones(2)}, {}))
  rt:add(TensorDict({x = torch.zeros(2)}, {}))
  local s = rt:sample(3)
  check_eq(s.batch_size[1], 3)
  check_shape(s.x, {3, 2})
end)

---------------------------------------------------------------------------
test("SliceSampler returns contiguous slices inside one trajectory", function()
  torch.manual_seed(9)
  local ep = torch.tensor({1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4})
  local n = ep:numel()
  local rb = D.TensorDictReplayBuffer({storage = D.LazyTensorStorage(20),
                                       sampler = D.SliceSampler({num_slices = 4, traj_key = "episode"})})
  rb:extend(TensorDict({episode = ep, step = torch.arange(1, n + 1)}, {n}))
  for _ = 1, 20 do
    local s = rb:sample(12)
    local e, st = s.episode:view(4, 3), s.step:view(4, 3)
    for r = 1, 4 do
      check(e[r]:eq(e[r][1]):all():item(), "one trajectory per slice")
      check_eq((st[r] - st[r][1]):totable(), {0, 1, 2})
      check(e[r][1]:item() ~= 4, "episode 4 (2 steps) is too short")
    end
  end
  -- trajectories ended by ("next", "done")
  local done = torch.zeros(n, 1, {dtype = torch.bool})
  done[3] = true; done[9] = true
  local rd = D.TensorDictReplayBuffer({storage = D.LazyTensorStorage(20), sampler = D.SliceSampler({slice_len = 5})})
  rd:extend(TensorDict({step = torch.arange(1, n + 1), next = {done = done}}, {n}))
  for _ = 1, 20 do
    local st = rd:sample(10).step:view(2, 5)
    for r = 1, 2 do
      local a = st[r][1]:item()
      check(a >= 4 and a + 4 <= 9 or a >= 10 and a + 4 <= 14, "slice within 4..9 or 10..14, got " .. a)
    end
  end
  check_error(function() rd:sample(12) end, "batch_size 12 is not a multiple of slice_len 5")
  local long = D.TensorDictReplayBuffer({storage = D.LazyTensorStorage(20), sampler = D.SliceSampler({slice_len = 7})})
  long:extend(TensorDict({step = torch.arange(1, n + 1), next = {done = done}}, {n}))
  check_error(function() long:sample(7) end, "no stored trajectory has 7 steps (the longest has 6)")
  check_error(function() D.SliceSampler({num_slices = 2, slice_len = 3}) end, "exactly one of num_slices and slice_len")
  -- a full ring buffer: the newest row (4) and the oldest (5) are not consecutive steps
  local ring = D.TensorDictReplayBuffer({storage = D.LazyTensorStorage(10), sampler = D.SliceSampler({slice_len = 5})})
  ring:extend(TensorDict({step = torch.arange(1, 15), next = {done = torch.zeros(14, 1, {dtype = torch.bool})}}, {14}))
  for _ = 1, 20 do
    local st = ring:sample(10).step:view(2, 5)
    for r = 1, 2 do
      check_eq((st[r] - st[r][1]):totable(), {0, 1, 2, 3, 4}, "consecutive steps across the ring")
    end
  end
end)

---------------------------------------------------------------------------
test("buffers: empty, batch_size and sample errors name the buffer", function()
  check_error(function() D.ReplayBuffer():sample(4) end, "ReplayBuffer.sample: the buffer is empty")
  local rb = D.ReplayBuffer()
  rb:add(torch.ones(1))
  check_error(function() rb:sample() end, "ReplayBuffer.sample: no batch_size")
  check_error(function() D.ReplayBuffer({batchsize = 3}) end, "batch_size")
  check_error(function() D.TensorDictPrioritizedReplayBuffer({alpha = 0.5, beta = 0.5}):sample(2) end,
    "TensorDictPrioritizedReplayBuffer.sample: the buffer is empty")
  check_error(function() D.LazyTensorStorage(0) end, "max_size must be a positive integer")
  check_error(function() D.ReplayBuffer({storage = D.LazyTensorStorage(3)}):extend(5) end,
    "expected a tensor, a TensorDict or a list")
  rb:empty()
  check_eq(#rb, 0)
end)

test("TensorDictPrioritizedReplayBuffer: index and _weight keys, td_error priorities", function()
  torch.manual_seed(21)
  local rb = D.TensorDictPrioritizedReplayBuffer({alpha = 1.0, beta = 1.0, storage = D.LazyTensorStorage(4), eps = 0})
  rb:extend(TensorDict({x = torch.arange(1, 5):float()}, {4}))
  local s = rb:sample(8)
  check(s:get("index").dtype == torch.int64 and s._weight:numel() == 8, "index and _weight keys")
  s:set("td_error", torch.zeros(8))
  -- make entry 3 the only one with priority: all draws become 3
  local td = TensorDict({index = torch.tensor({1, 2, 3, 4}), td_error = torch.tensor({0, 0, 5, 0})}, {4})
  rb:update_tensordict_priority(td)
  check_error(function() rb:sample(4) end, "they must be positive") -- min priority 0: weights undefined
  rb:update_priority(torch.tensor({1, 2, 4}), torch.tensor({1e-12, 1e-12, 1e-12}))
  local t = rb:sample(200, {return_info = true})
  local c = counts_of(t:get("index"), 4)
  check(c[3] >= 199, "priority mass on entry 3: " .. c[3])
  -- extend with td_error sets the new rows' priorities
  local r2 = D.TensorDictPrioritizedReplayBuffer({alpha = 1.0, beta = 0.5, storage = D.LazyTensorStorage(4)})
  r2:extend(TensorDict({x = torch.zeros(2), td_error = torch.tensor({2.0, 3.0})}, {2}))
  check_close(r2._sampler._sum:get(torch.tensor({1, 2})), {2.0, 3.0}, {rtol = 1e-6})
end)

test("dumps and loads restore storage, writer and sampler", function()
  torch.manual_seed(8)
  local function make()
    return D.TensorDictPrioritizedReplayBuffer({alpha = 0.7, beta = 0.4, storage = D.LazyTensorStorage(16)})
  end
  local rb = make()
  rb:extend(TensorDict({obs = torch.randn(10, 3), next = {obs = torch.randn(10, 3)}}, {10}))
  rb:update_priority(torch.arange(1, 11), torch.rand(10) * 3)
  local path = os.tmpname()
  rb:dumps(path)
  local r2 = make()
  r2:loads(path)
  os.remove(path)
  check_eq(#r2, 10)
  check_eq(r2._writer._cursor, 11)
  same(r2._storage._data.next.obs, rb._storage._data.next.obs)
  same(r2._sampler._sum:values(), rb._sampler._sum:values())
  torch.manual_seed(99)
  local a = rb:sample(32)
  torch.manual_seed(99)
  local b = r2:sample(32)
  same(a:get("index"), b:get("index"))
  same(a._weight, b._weight)
  same(a.obs, b.obs)
  -- a plain ReplayBuffer of a ListStorage
  local lb = D.ReplayBuffer({storage = D.ListStorage(5)})
  lb:extend({1, 2, 3})
  local p2 = os.tmpname()
  lb:dumps(p2)
  local lb2 = D.ReplayBuffer({storage = D.ListStorage(5)})
  lb2:loads(p2)
  os.remove(p2)
  check_eq(#lb2, 3)
  check_eq(lb2._storage._items, {1, 2, 3})
end)

test("LazyMemmapStorage keeps rows in files under scratch_dir", function()
  local dir = os.tmpname()
  os.remove(dir)
  check(os.execute("mkdir -p '" .. dir .. "'"), "scratch dir")
  local rb = D.TensorDictReplayBuffer({storage = D.LazyMemmapStorage(6, {scratch_dir = dir}), batch_size = 3})
  local td = TensorDict({obs = torch.randn(4, 2), next = {done = torch.tensor({{true}, {false}, {true}, {false}})}}, {4})
  rb:extend(td)
  -- the file holds the rows: read it back as raw float32 bytes
  local f = assert(io.open(dir .. "/obs.memmap", "rb"))
  local bytes = f:read("a")
  f:close()
  check_eq(#bytes, 6 * 2 * 4)
  local first = string.unpack("<f", bytes, 1)
  check_close(first, td.obs[1][1]:item(), {rtol = 0, atol = 0})
  check(io.open(dir .. "/next.done.memmap", "rb") ~= nil, "nested keys become dotted file names")
  local s = rb:sample()
  same(s.obs, td.obs:index_select(1, s:get("index")))
  -- a state dict loads back into files
  local path = os.tmpname()
  rb:dumps(path)
  local r2 = D.TensorDictReplayBuffer({storage = D.LazyMemmapStorage(6)})
  r2:loads(path)
  same(r2._storage._data.obs:narrow(1, 1, 4), td.obs)
  check_error(function() D.TensorDictReplayBuffer({storage = D.LazyMemmapStorage(5)}):loads(path) end,
    "LazyMemmapStorage.load_state_dict: the saved storage holds 6 rows, this one max_size 5")
  os.remove(path)
  check_error(function() D.LazyMemmapStorage(4, {device = "cuda"}) end, "device cuda is not supported")
  os.execute("rm -rf '" .. dir .. "'")
end)
