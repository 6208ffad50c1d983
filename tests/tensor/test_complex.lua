-- tests/tensor/test_complex.lua -- complex64 / complex128 tensors: the dtypes
-- and their promotion, creation, the views between complex and real
-- layouts, copies and casts, movement ops, printing, totable/item,
-- safetensors, the elementwise ops and reductions that take complex
-- operands, and the refusal of every other op. Values come from PyTorch 1.13
-- (tests/ref/gen_complex.py -> tests/ref/complex.lua) or closed-form rules
-- stated beside each check.

local R = ref("complex")
local C64, C128 = torch.complex64, torch.complex128

-- the generator's grid: sin(k a + b) * 2 over k = 0 .. n*m-1, float64
local function grid(n, m, a, b)
  return torch.arange(n * m, {dtype = torch.float64}):reshape(n, m):mul(a):add(b):sin():mul(2)
end
local Z = torch.complex(grid(3, 4, 0.7, 0.1), grid(3, 4, 1.3, 0.5))
local W = torch.complex(grid(3, 4, 0.4, 1.1), grid(3, 4, 0.9, 0.2)) + 0.5
local RE = grid(3, 4, 0.3, 0.8)

test("the inputs match the generator's", function()
  check_close(Z, R.Z, {atol = 1e-12})
  check_close(W, R.W, {atol = 1e-12})
  check_close(RE, R.R, {atol = 1e-12})
end)

test("dtypes: names, item sizes, aliases, is_complex, not floating, type names", function()
  check_eq(tostring(C64), "torch.complex64")
  check_eq(C64.itemsize, 8)
  check_eq(C128.itemsize, 16)
  check(torch.cfloat == C64 and torch.cdouble == C128, "cfloat/cdouble aliases")
  check(not C64.is_floating_point)
  local z = torch.zeros(2, {dtype = "complex128"})
  check(z.dtype == C128 and z:is_complex() and torch.is_complex(z))
  check(not torch.zeros(2):is_complex() and not z:is_floating_point())
  check_eq(z:element_size(), 16)
  check_eq(torch.zeros(1, {dtype = C64}):type(), "torch.ComplexFloatTensor")
  check_eq(z:type(), "torch.ComplexDoubleTensor")
end)

test("promotion: PyTorch's promote_types and 0-dim / number rules", function()
  for key, want in pairs(R.promote) do
    local a, b = key:match("^(.-)_(complex%d+)$")
    check_eq(torch.promote_types(torch[a], torch[b]).name, want, key)
  end
  check_eq((torch.ones(2) + torch.tensor({0, 1}, {dtype = C128})).dtype.name, R.result_type.f32_dim_c128_0dim)
  check_eq((torch.ones(2, {dtype = torch.int32}) + torch.tensor({0, 1}, {dtype = C128})).dtype.name,
           R.result_type.i32_dim_c128_0dim)
  check_eq((torch.ones(2, {dtype = C64}) + torch.tensor(1.0, {dtype = torch.float64})).dtype.name,
           R.result_type.c64_dim_f64_0dim)
  check_eq((torch.ones(2, {dtype = C64}) * 2.5).dtype.name, R.result_type.c64_times_num)
  check_eq((torch.ones(2, {dtype = C64}) + torch.ones(2, {dtype = torch.float64})).dtype.name, "complex128")
end)

test("creation: tensor from {re, im} pairs and numbers, zeros, ones, full, empty, *_like", function()
  local z = torch.tensor({{1, 2}, 3, {-0.5, 0.25}}, {dtype = C64})
  check_shape(z, {3})
  check_eq(z:totable(), {{1, 2}, {3, 0}, {-0.5, 0.25}})
  local s = torch.tensor({1, 2}, {dtype = C128}) -- a pair is one complex number
  check_eq(s:dim(), 0)
  check_eq(s:item(), {1, 2})
  check_shape(torch.tensor({{{1, 2}, {3, 4}}}, {dtype = C128}), {1, 2})
  check_eq(torch.zeros(2, {dtype = C64}):totable(), {{0, 0}, {0, 0}})
  check_eq(torch.ones(2, {dtype = C128}):totable(), {{1, 0}, {1, 0}})
  local f = torch.full({2, 2}, {1.5, -2})
  check(f.dtype == C64, "a complex fill value gives complex64")
  check_eq(f:totable(), {{{1.5, -2}, {1.5, -2}}, {{1.5, -2}, {1.5, -2}}})
  check_eq(torch.full({1}, 3, {dtype = C128}):totable(), {{3, 0}})
  check_error(function() torch.full({1}, {1, 2}, {dtype = torch.float32}) end, "needs a complex dtype")
  check(torch.empty(3, {dtype = C128}).dtype == C128)
  check(torch.zeros_like(z).dtype == C64 and torch.ones_like(z):totable()[2][1] == 1)
end)

