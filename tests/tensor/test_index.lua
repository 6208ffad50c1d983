-- tests/tensor/test_index.lua -- indexing (x[key], x[key] = v) and the index
-- ops (tensor/index.c, tensor/cpu/index_kernels.c through lua_bindings/l_index.c)
-- against PyTorch values in tests/ref/index.lua; views share storage; big
-- inputs (parallel paths) against closed forms; bad calls raise messages
-- naming the op and the offending values, and leave tensors usable.
local R = ref("index")

---------------------------------------------------------------- helpers

local function numel(shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return n
end

-- a tensor from a reference description {dtype=, shape=, data=}
local function mk(d)
  if numel(d.shape) == 0 then return torch.zeros(d.shape, {dtype = torch[d.dtype]}) end
  return torch.tensor(d.data, {dtype = torch[d.dtype]})
end

local function arg(v)
  if type(v) ~= "table" then return v end
  if v.dtype then return mk(v) end
  local t = {}
  for k, x in pairs(v) do t[k] = arg(x) end
  return t
end

local function key_entry(e)
  if type(e) == "table" and e.dtype then return mk(e) end
  if type(e) == "table" and e.range then return e.range end
  return e
end

local function mkkey(k)
  if k.single ~= nil then return key_entry(k.single) end
  local t = {}
  for i, e in ipairs(k.list) do t[i] = key_entry(e) end
  return t
end

-- the non-contiguous views the generator used
local function view(x, v)
  if v == "T" then return x.T end
  if v == "step2" then return x[{{}, {1, -1, 2}}] end
  return x
end

-- got must have want's dtype, shape and values
local function same(got, want)
  check(torch.is_tensor(got), "expected a tensor, got " .. type(got))
  check_eq(got.dtype.name, want.dtype, "dtype")
  check_shape(got, want.shape)
  if numel(want.shape) > 0 then check_close(got, want.data) end
end

---------------------------------------------------------------- PyTorch references

local names = {}
for k in pairs(R) do names[#names + 1] = k end
table.sort(names)

for _, name in ipairs(names) do
  local inp, exp = R[name].input, R[name].expected
  test(name .. " matches PyTorch", function()
    local base = mk(inp.self)
    local x = view(base, inp.view)
    if inp.op == "getitem" then
      same(x[mkkey(inp.key)], exp.out)
    elseif inp.op == "setitem" then
      local v0 = base:_version()
      x[mkkey(inp.key)] = arg(inp.value)
      same(base, exp.self)
      check(base:_version() > v0, "assignment bumps the version counter")
    else
      local args = {}
      for i, a in ipairs(inp.args) do args[i] = arg(a) end
      if exp.self then -- in place: returns x, writes through views
        local v0 = base:_version()
        local r = x[inp.op](x, table.unpack(args))
        check(rawequal(r, x), inp.op .. " returns its input")
        same(base, exp.self)
        check(base:_version() > v0, inp.op .. " bumps the version counter")
      else
        local rs = {x[inp.op](x, table.unpack(args))}
        if exp.outs then
          check_eq(#rs, #exp.outs, "number of results")
          for i, o in ipairs(exp.outs) do same(rs[i], o) end
        else
          same(rs[1], exp.out)
          same(torch[inp.op](x, table.unpack(args)), exp.out) -- function form agrees
        end
        same(base, inp.self) -- the input is left alone
      end
    end
  end)
end

---------------------------------------------------------------- views and writes

test("integer and range keys return views that write through", function()
  local x = torch.tensor({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})
  local row = x[2]
  row[1] = 40
  check_eq(x:totable(), {{1, 2, 3}, {40, 5, 6}, {7, 8, 9}})
  local cols = x[{{}, {1, 3, 2}}]
  check_shape(cols, {3, 2})
  cols:fill_(0)
  check_eq(x:totable(), {{0, 2, 0}, {0, 5, 0}, {0, 8, 0}})
  local e = x[{3, 2}]
  check_eq(e:dim(), 0)
  check_eq(e:item(), 8)
  e:fill_(-8)
  check_eq(x[3]:totable(), {0, -8, 0})
end)

test("x[i] of a 1-D tensor is a 0-dim view", function()
  local x = torch.tensor({1.5, 2.5, 3.5})
  local s = x[-1]
  check_eq(s:dim(), 0)
  check_eq(s:item(), 3.5)
  x[3] = 7
  check_eq(s:item(), 7.0)
end)

test("tensor keys gather copies", function()
  local x = torch.tensor({{1, 2}, {3, 4}})
  local g = x[torch.tensor({2, 2})]
  g[1] = torch.tensor({0, 0})
  check_eq(x:totable(), {{1, 2}, {3, 4}})
  check_eq(g:totable(), {{0, 0}, {3, 4}})
  local m = x[x:gt(1)]
  m:fill_(0)
  check_eq(x:totable(), {{1, 2}, {3, 4}})
end)

test("assignment forms: number, broadcast tensor, other dtype, 0-dim value", function()
  local x = torch.zeros(2, 3)
  x[{{}, 2}] = 5
  x[1] = torch.tensor({1, 2, 3}, {dtype = torch.int64})
  x[{2, {2, 3}}] = torch.tensor(9.5, {dtype = torch.float64})
  check_eq(x:totable(), {{1, 2, 3}, {0, 9.5, 9.5}})
  x[x:gt(2)] = torch.tensor({-1, -2, -3}, {dtype = torch.float64}) -- index_put casts
  check_eq(x:totable(), {{1, 2, -1}, {0, -2, -3}})
  x[torch.tensor({1})] = true
  check_eq(x:totable(), {{1, 1, 1}, {0, -2, -3}})
end)

test("assigning a view of the same tensor copies safely", function()
  local x = torch.tensor({1, 2, 3, 4, 5})
  x[{{2, 5}}] = x[{{1, 4}}]
  check_eq(x:totable(), {1, 1, 2, 3, 4})
  local y = torch.tensor({1, 2, 3, 4})
  y[torch.tensor({2, 3, 4})] = y[{{1, 3}}]
  check_eq(y:totable(), {1, 1, 2, 3})
end)

test("index_put_ accumulates duplicates; index_put leaves x alone", function()
  local x = torch.zeros(4)
  local i = torch.tensor({1, 1, 4, 1})
  x:index_put_({i}, torch.tensor({1.0, 2.0, 3.0, 4.0}), true)
  check_eq(x:totable(), {7, 0, 0, 3})
  local y = torch.index_put(x, {i}, torch.tensor(1.0), {accumulate = true})
  check_eq(y:totable(), {10, 0, 0, 4})
  check_eq(x:totable(), {7, 0, 0, 3})
  x:index_put_({{2, 3}}, torch.tensor(5.0), {accumulate = true}) -- a range key adds too
  check_eq(x:totable(), {7, 5, 5, 3})
end)

test("options may be positional or in a table", function()
  local z = torch.zeros(2, 3)
  local i = torch.tensor({{1, 1, 2}})
  local s = torch.ones(1, 3)
  check_eq(z:scatter(1, i, s, "add"):totable(), z:scatter(1, i, s, {reduce = "add"}):totable())
  check_eq(z:scatter(1, i, s):totable(), {{1, 1, 0}, {0, 0, 1}})
  local a = z:index_add(1, torch.tensor({2}), torch.ones(1, 3), 2)
  check_eq(a:totable(), z:index_add(1, torch.tensor({2}), torch.ones(1, 3), {alpha = 2}):totable())
  check_eq(a:totable(), {{0, 0, 0}, {2, 2, 2}})
  local p = torch.zeros(3)
  p:put_(torch.tensor({1, 1}), torch.tensor({1.0, 2.0}), {accumulate = true})
  check_eq(p:totable(), {3, 0, 0})
  check_eq(z:scatter(2, i, {value = 4}):totable(), {{4, 4, 0}, {0, 0, 0}})
end)

test("out= receives the result of gathers", function()
  local x = torch.tensor({{1.0, 2.0}, {3.0, 4.0}})
  local o = torch.zeros(2, 2)
  local r = torch.index_select(x, 1, torch.tensor({2, 1}), {out = o})
  check(rawequal(r, o), "returns out")
  check_eq(o:totable(), {{3, 4}, {1, 2}})
  local o64 = torch.zeros(3, {dtype = torch.float64})
  torch.masked_select(x, x:gt(1), {out = o64})
  check_eq(o64:totable(), {2, 3, 4})
  local so = torch.zeros(2, 2)
  torch.scatter(x, 1, torch.tensor({{2, 1}}), torch.tensor({{9.0, 8.0}}), {out = so})
  check_eq(so:totable(), {{1, 8}, {9, 4}})
  check_error(function() torch.nonzero(x, {out = torch.zeros(2, 2, {dtype = torch.int64})}) end,
    "nonzero: out= has shape 2x2 but the result has shape 4x2")
end)

test("torch.where(cond) is nonzero as a tuple", function()
  local c = torch.tensor({{false, true}, {true, true}})
  local r, k = torch.where(c)
  check_eq(r:totable(), {1, 2, 2})
  check_eq(k:totable(), {2, 1, 2})
  local a = torch.nonzero(torch.tensor(true), {as_tuple = true})
  check_eq(a:totable(), {1})
end)

test("scalar values may be 0-dim tensors", function()
  local x = torch.zeros(3)
  x:index_fill_(1, torch.tensor({3}), torch.tensor(2.0))
  x:masked_fill_(torch.tensor({true, false, false}), torch.tensor(1))
  check_eq(x:totable(), {1, 0, 2})
end)

test("every in-place op bumps the version counter", function()
  local x = torch.zeros(3, 3)
  local i = torch.tensor({{1, 2, 3}})
  local ops = {
    function() x:scatter_(1, i, torch.ones(1, 3)) end,
    function() x:scatter_add_(1, i, torch.ones(1, 3)) end,
    function() x:index_add_(1, torch.tensor({1}), torch.ones(1, 3)) end,
    function() x:index_copy_(1, torch.tensor({1}), torch.ones(1, 3)) end,
    function() x:index_fill_(1, torch.tensor({1}), 2) end,
    function() x:masked_fill_(x:gt(1), 0) end,
    function() x:masked_scatter_(x:lt(1), torch.ones(9)) end,
    function() x:put_(torch.tensor({9}), torch.ones(1)) end,
    function() x:index_put_({torch.tensor({1})}, torch.tensor(3.0)) end,
  }
  for k, f in ipairs(ops) do
    local v0 = x:_version()
    f()
    check(x:_version() > v0, "op " .. k .. " bumps the version")
  end
end)

test("negative dims count from the end", function()
  local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
  check_eq(x:index_select(-1, torch.tensor({3})):totable(), {{3}, {6}})
  check_eq(x:gather(-2, torch.tensor({{2, 1, 2}})):totable(), {{4, 2, 6}})
end)

test("empty selections", function()
  local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
  check_shape(x[{{3, 2}}], {0, 3})
  check_shape(x[x:gt(10)], {0})
  check_shape(x:nonzero()[{{1, 0}}], {0, 2})
  check_shape(x[torch.zeros(0, {dtype = torch.int64})], {0, 3})
  x[x:gt(10)] = 1
  x[torch.zeros(0, {dtype = torch.int64})] = 5
  check_eq(x:totable(), {{1, 2, 3}, {4, 5, 6}})
  check_shape(x:take(torch.zeros(0, 2, {dtype = torch.int64})), {0, 2})
end)

---------------------------------------------------------------- large inputs (parallel paths)

-- x[i][j] = i * 1000 + j for an n x m float64 tensor
local function grid(n, m)
  local t = {}
  for i = 1, n do
    local row = {}
    for j = 1, m do row[j] = i * 1000 + j end
    t[i] = row
  end
  return torch.tensor(t, {dtype = torch.float64})
end

-- a fixed pseudo-random permutation of 1..n (linear congruential, seeded)
local function perm(n, seed)
  local p, s = {}, seed
  for i = 1, n do p[i] = i end
  for i = n, 2, -1 do
    s = (s * 1103515245 + 12345) % 2147483648
    local j = s % i + 1
    p[i], p[j] = p[j], p[i]
  end
  return p
end

test("big index_select, x[idx] and gather match closed forms", function()
  local n, m = 3000, 40
  local x = grid(n, m)
  local p = perm(n, 7)
  local idx = torch.tensor(p)
  local r = x:index_select(1, idx)
  local r2 = x[idx]
  local rt, rt2 = r:totable(), r2:totable()
  for k = 1, n, 97 do
    check_eq(rt[k][1], p[k] * 1000 + 1)
    check_eq(rt[k][m], p[k] * 1000 + m)
    check_eq(rt2[k][7], p[k] * 1000 + 7)
  end
  local cols = {}
  for i = 1, n do cols[i] = {(i % m) + 1, m - (i % m)} end
  local g = x:gather(2, torch.tensor(cols)):totable()
  for i = 1, n, 101 do
    check_eq(g[i][1], i * 1000 + (i % m) + 1)
    check_eq(g[i][2], i * 1000 + m - (i % m))
  end
  -- a strided (transposed) source takes the element-wise path
  local t = x.T:index_select(2, torch.tensor({5, 2999})):totable()
  check_eq(t[3], {5003, 2999003})
end)

test("big take, masked_select, nonzero and scatter_add match closed forms", function()
  local n, m = 2000, 50
  local x = grid(n, m)
  local flat = {}
  for k = 1, 5000 do flat[k] = (k * 7919) % (n * m) + 1 end
  local tk = x:take(torch.tensor(flat)):totable()
  for k = 1, 5000, 37 do
    local f = flat[k] - 1
    check_eq(tk[k], (f // m + 1) * 1000 + f % m + 1)
  end
  local mask = x:gt(1000 * (n - 9)) -- rows n-9..n
  local sel = x[mask]
  check_eq(sel:numel(), 10 * m)
  check_eq(sel[1]:item(), (n - 9) * 1000 + 1)
  local nz = mask:nonzero()
  check_shape(nz, {10 * m, 2})
  check_eq(nz[1]:totable(), {n - 9, 1})
  check_eq(nz[-1]:totable(), {n, m})
  -- every row of idx sends its ones to column (i % 5) + 1: column sums count rows
  local idx = {}
  for i = 1, n do
    idx[i] = {}
    for j = 1, 3 do idx[i][j] = ((i + j) % 5) + 1 end
  end
  local acc = torch.zeros(n, 5):scatter_add(2, torch.tensor(idx), torch.ones(n, 3))
  local at = acc:totable()
  for i = 1, n, 89 do
    local want = {0, 0, 0, 0, 0}
    for j = 1, 3 do want[((i + j) % 5) + 1] = want[((i + j) % 5) + 1] + 1 end
    check_eq(at[i], want)
  end
end)

---------------------------------------------------------------- errors

test("integer keys out of range name the dim and size", function()
  local x = torch.tensor({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}})
  check_error(function() return x[5] end, "index: index 5 is out of bounds for dimension 1 with size 3")
  check_error(function() return x[-4] end, "index -4 is out of bounds for dimension 1 with size 3")
  check_error(function() return x[0] end, "index 0 is out of bounds for dimension 1 with size 3 (indices are 1-based)")
  check_error(function() return x[{1, 7}] end, "index 7 is out of bounds for dimension 2 with size 4")
  check_error(function() x[{2, 9}] = 1 end, "index assignment: index 9 is out of bounds for dimension 2 with size 4")
  check_error(function() return torch.tensor(3)[1] end, "cannot index a 0-dim tensor")
  check_eq(x[2]:totable(), {5, 6, 7, 8})
end)

test("malformed keys are rejected", function()
  local x = torch.zeros(3, 4)
  check_error(function() return x[1.5] end, "index: index 1.5 is not an integer")
  check_error(function() return x[true] end, "index: invalid index of type boolean")
  check_error(function() return x[{1, 2, 3}] end, "too many indices for a tensor of dimension 2 (got 3)")
  check_error(function() return torch.zeros(5)[{1, 3}] end, "a range is written x[{{1, 3}}]")
  check_error(function() return x[{{1, 3, 0}}] end, "the step of a range must be positive, got 0")
  check_error(function() return x[{{1, 3, -1}}] end, "the step of a range must be positive, got -1")
  check_error(function() return x[{{1, 2, 3, 4}}] end, "a range is written {first, last[, step]}")
  check_error(function() return x[{{1, "a"}}] end, "a range is written {first, last[, step]} of integers")
  check_error(function() return x[{"...", 1, "..."}] end, "only have a single ellipsis")
  check_error(function() return x[torch.tensor({1.0})] end,
    "tensors used as indices must be int64 or bool, got float32")
  check_error(function() return x[{dim = 1}] end, "it cannot have named fields")
  check_error(function() return x[print] end, "index: invalid index of type function")
  check_error(function() x[1] = "a" end, "index assignment: the value must be a number or a tensor, got string")
  check_error(function() x[1] = torch.ones(3) end, "a value of shape 3 cannot be assigned to a selection of shape 4")
  check_eq(x[1]:totable(), {0, 0, 0, 0})
end)

test("tensor keys: bad values, masks and broadcasting", function()
  local x = torch.zeros(3, 4, 5)
  check_error(function() return x[torch.tensor({1, 4})] end,
    "index: index 4 is out of bounds for dimension 1 with size 3")
  check_error(function() return x[torch.tensor({0})] end, "(indices are 1-based)")
  check_error(function() return x[{2, {}, torch.tensor({6})}] end,
    "index 6 is out of bounds for dimension 3 with size 5")
  check_error(function() return x[{torch.tensor({1, 2}), torch.tensor({1, 2, 3})}] end,
    "index: shapes 2 and 3 cannot be broadcast together")
  check_error(function() return x[torch.zeros(3, 5, {dtype = torch.bool})] end,
    "the mask of shape 3x5 does not match the indexed tensor of shape 3x4x5 at dimension 2")
  check_error(function() x[torch.tensor({1, 2})] = torch.ones(3) end,
    "index_put: values of shape 3 cannot be broadcast to shape 2x4x5")
  check_error(function() x[torch.tensor({7})] = 1 end,
    "index_put: index 7 is out of bounds for dimension 1 with size 3")
  check_eq(x[1][1]:totable(), {0, 0, 0, 0, 0})
end)

test("index_select, gather and take validate arguments", function()
  local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
  local i = torch.tensor({2, 9, 0})
  check_error(function() x:index_select(1, i) end, "index_select: index 9 is out of bounds for dimension 1 with size 2")
  check_error(function() x:index_select(2, torch.tensor({-1})) end,
    "index -1 is out of bounds for dimension 2 with size 3 (negative indices are not allowed here)")
  check_error(function() x:index_select(3, torch.tensor({1})) end, "index_select: dimension 3 out of range")
  check_error(function() x:index_select(1, torch.tensor({{1}})) end,
    "index_select: index must be 1-D or 0-dim, got shape 1x1")
  check_error(function() x:index_select(1, torch.tensor({1}, {dtype = torch.int32})) end,
    "index_select: index must be an int64 tensor of 1-based indices, got int32")
  check_error(function() x:index_select(1, {1, 2}) end,
    "index_select: index must be a tensor, got table (make one with torch.tensor{...})")
  check_error(function() x:index_select("a", torch.tensor({1})) end,
    "index_select: argument 'dim' must be an integer, got string")
  check_error(function() x:gather(1, torch.tensor({1})) end,
    "gather: index must have as many dimensions as the input (2), got 1")
  check_error(function() x:gather(1, torch.tensor({{1, 1, 1, 1}})) end,
    "gather: index of shape 1x4 is larger than the input of shape 2x3 at dimension 2 (only dimension 1 may be larger)")
  check_error(function() x:gather(2, torch.tensor({{1, 4}})) end,
    "gather: index 4 is out of bounds for dimension 2 with size 3")
  check_error(function() x:take(torch.tensor({7})) end, "take: index 7 is out of bounds for a tensor of 6 elements")
  check_error(function() x:take(torch.tensor({-7})) end, "take: index -7 is out of bounds for a tensor of 6 elements")
  check_eq(x:index_select(1, torch.tensor({2})):totable(), {{4, 5, 6}})
end)

test("scatters validate arguments", function()
  local x = torch.zeros(2, 3)
  local i = torch.tensor({{1, 2}})
  check_error(function() x:scatter(1, i, torch.ones(1, 2, {dtype = torch.float64})) end,
    "scatter: src has dtype float64 but the input has dtype float32")
  check_error(function() x:scatter(1, i, torch.ones(1, 1)) end,
    "scatter: index of shape 1x2 is larger than src of shape 1x1 at dimension 2")
  check_error(function() x:scatter(1, i, torch.ones(1, 2), {reduce = "max"}) end,
    "scatter: reduce must be 'add' or 'multiply', got 'max'")
  check_error(function() x:scatter(1, i) end, "scatter: expected src or value as argument #4")
  check_error(function() x:scatter_(1, torch.tensor({{3, 1}}), 1.0) end,
    "scatter: index 3 is out of bounds for dimension 1 with size 2")
  check_error(function() x:scatter_add(1, i, 1.0) end, "scatter_add: src must be a tensor, got number")
  check_error(function() x:index_add(1, torch.tensor({1}), torch.ones(2, 3)) end,
    "index_add: source must have shape 1x3 (the input's, with dimension 1 as long as the index), got 2x3")
  local l2 = torch.zeros(2, {dtype = torch.int64})
  check_error(function() l2:index_add(1, torch.tensor({1}), torch.ones(1, {dtype = torch.int64}), 0.5) end,
    "index_add: alpha must be an integer for int64 tensors, got 0.5")
  check_error(function() x:index_copy(2, torch.tensor({1}), torch.ones(2, 1, {dtype = torch.int64})) end,
    "index_copy: source has dtype int64 but the input has dtype float32")
  check_error(function() x:index_fill(2, torch.tensor({4}), 1) end,
    "index_fill: index 4 is out of bounds for dimension 2 with size 3")
  check_error(function() x:index_fill(2, torch.tensor({1}), torch.ones(2)) end,
    "index_fill: value must be a number or a 0-dim tensor, got a tensor with 1 dimension")
  check_error(function() x:put_(torch.tensor({1, 2}), torch.ones(3)) end, "put: source has 3 elements but index has 2")
  check_error(function() x:put_(torch.tensor({0}), torch.ones(1)) end,
    "put: index 0 is out of bounds for a tensor of 6 elements (indices are 1-based)")
  check_eq(x:totable(), {{0, 0, 0}, {0, 0, 0}})
end)

test("masked ops validate arguments", function()
  local x = torch.zeros(3, 4)
  check_error(function() x:masked_fill(torch.ones(3, 4, {dtype = torch.int64}), 1) end,
    "masked_fill: mask must be a bool tensor, got int64")
  check_error(function() x:masked_fill_(torch.zeros(5, {dtype = torch.bool}), 1) end,
    "masked_fill: mask of shape 5 cannot be broadcast to shape 3x4")
  local grown = x:masked_fill(torch.zeros(2, 1, 1, {dtype = torch.bool}), 1)
  check_shape(grown, {2, 3, 4})
  check_error(function() grown:masked_fill_(torch.zeros(2, {dtype = torch.bool}), 0) end,
    "masked_fill: mask of shape 2 cannot be broadcast to shape 2x3x4")
  check_error(function() x:masked_select(torch.zeros(2, {dtype = torch.bool})) end,
    "masked_select: shapes 3x4 and 2 cannot be broadcast together")
  check_error(function() x:masked_scatter(x:eq(0), torch.ones(5)) end,
    "masked_scatter: source has 5 elements but the mask selects 12")
  check_error(function() x:masked_scatter(x:eq(0), torch.ones(12, {dtype = torch.float64})) end,
    "masked_scatter: source has dtype float64 but the input has dtype float32")
  check_eq(x[1]:totable(), {0, 0, 0, 0})
end)

test("every index function has a one-line help text", function()
  local fns = {"index_select", "gather", "take", "masked_select", "nonzero", "argwhere", "scatter", "scatter_add",
    "index_add", "index_copy", "index_fill", "masked_fill", "masked_scatter", "put", "index_put"}
  for _, n in ipairs(fns) do
    check(type(torch[n]) == "function", "torch." .. n .. " is missing")
    local x = torch.ones(1)
    check(type(x[n]) == "function", "x:" .. n .. " is missing")
    local gathers = {take = 1, masked_select = 1, nonzero = 1, argwhere = 1, gather = 1, index_select = 1}
    if not gathers[n] then check(type(x[n .. "_"]) == "function", "x:" .. n .. "_ is missing") end
    if torch._helptext then
      check(#(torch._helptext(torch[n]) or "") > 10, "torch." .. n .. " has no help text")
    end
  end
end)
