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

-- ---- threads: batch chunks and 1-D passes (tensor/cpu/fft_fftw.c) ----

-- fn() run with each thread count of ts; the previous count restored
local function with_threads(ts, fn)
  local saved = torch.get_num_threads()
  local out = {}
  for _, t in ipairs(ts) do
    torch.set_num_threads(t)
    local ok, r = pcall(fn)
    if not ok then
      torch.set_num_threads(saved)
      error(r, 0)
    end
    out[t] = r
  end
  torch.set_num_threads(saved)
  return out
end

-- the DFT of complex x ({re, im} float64 matrices) along dim 1 (rows):
-- D x with D[j][k] = exp(sign 2 pi i j k / n), the closed form
local function dft_rows(x, sign)
  local n = x[1]:size(1)
  local k = torch.arange(0, n, {dtype = torch.float64})
  local ang = torch.outer(k, k) * (sign * 2 * math.pi / n)
  local c, s = ang:cos(), ang:sin()
  return {c:matmul(x[1]) - s:matmul(x[2]), c:matmul(x[2]) + s:matmul(x[1])}
end

-- the 2-d DFT of a matrix pair (rows, then columns through transposes)
local function dft2(x, sign)
  local r = dft_rows(x, sign)
  local t = dft_rows({r[1]:t(), r[2]:t()}, sign)
  return torch.stack({t[1]:t(), t[2]:t()}, -1)
end

test("batched transforms split over 2, 3 and 4 threads equal the single-thread result bit for bit", function()
  torch.manual_seed(7)
  local C = torch._fft
  local cases = {
    -- odd batch counts; rows of 201 bins (8-byte steps: chunk starts must keep 16-byte alignment)
    {"r2c 7x101x400", function(x) return C.fft_r2c(x, 4, 0) end, torch.randn(7, 101, 400)},
    {"c2r 7x101x201 -> 400", function(x) return C.fft_c2r(x, 4, 400, 2) end, torch.randn(7, 101, 201, 2)},
    {"c2c 5x33x100 float64 ortho", function(x) return C.fft_c2c(x, 4, true, 1) end,
     torch.randn(5, 33, 100, 2, {dtype = torch.float64})},
    -- strided input: transposed, the batch dim not outermost
    {"c2c strided 7x99x64", function(x) return C.fft_c2c(x, 4, false, 2) end, torch.randn(99, 7, 64, 2):transpose(1, 2)},
    -- two-sided r2c (fft of a real signal): each chunk fills its own conjugate half
    {"r2c full 65x1000", function(x) return C.fft_r2c(x, 2, 2, true) end, torch.randn(65, 1000)},
    {"rfft2 9x64x64", function(x) return C.fft_r2c(x, 6, 0) end, torch.randn(9, 64, 64)},
  }
  for _, c in ipairs(cases) do
    local r = with_threads({1, 2, 3, 4}, function() return c[2](c[3]) end)
    for t = 2, 4 do
      check(torch.equal(r[t], r[1]), ("%s: %d threads differ from 1 thread by %g"):format(c[1], t,
        (r[t] - r[1]):abs():max():item()))
    end
  end
  -- and the split result is the transform: rows against the closed-form DFT
  local x = torch.randn(67, 300, {dtype = torch.float64})
  local y = with_threads({3}, function() return C.fft_r2c(x, 2, 2, true) end)[3]
  for _, row in ipairs {1, 23, 67} do
    local ref = dft_rows({x[row]:view(300, 1), torch.zeros(300, 1, {dtype = torch.float64})}, -1)
    check_close(y[row], torch.cat({ref[1], ref[2]}, 2) / 300, {rtol = 1e-10, atol = 1e-12})
  end
end)

test("multi-dim transforms with fewer batch entries than threads (1-D passes) match the closed-form DFT", function()
  torch.manual_seed(8)
  local C = torch._fft
  local x = torch.randn(1, 190, 260, {dtype = torch.float64})
  local z = torch.randn(2, 64, 48, 2, {dtype = torch.float64})
  local r = with_threads({1, 3}, function()
    return {C.fft_r2c(x, 6, 2), C.fft_c2c(z, 6, false, 1), C.fft_c2r(C.fft_r2c(x, 6, 0), 6, 260, 2),
            C.fft_r2c(x:transpose(2, 3), 6, 0)}
  end)
  for _, t in ipairs {1, 3} do
    local rfft2, ifft2, back, strided = table.unpack(r[t])
    local ref = dft2({x[1], torch.zeros(190, 260, {dtype = torch.float64})}, -1)
    check_close(rfft2[1], ref:narrow(2, 1, 131) / (190 * 260), {rtol = 1e-10, atol = 1e-14})
    for b = 1, 2 do
      local refc = dft2({z[b]:select(3, 1), z[b]:select(3, 2)}, 1)
      check_close(ifft2[b], refc / math.sqrt(64 * 48), {rtol = 1e-10, atol = 1e-12})
    end
    check_close(back, x, {rtol = 1e-10, atol = 1e-12})
    local reft = dft2({x[1]:t(), torch.zeros(260, 190, {dtype = torch.float64})}, -1)
    check_close(strided[1], reft:narrow(2, 1, 96), {rtol = 1e-10, atol = 1e-9})
  end
  -- float32 within 1e-5 of float64 on 3 threads
  local xf = x:float()
  local yf = with_threads({3}, function() return C.fft_r2c(xf, 6, 2) end)[3]
  check_close(yf:double(), r[1][1], {rtol = 1e-5, atol = 1e-6})
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
