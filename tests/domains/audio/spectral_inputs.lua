-- tests/domains/audio/spectral_inputs.lua -- the inputs of the spectral
-- tests, made exactly as tests/ref/gen_audio_spectral.py made them: a 64-bit
-- LCG (integer arithmetic wraps mod 2^64 in Lua as in the generator's
-- explicit modulo) and the espeak-ng speech clip stored in the ref.
local torch = require "torch"
local G = {}

-- lcg(n, seed) -> a Lua list of n values in [-1, 1)
function G.lcg(n, seed)
  local s, out = seed, {}
  for i = 1, n do
    s = s * 6364136223846793005 + 1442695040888963407
    out[i] = (s >> 11) / 2.0 ^ 53 * 2 - 1
  end
  return out
end

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

local function real(shape, seed, scale)
  local t = torch.tensor(G.lcg(numel(shape), seed), {dtype = torch.float64}) * scale
  return t:reshape(shape)
end

-- input(desc) -> the tensor a case's x = {shape, seed, dtype, scale, abs} describes
function G.input(desc)
  if desc.dtype == "complex128" then
    return torch.complex(real(desc.shape, desc.seed, 1.0), real(desc.shape, desc.seed + 1, 1.0))
  end
  local t = real(desc.shape, desc.seed, desc.scale)
  if desc.abs then t = t:abs() end
  return t:to(torch[desc.dtype])
end

-- speech(R, n, dtype) -> the first n samples of the ref's speech clip in [-1, 1)
function G.speech(R, n, dtype)
  local t = torch.tensor(R.speech.int16, {dtype = torch.float64}):narrow(1, 1, n) / 32768
  return t:to(dtype or torch.float32)
end

-- y(case) -> the expected result as a tensor of the case's shape (complex
-- results come as {re=, im=})
function G.expected(case, dtype)
  local y = case.y
  if y.re then
    return torch.complex(torch.tensor(y.re, {dtype = torch.float64}), torch.tensor(y.im, {dtype = torch.float64}))
      :reshape(case.y_shape)
  end
  return torch.tensor(y, {dtype = dtype or torch.float64}):reshape(case.y_shape)
end

-- with_default(dtype, fn): fn() with torch's default dtype set to dtype
function G.with_default(dtype, fn)
  local old = torch.get_default_dtype()
  torch.set_default_dtype(dtype)
  local ok, r = pcall(fn)
  torch.set_default_dtype(old)
  if not ok then error(r, 0) end
  return r
end

-- tol(dtype): the suite's tolerances, 1e-4 relative in float32, 1e-8 in float64
function G.tol(dtype, atol)
  if dtype == torch.float32 or dtype == torch.complex64 then return {rtol = 1e-4, atol = atol or 1e-6} end
  return {rtol = 1e-8, atol = atol and atol * 1e-4 or 1e-10}
end

return G
