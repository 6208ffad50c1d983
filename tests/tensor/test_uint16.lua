-- tests/tensor/test_uint16.lua -- the uint16 dtype through the engine: creation,
-- wrapping arithmetic and promotion, conversions to and from every dtype,
-- reductions, comparisons, sorting, indexing, printing, safetensors (our
-- files and one written by Python by hand) and torch.compile. Values come
-- from NumPy (tests/ref/gen_uint16.py -> tests/ref/uint16.lua; Debian's
-- PyTorch predates uint16) or closed-form rules stated beside each check.

local R = ref("uint16")
local U = torch.uint16
local function u16(t) return torch.tensor(t, {dtype = U}) end

test("torch.uint16 is a dtype: name, itemsize, not floating, type(), parsing by name", function()
  check_eq(tostring(U), "torch.uint16")
  check_eq(U.itemsize, 2)
  check(not U.is_floating_point, "not floating")
  check(torch.zeros(2, {dtype = "uint16"}).dtype == U, "dtype by name")
  check(torch.zeros(2, {dtype = "torch.uint16"}).dtype == U, "dtype by torch. name")
  check_eq(u16{1}:type(), "torch.UInt16Tensor")
  check(u16{1}:type("torch.uint16").dtype == U)
  check(not torch.is_floating_point(u16{1}))
  check_eq(u16{1}:element_size(), 2)
end)