test("torch.complex and torch.polar (closed form), with their dtype rules", function()
  local c = torch.complex(torch.tensor({1.0, 2.0}), torch.tensor({3.0, 4.0}))
  check(c.dtype == C64)
  check_eq(c:totable(), {{1, 3}, {2, 4}})
  check(torch.complex(RE, RE).dtype == C128)
  check_close(torch.complex(RE, RE * 2), R.ops.complex, {atol = 1e-12})
  check_close(torch.complex(torch.ones(2, 1), torch.zeros(3)), torch.ones(2, 3, {dtype = C64})) -- broadcast
  check_error(function() torch.complex(torch.ones(2), torch.ones(2, {dtype = torch.float64})) end,
              "same dtype")
  check_error(function() torch.complex(torch.ones(2, {dtype = torch.int64}), torch.ones(2, {dtype = torch.int64})) end,
              "float32 or float64")
  check_close(torch.polar(RE:abs(), RE * 3), R.ops.polar, {atol = 1e-12})
  local p = torch.polar(torch.tensor({2.0}), torch.tensor({math.pi / 2}))
  check_close(p, {{0, 2}}, {atol = 1e-6})
end)

test("view_as_real / view_as_complex share storage; PyTorch's errors for bad layouts", function()
  local z = Z:clone()
  local r = torch.view_as_real(z)
  check_shape(r, {3, 4, 2})
  check(r.dtype == torch.float64)
  check_eq(r:stride(), {8, 2, 1})
  r[{1, 1, 2}] = 42 -- writes through
  check_eq(z[1][1]:item()[2], 42)
  local back = torch.view_as_complex(r)
  check(back.dtype == C128 and back:eq(z):all():item())
  back[{2, 3}] = 7
  check_eq(z[2][3]:item(), {7, 0})
  local t = torch.view_as_real(z:t()) -- transposed: strides doubled
  check_eq(t:stride(), {2, 8, 1})
  check(torch.view_as_complex(torch.arange(8.0):view(2, 2, 2)).dtype == C64)
  check_error(function() torch.view_as_complex(torch.arange(6.0):view(2, 3)) end, "last dimension must have size 2")
  check_error(function() torch.view_as_complex(torch.arange(8.0):view(2, 2, 2):transpose(2, 3)) end, "stride 1")
  check_error(function() torch.view_as_complex(torch.arange(12.0):view(2, 6):narrow(2, 2, 2)) end, "offset")
  check_error(function() torch.view_as_complex(torch.arange(15.0):view(3, 5):narrow(2, 1, 2)) end,
              "divisible by 2")
  check_error(function() torch.view_as_complex(torch.tensor(1.0)) end, "at least one dimension")
  check_error(function() torch.view_as_complex(torch.ones(2, 2, {dtype = torch.int32})) end,
              "only float32 and float64")
  check_error(function() torch.view_as_real(torch.ones(2)) end, "expected a complex tensor")
end)

test("x.real, x.imag and torch.real/imag are views; imag of a real tensor is an error", function()
  local z = Z:clone()
  check_close(z.real, grid(3, 4, 0.7, 0.1))
  check_close(torch.imag(z), grid(3, 4, 1.3, 0.5))
  z.real:fill_(1)
  z.imag[1]:fill_(-2)
  check_eq(z[1][1]:item(), {1, -2})
  check_eq(z[2][1]:item()[1], 1)
  check(RE.real:eq(RE):all():item(), "real of a real tensor is itself")
  check_error(function() return RE.imag end, "imag: not implemented for real tensors")
end)

test("copies and casts: real <-> complex, complex64 <-> complex128, copy_, clone, contiguous", function()
  local r = torch.tensor({1.5, -2, 3})
  check_eq(r:to(C64):totable(), {{1.5, 0}, {-2, 0}, {3, 0}})
  check_eq(torch.tensor({1, 2}):to(C128):totable(), {{1, 0}, {2, 0}})
  check_eq(Z:to(torch.float64):totable(), grid(3, 4, 0.7, 0.1):totable()) -- the real part, as PyTorch
  check_close(Z:to(C64), Z, {atol = 1e-6})
  check(Z:to(C64):to(C128):sub(Z):abs():max():item() < 1e-6)
  local d = torch.zeros(3, 4, {dtype = C64})
  d:copy_(Z)
  check_close(d, Z, {atol = 1e-6})
  d:copy_(RE:t():t())
  check_close(d, torch.complex(RE:float(), torch.zeros(3, 4)), {atol = 1e-6})
  local nc = Z:t()
  check(not nc:is_contiguous())
  local c = nc:contiguous()
  check(c:is_contiguous() and c:eq(nc):all():item())
  local cl = Z:clone()
  cl[1][1] = 0
  check(Z[1][1]:item()[1] ~= 0, "clone has its own storage")
end)

