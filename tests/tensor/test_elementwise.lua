-- tests/tensor/test_elementwise.lua -- elementwise ops and type promotion
-- against values computed by PyTorch (tests/ref/elementwise.lua).
test("add broadcasts a row over a matrix", function()
  local a = torch.tensor({{1, 2, 3}, {4, 5, 6}})
  local b = torch.tensor({10, 20, 30})
  check_close(a + b, {{11, 22, 33}, {14, 25, 36}})
  check_eq((a + b).dtype, torch.int64)
end)

test("int tensor plus Lua float gives the default float dtype", function()
  local a = torch.tensor({1, 2}, {dtype = torch.int32})
  check_eq((a + 2.5).dtype, torch.float32)
  check_eq((a + 2).dtype, torch.int32)
  check_close(a / 2, {0.5, 1.0})
end)

test("shape mismatch names the op and shapes", function()
  check_error(function() return torch.ones(2, 3) + torch.ones(4) end, "add: shapes 2x3 and 4 cannot be broadcast")
end)

-- ---- PyTorch reference values (tests/ref/elementwise.lua) ----
local R = ref("elementwise")
local function dt(name) return torch[name] end
local function tol(d) return (d == "float64") and {atol = 1e-12, rtol = 1e-12} or {atol = 1e-6, rtol = 2e-6} end

-- a non-contiguous copy of x: every other element of a doubled tensor
local function strided(x)
  local big = torch.zeros(x:numel() * 2, {dtype = x.dtype})
  local v = big:unfold(1, 1, 2):view(-1)
  v:copy_(x:reshape(-1))
  return v:view(x.shape)
end

for name, c in pairs(R) do
  if name:match("^u_") or name:match("^p_") then
    test("unary " .. name .. " matches PyTorch (function, method, strided)", function()
      local x = torch.tensor(c.x, {dtype = dt(c.dtype)})
      for _, y in ipairs({torch[c.op](x), x[c.op](x), torch[c.op](strided(x))}) do
        check_eq(y.dtype, dt(c.out_dtype), c.op .. " dtype")
        check_close(y, c.expected, tol(c.out_dtype))
      end
    end)
  elseif name:match("^b_") then
    test("binary " .. name .. " matches PyTorch with broadcasting", function()
      local a = torch.tensor(c.a, {dtype = dt(c.dtype)})
      local b = torch.tensor(c.b, {dtype = dt(c.dtype)})
      for _, y in ipairs({torch[c.op](a, b), a[c.op](a, b), torch[c.op](a.T:contiguous().T, b)}) do
        check_eq(y.dtype, dt(c.out_dtype), c.op .. " dtype")
        check_close(y, c.expected, tol(c.out_dtype))
      end
    end)
  end
end

test("type promotion of every dtype pair matches torch.result_type", function()
  for _, row in ipairs(R.promotion_tensors.rows) do
    local a, b = torch.zeros(2, {dtype = dt(row[1])}), torch.zeros(2, {dtype = dt(row[2])})
    check_eq(torch.result_type(a, b), dt(row[3]), row[1] .. " with " .. row[2])
    check_eq((a + b).dtype, dt(row[3]), "dtype of " .. row[1] .. " + " .. row[2])
  end
end)

test("Lua numbers and 0-dim tensors promote like PyTorch's scalars", function()
  local scalar = {int = 2, float = 2.5, bool = true}
  for _, row in ipairs(R.promotion_scalars.rows) do
    local a = torch.zeros(2, {dtype = dt(row[1])})
    local s = scalar[row[2]] or torch.tensor(1.0, {dtype = torch.float64})
    check_eq(torch.result_type(a, s), dt(row[3]), row[1] .. " with " .. row[2])
  end
end)

