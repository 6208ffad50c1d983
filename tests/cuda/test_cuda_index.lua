-- tests/cuda/test_cuda_index.lua -- indexing, the index ops and the movement
-- ops on CUDA (tensor/cuda/offsets.c, masks.c; shape ops through copies of
-- views) against the same calls on the CPU, in several dtypes, on strided
-- inputs, with bad input and through autograd. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU indexing tests skipped\n")
  return
end
torch.set_default_device("cpu") -- references are made on the CPU, copies sent up

local dtypes = {torch.float32, torch.float64, torch.float16, torch.int64, torch.bool}

local function rand(shape, dt)
  if dt == torch.bool then return torch.rand(shape):gt(0.5) end
  if dt == torch.int64 then return torch.randint(-50, 50, shape) end
  return torch.randn(shape):to(dt)
end

-- Compares a CUDA result (tensor or list of tensors) with the CPU's.
local function same(g, c, what)
  if type(c) == "table" and not torch.is_tensor(c) then
    check_eq(#g, #c, what .. ": count")
    for i = 1, #c do same(g[i], c[i], what .. "[" .. i .. "]") end
    return
  end
  check(g.is_cuda, what .. ": the result stays on cuda")
  check_eq(g.dtype, c.dtype, what .. ": dtype")
  check_eq(g:size(), c:size(), what .. ": shape")
  if c.dtype == torch.bool then
    check_eq(g:cpu():totable(), c:totable(), what)
  else -- atomic adds may sum in another order
    local tol = (c.dtype == torch.float16 or c.dtype == torch.bfloat16) and 1e-2 or 1e-5
    local ok, err = pcall(check_close, g:cpu():double(), c:double(), {atol = tol, rtol = tol})
    if not ok then error(what .. ": " .. tostring(err), 2) end
  end
end

-- Runs fn on CPU arguments and on copies of them on cuda; compares.
local function both(what, fn, ...)
  local args, gargs = {...}, {}
  for i, a in ipairs(args) do gargs[i] = torch.is_tensor(a) and a:cuda() or a end
  local c = fn(table.unpack(args))
  local g = fn(table.unpack(gargs))
  same(g, c, what)
  return g, c
end

test("basic indexing gives views on cuda, as on the CPU", function()
  torch.manual_seed(1)
  for _, dt in ipairs(dtypes) do
    local x = rand({4, 5, 6}, dt)
    local xs = x:transpose(1, 3) -- strided
    for _, key in ipairs{2, -1, {2}, {{2, 3}}, {{}, {1, -1, 2}}, {"...", 3}, {-2, {2, 4}, {1, 6, 3}}, {{4, 1}}} do
      both("x[key] " .. tostring(dt), function(t) return t[key] end, x)
      both("xs[key] " .. tostring(dt), function(t) return t[key] end, xs)
    end
    local g = x:cuda()
    local v = g[{{}, 2}]
    check(v.is_cuda and not v:is_contiguous(), "a strided view")
  end
  local g = torch.zeros(3, 4):cuda()
  local row = g[2]
  row:fill_(7)
  check_eq(g:cpu()[2]:sum():item(), 28, "writing through a view reaches the base")
end)

test("assignment through basic keys on cuda", function()
  for _, dt in ipairs(dtypes) do
    local x = rand({4, 5}, dt)
    local v = rand({5}, dt)
    local function set(t, val)
      local y = t:clone()
      y[2] = 1
      y[{{}, {2, 3}}] = 0
      y[{{3, 4}}] = val
      y[{-1, -1}] = 1
      return y
    end
    both("x[key] = v " .. tostring(dt), set, x, v)
  end
end)

test("advanced indexing: int64 keys, masks, negative indices, mixed keys", function()
  torch.manual_seed(2)
  for _, dt in ipairs(dtypes) do
    local x = rand({5, 6, 4}, dt)
    local i1 = torch.tensor({3, 1, -1, 3})
    local i2 = torch.tensor({{2, 6}, {-6, 1}})
    local m = torch.rand(5, 6):gt(0.4)
    local what = tostring(dt)
    both("x[i1] " .. what, function(t, i) return t[i] end, x, i1)
    both("x[{i1, i1}] " .. what, function(t, i) return t[{i, i}] end, x, i1)
    both("x[{{}, i2}] " .. what, function(t, i) return t[{{}, i}] end, x, i2)
    both("x[{i1, {}, i1}] " .. what, function(t, i) return t[{i, {}, i}] end, x, i1)
    both("x[{{2, 4}, i1}] " .. what, function(t, i) return t[{{2, 4}, torch.tensor({1, 2})}] end, x, i1)
    both("x[m] " .. what, function(t, mm) return t[mm] end, x, m)
    both("xt[m] " .. what, function(t, mm) return t:transpose(1, 2)[mm:t()] end, x, m)
    both("x[full mask] " .. what, function(t) return t[t:ne(0)] end, x)
    both("x[i] = v " .. what, function(t, i)
      local y = t:clone()
      y[{i}] = y[{torch.tensor({1, 2, 3, 4})}]
      return y
    end, x, torch.tensor({2, 4, 5, 1}))
    both("x[m] = 1 " .. what, function(t, mm)
      local y = t:clone()
      y[mm] = 1
      return y
    end, x, m)
    both("x[{true}] " .. what, function(t) return t[torch.tensor(true)] end, x)
  end
  -- a host index used on a cuda tensor moves to the device
  local x = torch.arange(10):cuda()
  same(x[torch.tensor({3, 1})], torch.tensor({3, 1}) - 1, "host key")
end)

test("index_select, index_fill, index_copy, index_add, index_put, take, put in five dtypes", function()
  torch.manual_seed(3)
  for _, dt in ipairs(dtypes) do
    local w = tostring(dt)
    local x = rand({4, 5}, dt)
    local idx = torch.tensor({3, 1, 3, 4})
    local uidx = torch.tensor({4, 2})
    both("index_select d1 " .. w, function(t, i) return t:index_select(1, i) end, x, idx)
    both("index_select d2 strided " .. w, function(t, i) return t:t():index_select(2, i) end, x, idx)
    both("index_fill " .. w, function(t, i) return t:index_fill(2, i, 1) end, x, uidx)
    local src = rand({4, 2}, dt)
    both("index_copy " .. w, function(t, i, s) return t:index_copy(2, i, s) end, x, uidx, src)
    if dt ~= torch.bool then
      local src4 = rand({4, 5}, dt)
      both("index_add dup " .. w, function(t, i, s) return t:index_add(1, i, s) end, x, idx, src4)
      if dt ~= torch.float16 then
        both("index_add alpha " .. w, function(t, i, s) return t:index_add(1, i, s, {alpha = 2}) end, x,
             torch.tensor({3, 1, 2, 4}), src4)
      end
    end
    both("take " .. w, function(t, i) return t:t():take(i) end, x, torch.tensor({{1, -1}, {7, 20}}))
    both("put_ " .. w, function(t, i, s)
      local y = t:clone()
      return y:put_(i, s)
    end, x, torch.tensor({1, 20, 7}), rand({3}, dt))
    if dt == torch.int64 or dt == torch.float64 then
      both("put_ accumulate dup " .. w, function(t, i, s) return t:clone():put_(i, s, true) end, x,
           torch.tensor({2, 2, 5, 2}), rand({4}, dt))
      both("index_put accumulate dup " .. w, function(t, i, s)
        return t:index_put({i}, s, true)
      end, x, torch.tensor({2, 2, 4}), rand({3, 5}, dt))
    end
    both("index_put " .. w, function(t, i) return t:index_put({i, i}, torch.ones(2, {dtype = t.dtype,
         device = t.device})) end, x, uidx)
  end
end)

test("plain scatters keep the last write of repeated indices; products and narrow dtypes accumulate", function()
  torch.manual_seed(7)
  local all = {torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16,
               torch.int8, torch.uint8, torch.bool}
  for _, dt in ipairs(all) do
    local w = tostring(dt)
    local x = rand({4, 6}, dt == torch.bfloat16 and torch.float32 or dt):to(dt)
    local idx = torch.tensor({{2, 2, 5}, {1, 1, 1}})
    local src = rand({2, 3}, dt == torch.bfloat16 and torch.float32 or dt):to(dt)
    both("scatter dup " .. w, function(t, i, s) return t:scatter(2, i, s) end, x, idx, src)
    both("scatter value dup " .. w, function(t, i) return t:scatter(2, i, 1) end, x, idx)
    if dt ~= torch.bool then
      both("scatter_add " .. w, function(t, i, s) return t:scatter_add(2, i, s) end, x, idx, src)
      both("scatter multiply " .. w, function(t, i, s) return t:scatter(2, i, s, {reduce = "multiply"}) end, x, idx,
           src)
    end
    both("index_copy dup " .. w, function(t, i, s) return t:index_copy(1, i, s) end, x, torch.tensor({3, 1, 3}),
         rand({3, 6}, dt == torch.bfloat16 and torch.float32 or dt):to(dt))
    both("index_put dup " .. w, function(t, i, s) return t:index_put({i}, s) end, x, torch.tensor({4, 2, 4, 4}),
         rand({4, 6}, dt == torch.bfloat16 and torch.float32 or dt):to(dt))
    both("put_ dup " .. w, function(t, i, s) return t:clone():put_(i, s) end, x, torch.tensor({7, 3, 7}),
         rand({3}, dt == torch.bfloat16 and torch.float32 or dt):to(dt))
  end
  -- a view of a larger tensor, transposed
  local big = torch.randn(6, 8)
  both("scatter into a strided view", function(t, i, s)
    local y = t:clone()
    y:narrow(1, 2, 4):t():scatter_(1, i, s)
    return y
  end, big, torch.tensor({{4, 1, 4}}), torch.randn(1, 3))
end)

test("masks: masked_fill, masked_select, masked_scatter, nonzero, argwhere, where", function()
  torch.manual_seed(4)
  for _, dt in ipairs(dtypes) do
    local w = tostring(dt)
    local x = rand({6, 7}, dt)
    local m = torch.rand(6, 7):gt(0.5)
    local mr = torch.rand(7):gt(0.5) -- broadcast over rows
    both("masked_fill " .. w, function(t, mm) return t:masked_fill(mm, 1) end, x, m)
    both("masked_fill broadcast strided " .. w, function(t, mm) return t:t():masked_fill(mm:view(7, 1), 0) end, x, mr)
    both("masked_fill_ " .. w, function(t, mm) return t:clone():masked_fill_(mm, 0) end, x, m)
    both("masked_select " .. w, function(t, mm) return t:masked_select(mm) end, x, m)
    both("masked_select broadcast " .. w, function(t, mm) return t:masked_select(mm) end, x, mr)
    both("masked_scatter " .. w, function(t, mm, s) return t:masked_scatter(mm, s) end, x, m, rand({50}, dt))
    both("nonzero " .. w, function(t) return t:nonzero() end, x)
    both("nonzero strided " .. w, function(t) return t:t():nonzero() end, x)
    both("argwhere " .. w, function(t) return torch.argwhere(t) end, x)
    both("where " .. w, function(mm, a, b) return torch.where(mm, a, b) end, m, x, rand({7}, dt))
    both("where number " .. w, function(mm, a) return torch.where(mm, a, 0) end, m, x)
  end
  both("nonzero 0-dim", function(t) return t:nonzero() end, torch.tensor(3.0))
  both("nonzero 1-D", function(t) return t:nonzero() end, torch.tensor({0, 1, 0, 2}))
  -- many chunks: order kept across blocks
  local big = torch.rand(3000, 1100):gt(0.7)
  local vals = torch.randn(3000, 1100)
  both("masked_select big", function(t, mm) return t:masked_select(mm) end, vals, big)
  both("nonzero big", function(t) return t:nonzero() end, big)
  both("masked_scatter big", function(t, mm, s) return t:masked_scatter(mm, s) end, vals, big, torch.randn(3300000))
  both("empty mask", function(t, mm) return t:masked_select(mm) end, vals, torch.zeros(3000, 1100, {dtype = torch.bool}))
end)

test("movement ops: cat, stack, repeat, tile, roll, rot90, flip, tril, triu, diag, unfold, split", function()
  torch.manual_seed(5)
  for _, dt in ipairs(dtypes) do
    local w = tostring(dt)
    local a, b = rand({3, 4}, dt), rand({3, 4}, dt)
    local at = rand({4, 3}, dt):t()
    both("cat " .. w, function(p, q) return torch.cat({p, q}, 2) end, a, at)
    both("stack " .. w, function(p, q) return torch.stack({p, q}, 2) end, a, b)
    both("hstack " .. w, function(p, q) return torch.hstack({p, q}) end, a, b)
    both("vstack " .. w, function(p, q) return torch.vstack({p, q}) end, a, b)
    both("dstack " .. w, function(p, q) return torch.dstack({p, q}) end, a, b)
    both("repeat " .. w, function(p) return p["repeat"](p, 2, 1, 3) end, at)
    both("tile " .. w, function(p) return p:tile({2}) end, a)
    both("roll " .. w, function(p) return p:roll({1, -2}, {1, 2}) end, at)
    both("roll flat " .. w, function(p) return p:roll(5) end, a)
    both("rot90 " .. w, function(p) return p:rot90(1, {1, 2}) end, a)
    both("flip " .. w, function(p) return p:flip({1, 2}) end, at)
    both("tril " .. w, function(p) return p:tril(-1) end, at)
    both("triu " .. w, function(p) return p:triu(1) end, a)
    both("tril_ batched " .. w, function(p, q) return torch.stack({p, q}):clone():tril_(1) end, a, b)
    both("triu out= " .. w, function(p) return torch.triu(p, -1, {out = torch.empty(3, 4, {dtype = torch.float64,
         device = p.device})}) end, a)
    both("diag " .. w, function(p) return torch.diag(p, 1) end, a)
    both("diag 1-D " .. w, function(p) return torch.diag(p[1], -1) end, a)
    both("diag_embed " .. w, function(p) return torch.diag_embed(p) end, a)
    both("unfold " .. w, function(p) return p:unfold(2, 2, 1):contiguous() end, a)
    both("split " .. w, function(p) return p:split(2, 2) end, a)
    both("chunk " .. w, function(p) return torch.chunk(p, 2, 1) end, a)
  end
end)

test("autograd through index ops on cuda matches the CPU", function()
  torch.manual_seed(6)
  local function grads(fn, ...)
    local args = {...}
    local gx = {}
    for i, a in ipairs(args) do gx[i] = a:detach():cuda():requires_grad_() end
    local cx = {}
    for i, a in ipairs(args) do cx[i] = a:detach():clone():requires_grad_() end
    fn(table.unpack(gx)):sum():backward()
    fn(table.unpack(cx)):sum():backward()
    for i = 1, #args do same(gx[i].grad, cx[i].grad, "grad " .. i) end
  end
  local x = torch.randn(5, 4, {dtype = torch.float64})
  local w = torch.randn(5, 4, {dtype = torch.float64})
  local i = torch.tensor({2, 2, 5})
  grads(function(t, u) return t[i] * u[{{1, 3}}] end, x, w)
  grads(function(t) return t:index_select(2, torch.tensor({1, 1, 3}, {device = t.device})) end, x)
  grads(function(t) return t:masked_select(t:gt(0)) * 3 end, x)
  grads(function(t, u) return torch.where(t:gt(0), t, u) end, x, w)
  grads(function(t, u) return torch.cat({t, u}, 1):roll(1, 1):flip({2}) end, x, w)
  grads(function(t, u) return torch.stack({t, u}):tril() end, x, w)
  grads(function(t) return t:take(torch.tensor({1, 20, 1}, {device = t.device})) end, x)
  grads(function(t) return t:prod(1) end, torch.tensor({{1.0, 0.0}, {2.0, 3.0}}, {dtype = torch.float64}))
  -- embedding (index_select forward, index_add backward) and one_hot
  local F = torch.nn.functional
  local ids = torch.tensor({{1, 3}, {3, 5}})
  grads(function(wt) return F.embedding(ids:to(wt.device), wt) end, w)
  both("one_hot", function(t) return F.one_hot(t, 6) end, ids)
  for _, mode in ipairs{"constant", "reflect", "replicate", "circular"} do
    grads(function(t) return F.pad(t:view(1, 5, 4), {1, 2}, {mode = mode}) end, x)
  end
end)

test("bad input raises clear errors on cuda", function()
  local x = torch.randn(4, 5):cuda()
  check_error(function() return x:index_select(1, torch.tensor({1, 5}):cuda()) end,
              "index 5 is out of bounds for dimension 1 with size 4")
  check_error(function() return x[torch.tensor({0}):cuda()] end, "indices are 1-based")
  check_error(function() return x:take(torch.tensor({21}):cuda()) end, "out of bounds for a tensor of 20 elements")
  check_error(function() x:index_put_({torch.tensor({-5}):cuda()}, torch.tensor(1.0)) end, "out of bounds")
  check_error(function() return x:index_select(1, torch.tensor({1})) end, "cpu")
  check_error(function() return x:masked_select(torch.ones(4, 5):cuda()) end, "mask must be a bool tensor")
  check_error(function() return x:masked_fill(torch.ones(4, 5, {dtype = torch.bool}), 1) end, "cpu")
  check_error(function() return x:masked_scatter(x:gt(-100), torch.randn(3):cuda()) end, "source has 3 elements")
  check_error(function() return torch.cat({x, torch.randn(4, 5)}) end, "same device")
  check_error(function() return torch.where(x:gt(0), x, torch.randn(4, 5)) end, "same device")
  check_error(function() return x[{1, 2, 3}] end, "too many indices")
  -- the tensor is still usable after the errors
  check_eq(x:index_select(1, torch.tensor({4}):cuda()):size(), {1, 5})
end)