test("creation: tensor, zeros, ones, full, arange, linspace, empty_like, randint in 0..65535", function()
  local x = u16{0, 1, 65535}
  check(x.dtype == U and x:numel() == 3)
  check_eq(x:totable(), {0, 1, 65535})
  check_eq(torch.zeros(2, 3, {dtype = U}):sum():item(), 0)
  check_eq(torch.ones(4, {dtype = U}):totable(), {1, 1, 1, 1})
  check_eq(torch.full({2}, 65535, {dtype = U}):totable(), {65535, 65535})
  check_eq(torch.arange(65530, 65536, 2, {dtype = U}):totable(), {65530, 65532, 65534})
  check_eq(torch.linspace(0, 65535, 4, {dtype = U}):totable(), {0, 21845, 43690, 65535})
  check_error(function() torch.linspace(0, 70000, 3, {dtype = U}) end, "end 70000 does not fit in uint16")
  check(torch.empty_like(x).dtype == U and torch.zeros_like(x).dtype == U)
  torch.manual_seed(7)
  local r = torch.randint(60000, 65536, {2000}, {dtype = U})
  check(r.dtype == U)
  check(r:min():item() >= 60000 and r:max():item() <= 65535, "randint stays in [low, high)")
  check(r:long():float():mean():item() > 62000, "spread over the range")
  check_error(function() torch.randint(0, 65537, {3}, {dtype = U}) end, "does not fit in uint16")
  -- Lua integers out of range wrap modulo 2^16 like a cast from int64 (NumPy's astype)
  check_eq(u16{-1, 65536, 70000}:totable(), {65535, 0, 4464})
end)

test("binary arithmetic, bitwise ops and min/max wrap modulo 2^16 (NumPy's uint16)", function()
  local a, b = u16(R.a), u16(R.b)
  for name, want in pairs(R.binary) do
    local fn = name == "floor_divide" and torch.floor_divide or torch[name]
    local got = fn(a, b)
    check(got.dtype == U, name .. " keeps uint16, got " .. tostring(got.dtype))
    check_eq(got:totable(), want, name)
  end
  check_eq((a + b):totable(), R.binary.add, "+")
  check_eq((a - b):totable(), R.binary.sub, "-")
  check_eq((a * b):totable(), R.binary.mul, "*")
  check_eq((a % b):totable(), R.binary.remainder, "%")
  for name, want in pairs(R.unary) do
    local got = a[name](a)
    check(got.dtype == U, name .. " keeps uint16")
    check_eq(got:totable(), want, name)
  end
  check_eq((-a):totable(), R.unary.neg, "unary minus")
  check_eq((a + 7):totable(), R.scalar.add7, "a + 7")
  check_eq((a - 7):totable(), R.scalar.sub7, "a - 7")
  check_eq((a * 3):totable(), R.scalar.mul3, "a * 3")
  check_eq((5 - a):totable(), R.scalar.rsub5, "5 - a")
  check(((a + 7).dtype == U) and ((a * 3).dtype == U), "a Lua integer does not promote (same category)")
  check_eq(a:bitwise_left_shift(3):totable(), R.shift.left3, "<< 3")
  check_eq(a:bitwise_right_shift(3):totable(), R.shift.right3, ">> 3 (logical: unsigned)")
  local d = a / b
  check(d.dtype == torch.float32, "true division gives the default float")
  check_close(d, R.true_divide, {rtol = 1e-6})
  check((a * 0.5).dtype == torch.float32, "a float number promotes to the default float")
  local a2 = a:clone()
  a2:add_(b)
  check_eq(a2:totable(), R.binary.add, "add_ in place")
  check_eq(a:clamp(100, 40000):totable(), {100, 100, 100, 300, 1000, 32767, 32768, 40000, 40000, 40000}, "clamp")
end)

test("promotion: uint16 with integers as NumPy (PyTorch 2.x raises there), with floats the float", function()
  local a = u16(R.a)
  for name, want in pairs(R.promote) do
    check_eq(torch.promote_types(U, torch[name]).name, want, "promote_types(uint16, " .. name .. ")")
    check_eq(torch.promote_types(torch[name], U).name, want, "promote_types(" .. name .. ", uint16)")
  end
  for _, f in ipairs{"float16", "bfloat16", "float32", "float64"} do
    check(torch.promote_types(U, torch[f]) == torch[f], "promote_types(uint16, " .. f .. ") = " .. f)
  end
  local s = a + torch.tensor(R.i16, {dtype = torch.int16})
  check(s.dtype == torch.int32, "uint16 + int16 -> int32, got " .. tostring(s.dtype))
  check_eq(s:totable(), R.add_i16, "the true sum, no wrap")
  local t = a + torch.tensor(R.u8, {dtype = torch.uint8})
  check(t.dtype == U, "uint16 + uint8 -> uint16")
  check_eq(t:totable(), R.add_u8)
  check((a + torch.ones(10, {dtype = torch.int64})).dtype == torch.int64, "with int64")
  check((a + torch.ones(10, {dtype = torch.float16})).dtype == torch.float16, "with float16")
  check((a:eq(0) + a).dtype == U, "bool + uint16 -> uint16")
end)

test("comparisons give bool; all/any give bool", function()
  local a, b = u16(R.a), u16(R.b)
  for name, want in pairs(R.cmp) do
    local got = a[name](a, b)
    check(got.dtype == torch.bool, name .. " is bool")
    check_eq(got:totable(), want, name)
  end
  check_eq(a:gt(32767):totable(), {false, false, false, false, false, false, true, true, true, true}, "> a number")
  check(a:any().dtype == torch.bool and a:any():item() == true, "any")
  check(a:all():item() == false, "all (a has a 0)")
  check_eq(a:eq(65535):nonzero():reshape(-1):totable(), {10}, "nonzero (1-based)")
end)

test("conversions from uint16 to every dtype", function()
  local a = u16(R.a)
  for name, want in pairs(R.to) do
    local got = a:to(torch[name])
    check(got.dtype == torch[name], name)
    check_eq(got:totable(), want, "uint16 -> " .. name)
  end
  -- bfloat16 keeps 8 significant bits, rounding to nearest even: 300 -> 300,
  -- 1000 -> 1000, 32767 -> 32768, 40000 -> 39936, 65534 and 65535 -> 65536
  check_eq(a:bfloat16():float():totable(), {0, 1, 2, 300, 1000, 32768, 32768, 39936, 65536, 65536}, "bfloat16")
  check_eq(a:float():totable(), R.to.float32, ":float()")
  check_eq(a:long():totable(), R.to.int64, ":long()")
  check_eq(a:int():totable(), R.to.int32, ":int()")
  check_eq(a:short():totable(), R.to.int16, ":short()")
  check_eq(a:byte():totable(), R.to.uint8, ":byte()")
  check_eq(a:bool():totable(), R.to.bool, ":bool()")
  check_eq(a:double():totable(), R.to.float64, ":double()")
  check(a:to(U) == a, "to(the same dtype) is the tensor itself")
end)

test("conversions to uint16 from every dtype: integers wrap, floats truncate", function()
  for name, c in pairs(R.from) do
    local src = torch.tensor(c.src, {dtype = torch[name]})
    check_eq(src:to(U):totable(), c.out, name .. " -> uint16")
  end
  check_eq(torch.tensor({true, false}):to(U):totable(), {1, 0}, "bool")
  check_eq(torch.tensor({255, 7}, {dtype = torch.uint8}):to(U):totable(), {255, 7}, "uint8")
  check_eq(torch.tensor({2048, 0.5}, {dtype = torch.float16}):to(U):totable(), {2048, 0}, "float16")
  check_eq(torch.tensor({65280, 3}, {dtype = torch.bfloat16}):to(U):totable(), {65280, 3}, "bfloat16")
  local dst = torch.zeros(3, {dtype = U})
  dst:copy_(torch.tensor({1.5, 70000, -2}, {dtype = torch.int64}):float():long())
  check_eq(dst:totable(), {1, 4464, 65534}, "copy_ casts into a uint16 tensor")
end)

test("reductions: sum/prod/cumsum in int64 as PyTorch; max/min/argmax/argmin keep uint16", function()
  local m = u16(R.m)
  local r = R.reduce
  local s = m:sum()
  check(s.dtype == torch.int64, "sum is int64")
  check_eq(s:item(), r.sum)
  check_eq(m:sum(1):totable(), r.sum1, "sum(1)")
  check_eq(m:sum(2):totable(), r.sum2, "sum(2)")
  check(m:prod(2).dtype == torch.int64, "prod is int64")
  check_eq(m:prod(2):totable(), r.prod2, "prod(2)")
  check(m:max().dtype == U and m:max():item() == r.max, "max")
  check(m:min():item() == r.min, "min")
  check_eq(m:amax(1):totable(), r.amax1, "amax(1)")
  check_eq(m:amin(2):totable(), r.amin2, "amin(2)")
  local v, i = m:max(2)
  check(v.dtype == U)
  check_eq(i:totable(), r.argmax2, "max(2) indices")
  check_eq(m:argmax(2):totable(), r.argmax2, "argmax(2)")
  check_eq(m:argmin(1):totable(), r.argmin1, "argmin(1)")
  check(m:cumsum(2).dtype == torch.int64, "cumsum is int64")
  check_eq(m:cumsum(2):totable(), r.cumsum2, "cumsum(2)")
  check_eq(torch.full({70000}, 65535, {dtype = U}):sum():item(), R.big_sum, "a sum past 2^32")
  check_error(function() m:mean() end, "mean: needs a floating dtype, got uint16")
  check_close(m:float():mean(), m:double():sum():item() / 12, {rtol = 1e-6})
end)

test("sort, topk, unique, kthvalue order values 0..65535 as unsigned", function()
  local s = u16(R.s)
  local v, i = s:sort()
  check(v.dtype == U)
  check_eq(v:totable(), R.sort.values)
  check_eq(i:totable(), R.sort.indices, "stable ascending indices (1-based)")
  local vd, id = s:sort{descending = true, stable = true}
  check_eq(vd:totable(), R.sort_desc.values)
  check_eq(id:totable(), R.sort_desc.indices, "stable descending indices")
  local tv = s:topk(3)
  check_eq(tv:totable(), {65535, 65534, 40000}, "topk")
  check_eq(s:unique():totable(), R.unique, "unique (sorted)")
  check_eq(s:kthvalue(2):item(), 1, "kthvalue")
  local cmx = s:cummax(1)
  check_eq(cmx:totable(), {40000, 40000, 65535, 65535, 65535, 65535, 65535, 65535}, "cummax")
end)

test("indexing: select, slices, masks, index_select, gather, scatter_add (wrapping), assignment", function()
  local x = u16{{10, 65535, 3}, {40000, 5, 60000}}
  check_eq(x[2][3]:item(), 60000, "x[2][3]")
  check(x[1].dtype == U)
  check_eq(x[{2, {2, 3}}]:totable(), {5, 60000}, "slice")
  check_eq(x[x:gt(100)]:totable(), {65535, 40000, 60000}, "mask")
  check_eq(x:index_select(2, torch.tensor{3, 1}):totable(), {{3, 10}, {60000, 40000}}, "index_select")
  check_eq(x:gather(2, torch.tensor{{2}, {3}}):totable(), {{65535}, {60000}}, "gather")
  local y = torch.zeros(3, {dtype = U})
  y:scatter_add_(1, torch.tensor{1, 1, 3}, u16{65535, 2, 9})
  check_eq(y:totable(), {1, 0, 9}, "scatter_add wraps: 65535 + 2 = 1")
  y[2] = 65535
  y[{{1, 1}}] = 7
  check_eq(y:totable(), {7, 65535, 9}, "assignment")
  check_eq(torch.where(x:gt(100), x, u16{0}):totable(), {{0, 65535, 0}, {40000, 0, 60000}}, "where")
  check_eq(x:masked_fill(x:lt(100), 65535):totable(), {{65535, 65535, 65535}, {40000, 65535, 60000}}, "masked_fill")
  check_eq(torch.cat({x, x[{{1, 1}}]}):totable(), {{10, 65535, 3}, {40000, 5, 60000}, {10, 65535, 3}}, "cat")
  check_eq(x:t():contiguous():totable(), {{10, 40000}, {65535, 5}, {3, 60000}}, "transpose + contiguous")
  check_eq(x:flip(2):totable(), {{3, 65535, 10}, {60000, 5, 40000}}, "flip")
end)

test("item, totable, tolist give Lua integers 0..65535", function()
  local x = u16{65535, 0}
  check(math.type(x[1]:item()) == "integer", "item is an integer")
  check_eq(x[1]:item(), 65535)
  check_eq(x:tolist(), {65535, 0})
  check(math.type(x:totable()[1]) == "integer")
end)

test("matrix product wraps modulo 2^16 (NumPy's uint16 matmul)", function()
  local p, q = u16(R.mm.p), u16(R.mm.q)
  local r = p:mm(q)
  check(r.dtype == U)
  check_eq(r:totable(), R.mm.pq)
end)

test("printing: as int32 prints the same values, with dtype=uint16", function()
  for _, t in ipairs{{1, 2, 65535}, {{0, 40000}, {7, 8}}, {5}} do
    local want = tostring(torch.tensor(t, {dtype = torch.int32})):gsub("dtype=int32", "dtype=uint16")
    check_eq(tostring(u16(t)), want)
  end
  check_eq(tostring(u16(3):reshape{}), "tensor(3, dtype=uint16)")
  local big = tostring(torch.arange(0, 5000, {dtype = U}))
  check(big:find("...", 1, true) and big:find("4999", 1, true) and big:find("dtype=uint16", 1, true), big)
end)

local dir = os.tmpname()
os.remove(dir)
assert(os.execute("mkdir -p '" .. dir .. "'"))

test("safetensors: a uint16 tensor round trips as dtype U16 with little-endian bytes", function()
  local x = u16{{0, 1, 258}, {65535, 40000, 32768}}
  local path = dir .. "/u.safetensors"
  torch.save({w = x, other = torch.ones(2)}, path)
  local y = torch.load(path)
  check(y.w.dtype == U, "loads as uint16")
  check_eq(y.w:totable(), x:totable())
  local f = io.open(path, "rb")
  local s = f:read("a")
  f:close()
  local n = string.unpack("<I8", s)
  local header = s:sub(9, 8 + n)
  check(header:find('"dtype":"U16"', 1, true), header)
  local off = header:match('"w":{[^}]*"data_offsets":%[(%d+),')
  check(off, header)
  local body = s:sub(9 + n + tonumber(off), 9 + n + tonumber(off) + 11)
  check_eq({string.unpack("<I2I2I2I2I2I2", body)}, {0, 1, 258, 65535, 40000, 32768, 13})
end)

test("safetensors: a U16 file written by Python (json + struct, by the format's rules) loads", function()
  if not io.open("/usr/bin/python3") then return print("  (no /usr/bin/python3: skipped)") end
  local path = dir .. "/py_u16.safetensors"
  local py = [[
import json, struct, sys
vals = [0, 1, 2, 65535, 32768, 4660]
data = struct.pack("<6H", *vals)
hdr = json.dumps({"x": {"dtype": "U16", "shape": [2, 3], "data_offsets": [0, len(data)]}}).encode()
hdr += b" " * (-len(hdr) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(hdr)) + hdr + data)
]]
  local h = io.popen("/usr/bin/python3 - '" .. path .. "' 2>&1", "w")
  h:write(py)
  h:close()
  local t = torch.load(path)
  check(t.x and t.x.dtype == U, "a uint16 tensor")
  check_eq(t.x:totable(), {{0, 1, 2}, {65535, 32768, 4660}})
  -- and Python reads back the file we write
  local out = dir .. "/ours_u16.safetensors"
  torch.save({y = u16{{7, 65535}, {256, 1}}}, out)
  local q = io.popen("/usr/bin/python3 -c 'import json,struct,sys; b=open(sys.argv[1],\"rb\").read(); "
                     .. "n=struct.unpack(\"<Q\",b[:8])[0]; h=json.loads(b[8:8+n]); e=h[\"y\"]; "
                     .. "o=e[\"data_offsets\"]; print(e[\"dtype\"], e[\"shape\"], "
                     .. "list(struct.unpack(\"<4H\", b[8+n+o[0]:8+n+o[1]])))' '" .. out .. "' 2>&1")
  local line = q:read("a")
  q:close()
  check_eq(line, "U16 [2, 2] [7, 65535, 256, 1]\n")
end)

