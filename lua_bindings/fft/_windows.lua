-- torch.fft._windows -- torch.hann_window, hamming_window, blackman_window,
-- bartlett_window and kaiser_window with PyTorch's formulas, evaluated in
-- the window's dtype in PyTorch's order of operations (so float32 windows
-- round as PyTorch's do). periodic=true (the default) computes n + 1 points
-- and drops the last, the form spectral analysis wants.
local torch = require "torch"
local M = {}

-- Splits (n, positional..., {options}) into n, the positionals (by name)
-- and the creation options (dtype, device, requires_grad, layout).
local function parse(fname, names, defaults, ...)
  local args = table.pack(...)
  local n = args[1]
  if math.type(n) ~= "integer" then
    if type(n) == "number" and n == math.floor(n) then n = math.tointeger(n)
    else error(("torch.%s: window_length must be an integer, got %s"):format(fname, tostring(args[1])), 3) end
  end
  if n < 0 then error(("torch.%s: requires non-negative window_length, got window_length=%d"):format(fname, n), 3) end
  local vals, opts = {}, {}
  local last = args.n
  if type(args[last]) == "table" and last > 1 then
    for k, v in pairs(args[last]) do
      local known = false
      for i, name in ipairs(names) do
        if k == name then vals[i], known = v, true end
      end
      if not known then
        if k == "dtype" or k == "device" or k == "requires_grad" or k == "layout" then opts[k] = v
        else error(("torch.%s: unknown option '%s'"):format(fname, tostring(k)), 3) end
      end
    end
    last = last - 1
  end
  for i = 2, last do
    if vals[i - 1] == nil then vals[i - 1] = args[i] end
  end
  for i, d in ipairs(defaults) do
    if vals[i] == nil then vals[i] = d end
  end
  local dtype = opts.dtype or torch.get_default_dtype()
  if dtype ~= torch.float32 and dtype ~= torch.float64 and dtype ~= torch.float16 and dtype ~= torch.bfloat16 then
    error(("torch.%s: expected a floating point dtype, got %s"):format(fname, tostring(dtype)), 3)
  end
  return n, vals, {dtype = dtype, device = opts.device}, opts.requires_grad
end

-- The window of n points from body(k, m): k = arange(m) in dtype, m the
-- points computed (n + 1 when periodic), or the trivial windows.
local function make(n, periodic, copts, rg, body)
  local w
  if n == 0 then w = torch.empty(0, copts)
  elseif n == 1 then w = torch.ones(1, copts)
  else
    local m = periodic and n + 1 or n
    w = body(torch.arange(m, copts), m)
    if periodic then w = w:narrow(1, 1, n):contiguous() end
  end
  if rg then w:requires_grad_(true) end
  return w
end

local function hamming(fname, n, periodic, alpha, beta, copts, rg)
  return make(n, periodic, copts, rg, function(k, m)
    return (k * (math.pi * 2 / (m - 1))):cos() * -beta + alpha
  end)
end

function M.hann_window(...)
  local n, v, copts, rg = parse("hann_window", {"periodic"}, {true}, ...)
  return hamming("hann_window", n, v[1], 0.5, 0.5, copts, rg)
end

function M.hamming_window(...)
  local n, v, copts, rg = parse("hamming_window", {"periodic", "alpha", "beta"}, {true, 0.54, 0.46}, ...)
  return hamming("hamming_window", n, v[1], v[2], v[3], copts, rg)
end

function M.blackman_window(...)
  local n, v, copts, rg = parse("blackman_window", {"periodic"}, {true}, ...)
  return make(n, v[1], copts, rg, function(k, m)
    local w = k * (math.pi / (m - 1))
    return (w * 4):cos() * 0.08 - (w * 2):cos() * 0.5 + 0.42
  end)
end

function M.bartlett_window(...)
  local n, v, copts, rg = parse("bartlett_window", {"periodic"}, {true}, ...)
  return make(n, v[1], copts, rg, function(k, m)
    local w = k * (2 / (m - 1))
    local first = ((m - 1) >> 1) + 1
    local tail = w:narrow(1, first + 1, m - first) * -1 + 2
    return torch.cat({w:narrow(1, 1, first), tail})
  end)
end

-- I0, the modified Bessel function of the first kind of order 0 (power series)
local function i0(x)
  local sum, term, k = 1.0, 1.0, 1
  local q = x * x / 4
  repeat
    term = term * q / (k * k)
    sum = sum + term
    k = k + 1
  until term < sum * 1e-17
  return sum
end

function M.kaiser_window(...)
  local n, v, copts, rg = parse("kaiser_window", {"periodic", "beta"}, {true, 12.0}, ...)
  local beta = v[2]
  return make(n, v[1], copts, rg, function(_, m)
    local alpha, t, den = (m - 1) / 2, {}, i0(beta)
    for k = 0, m - 1 do
      local r = (k - alpha) / alpha
      t[k + 1] = i0(beta * math.sqrt(math.max(0, 1 - r * r))) / den
    end
    return torch.tensor(t, copts)
  end)
end

return M