test("movement ops on complex128 (16-byte elements): views, flip, roll, cat, stack, split, indexing", function()
  local z = Z
  local v = z:view(4, 3)
  check_eq(v[2][1]:item(), z[1][4]:item())
  check_eq(z:reshape(12)[6]:item(), z[2][2]:item())
  check_eq(z:t()[4][3]:item(), z[3][4]:item())
  check_eq(z:permute(2, 1)[1][2]:item(), z[2][1]:item())
  check_eq(z:narrow(2, 2, 2)[1][1]:item(), z[1][2]:item())
  check_eq(z:select(1, 3)[4]:item(), z[3][4]:item())
  check_eq(z:unsqueeze(1):squeeze(1)[2][2]:item(), z[2][2]:item())
  check_eq(z[1]:expand(2, 4)[2][3]:item(), z[1][3]:item())
  check_eq(z:flip(2)[1][1]:item(), z[1][4]:item())
  check_eq(z:roll(1, 2)[1][1]:item(), z[1][4]:item())
  local c = torch.cat({z, z:mul(2)}, 1)
  check_shape(c, {6, 4})
  check_eq(c[4][2]:item(), z[1][2]:mul(2):item())
  local s = torch.stack({z, z}, 3)
  check_shape(s, {3, 4, 2})
  check_eq(s[2][3][2]:item(), z[2][3]:item())
  check_eq(z:split(3, 2)[2][1][1]:item(), z[1][4]:item())
  check_eq(z[{2, {2, 3}}]:totable(), {z[2][2]:item(), z[2][3]:item()})
  local m = z[z.real:gt(0)]
  check_eq(m:numel(), z.real:gt(0):sum():item())
  check_eq(z[torch.tensor({3, 1})][1][4]:item(), z[3][4]:item())
  local w = z:clone()
  w[{2, 1}] = 5
  w[3] = torch.tensor({1, -1}, {dtype = C128})
  check_eq(w[2][1]:item(), {5, 0})
  check_eq(w[3]:totable(), {{1, -1}, {1, -1}, {1, -1}, {1, -1}})
end)

test("printing in PyTorch's style (1.13's output, dtype without 'torch.')", function()
  check_eq(tostring(torch.tensor({{1, 2}, {-3.5, -0.25}, {0, 1e-5}}, {dtype = C64})), table.concat(R.print.mixed, "\n"))
  check_eq(tostring(torch.tensor({{{1, 2}, 3}, {4, {0, 5}}}, {dtype = C128})), table.concat(R.print.ints, "\n"))
  check_eq(tostring(torch.tensor({1, 2}, {dtype = C64})), table.concat(R.print.scalar, "\n"))
  check_eq(tostring(torch.tensor({{0.5, -1.25}, {2.125, 0.75}}, {dtype = C64})), table.concat(R.print.fixed, "\n"))
  check(tostring(torch.zeros(0, {dtype = C64})):find("dtype=complex64", 1, true))
end)

test("totable and item give {re, im}; save and load keep both complex dtypes", function()
  check_eq(Z[1][1]:item(), Z:totable()[1][1])
  check_eq(torch.tensor({0.5, 2}, {dtype = C64}):item(), {0.5, 2})
  local path = os.tmpname() .. ".safetensors"
  torch.save({a = Z, b = Z:to(C64), nested = {c = Z:t()}}, path)
  local l = torch.load(path)
  check(l.a.dtype == C128 and l.a:eq(Z):all():item())
  check(l.b.dtype == C64 and l.b:eq(Z:to(C64)):all():item())
  check(l.nested.c:eq(Z:t()):all():item())
  os.remove(path)
end)

local function ops_case(name, got, atol)
  check_close(got, R.ops[name], {atol = atol or 1e-10, rtol = 1e-9})
end

test("elementwise arithmetic: complex op complex / real tensor / Lua number (PyTorch values)", function()
  ops_case("add", Z + W); ops_case("sub", Z - W); ops_case("mul", Z * W); ops_case("div", Z / W)
  ops_case("add_real", Z + RE); ops_case("mul_real", RE * Z); ops_case("div_real", Z / RE)
  ops_case("mul_num", Z * 2.5); ops_case("rsub_num", 2 - Z); ops_case("div_num", 1.5 / Z)
  ops_case("neg", -Z)
  check_close((Z:to(C64) * W:to(C64)), R.ops.mul, {atol = 1e-5, rtol = 1e-4})
end)

