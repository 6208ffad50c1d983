-- torch.audio.functional._effects_mod -- SoX's modulated-delay effects as
-- torchaudio runs them: flanger and phaser. torchaudio steps through the
-- samples one at a time; here the delay-line positions, which depend on
-- the sample index only, are worked out for all samples at once, so:
--   phaser: y[i] = g x[i] + decay y[i - d(i)] is solved by pointer jumping
--     (log2(time) rounds of gathers), exactly the same sums;
--   flanger: without feedback (regen = 0) one gather per tap; with
--     feedback, blocks as long as the shortest delay, each block one set
--     of tensor ops (a block of one sample when the delay can reach 0).
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}
local P = "torch.audio.functional."

local CK = require "torch.audio.functional._checks"

local function in_range(fname, what, v, lo, hi)
  U.number(fname, what, v)
  if v < lo or v > hi then error(("%s: %s must be in %g..%g, got %g"):format(fname, what, lo, hi, v), 3) end
end

-- wave_table(kind, size, lo, hi, phase, device) -> float64 [size]: one
-- period of a sine or triangle ("SINE", "TRIANGLE") from lo to hi, started
-- phase radians in (SoX's lsx_generate_wave_table in torchaudio's form)
local function wave_table(kind, size, lo, hi, phase, device)
  local offset = math.floor(phase / math.pi / 2 * size + 0.5)
  local point = (torch.arange(0, size, {dtype = torch.int64, device = device}) + offset) % size
  local p = point:to(torch.float64)
  local d
  if kind == "SINE" then
    d = (torch.sin(p / size * 2 * math.pi) + 1) / 2
  else
    d = p * 2 / size
    local quarter = torch.div(point * 4, size, {rounding_mode = "floor"})
    d = torch.where(quarter:eq(0), d + 0.5, torch.where(quarter:eq(3), d - 1.5, 1.5 - d))
  end
  return d * (hi - lo) + lo
end

