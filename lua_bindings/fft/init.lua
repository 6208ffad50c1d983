-- torch.fft -- PyTorch's torch.fft on the engine's three transforms
-- (torch._fft: c2c, r2c, c2r over a set of dims, on complex data as real
-- views [..., 2]). This file turns names, n=/s=, dim= and norm= into those
-- calls: dims are 1-based or negative, options come positionally in
-- PyTorch's order or in a trailing table. Every step is a recorded op, so
-- all of it is differentiable.
local torch = require "torch"
local C = torch._fft
local M = {}

local NORM = {backward = 0, ortho = 1, forward = 2}

-- The engine's norm code for a transform in direction `forward` under
-- PyTorch's norm= name (nil: "backward").
local function norm_code(fname, norm, forward)
  if norm == nil or norm == false then norm = "backward" end
  local m = NORM[norm]
  if not m then
    error(("torch.fft.%s: invalid normalization mode: '%s' (expected 'backward', 'ortho' or 'forward')")
      :format(fname, tostring(norm)), 4)
  end
  if m == 1 then return 1 end
  if forward then return m == 0 and 0 or 2 end
  return m == 0 and 2 or 0
end

local function is_complex(x) return x.is_complex ~= nil and x:is_complex() end

-- complex x -> its real view; the inverse for results
local function real_view(x) return torch.view_as_real(x) end
local function complex_of(y) return torch.view_as_complex(y) end

-- x as a floating tensor (integers and bool to the default dtype)
local function floating(x)
  if is_complex(x) or x:is_floating_point() then return x end
  return x:to(torch.get_default_dtype())
end

-- x (complex) as a real view; real x promoted to complex first
local function as_real_view(x)
  x = floating(x)
  if is_complex(x) then return real_view(x) end
  return torch.stack({x, torch.zeros_like(x)}, -1)
end

-- Options: positional values after the input in PyTorch's order, or one
-- trailing table by name.
local function options(fname, names, ...)
  local args = table.pack(...)
  local o = {}
  -- a trailing table without a [1] holds options (a list is a positional s= or dim=)
  if args.n >= 1 and type(args[args.n]) == "table" and not torch.is_tensor(args[args.n]) and args[args.n][1] == nil then
    local t = args[args.n]
    for k, v in pairs(t) do
      local ok = false
      for _, nm in ipairs(names) do ok = ok or nm == k end
      if not ok then
        error(("torch.fft.%s: unknown option '%s' (expected one of %s)"):format(fname, tostring(k), table.concat(names, ", ")), 3)
      end
      o[k] = v
    end
    args.n = args.n - 1
  end
  for i = 1, args.n do
    if args[i] ~= nil and o[names[i]] == nil then o[names[i]] = args[i] end
  end
  return o
end

-- 1-based (or negative) dim d of a rank-nd signal, 0-based
local function wrap(fname, d, nd)
  if math.type(d) ~= "integer" then error(("torch.fft.%s: dim must be an integer, got %s"):format(fname, tostring(d)), 4) end
  local w = d < 0 and nd + d or d - 1
  if w < 0 or w >= nd or d == 0 then
    error(("torch.fft.%s: dim %d out of range for a %d-d tensor (expected 1..%d or -%d..-1)")
      :format(fname, d, nd, nd, nd), 4)
  end
  return w
end