test("clamp, where, lerp, nan_to_num and leaky_relu match PyTorch", function()
  check_close(torch.clamp(torch.tensor(R.clamp.x), R.clamp.min, R.clamp.max), R.clamp.expected)
  check_close(torch.tensor(R.clamp.x):clamp{min = R.clamp.min, max = R.clamp.max}, R.clamp.expected)
  check_close(torch.clamp(torch.tensor(R.clamp_min.x), {min = R.clamp_min.min}), R.clamp_min.expected)
  check_close(torch.where(torch.tensor(R.where.cond), torch.tensor(R.where.a), R.where.b), R.where.expected)
  check_close(torch.lerp(torch.tensor(R.lerp.a), torch.tensor(R.lerp.b), R.lerp.w), R.lerp.expected)
  check_close(torch.nan_to_num(torch.tensor(R.nan_to_num.x)), R.nan_to_num.expected, {rtol = 1e-7})
  local n = R.nan_to_num_args
  check_close(torch.nan_to_num(torch.tensor(n.x), n.nan, n.posinf, n.neginf), n.expected)
  check_close(torch.leaky_relu(torch.tensor(R.leaky_relu.x), R.leaky_relu.slope), R.leaky_relu.expected)
end)

test("float16 and bfloat16 round like PyTorch", function()
  for _, d in ipairs({"float16", "bfloat16"}) do
    local c = R["half_" .. d]
    local x = torch.tensor(c.x, {dtype = dt(d)})
    check_close(x, c.stored, {atol = 0, rtol = 0})
    check_close(torch.exp(x[{{1, 3}}]), c.exp, {atol = 0, rtol = 0})
    check_close(x * 1.5, c.mul, {atol = 0, rtol = 0})
    check_close(x + x, c.add, {atol = 0, rtol = 0})
  end
end)

test("int32 addition wraps around like PyTorch", function()
  local a = torch.tensor(R.int32_wrap.a, {dtype = torch.int32})
  local b = torch.tensor(R.int32_wrap.b, {dtype = torch.int32})
  check_eq((a + b):totable(), R.int32_wrap.expected)
end)

test("in-place ops write through and bump the version", function()
  local x = torch.tensor({1.0, 2.0, 3.0})
  local v0 = x:_version()
  x:mul_(2):add_(1)
  check_close(x, {3, 5, 7})
  check(x:_version() > v0)
  local y = torch.tensor({{1.0, 2.0}, {3.0, 4.0}})
  y[1]:exp_()
  check_close(y, {{math.exp(1), math.exp(2)}, {3, 4}})
end)

test("out= writes into the given tensor", function()
  local o = torch.empty(3, {dtype = torch.float64})
  local r = torch.add(torch.tensor({1.0, 2.0, 3.0}), 1, {out = o})
  check(r == o, "returns the out tensor")
  check_close(o, {2, 3, 4})
end)

test("add/sub take alpha positionally or in the options; other ops reject a third argument", function()
  local a, b = torch.tensor({1.0, 2.0}), torch.tensor({10.0, 20.0})
  check_eq(torch.add(a, b, 2):totable(), {21, 42})
  check_eq(a:sub(b, {alpha = 0.5}):totable(), {-4, -8})
  local c = a:clone()
  c:add_(b, -1)
  check_eq(c:totable(), {-9, -18})
  check_error(function() torch.mul(a, b, 3) end, "mul: unexpected argument #3")
end)

test("float32 tanh (the JIT's formula in AVX2) on a dense sweep: within 1.5 ulp of float64 tanh; NaN, inf, -0", function()
  local steps = torch.arange(0, 2 ^ 12):double() / 2 ^ 12 + 1
  local parts = {}
  for e = -30, 4 do
    parts[#parts + 1] = steps * 2 ^ e
    parts[#parts + 1] = steps * -(2 ^ e)
  end
  local x = torch.cat(parts):float()
  for _, v in ipairs{x, torch.stack({x, x}, 2):select(2, 1)} do -- contiguous and gathered paths
    local got, want = v:tanh():double(), v:double():tanh()
    local ulp = torch.exp2((want:abs():float():double():log2()):floor() - 23)
    local worst = ((got - want):abs() / ulp):max():item()
    -- CUDA's tanhf is documented at 2 ulp; ours on the CPU holds 1.5
    check(worst <= (DEVICE == "cpu" and 1.5 or 2), "tanh error in ulps: " .. worst)
  end
  local e = torch.tensor({0 / 0, math.huge, -math.huge, -0.0, 30, -30}):float():tanh()
  check(e[1]:isnan():item(), "tanh(nan)")
  check_eq(e[2]:item(), 1)
  check_eq(e[3]:item(), -1)
  check(1 / e[4]:item() == -math.huge, "tanh(-0) is -0")
  check_eq(e[5]:item(), 1)
  check_eq(e[6]:item(), -1)
end)