-- to_int(d) -> int64: d rounded half away from zero (SoX's INT tables)
local function to_int(d)
  return torch.where(d:lt(0), d - 0.5, d + 0.5):to(torch.int32):to(torch.int64)
end

---------------------------------------------------------------------------
-- phaser

-- jump(a [B, N], pred [N] int64 1-based or 0 for none, coef) -> [B, N]: y
-- with y[i] = a[i] + coef y[pred[i]], by pointer jumping: after round r each
-- a[i] holds the chain's first 2^r terms, and pred/weight skip over them
local function jump(a, pred, coef)
  local B, N = a:size(1), a:size(2)
  local dev = a.device
  -- index N + 1 is a sentinel: value 0, weight 0, its own predecessor
  local zero = torch.zeros(B, 1, {dtype = a.dtype, device = dev})
  local none = pred:eq(0)
  local p = pred + none:to(torch.int64) * (N + 1)
  p = torch.cat({p, torch.tensor({N + 1}, {dtype = torch.int64, device = dev})})
  local w = none:logical_not():to(a.dtype) * coef
  w = torch.cat({w, torch.zeros(1, {dtype = a.dtype, device = dev})})
  local y = torch.cat({a, zero}, 2)
  local span = 1
  while span < N do
    y = y + y:index_select(2, p) * w
    w = w * w:index_select(1, p)
    p = p:index_select(1, p)
    span = span * 2
  end
  return y:narrow(2, 1, N)
end

-- phaser(waveform, sample_rate[, gain_in=0.4, gain_out=0.74, delay_ms=3.0,
-- decay=0.4, mod_speed=0.5, sinusoidal=true]) -> [..., time]
function F.phaser(waveform, sample_rate, ...)
  local fname = P .. "phaser"
  CK.float_tensor(fname, "waveform", waveform, 1, "[..., time]")
  U.number(fname, "sample_rate", sample_rate)
  local o = U.args(fname, {"gain_in", "gain_out", "delay_ms", "decay", "mod_speed", "sinusoidal"},
    {gain_in = 0.4, gain_out = 0.74, delay_ms = 3.0, decay = 0.4, mod_speed = 0.5, sinusoidal = true}, ...)
  in_range(fname, "gain_in", o.gain_in, 0, 1)
  in_range(fname, "gain_out", o.gain_out, 0, 1e9)
  in_range(fname, "delay_ms", o.delay_ms, 0, 5)
  in_range(fname, "decay", o.decay, 0, 0.99)
  in_range(fname, "mod_speed", o.mod_speed, 0.1, 2)
  local L = math.floor(o.delay_ms * 0.001 * sample_rate + 0.5)
  if sample_rate <= 0 or L < 1 then
    error(("%s: delay_ms %g at sample_rate %g is under one sample"):format(fname, o.delay_ms, sample_rate), 2)
  end
  local shape = waveform:size()
  local N = shape[#shape]
  if N == 0 then return waveform end
  local M = math.floor(sample_rate / o.mod_speed + 0.5)
  local dev = waveform.device
  local mod = to_int(wave_table(o.sinusoidal and "SINE" or "TRIANGLE", M, 1.0, L, math.pi / 2, dev))
  -- sample i reads the delay slot written by sample i - (L + 1 - mod[i % M])
  local i = torch.arange(0, N, {dtype = torch.int64, device = dev})
  local src = i - (L + 1) + mod:index_select(1, i % M + 1)
  local pred = (src + 1) * src:ge(0):to(torch.int64)
  local x = waveform:reshape(-1, N) * o.gain_in
  local y = jump(x, pred, o.decay)
  return torch.clamp(y * o.gain_out, -1, 1):reshape(shape)
end

---------------------------------------------------------------------------
-- flanger

-- taps(i [N], lfo [n_lfo] float32, phases [C], L, quadratic) -> offsets
-- {[C, N] int64} (samples back into the delay line, mod L) and frac [C, N]
local function taps(N, lfo, phases, L, quadratic, dev)
  local n_lfo = lfo:size(1)
  local i = torch.arange(0, N, {dtype = torch.int64, device = dev})
  local at = (i:unsqueeze(1) % n_lfo + phases:unsqueeze(2)) % n_lfo -- [C, N]
  local delay = lfo:index_select(1, at:reshape(-1) + 1):reshape(at:size(1), N)
  local frac = torch.frac(delay)
  local k = torch.floor(delay):to(torch.int64)
  local offsets = {k % L, (k + 1) % L}
  if quadratic then offsets[3] = (k + 2) % L end
  return offsets, frac
end

-- interpolate(d {[B, C, n]}, frac [C, n], quadratic) -> [B, C, n]: the
-- delay line read between taps, in torchaudio's arithmetic
local function interpolate(d, frac, quadratic)
  if not quadratic then return d[1] + (d[2] - d[1]) * frac end
  local d2, d1 = d[3] - d[1], d[2] - d[1]
  local a = d2 * 0.5 - d1
  local b = d1 * 2 - d2 * 0.5
  return d[1] + (a * frac + b) * frac
end

-- back(v [B, C, H + n], offsets [C, n] (samples back from each position),
-- H) -> [B, C, n]: v at position H + j - offset for j = 1..n (1-based)
local function back(v, offsets, H)
  local B, C, n = v:size(1), v:size(2), offsets:size(2)
  local j = torch.arange(1, n + 1, {dtype = torch.int64, device = v.device}):unsqueeze(1)
  return v:gather(3, (j + H - offsets):unsqueeze(1):expand(B, C, n))
end

-- flanger(waveform, sample_rate[, delay=0, depth=2, regen=0, width=71,
-- speed=0.5, phase=25, modulation="sinusoidal", interpolation="linear"])
-- -> [..., channel, time] (at most 4 channels)
function F.flanger(waveform, sample_rate, ...)
  local fname = P .. "flanger"
  CK.float_tensor(fname, "waveform", waveform, 2, "[..., channel, time]")
  U.number(fname, "sample_rate", sample_rate)
  local o = U.args(fname, {"delay", "depth", "regen", "width", "speed", "phase", "modulation", "interpolation"},
    {delay = 0.0, depth = 2.0, regen = 0.0, width = 71.0, speed = 0.5, phase = 25.0, modulation = "sinusoidal",
     interpolation = "linear"}, ...)
  in_range(fname, "delay", o.delay, 0, 30)
  in_range(fname, "depth", o.depth, 0, 10)
  in_range(fname, "regen", o.regen, -95, 95)
  in_range(fname, "width", o.width, 0, 100)
  in_range(fname, "speed", o.speed, 0.1, 10)
  in_range(fname, "phase", o.phase, 0, 100)
  U.choice(fname, "modulation", o.modulation, "sinusoidal triangular")
  U.choice(fname, "interpolation", o.interpolation, "linear quadratic")
  if sample_rate <= 0 then error(("%s: sample_rate must be positive, got %g"):format(fname, sample_rate), 2) end
  local shape = waveform:size()
  local C, N = shape[#shape - 1], shape[#shape]
  if C > 4 then error(("%s: at most 4 channels are allowed, got %d"):format(fname, C), 2) end
  if N == 0 or C == 0 then return waveform end
  local x = waveform:reshape(-1, C, N)
  local B, dev, dt = x:size(1), x.device, x.dtype

  local fb = o.regen / 100
  local gain = o.width / 100
  local in_gain = 1.0 / (1 + gain)
  gain = gain / (1 + gain) * (1 - math.abs(fb))
  local L = math.floor((o.delay / 1000 + o.depth / 1000) * sample_rate + 0.5) + 2
  local n_lfo = math.floor(sample_rate / o.speed)
  local lfo = wave_table(o.modulation == "sinusoidal" and "SINE" or "TRIANGLE", n_lfo,
    math.floor(o.delay / 1000 * sample_rate + 0.5), L - 2.0, 3 * math.pi / 2, dev):to(torch.float32)
  local phases = (torch.arange(0, C, {dtype = torch.int64, device = dev}):to(torch.float64) * n_lfo * (o.phase / 100)
    + 0.5):to(torch.int64)
  local quadratic = o.interpolation == "quadratic"
  local offsets, frac = taps(N, lfo, phases, L, quadratic, dev)
  frac = frac:to(dt)

  -- the input at each tap: x[i - k], zero before the start
  local xp = torch.cat({torch.zeros(B, C, L, {dtype = dt, device = dev}), x}, 3)
  local xt = {}
  for m, k in ipairs(offsets) do xt[m] = back(xp, k, L) end

  local delayed
  if fb == 0 then
    delayed = interpolate(xt, frac, quadratic)
  else
    -- delay line entries are x[j] + fb v[j - 1]; v[i] reads them k back, so
    -- it needs v from k + 1 back: blocks no longer than the smallest k + 1
    local kmin = offsets[1]:min():item()
    for m = 2, #offsets do kmin = math.min(kmin, offsets[m]:min():item()) end
    local block = kmin + 1
    local H = L + 1 -- v history kept: the last L + 1 values (zeros before the start)
    local hist = torch.zeros(B, C, H, {dtype = dt, device = dev})
    local parts = {}
    for s = 1, N, block do
      local n = math.min(block, N - s + 1)
      local d = {}
      for m, k in ipairs(offsets) do
        local km = k:narrow(2, s, n)
        local v_back = back(hist, km + 1, H)
        d[m] = xt[m]:narrow(3, s, n) + v_back * fb
      end
      local v = interpolate(d, frac:narrow(2, s, n), quadratic)
      parts[#parts + 1] = v
      hist = torch.cat({hist, v}, 3):narrow(3, n + 1, H)
    end
    delayed = #parts == 1 and parts[1] or torch.cat(parts, 3)
  end
  local y = x * in_gain + delayed * gain
  return torch.clamp(y, -1, 1):reshape(shape)
end

return U.public_table(F, P)