test("torch.compile: uint16 graphs compile and match eager (wrapping, mixed int32, reductions)", function()
  local function f(a, b)
    return (a * 3 + b):bitwise_xor(a), (a - b):sum(), a:gt(b):logical_and(a:ne(0)), a + b:int(), a:amax()
  end
  local c = torch.compile(f)
  local a, b = u16(R.a), u16(R.b)
  local before = torch.compiler.stats().compiles
  for _ = 1, 3 do
    local e, g = {f(a, b)}, {c(a, b)}
    for k = 1, #e do
      check(e[k].dtype == g[k].dtype, "dtype of output " .. k)
      check_eq(g[k]:totable(), e[k]:totable(), "output " .. k)
    end
  end
  local want = {}
  for k = 1, #R.a do want[k] = ((R.a[k] * 3 + R.b[k]) % 65536) ~ R.a[k] end
  check_eq((c(a, b)):totable(), want, "closed form: (3a + b) mod 2^16 xor a")
  if os.getenv("MOONTORCH_JIT") ~= "0" then
    check(torch.compiler.stats().compiles > before, "it compiled rather than falling back")
  end
end)

test("torch.compile: uint16 reductions and integer ops compile one graph each and match eager", function()
  local m = u16(R.m)
  local fs = {
    amin = function(x) return x:amin() end, amax2 = function(x) return x:amax(2) end,
    prod2 = function(x) return x:prod(2) end, sum1 = function(x) return x:sum(1) end,
    neg = function(x) return -x end, floordiv = function(x) return x // 3 end, rem = function(x) return x % 7 end,
    clamp = function(x) return x:clamp(5, 40000) end, amin_of_wrapped = function(x) return (x * 2 + 1):amin(1) end,
    mean_float = function(x) return x:float():mean() end,
  }
  for name, f in pairs(fs) do
    local c = torch.compile(f)
    local before = torch.compiler.stats().compiles
    for _ = 1, 2 do
      local e, g = f(m), c(m)
      check(e.dtype == g.dtype, name .. ": dtype")
      if e:is_floating_point() then check_close(g, e, {rtol = 1e-6}) else check_eq(g:totable(), e:totable(), name) end
    end
    if os.getenv("MOONTORCH_JIT") ~= "0" then
      check_eq(torch.compiler.stats().compiles - before, 1, name .. " compiled once")
    end
  end
end)
