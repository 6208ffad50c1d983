-- tests/tensor/test_fft.lua -- torch.fft (lua_bindings/fft/, tensor/fft.c,
-- tensor/cpu/fft_fftw.c) against PyTorch 1.13 (tests/ref/fft.lua from
-- gen_fft.py): every transform on random inputs of several shapes, dims,
-- sizes (n=/s= trimming and padding, odd and even) and norms, in float64
-- and float32, with the gradients PyTorch's autograd gives; frequencies,
-- shifts and windows; closed-form cases (Parseval, the inverse pairs) and
-- argument errors.
local R = ref("fft")

local function weights(n)
  local t = {}
  for k = 0, n - 1 do t[k + 1] = math.cos(0.37 * k + 0.1) end
  return torch.tensor(t, {dtype = torch.float64})
end

-- a leaf (real, or the real view of a complex input) and the input made from it
local function input_of(t, cplx, dtype)
  local leaf = torch.tensor(t.values, {dtype = dtype}):view(t.shape):requires_grad_()
  return leaf, cplx and torch.view_as_complex(leaf) or leaf
end

local function rv(t) return t:is_complex() and torch.view_as_real(t) or t end

local function expected(t, dtype) return torch.tensor(t.values, {dtype = dtype}):view(t.shape) end

local function label(c)
  local parts = {}
  for k, v in pairs(c.opts) do parts[#parts + 1] = k .. "=" .. (type(v) == "table" and "{" .. table.concat(v, ",") .. "}" or tostring(v)) end
  table.sort(parts)
  return ("%s %s%s {%s}"):format(c.fn, c.complex and "complex " or "", table.concat(c.x.shape, "x"), table.concat(parts, " "))
end

for _, c in ipairs(R.cases) do
  test("torch.fft." .. label(c) .. " matches PyTorch (float64 values and gradient)", function()
    local leaf, x = input_of(c.x, c.complex, torch.float64)
    local out = torch.fft[c.fn](x, c.opts)
    check_shape(rv(out), c.out.shape)
    check_close(rv(out), expected(c.out, torch.float64), {rtol = 1e-8, atol = 1e-10})
    local r = rv(out);
    (r * weights(r:numel()):view(r.shape)):sum():backward()
    check_close(leaf.grad, expected(c.grad, torch.float64), {rtol = 1e-8, atol = 1e-10})
  end)
  test("torch.fft." .. label(c) .. " in float32 matches PyTorch", function()
    local _, x = input_of(c.x, c.complex, torch.float32)
    local out = torch.fft[c.fn](x:detach(), c.opts)
    check(rv(out).dtype == torch.float32, "dtype " .. tostring(rv(out).dtype))
    check_close(rv(out), expected(c.out, torch.float32), {rtol = 1e-4, atol = 1e-4})
  end)
end

test("fftfreq, rfftfreq, fftshift and ifftshift match PyTorch", function()
  local M = R.misc
  check_close(torch.fft.fftfreq(5), M.fftfreq5, {rtol = 1e-6})
  check_close(torch.fft.fftfreq(8, 0.1), M.fftfreq8, {rtol = 1e-6})
  check_close(torch.fft.rfftfreq(9, {d = 0.5}), M.rfftfreq9, {rtol = 1e-6})
  local f = torch.fft.rfftfreq(10, {dtype = torch.float64})
  check(f.dtype == torch.float64)
  check_close(f, M.rfftfreq10, {rtol = 1e-12})
  check_eq(torch.fft.fftshift(torch.arange(5)):totable(), M.shift5)
  check_eq(torch.fft.ifftshift(torch.arange(5)):totable(), M.ishift5)
  check_eq(torch.fft.fftshift(torch.arange(12):view(3, 4)):totable(), M.shift34)
  check_eq(torch.fft.ifftshift(torch.arange(12):view(3, 4), {dim = 2}):totable(), M.ishift34_d1)
end)

for _, w in ipairs(R.windows) do
  local name = ("torch.%s(%d, periodic=%s%s%s) %s matches PyTorch"):format(w.fn, w.n, tostring(w.periodic),
    w.alpha and ", alpha=" .. w.alpha or "", w.beta and ", beta=" .. w.beta or "", w.dtype)
  test(name, function()
    local dt = torch[w.dtype]
    local got
    if w.alpha then got = torch[w.fn](w.n, w.periodic, w.alpha, w.beta, {dtype = dt})
    elseif w.beta then got = torch[w.fn](w.n, {periodic = w.periodic, beta = w.beta, dtype = dt})
    else got = torch[w.fn](w.n, w.periodic, {dtype = dt}) end
    check(got.dtype == dt, "dtype")
    check_shape(got, {w.n})
    if w.n > 0 then check_close(got, w.values, {rtol = dt == torch.float32 and 1e-4 or 1e-8, atol = dt == torch.float32 and 1e-6 or 1e-12}) end
  end)
end

test("windows: default periodic=true is the symmetric window of n + 1 points without its last", function()
  local a, b = torch.hann_window(16), torch.hann_window(17, false):narrow(1, 1, 16)
  check_close(a, b, {rtol = 1e-6, atol = 1e-7})
  check(torch.hann_window(4, {requires_grad = true}).requires_grad)
end)

test("Parseval: sum |x|^2 = sum |fft(x)|^2 / n, and ortho is unitary", function()
  local x = torch.randn(3, 50, {dtype = torch.float64})
  local X = torch.view_as_real(torch.fft.fft(x))
  check_close((X * X):sum() / 50, (x * x):sum(), {rtol = 1e-10})
  local Xo = torch.view_as_real(torch.fft.fft(x, {norm = "ortho"}))
  check_close((Xo * Xo):sum(), (x * x):sum(), {rtol = 1e-10})
end)

test("inverse pairs: ifft(fft(x)), irfft(rfft(x), n), irfftn(rfftn(x), s) give x back", function()
  local x = torch.randn(4, 6, 9, {dtype = torch.float64})
  check_close(torch.view_as_real(torch.fft.ifft(torch.fft.fft(x))):select(-1, 1), x, {rtol = 1e-10, atol = 1e-12})
  check_close(torch.fft.irfft(torch.fft.rfft(x), {n = 9}), x, {rtol = 1e-10, atol = 1e-12})
  check_close(torch.fft.irfftn(torch.fft.rfftn(x), {s = {4, 6, 9}}), x, {rtol = 1e-10, atol = 1e-12})
  for _, norm in ipairs {"backward", "ortho", "forward"} do
    check_close(torch.fft.irfft(torch.fft.rfft(x, {norm = norm}), 9, -1, norm), x, {rtol = 1e-10, atol = 1e-12})
  end
end)

test("a pure tone's rfft is one bin of height n / 2 (closed form)", function()
  local n = 64
  local t = torch.arange(n, {dtype = torch.float64})
  local x = (t * (2 * math.pi * 5 / n)):cos()
  local X = torch.view_as_real(torch.fft.rfft(x))
  local mag = (X * X):sum(-1):sqrt()
  check_close(mag[6], n / 2, {rtol = 1e-12})
  mag[6] = 0
  check(mag:max():item() < 1e-10, "other bins " .. mag:max():item())
end)

test("integer input is promoted to the default dtype; results are complex64 for float32", function()
  local y = torch.fft.fft(torch.tensor({1, 2, 3, 4}))
  check(y.dtype == torch.complex64, tostring(y.dtype))
  check_close(torch.view_as_real(y), {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}})
  check(torch.fft.rfft(torch.randn(8, {dtype = torch.float64})).dtype == torch.complex128)
end)

