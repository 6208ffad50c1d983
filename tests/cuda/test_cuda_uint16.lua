-- tests/cuda/test_cuda_uint16.lua -- the uint16 dtype on the CUDA backend
-- (tensor/cuda/kernels.c's dtype table, the generated families, the JIT's
-- CUDA code generator) against the CPU path, whose values
-- tests/tensor/test_uint16.lua checks against NumPy. Skipped without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; uint16 CUDA tests skipped\n")
  return
end

local U = torch.uint16
local function u16(t) return torch.tensor(t, {dtype = U}) end
local A = {0, 1, 2, 300, 1000, 32767, 32768, 40000, 65534, 65535}
local B = {7, 65535, 3, 300, 9, 2, 32768, 30000, 5, 65535}

-- f on the CPU and on CUDA: every result has the same dtype and values
local function same(f, what, ...)
  local args, gargs = {...}, {}
  for i, t in ipairs(args) do gargs[i] = torch.is_tensor(t) and t:cuda() or t end
  local c, g = {f(table.unpack(args))}, {f(table.unpack(gargs))}
  check_eq(#g, #c, what .. ": result count")
  for k = 1, #c do
    check(g[k].device.type == "cuda", what .. ": result on the GPU")
    check(g[k].dtype == c[k].dtype, what .. ": dtype " .. tostring(g[k].dtype) .. " vs " .. tostring(c[k].dtype))
    check_eq(g[k]:cpu():totable(), c[k]:totable(), what .. " result " .. k)
  end
end

test("uint16 elementwise ops, scalars and shifts wrap on CUDA as on the CPU", function()
  local a, b = u16(A), u16(B)
  for _, op in ipairs{"add", "sub", "mul", "floor_divide", "remainder", "bitwise_and", "bitwise_or", "bitwise_xor",
                      "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "div"} do
    same(function(x, y) return torch[op](x, y) end, op, a, b)
  end
  for _, op in ipairs{"neg", "bitwise_not", "square", "abs", "sign"} do
    same(function(x) return x[op](x) end, op, a)
  end
  same(function(x) return x + 7, x * 3, 5 - x, x:bitwise_right_shift(3), x:clamp(100, 40000) end, "scalars", a)
end)

test("uint16 casts to and from every dtype, copies, fills and promotion on CUDA", function()
  local a = u16(A)
  for _, d in ipairs{"float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"} do
    same(function(x) return x:to(torch[d]) end, "to " .. d, a)
    same(function(x) return x:to(torch[d]):to(U) end, "from " .. d, a)
  end
  same(function(x) return x + torch.tensor({-5, 3, -32768, 32767, 0, -1, 1, 2, -3, 4}, {dtype = torch.int16}):to(x.device) end,
       "uint16 + int16 -> int32", a)
  local z = torch.zeros(5, {dtype = U, device = "cuda"})
  z:fill_(65535)
  check_eq(z:cpu():totable(), {65535, 65535, 65535, 65535, 65535}, "fill_")
  check_eq(u16(A):cuda():cpu():totable(), A, "host <-> device round trip")
end)

test("uint16 reductions, scans, sort, unique and indexing on CUDA", function()
  local m = u16{{65535, 1, 300, 7}, {2, 65535, 0, 40000}, {9, 8, 7, 6}}
  same(function(x) return x:sum(), x:sum(1), x:prod(2), x:max(), x:min(), x:amax(2), x:argmax(2), x:argmin(1) end,
       "reductions", m)
  same(function(x) return x:cumsum(2), x:any(), x:all() end, "scans", m)
  local s = u16{40000, 3, 65535, 0, 3, 32768, 1, 65534}
  same(function(x) return x:sort{stable = true} end, "sort", s)
  same(function(x) return x:sort{descending = true, stable = true} end, "sort descending", s)
  same(function(x) return x:topk(3) end, "topk", s)
  same(function(x) return x:unique() end, "unique", s)
  same(function(x) return x[x:gt(100)], x:index_select(1, torch.tensor({3, 1}):to(x.device)) end, "index", s)
  same(function(x)
    local y = torch.zeros(3, {dtype = U, device = x.device})
    y:scatter_add_(1, torch.tensor({1, 1, 3}):to(x.device), x[{{1, 3}}])
    return y
  end, "scatter_add (wrapping atomics)", u16{65535, 2, 9})
  same(function(x) return torch.where(x:gt(100), x, x:flip(1)) end, "where", s)
end)

test("torch.compile of a uint16 graph on CUDA matches eager", function()
  local function f(a, b) return (a * 3 + b):bitwise_xor(a), (a - b):sum(), a + b:int() end
  local c = torch.compile(f)
  local a, b = u16(A):cuda(), u16(B):cuda()
  for _ = 1, 3 do
    local e, g = {f(a, b)}, {c(a, b)}
    for k = 1, #e do
      check(e[k].dtype == g[k].dtype, "dtype " .. k)
      check_eq(g[k]:cpu():totable(), e[k]:cpu():totable(), "output " .. k)
    end
  end
end)
