-- tests/domains/audio/test_spectral.lua -- torch.audio's Spectrogram
-- family (Spectrogram, MelSpectrogram, MFCC, LFCC, SpectralCentroid,
-- InverseSpectrogram, GriffinLim, TimeStretch, pitch_shift) against
-- torchaudio 0.13 (tests/ref/audio_spectral.lua from
-- tests/ref/gen_audio_spectral.py: random signals and espeak-ng speech),
-- closed forms (a tone's peak bin, Parseval), finite differences, the
-- streaming interface against whole-signal results, and bad input.
local R = ref("audio_spectral")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/audio"
package.path = here .. "/?.lua;" .. package.path
local G = require "spectral_inputs"
local AF, T = torch.audio.functional, torch.audio.transforms
local f32, f64 = torch.float32, torch.float64

local function input(c)
  if c.x then return G.input(c.x) end
  return G.speech(R, c.n, torch[c.dtype])
end

-- make(name, c) -> the transform of case c, built under the input's dtype
local function run_case(name, c, make)
  local x = input(c)
  local dt = x.dtype == torch.complex128 and f64 or x.dtype
  local y = G.with_default(dt, function() return make(c, x) end)
  check_shape(y, c.y_shape)
  return y, G.expected(c, dt), dt
end

local function plain(c, x) return T[c._name](c.opts)(x) end

local function cases(name, fn, make)
  local n = 0
  for _, c in ipairs(R[name]) do
    c._name = name
    if fn == nil or fn(c) then
      local y, want, dt = run_case(name, c, make or plain)
      if y:is_floating_point() then
        check_close(y, want:to(y.dtype), G.tol(dt, want:abs():max():item() * 1e-4))
      else
        check_close(torch.view_as_real(y), torch.view_as_real(want):to(torch.view_as_real(y).dtype),
          G.tol(dt, 1e-4))
      end
      n = n + 1
    end
  end
  check(n > 0, "no case ran")
end

test("Spectrogram matches torchaudio (power 1 and 2, normalized, pad, center, pad_mode, onesided)", function()
  cases("Spectrogram", function(c) return c.opts.power ~= false end)
end)

test("Spectrogram with power=false gives torchaudio's complex STFT", function()
  cases("Spectrogram", function(c) return c.opts.power == false end)
end)
test("InverseSpectrogram matches torchaudio (length, pad, normalized)", function()
  cases("InverseSpectrogram", nil, function(c, z) return T.InverseSpectrogram(c.opts)(z, c.length or nil) end)
end)
test("TimeStretch (phase vocoder) matches torchaudio at rates 1.3, 0.8, 2", function()
  cases("TimeStretch")
end)

test("GriffinLim matches torchaudio from a zero initial phase (momentum 0.99 and 0, length)", function()
  local spec = G.with_default(f64, function()
    return T.Spectrogram{n_fft = 256, hop_length = 64}(G.speech(R, 2000, f64))
  end)
  for _, c in ipairs(R.GriffinLim) do
    local s = c.input == "speech_spec" and spec or spec:sqrt()
    local y = G.with_default(f64, function() return T.GriffinLim(c.opts)(s) end)
    check_shape(y, c.y_shape)
    check_close(y, G.expected(c), {rtol = 1e-6, atol = 1e-9})
  end
end)

test("pitch_shift and PitchShift match torchaudio", function()
  for _, c in ipairs(R.pitch_shift) do
    local x = G.input(c.x)
    local y = G.with_default(f64, function() return AF.pitch_shift(x, c.sample_rate, c.n_steps, c.opts) end)
    check_close(y, G.expected(c), {rtol = 1e-7, atol = 1e-9})
    local m = G.with_default(f64, function() return T.PitchShift(c.sample_rate, c.n_steps, c.opts) end)
    check_close(m(x), G.expected(c), {rtol = 1e-7, atol = 1e-9})
  end
end)

test("the phase vocoder (on real views) matches torchaudio's at rates 1.3, 0.8, 2", function()
  for _, c in ipairs(R.TimeStretch) do
    local sh = c.x.shape
    local n = 1
    for _, d in ipairs(sh) do n = n * d end
    local re = torch.tensor(G.lcg(n, c.x.seed), {dtype = f64}):reshape(sh)
    local im = torch.tensor(G.lcg(n, c.x.seed + 1), {dtype = f64}):reshape(sh)
    local v = torch.stack({re, im}, -1):reshape(-1, sh[#sh - 1], sh[#sh], 2)
    local adv = torch.linspace(0, math.pi * c.opts.hop_length, sh[#sh - 1], {dtype = f64}):unsqueeze(2)
    local out = AF._vocoder_view(v, c.opts.fixed_rate, adv)
    local want = torch.stack({torch.tensor(c.y.re, {dtype = f64}), torch.tensor(c.y.im, {dtype = f64})}, -1)
    check_close(out:reshape(-1), want:reshape(-1), {rtol = 1e-8, atol = 1e-10})
  end
end)

test("MelSpectrogram, MFCC and LFCC match torchaudio (random and speech, float32 and float64)", function()
  cases("MelSpectrogram")
  cases("MFCC")
  cases("LFCC")
end)

test("SpectralCentroid matches torchaudio (silent frames give NaN, as there)", function()
  for _, c in ipairs(R.SpectralCentroid) do
    local x = input(c)
    local o = {}
    for k, v in pairs(c.opts) do if k ~= "sample_rate" then o[k] = v end end
    local y = G.with_default(f64, function() return T.SpectralCentroid(c.opts.sample_rate, o)(x) end)
    check_close(y, G.expected(c), {rtol = 1e-8, atol = 1e-6, equal_nan = true})
  end
end)

test("Spectrogram of a tone peaks at its bin; Parseval holds for a rectangular window", function()
  local sr, n_fft = 8000, 256
  local t = torch.arange(4000, {dtype = f64}) / sr
  local f0 = 40 * sr / n_fft -- exactly bin 40 (0-based)
  local x = (t * (2 * math.pi * f0)):sin()
  local s = T.Spectrogram{n_fft = n_fft}(x)
  local _, idx = s:mean(2):max(1)
  check(idx:item() == 41, "peak at bin " .. idx:item())
  local ones = function(n) return torch.ones(n, {dtype = f64}) end
  local full = T.Spectrogram{n_fft = 64, hop_length = 64, center = false, onesided = false, window_fn = ones}
  local y = torch.randn(640, {dtype = f64})
  local p = full(y)
  local frames = y:view(10, 64)
  check_close(p:sum(1), frames:pow(2):sum(2) * 64, {rtol = 1e-10})
end)

test("Spectrogram, MelSpectrogram and MFCC are differentiable (gradcheck, float64)", function()
  local x = torch.randn(2, 96, {dtype = f64, requires_grad = true})
  G.with_default(f64, function()
    local s = T.Spectrogram{n_fft = 32, hop_length = 8}
    check(torch.autograd.gradcheck(function(v) return s(v) end, {x}))
    local s1 = T.Spectrogram{n_fft = 32, hop_length = 8, power = 1, normalized = true}
    check(torch.autograd.gradcheck(function(v) return s1(v) end, {x}))
    local m = T.MelSpectrogram{sample_rate = 8000, n_fft = 32, hop_length = 8, n_mels = 6}
    check(torch.autograd.gradcheck(function(v) return m(v) end, {x}))
    local c = T.MFCC{sample_rate = 8000, n_mfcc = 4, log_mels = true, melkwargs = {n_fft = 32, hop_length = 8,
      n_mels = 6}}
    check(torch.autograd.gradcheck(function(v) return c(v) end, {x}))
  end)
end)

test("the C fast path (CPU, no autograd) equals the engine-op path (autograd) for powers 1, 2, 0.7", function()
  for _, dt in ipairs{f32, f64} do
    local x = torch.randn(3, 2, 3001, {dtype = dt})
    for _, o in ipairs{{n_fft = 400, power = 2}, {n_fft = 255, hop_length = 37, power = 1, normalized = true},
                       {n_fft = 64, win_length = 50, power = 0.7, pad = 7, normalized = "frame_length"}} do
      local m = G.with_default(dt, function() return T.Spectrogram(o) end)
      local fast = m(x)
      local slow = m(x:clone():requires_grad_())
      check(slow.requires_grad, "the engine path records")
      check_close(fast, slow:detach(), {rtol = dt == f32 and 1e-5 or 1e-12, atol = dt == f32 and 1e-5 or 1e-12})
    end
  end
end)

test("MFCC and LFCC: the C decibel path (top_db floor per item) equals the engine-op path", function()
  for _, dt in ipairs{f32, f64} do
    for _, shape in ipairs{{3000}, {2, 3000}, {2, 3, 3000}} do
      local x = torch.randn(shape, {dtype = dt})
      x:narrow(-1, 1, 1000):mul_(1e-6) -- quiet parts, so the 80 dB floor applies
      for _, make in ipairs{function() return T.MFCC{n_mfcc = 13, melkwargs = {n_mels = 40}} end,
                            function() return T.LFCC{n_lfcc = 13, n_filter = 40} end} do
        local m = G.with_default(dt, make)
        local fast = m(x)
        local slow = m(x:clone():requires_grad_())
        check_close(fast, slow:detach(), {rtol = dt == f32 and 1e-4 or 1e-10, atol = dt == f32 and 1e-3 or 1e-9})
      end
    end
  end
end)

-- chunks(n, seed) -> random chunk sizes (some 0 and 1) summing to n
local function chunks(n, seed)
  local sizes, left, k = {}, n, seed
  while left > 0 do
    k = (k * 1103515245 + 12345) % 2147483648
    local s = math.min(left, ({0, 1, 7, 33, 150, 401, 999})[k % 7 + 1])
    sizes[#sizes + 1] = s
    left = left - s
  end
  return sizes
end

-- streamed(m, x, sizes) -> the frames of x fed to m in chunks, flushed
local function streamed(m, x, sizes)
  local outs, pos = {}, 1
  for _, s in ipairs(sizes) do
    outs[#outs + 1] = m:process(x:narrow(-1, pos, s))
    pos = pos + s
  end
  outs[#outs + 1] = m:flush()
  return torch.cat(outs, -1)
end

test("streaming: chunks of any sizes give the whole signal's frames (center, pad, pad modes)", function()
  local x = torch.randn(2, 3, 5000, {dtype = f64})
  local configs = {
    {n_fft = 400, center = false}, {n_fft = 400}, {n_fft = 256, hop_length = 100, pad = 30},
    {n_fft = 128, hop_length = 128, center = false, pad = 5}, {n_fft = 64, hop_length = 17, pad_mode = "constant"},
    {n_fft = 64, hop_length = 20, pad_mode = "replicate", pad = 3, power = 1},
  }
  for i, o in ipairs(configs) do
    local m = G.with_default(f64, function() return T.Spectrogram(o) end)
    local whole = m(x)
    for seed = 1, 3 do
      local got = streamed(m, x, chunks(5000, seed * 7 + i))
      check_shape(got, whole:size())
      check_close(got, whole, {rtol = 1e-12, atol = 1e-12})
    end
  end
end)

test("streaming MelSpectrogram (float32) matches the whole signal; reset starts a new one", function()
  local x = torch.randn(4000)
  local m = T.MelSpectrogram{n_mels = 40}
  local whole = m(x)
  local got = streamed(m, x, chunks(4000, 5))
  check_close(got, whole, {rtol = 1e-5, atol = 1e-6})
  m:process(torch.randn(3, 100))
  m:reset()
  check_close(streamed(m, x, {4000}), whole, {rtol = 1e-5, atol = 1e-6})
  local first = m:process(x:narrow(1, 1, 100))
  check_shape(first, {40, 0})
end)

test("streaming refuses what it cannot do exactly, with clear errors", function()
  check_error(function() T.Spectrogram{pad_mode = "circular"}:process(torch.randn(500)) end, "circular")
  local m = T.Spectrogram{n_fft = 64}
  m:process(torch.randn(2, 100))
  check_error(function() m:process(torch.randn(3, 100)) end, "leading shape 3 differs from the stream's 2")
  m:reset()
  m:process(torch.randn(10))
  check_error(function() m:flush() end, "reflect padding of 32")
  check_error(function() T.Spectrogram():flush() end, "no signal")
end)

test("bad arguments raise errors naming the call and the values", function()
  check_error(function() T.Spectrogram{n_fft = 0} end, "n_fft must be a positive integer")
  check_error(function() T.Spectrogram{n_fft = 64, win_length = 100} end, "win_length (100) must not exceed n_fft (64)")
  check_error(function() T.Spectrogram{power = -1} end, "power must be a positive number or false")
  check_error(function() T.Spectrogram{normalized = "l2"} end, "normalized must be")
  check_error(function() T.Spectrogram{pad_mode = "mirror"} end, "pad_mode")
  check_error(function() T.Spectrogram{hop = 3} end, "hop_length")
  check_error(function() T.Spectrogram()(torch.randn(100)) end, "reflect padding of 200")
  check_error(function() T.Spectrogram{center = false}(torch.randn(100)) end, "shorter than n_fft = 400")
  check_error(function() T.Spectrogram()(torch.ones(1000, {dtype = torch.int64})) end, "floating-point")
  check_error(function() T.MFCC{n_mfcc = 200} end, "more MFCC coefficients (200) than mel bins (128)")
  check_error(function() T.MFCC{dct_type = 3} end, "DCT type not supported")
  check_error(function() T.LFCC{n_lfcc = 500} end, "more LFCC coefficients")
  check_error(function() T.GriffinLim{momentum = 1.5} end, "momentum")
  check_error(function() T.GriffinLim{n_fft = 64}(torch.rand(20, 5)) end, "expected 33 frequency bins")
  check_error(function() T.TimeStretch{fixed_rate = 1.5}(torch.randn(201, 10)) end, "complex spectrogram")
  check_error(function() T.TimeStretch()(torch.randn(201, 10)) end, "no rate")
  check_error(function() T.MelSpectrogram{power = false} end, "power must be a positive number")
end)
