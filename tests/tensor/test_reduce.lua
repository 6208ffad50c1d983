-- tests/tensor/test_reduce.lua -- reductions, scans, sorting and softmax
-- against PyTorch's values (tests/ref/reduce.lua, made by gen_reduce.py),
-- in function and method form and on strided copies of the inputs, plus
-- closed-form checks of large inputs and the error messages.
local R = ref("reduce")

local function make_input(spec)
  local dt = torch[spec.dtype]
  if #spec.shape == 0 then return torch.tensor(spec.values[1], {dtype = dt}) end
  return torch.tensor(spec.values, {dtype = dt})
end

-- The same values laid out with reversed strides (not contiguous).
local function strided(x)
  local n = x:dim()
  local perm = {}
  for i = 1, n do perm[i] = n + 1 - i end
  return x:permute(perm):contiguous():permute(perm)
end

local function check_outputs(c, res)
  check_eq(res.n, #c.outputs, "number of results")
  for k, o in ipairs(c.outputs) do
    local got = res[k]
    check(torch.is_tensor(got), "result " .. k .. " is not a tensor")
    check_eq(got.dtype.name, o.dtype, "dtype of result " .. k)
    check_shape(got, o.shape)
    check_close(got, o.values, {rtol = c.rtol, atol = c.atol})
  end
end

for _, c in ipairs(R.cases) do
  test(c.op .. ": " .. c.name, function()
    local x = make_input(R.inputs[c.input])
    check_outputs(c, table.pack(torch[c.op](x, table.unpack(c.args))))
    check_outputs(c, table.pack(x[c.op](x, table.unpack(c.args))))
    local xs = x:dim() >= 2 and strided(x)
    if xs and not xs:is_contiguous() then
      check_outputs(c, table.pack(torch[c.op](xs, table.unpack(c.args))))
    end
  end)
end

-- ---- closed-form checks on large inputs ----

test("float32 sum of 1e6 values is accurate (closed form)", function()
  local n = 1000000
  local x = torch.arange(n):float()
  check_close(x:sum():double(), n * (n - 1) / 2, {rtol = 1e-7, atol = 0})
  check_close(x:mean():double(), (n - 1) / 2, {rtol = 1e-7, atol = 0})
  local sq = (n - 1) * n * (2 * n - 1) / 6
  check_close((x * x):sum():double(), sq, {rtol = 1e-6, atol = 0})
end)

test("column sums of a tall matrix are accurate", function()
  local x = torch.arange(200000):float():view(10000, 20)
  local s = x:sum(1)
  for j = 1, 20 do
    -- column j holds j-1, j-1+20, ...: 10000 terms
    local want = 10000 * (j - 1) + 20 * 10000 * 9999 / 2
    check_close(s[j]:double(), want, {rtol = 1e-7, atol = 0})
  end
end)

test("argmax and max of a long row find a planted value", function()
  local x = torch.zeros(1000000)
  x[777777] = 5
  x[900000] = 5
  check_eq(x:argmax():item(), 777777)
  check_eq(x:max():item(), 5)
  local v, i = x:view(1000, 1000):max(2)
  check_eq(i[778]:item(), 777)
  check_eq(v[778]:item(), 5)
  x[123456] = 0 / 0
  check_eq(x:argmax():item(), 123456)
  check(x:amax():item() ~= x:amax():item(), "amax should be NaN")
end)

test("results do not depend on the thread count", function()
  local x = torch.randn(3000000)
  local n = torch.get_num_threads()
  local s2, a2 = x:sum():item(), x:argmin():item()
  torch.set_num_threads(1)
  local s1, a1 = x:sum():item(), x:argmin():item()
  torch.set_num_threads(n)
  check_eq(s1, s2)
  check_eq(a1, a2)
end)

test("nanmedian of an all-NaN row is NaN", function()
  local v = torch.tensor({{0 / 0, 0 / 0, 0 / 0}, {1, 0 / 0, 2}}):nanmedian(2)
  check_close(v, {0 / 0, 1})
end)

test("softmax rows of a large matrix sum to 1", function()
  local x = torch.randn(300, 1000) * 10
  local s = x:softmax(2):sum(2)
  check_close(s, torch.ones(300), {atol = 1e-5})
  local ls = x:log_softmax(2):exp():sum(2)
  check_close(ls, torch.ones(300), {atol = 1e-5})
end)

test("sort of a long row is ordered and a permutation", function()
  local x = torch.randn(50000)
  local v, i = x:sort()
  check((v:narrow(1, 2, 49999) - v:narrow(1, 1, 49999)):amin():item() >= 0, "not ascending")
  check_eq(i:sort():equal(torch.arange(1, 50001)), true)
  check_close(x:index_select(1, i), v)
end)

-- ---- argument forms and special values ----

test("max(a, b) with two tensors is elementwise", function()
  local a, b = torch.tensor({1, 5, 3}), torch.tensor({4, 2, 3})
  check_close(torch.max(a, b), {4, 5, 3})
  check_close(a:min(b), {1, 2, 3})
end)

test("out= receives the result and is returned", function()
  local x = torch.tensor({{1.0, 2.0}, {3.0, 4.0}})
  local o = torch.zeros(2)
  local r = x:sum(1, {out = o})
  check(rawequal(r, o), "out= tensor should be returned")
  check_close(o, {4, 6})
  local v, i = torch.zeros(2), torch.zeros(2, {dtype = torch.int64})
  x:max(2, {out = {v, i}})
  check_close(v, {2, 4})
  check_close(i, {2, 2})
  for name, want in pairs {max = 4, min = 1, median = 2, nanmedian = 2} do -- the forms of all elements
    local s = torch.zeros({})
    check(rawequal(torch[name](x, {out = s}), s), name .. ": out= tensor should be returned")
    check_close(s, want)
  end
end)

test("empty reductions give the identity or NaN", function()
  local e = torch.zeros(0, 3)
  check_close(e:sum(1), {0, 0, 0})
  check_close(e:prod(1), {1, 1, 1})
  check_close(e:mean(1), {0 / 0, 0 / 0, 0 / 0})
  check_eq(e:any():item(), false)
  check_eq(e:all():item(), true)
  check_shape(e:amax(2), {0})
  check_close(torch.zeros(0):cumsum(1), {})
end)

test("0-dim tensors accept dim 1 and -1", function()
  local s = torch.tensor(3.5)
  check_close(s:sum(1), 3.5)
  check_shape(s:sum(1, true), {})
  local v, i = s:max(-1)
  check_close(v, 3.5)
  check_eq(i:item(), 1)
  check_close(s:softmax(1), 1)
  check_close(s:cumsum(1), 3.5)
end)

test("keepdim and dims lists may come in one options table", function()
  local x = torch.ones(2, 3, 4)
  check_shape(x:sum{dim = {1, 3}, keepdim = true}, {1, 3, 1})
  check_shape(x:mean({2}, {keepdim = true}), {2, 1, 4})
  check_shape(x:amax{dim = -1}, {2, 3})
  check_shape(x:sum({}), {})
end)

-- ---- errors ----

test("bad arguments raise errors that name the op", function()
  local x = torch.tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})
  local xi = torch.tensor({1, 2, 3})
  check_error(function() return xi:mean() end, "mean: needs a floating dtype, got int64")
  check_error(function() return x:sum(3) end, "sum: dimension 3 out of range")
  check_error(function() return x:sum({1, -2}) end, "sum: dimension 1 appears more than once")
  check_error(function() return x:sum("a") end, "sum: dim must be an integer or a list of integers, got string")
  check_error(function() return torch.zeros(0):amax() end, "amax: the input is empty")
  check_error(function() return torch.zeros(0):max() end, "max: the input is empty")
  check_error(function() return torch.zeros(2, 0):max(2) end, "max: cannot reduce dimension 2 of size 0")
  check_error(function() return torch.zeros(2, 0):argmin(2) end, "argmin: cannot reduce dimension 2 of size 0")
  check_error(function() return x:topk(4) end, "topk: k = 4 is out of range for dimension 2 of size 3")
  check_error(function() return x:kthvalue(0) end, "kthvalue: k = 0 is out of range")
  check_error(function() return x:topk(1.5) end, "topk: k must be an integer")
  check_error(function() return xi:softmax(1) end, "softmax: needs a floating tensor, got int64")
  check_error(function() return x:softmax() end, "softmax: dim is required")
  check_error(function() return x:cumsum() end, "cumsum: dim is required")
  check_error(function() return x:cumsum(5) end, "cumsum: dimension 5 out of range")
  check_error(function() return xi:norm() end, "norm: needs a floating tensor, got int64")
  check_error(function() return x:norm("nuc") end, "norm: p = 'nuc' is not supported")
  check_error(function() return xi:std() end, "std: needs a floating tensor, got int64")
  check_error(function() return x:sum(1, {out = torch.zeros(5)}) end, "sum: out= has shape 5 but the result has shape 3")
  check_error(function() return x:max(1, {out = torch.zeros(3)}) end, "max: out= must be a list of two tensors")
  check_error(function() return torch.zeros(2, 0):median(2) end, "median: cannot reduce dimension 2 of size 0")
  check_error(function() return torch.zeros(0):median() end, "median: the input is empty")
  check_error(function() return torch.tensor(1):unique{dim = 1} end, "unique: a 0-dim tensor has no dimension")
  -- everything still works afterwards
  check_close(x:sum(2), {6, 15})
  check_close(xi:sum(), 6)
end)
