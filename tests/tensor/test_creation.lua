-- tests/tensor/test_creation.lua -- arange, linspace, logspace and eye
-- (tensor/creation.c) against PyTorch's values, dtypes and shapes
-- (tests/ref/creation.lua, made by tests/ref/gen_creation.py), bit for bit.

local function describe(c)
  local a = {}
  for i, v in ipairs(c.args) do a[i] = tostring(v) end
  return ("%s(%s%s)"):format(c.fn, table.concat(a, ", "), c.dtype and (", " .. c.dtype) or "")
end

local function run_case(c)
  local args = {table.unpack(c.args)}
  if c.dtype then args[#args + 1] = {dtype = torch[c.dtype]} end
  return torch[c.fn](table.unpack(args))
end

for _, fn in ipairs({"arange", "linspace", "logspace", "eye"}) do
  test(fn .. " matches PyTorch exactly (values, dtype, shape)", function()
    for _, c in ipairs(ref("creation")) do
      if c.fn == fn then
        local t = run_case(c)
        check_eq(t.dtype.name, c.out_dtype, describe(c) .. " dtype")
        check_eq(t:size(), setmetatable(c.shape, getmetatable(t:size())), describe(c) .. " shape")
        local got = t:flatten():totable()
        for i, want in ipairs(c.values) do
          if got[i] ~= want then
            error(("%s: value %d is %.17g, PyTorch gives %.17g"):format(describe(c), i, got[i], want))
          end
        end
      end
    end
  end)
end

test("arange infers int64 from integers and the default dtype from floats", function()
  check_eq(torch.arange(3).dtype, torch.int64)
  check_eq(torch.arange(0, 3, 1).dtype, torch.int64)
  check_eq(torch.arange(3.0).dtype, torch.float32)
  check_eq(torch.arange(0, 1, 0.5).dtype, torch.float32)
  torch.set_default_dtype(torch.float64)
  local ok, t = pcall(torch.arange, 0, 1, 0.5)
  torch.set_default_dtype(torch.float32)
  assert(ok, t)
  check_eq(t.dtype, torch.float64)
end)

test("arange takes step from an options table and 0-dim tensors as bounds", function()
  check_close(torch.arange(0, 10, {step = 4}), {0, 4, 8})
  check_close(torch.arange(torch.tensor(2), torch.tensor(5)), {2, 3, 4})
end)

test("linspace and logspace default to the default dtype, also for integer bounds", function()
  check_eq(torch.linspace(0, 10, 3).dtype, torch.float32)
  check_eq(torch.logspace(0, 2, 3).dtype, torch.float32)
  check_close(torch.logspace(0, 3, 4, {base = 2}), {1, 2, 4, 8})
end)

test("eye is the identity, square or rectangular, in any dtype", function()
  check_close(torch.eye(2, 3, {dtype = torch.bool}), {{true, false, false}, {false, true, false}})
  check_close(torch.eye(3, {m = 1}), {{1}, {0}, {0}})
end)

test("out= receives the result", function()
  local o = torch.zeros(4)
  local r = torch.arange(4, {out = o})
  check(rawequal(r, o) or r == o, "returns out")
  check_close(o, {0, 1, 2, 3})
  check_error(function() torch.linspace(0, 1, 5, {out = torch.zeros(3)}) end, "linspace: out= has shape 3")
end)

test("large arange and linspace are correct at thread-chunk boundaries", function()
  local n = 100003
  local a = torch.arange(n):totable()
  for i = 1, n, 997 do check(a[i] == i - 1, "arange value " .. i) end
  check(a[n] == n - 1)
  local l = torch.linspace(0, 1, n, {dtype = torch.float64}):totable()
  check(l[1] == 0 and l[n] == 1, "linspace ends are exact")
  check(math.abs(l[50002] - 0.5) < 1e-15, "linspace midpoint")
end)

test("requires_grad= marks the result (when autograd is loaded)", function()
  if not pcall(torch.ones, 1, {requires_grad = true}) then return end
  check(torch.arange(0.0, 3.0, {requires_grad = true}).requires_grad == true)
  check(torch.linspace(0, 1, 3, {requires_grad = true}).requires_grad == true)
end)

test("errors name the op and the bad values", function()
  check_error(function() torch.arange(0, 5, 0) end, "arange: step must be nonzero")
  check_error(function() torch.arange(0, 5, 0.5, {dtype = torch.int32}) end, "arange: step must be nonzero")
  check_error(function() torch.arange(5, 0, 1) end, "arange: step 1 moves away from end (start 5, end 0)")
  check_error(function() torch.arange(0, 1 / 0) end, "arange: start and end must be finite")
  check_error(function() torch.arange(3, {dtype = torch.bool}) end, "arange: dtype bool is not supported")
  check_error(function() torch.arange() end, "arange: expected arange(end)")
  check_error(function() torch.arange("a") end, "arange: end must be a number, got string")
  check_error(function() torch.linspace(0, 1, -2) end, "linspace: number of steps must be non-negative, got -2")
  check_error(function() torch.linspace(0, 1) end, "linspace: expected the number of steps")
  check_error(function() torch.linspace(0, 300, 3, {dtype = torch.uint8}) end, "linspace: end 300 does not fit in uint8")
  check_error(function() torch.eye(-1) end, "eye: sizes must be non-negative, got n=-1")
  check_error(function() torch.eye(2, {device = "cuda:9"}) end, "cuda")
end)