test("complex math: conj, abs, angle, exp, log, sqrt, rsqrt, reciprocal, square, sgn, pow", function()
  ops_case("conj", Z:conj()); ops_case("conj", torch.conj_physical(Z)); ops_case("conj", Z:resolve_conj():conj())
  ops_case("abs", Z:abs()); ops_case("angle", Z:angle()); ops_case("exp", Z:exp()); ops_case("log", Z:log())
  ops_case("sqrt", Z:sqrt()); ops_case("rsqrt", Z:rsqrt()); ops_case("reciprocal", Z:reciprocal())
  ops_case("square", Z:square()); ops_case("sgn", Z:sgn()); ops_case("pow_2", Z:pow(2))
  ops_case("pow_2_5", Z ^ 2.5); ops_case("pow_neg", Z:pow(-0.75)); ops_case("pow_zw", Z:pow(W))
  check(Z:abs().dtype == torch.float64 and Z:to(C64):abs().dtype == torch.float32, "abs is real")
  check(Z:angle().dtype == torch.float64)
  ops_case("angle_real", torch.tensor({-1.0, 0.0, 2.0, -0.0}):angle())
  check_eq(torch.conj(torch.tensor({1, 2})):totable(), {1, 2})
  -- a stable |z|: no overflow where re^2 would
  check_close(torch.tensor({3e200, 4e200}, {dtype = C128}):abs(), {5e200}, {rtol = 1e-15})
end)

test("reductions and comparisons: sum, mean over dims, eq, ne, isfinite, isnan", function()
  ops_case("sum", Z:sum()); ops_case("sum_dim", Z:sum(2)); ops_case("mean", Z:mean())
  ops_case("mean_dim_keep", Z:mean(1, true))
  check_eq(Z:eq(Z * torch.tensor({1, 2, 1, 1})):totable(), R.ops.eq)
  check_eq(Z:ne(Z):any():item(), false)
  local inf = torch.tensor({{1, 2}, {math.huge, 0}, {0, 0 / 0}}, {dtype = C64})
  check_eq(inf:isfinite():totable(), R.ops.isfinite)
  check_eq(inf:isnan():totable(), {false, false, true})
  check_eq(inf:isinf():totable(), {false, true, false})
  check(Z:to(C64):sum().dtype == C64)
end)

test("every other op refuses complex tensors by name instead of computing garbage", function()
  check_error(function() Z:sin() end, "sin: complex128 tensors are not supported")
  check_error(function() torch.sigmoid(Z:to(C64)) end, "sigmoid: complex64 tensors are not supported")
  check_error(function() return Z % 2 end, "remainder: complex128 tensors are not supported")
  check_error(function() Z:lt(W) end, "lt: complex128 tensors are not supported")
  check_error(function() Z:matmul(W:t()) end, "matmul: complex128 tensors are not supported")
  check_error(function() Z:max() end, "max: complex128 tensors are not supported")
  check_error(function() Z:prod() end, "prod: complex128 tensors are not supported")
  check_error(function() Z:scatter_add(1, torch.tensor({{1}}), Z) end, "scatter_add: complex128 tensors are not supported")
  check_error(function() torch.atan2(Z, W) end, "atan2: complex128 tensors are not supported")
  check_error(function() torch.nn.functional.relu(Z) end, "complex128 tensors are not supported")
  check_error(function() Z:softmax(1) end, "complex128 tensors are not supported")
  check_error(function() Z:cumsum(1) end, "complex128 tensors are not supported")
  check_error(function() Z:sort() end, "complex128 tensors are not supported")
  check_error(function() Z:clamp(0, 1) end, "complex128 tensors are not supported")
  check_eq(Z:sum():item(), R.ops.sum, "the session goes on")
end)