test("non-contiguous and strided inputs transform like their contiguous copies", function()
  local x = torch.randn(6, 10, {dtype = torch.float64}):t()
  check_close(torch.view_as_real(torch.fft.rfft(x, {dim = 1})), torch.view_as_real(torch.fft.rfft(x:contiguous(), {dim = 1})), {rtol = 1e-12})
  local y = torch.randn(8, 12, {dtype = torch.float64}):narrow(2, 3, 7)
  check_close(torch.view_as_real(torch.fft.fft2(y)), torch.view_as_real(torch.fft.fft2(y:contiguous())), {rtol = 1e-12})
end)

test("big batches split over threads agree with a single transform per row", function()
  local x = torch.randn(64, 1000)
  local all = torch.view_as_real(torch.fft.rfft(x))
  for _, r in ipairs {1, 17, 64} do
    check_close(all[r], torch.view_as_real(torch.fft.rfft(x[r])), {rtol = 1e-5, atol = 1e-4})
  end
end)

test("bad arguments are errors naming the function and the values", function()
  local x = torch.randn(4, 5)
  check_error(function() torch.fft.fft(x, {norm = "bogus"}) end, "invalid normalization mode: 'bogus'")
  check_error(function() torch.fft.fft(x, {dim = 3}) end, "torch.fft.fft: dim 3 out of range for a 2-d tensor")
  check_error(function() torch.fft.fft(x, {n = 0}) end, "invalid number of data points (0)")
  check_error(function() torch.fft.rfft(torch.fft.fft(x)) end, "rfft: expects a real input tensor")
  check_error(function() torch.fft.fftn(x, {s = {3}, dim = {1, 2}}) end, "must have the same length")
  check_error(function() torch.fft.fft2(x, {dim = {1, 1}}) end, "dims must be unique")
  check_error(function() torch.fft.fft(x, {bogus = 1}) end, "unknown option 'bogus'")
  check_error(function() torch.fft.irfft(torch.fft.rfft(torch.randn(1)), {n = 0}) end, "invalid number of data points")
  check_error(function() torch.fft.fft(torch.tensor(3.0)) end, "at least one dimension")
  check_error(function() torch.hann_window(-1) end, "non-negative window_length")
  check_error(function() torch.hann_window(4, {dtype = torch.int64}) end, "floating point dtype")
  check_error(function() torch._fft.fft_c2r(torch.zeros(3, 2), 1, 8, 0) end, "8 output points need 5 input bins")
  check_close(torch.view_as_real(torch.fft.fft(torch.ones(4))):sum(), 4) -- the session goes on
end)

test("options positionally in PyTorch's order equal the same options by name", function()
  local x = torch.randn(4, 6, {dtype = torch.float64})
  local a = torch.view_as_real(torch.fft.fftn(x, {3, 5}, {1, 2}, "ortho"))
  local b = torch.view_as_real(torch.fft.fftn(x, {s = {3, 5}, dim = {1, 2}, norm = "ortho"}))
  check_close(a, b, {rtol = 0, atol = 0})
  check_close(torch.view_as_real(torch.fft.rfft(x, 8, 1)), torch.view_as_real(torch.fft.rfft(x, {n = 8, dim = 1})),
    {rtol = 0, atol = 0})
end)