-- The 0-based dims and the sizes (nil: keep) of an n-dim transform:
-- dim and s as PyTorch's fftn takes them (dim nil: all dims, or the last
-- #s dims when s is given).
local function dims_sizes(fname, nd, dim, s, default_dims)
  local dims = {}
  if type(s) == "number" then s = {s} end
  if dim == nil or dim == false then
    if s then
      for i = 1, #s do dims[i] = nd - #s + i - 1 end
    elseif default_dims then
      for i, d in ipairs(default_dims) do dims[i] = wrap(fname, d, nd) end
    else
      for i = 1, nd do dims[i] = i - 1 end
    end
  else
    if type(dim) == "number" then dim = {dim} end
    for i, d in ipairs(dim) do dims[i] = wrap(fname, d, nd) end
  end
  local seen = {}
  for _, d in ipairs(dims) do
    if seen[d] then error(("torch.fft.%s: dims must be unique"):format(fname), 3) end
    seen[d] = true
  end
  if s and #s ~= #dims then
    error(("torch.fft.%s: when given, dim and shape arguments must have the same length (%d and %d)")
      :format(fname, #dims, #s), 3)
  end
  local sizes = {}
  for i = 1, #dims do
    local v = s and s[i]
    if v ~= nil and v ~= -1 then
      if math.type(v) ~= "integer" or v < 1 then
        error(("torch.fft.%s: invalid number of data points (%s) specified"):format(fname, tostring(v)), 3)
      end
      sizes[i] = v
    end
  end
  if #dims == 0 then error(("torch.fft.%s: no dims to transform"):format(fname), 3) end
  return dims, sizes
end

-- x with dim d (0-based) trimmed or zero-padded at the end to n
local function resize(x, d, n)
  local cur = x:size(d + 1)
  if n == cur then return x end
  if n < cur then return x:narrow(d + 1, 1, n) end
  local shape = x.shape
  shape[d + 1] = n - cur
  return torch.cat({x, torch.zeros(shape, {dtype = x.dtype, device = x.device})}, d + 1)
end

local function mask_of(dims)
  local m = 0
  for _, d in ipairs(dims) do m = m | (1 << d) end
  return m
end

-- ---- the c2c family ----

local function c2c_n(fname, x, dims, sizes, norm, forward)
  if forward and not is_complex(x) then -- real input: a two-sided r2c (Hermitian fill in C)
    x = floating(x)
    for i, d in ipairs(dims) do
      if sizes[i] then x = resize(x, d, sizes[i]) end
    end
    return complex_of(C.fft_r2c(x, mask_of(dims), norm_code(fname, norm, true), true))
  end
  local xr = as_real_view(x)
  for i, d in ipairs(dims) do
    if sizes[i] then xr = resize(xr, d, sizes[i]) end
  end
  return complex_of(C.fft_c2c(xr, mask_of(dims), forward, norm_code(fname, norm, forward)))
end

local ONE = {"n", "dim", "norm"}
local MANY = {"s", "dim", "norm"}

local function one_dim(fname, x, o)
  local nd = x:dim()
  if nd == 0 then error(("torch.fft.%s: expected a tensor with at least one dimension"):format(fname), 3) end
  local dims, sizes = dims_sizes(fname, nd, o.dim or -1, o.n and {o.n} or nil)
  return dims, sizes
end

function M.fft(x, ...)
  local o = options("fft", ONE, ...)
  local dims, sizes = one_dim("fft", x, o)
  return c2c_n("fft", x, dims, sizes, o.norm, true)
end

function M.ifft(x, ...)
  local o = options("ifft", ONE, ...)
  local dims, sizes = one_dim("ifft", x, o)
  return c2c_n("ifft", x, dims, sizes, o.norm, false)
end

function M.fftn(x, ...)
  local o = options("fftn", MANY, ...)
  local dims, sizes = dims_sizes("fftn", x:dim(), o.dim, o.s)
  return c2c_n("fftn", x, dims, sizes, o.norm, true)
end

function M.ifftn(x, ...)
  local o = options("ifftn", MANY, ...)
  local dims, sizes = dims_sizes("ifftn", x:dim(), o.dim, o.s)
  return c2c_n("ifftn", x, dims, sizes, o.norm, false)
end

function M.fft2(x, ...)
  local o = options("fft2", MANY, ...)
  local dims, sizes = dims_sizes("fft2", x:dim(), o.dim, o.s, {-2, -1})
  return c2c_n("fft2", x, dims, sizes, o.norm, true)
end

function M.ifft2(x, ...)
  local o = options("ifft2", MANY, ...)
  local dims, sizes = dims_sizes("ifft2", x:dim(), o.dim, o.s, {-2, -1})
  return c2c_n("ifft2", x, dims, sizes, o.norm, false)
end

-- ---- real input: r2c over dims, the last listed dim halved ----

local function r2c_n(fname, x, dims, sizes, norm, forward)
  x = floating(x)
  if is_complex(x) then error(("torch.fft.%s: expects a real input tensor, but got %s"):format(fname, tostring(x.dtype)), 3) end
  for i, d in ipairs(dims) do
    if sizes[i] then x = resize(x, d, sizes[i]) end
  end
  local code = norm_code(fname, norm, forward)
  local last, rest, maxd = dims[#dims], {}, -1
  for i = 1, #dims - 1 do rest[i] = dims[i]; maxd = math.max(maxd, dims[i]) end
  if last > maxd then return C.fft_r2c(x, mask_of(dims), code) end
  -- the halved dim is not the highest: r2c along it, then c2c over the rest
  local y = C.fft_r2c(x, 1 << last, code)
  return C.fft_c2c(y, mask_of(rest), true, code)
end

function M.rfft(x, ...)
  local o = options("rfft", ONE, ...)
  local dims, sizes = one_dim("rfft", x, o)
  return complex_of(r2c_n("rfft", x, dims, sizes, o.norm, true))
end

function M.rfftn(x, ...)
  local o = options("rfftn", MANY, ...)
  local dims, sizes = dims_sizes("rfftn", x:dim(), o.dim, o.s)
  return complex_of(r2c_n("rfftn", x, dims, sizes, o.norm, true))
end

function M.rfft2(x, ...)
  local o = options("rfft2", MANY, ...)
  local dims, sizes = dims_sizes("rfft2", x:dim(), o.dim, o.s, {-2, -1})
  return complex_of(r2c_n("rfft2", x, dims, sizes, o.norm, true))
end

-- ihfft: the conjugate of rfft, normalized as an inverse transform


-- ---- Hermitian input: c2r, the last listed dim of lastn points ----

local function c2r_n(fname, x, dims, sizes, norm, forward, conj)
  local xr = as_real_view(x)
  local last = dims[#dims]
  local lastn = sizes[#dims] or 2 * (xr:size(last + 1) - 1)
  if lastn < 1 then
    error(("torch.fft.%s: invalid number of data points (%d) specified"):format(fname, lastn), 3)
  end
  for i, d in ipairs(dims) do
    if i < #dims and sizes[i] then xr = resize(xr, d, sizes[i]) end
  end
  xr = resize(xr, last, lastn // 2 + 1)
  if conj then xr = xr * torch.tensor({1, -1}, {dtype = xr.dtype, device = xr.device}) end
  local code = norm_code(fname, norm, forward)
  local rest, maxd = {}, -1
  for i = 1, #dims - 1 do rest[i] = dims[i]; maxd = math.max(maxd, dims[i]) end
  if last > maxd then return C.fft_c2r(xr, mask_of(dims), lastn, code) end
  xr = C.fft_c2c(xr, mask_of(rest), false, code)
  return C.fft_c2r(xr, 1 << last, lastn, code)
end

function M.irfft(x, ...)
  local o = options("irfft", ONE, ...)
  local dims, sizes = one_dim("irfft", x, o)
  return c2r_n("irfft", x, dims, sizes, o.norm, false, false)
end

function M.irfftn(x, ...)
  local o = options("irfftn", MANY, ...)
  local dims, sizes = dims_sizes("irfftn", x:dim(), o.dim, o.s)
  return c2r_n("irfftn", x, dims, sizes, o.norm, false, false)
end

function M.irfft2(x, ...)
  local o = options("irfft2", MANY, ...)
  local dims, sizes = dims_sizes("irfft2", x:dim(), o.dim, o.s, {-2, -1})
  return c2r_n("irfft2", x, dims, sizes, o.norm, false, false)
end

-- hfft: irfft of the conjugate, normalized as a forward transform
function M.hfft(x, ...)
  local o = options("hfft", ONE, ...)
  local dims, sizes = one_dim("hfft", x, o)
  return c2r_n("hfft", x, dims, sizes, o.norm, true, true)
end

-- hfftn: irfftn of the conjugate, normalized as a forward transform (the
-- last dim of dim is the Hermitian half)
function M.hfftn(x, ...)
  local o = options("hfftn", MANY, ...)
  local dims, sizes = dims_sizes("hfftn", x:dim(), o.dim, o.s)
  return c2r_n("hfftn", x, dims, sizes, o.norm, true, true)
end

function M.hfft2(x, ...)
  local o = options("hfft2", MANY, ...)
  local dims, sizes = dims_sizes("hfft2", x:dim(), o.dim, o.s, {-2, -1})
  return c2r_n("hfft2", x, dims, sizes, o.norm, true, true)
end

-- ihfftn: the conjugate of rfftn, normalized as an inverse transform
local function ihfft_n(fname, x, dims, sizes, norm)
  local y = r2c_n(fname, x, dims, sizes, norm, false)
  return complex_of(y * torch.tensor({1, -1}, {dtype = y.dtype, device = y.device}))
end

function M.ihfft(x, ...)
  local o = options("ihfft", ONE, ...)
  local dims, sizes = one_dim("ihfft", x, o)
  return ihfft_n("ihfft", x, dims, sizes, o.norm)
end

function M.ihfftn(x, ...)
  local o = options("ihfftn", MANY, ...)
  local dims, sizes = dims_sizes("ihfftn", x:dim(), o.dim, o.s)
  return ihfft_n("ihfftn", x, dims, sizes, o.norm)
end

function M.ihfft2(x, ...)
  local o = options("ihfft2", MANY, ...)
  local dims, sizes = dims_sizes("ihfft2", x:dim(), o.dim, o.s, {-2, -1})
  return ihfft_n("ihfft2", x, dims, sizes, o.norm)
end

-- ---- frequencies and shifts ----

local FREQ = {"d", "dtype", "device", "requires_grad"}

local function freq_opts(fname, n, ...)
  if math.type(n) ~= "integer" or n < 0 then
    error(("torch.fft.%s: n must be a non-negative integer, got %s"):format(fname, tostring(n)), 3)
  end
  local o = options(fname, FREQ, ...)
  return o.d or 1.0, {dtype = o.dtype or torch.get_default_dtype(), device = o.device}, o.requires_grad
end

-- [0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d n)
function M.fftfreq(n, ...)
  local d, copts, rg = freq_opts("fftfreq", n, ...)
  local k = torch.arange(n, copts)
  local half = (n + 1) // 2
  if n > half then k = torch.cat({k:narrow(1, 1, half), k:narrow(1, half + 1, n - half) - n}) end
  local r = k * (1.0 / (n * d))
  if rg then r:requires_grad_(true) end
  return r
end

-- [0, 1, ..., floor(n/2)] / (d n)
function M.rfftfreq(n, ...)
  local d, copts, rg = freq_opts("rfftfreq", n, ...)
  local r = torch.arange(n // 2 + 1, copts) * (1.0 / (n * d))
  if rg then r:requires_grad_(true) end
  return r
end

local function shift(fname, x, dim, inverse)
  local nd = x:dim()
  local dims = {}
  if dim == nil or dim == false then
    for i = 1, nd do dims[i] = i end
  else
    if type(dim) == "number" then dim = {dim} end
    for i, d in ipairs(dim) do dims[i] = wrap(fname, d, nd) + 1 end
  end
  if #dims == 0 then return x end
  local shifts = {}
  for i, d in ipairs(dims) do
    local n = x:size(d)
    shifts[i] = inverse and (n + 1) // 2 or n // 2
  end
  return x:roll(shifts, dims)
end

function M.fftshift(x, ...)
  local o = options("fftshift", {"dim"}, ...)
  return shift("fftshift", x, o.dim, false)
end

function M.ifftshift(x, ...)
  local o = options("ifftshift", {"dim"}, ...)
  return shift("ifftshift", x, o.dim, true)
end

-- for torch.fft._stft
M._options, M._is_complex, M._floating = options, is_complex, floating

M.__help = "torch.fft -- discrete Fourier transforms (PyTorch's torch.fft): fft, ifft, rfft, irfft, fft2, ifft2, " ..
  "fftn, ifftn, rfft2, irfft2, rfftn, irfftn, hfft, ihfft, hfft2, ihfft2, hfftn, ihfftn, fftfreq, rfftfreq, " ..
  "fftshift, ifftshift"
return M