test("the by-parts path (CUDA's: real kernels on the parts) agrees with the CPU kernels", function()
  local specials = torch.tensor({{0, 0}, {1e300, 1e300}, {-2, 0}, {0, -3}, {1e-300, 2e-300}}, {dtype = torch.complex128})
  for _, name in ipairs{"neg", "conj", "abs", "angle", "exp", "log", "sqrt", "rsqrt", "reciprocal", "square", "sgn",
                        "isnan", "isinf", "isfinite"} do
    check_close(torch._complex_parts(name, Z), torch[name](Z), {atol = 1e-12, rtol = 1e-12})
    check_close(torch._complex_parts(name, Z:to(C64)), torch[name](Z:to(C64)), {atol = 1e-5, rtol = 1e-5})
  end
  for _, name in ipairs{"add", "sub", "mul", "div", "pow", "eq", "ne"} do
    check_close(torch._complex_parts(name, Z, W), torch[name](Z, W), {atol = 1e-12, rtol = 1e-11})
    check_close(torch._complex_parts(name, Z, RE), torch[name](Z, RE), {atol = 1e-12, rtol = 1e-11})
  end
  check_close(torch._complex_parts("mul", Z, torch.tensor(2.5)), Z * 2.5, {atol = 1e-12})
  -- scaled division and |z|: no overflow or underflow to 0 where the naive forms would
  check_close(torch._complex_parts("abs", specials), specials:abs(), {rtol = 1e-15})
  check_close(torch._complex_parts("div", specials:narrow(1, 2, 4), specials:narrow(1, 2, 4)),
              torch.ones(4, {dtype = torch.complex128}), {rtol = 1e-15})
  check_close(torch._complex_parts("reciprocal", specials:narrow(1, 2, 4)), specials:narrow(1, 2, 4):reciprocal(),
              {rtol = 1e-15})
end)

test("in place: arithmetic on complex tensors, writes through x.real / x.imag with gradients, abs_ refused", function()
  local w = Z:clone()
  w:mul_(2):add_(Z)
  check_close(w, Z * 3, {atol = 1e-12})
  check_error(function() RE:clone():add_(Z) end, "can't be cast to the output's dtype float64")
  check_error(function() Z:clone():abs_() end, "in-place abs is not supported for complex tensors")
  -- y.real *= 2, y.imag += 1, L = sum |y|: dL/dz = (2 * 2re + i (im + 1)) / |y| (closed form)
  local z = Z:clone():requires_grad_()
  local y = z * 1
  y.real:mul_(2)
  y.imag:add_(1)
  y:abs():sum():backward()
  local re, im = Z.real * 2, Z.imag + 1
  local m = (re * re + im * im):sqrt()
  check_close(z.grad, torch.complex(re * 2 / m, im / m), {atol = 1e-12})
end)

test("pow: exact small integer powers (z^2 = z z) and 0^0 = 1, as PyTorch", function()
  local z = torch.tensor({{1, 2}, {3, 4}}, {dtype = C64})
  check_eq((z ^ 2):totable(), {{-3, 4}, {-7, 24}})
  check_eq((z ^ 3):totable(), {{-11, -2}, {-117, 44}})
  check_eq((torch.zeros(1, {dtype = C128}) ^ 0):totable(), {{1, 0}})
end)

test("a safetensors file with a C64 tensor written by hand (as other tools write it) loads", function()
  local header = '{"z":{"dtype":"C64","shape":[2],"data_offsets":[0,16]}}'
  local data = string.pack("<ffff", 1.5, -2, 0.25, 8)
  local path = os.tmpname() .. ".safetensors"
  local f = assert(io.open(path, "wb"))
  f:write(string.pack("<I8", #header), header, data)
  f:close()
  local l = torch.load(path)
  check(l.z.dtype == C64)
  check_eq(l.z:totable(), {{1.5, -2}, {0.25, 8}})
  os.remove(path)
end)

test("complex64 angle and exp (vectorized rows, strided views, special values) agree with complex128", function()
  local big = torch.complex(torch.randn(37, 29, {dtype = torch.float64}), torch.randn(37, 29, {dtype = torch.float64}))
  local z = big:to(C64)
  check_close(z:angle(), big:to(C64):to(C128):angle(), {atol = 1e-6})
  check_close(z:t():angle(), big:to(C64):to(C128):t():angle(), {atol = 1e-6})
  check_close(z:exp(), big:to(C64):to(C128):exp(), {atol = 1e-5, rtol = 1e-5})
  check_close(z:t():exp(), big:to(C64):to(C128):t():exp(), {atol = 1e-5, rtol = 1e-5})
  local sp = torch.tensor({{0, 0}, {-1, 0}, {0, -1}, {-math.huge, 1}, {1, 0}, {2, 3}, {0 / 0, 0}, {3, -4}, {0.5, 0.5}},
                          {dtype = C64})
  local sp2 = sp:to(C128)
  check_close(sp:angle(), sp2:angle(), {atol = 1e-6, nan_ok = true})
  local e, e2 = sp:exp(), sp2:exp()
  check_close(e, e2, {atol = 1e-5, rtol = 1e-5, nan_ok = true})
end)
