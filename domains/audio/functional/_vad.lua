-- torch.audio.functional._vad -- vad: SoX's voice activity detector as
-- torchaudio 2.x runs it (a cepstral power measure every 1/measure_freq s,
-- adaptive noise reduction, a smoothed trigger) trimming the silence in
-- front of speech. The spectra of a run of measurement frames come from one
-- batched FFT; the smoothing recursions step per measurement (20 a second)
-- over all channels and bins at once; the trigger logic reads the measures
-- on the host, as torchaudio's does, and stops at the trigger.
local torch = require "torch"
local U = require "torch.nn.util"
local CK = require "torch.audio.functional._checks"
local NF = require "torch.nn.functional"

local F = {}
local P = "torch.audio.functional."

local CHUNK = 32 -- measurement frames per batched FFT

-- f32(v): v rounded to float32 (torchaudio keeps its measures in float32)
local function f32(v) return (string.unpack("f", string.pack("f", v))) end

-- Python's int(): toward zero
local function trunc(v) return v >= 0 and math.floor(v) or math.ceil(v) end

local NAMES = {"trigger_level", "trigger_time", "search_time", "allowed_gap", "pre_trigger_time", "boot_time",
  "noise_up_time", "noise_down_time", "noise_reduction_amount", "measure_freq", "measure_duration",
  "measure_smooth_time", "hp_filter_freq", "lp_filter_freq", "hp_lifter_freq", "lp_lifter_freq"}
local DEFAULTS = {trigger_level = 7.0, trigger_time = 0.25, search_time = 1.0, allowed_gap = 0.25,
  pre_trigger_time = 0.0, boot_time = 0.35, noise_up_time = 0.1, noise_down_time = 0.01,
  noise_reduction_amount = 1.35, measure_freq = 20.0, measure_duration = false, measure_smooth_time = 0.4,
  hp_filter_freq = 50.0, lp_filter_freq = 6000.0, hp_lifter_freq = 150.0, lp_lifter_freq = 2000.0}

-- setup(fname, sr, o) -> the detector's sizes, windows' scales and time constants
local function setup(fname, sr, o)
  for _, k in ipairs(NAMES) do
    if k ~= "measure_duration" or o[k] then U.number(fname, k, o[k]) end
  end
  for _, k in ipairs({"trigger_time", "search_time", "measure_freq", "measure_smooth_time", "noise_up_time",
      "noise_down_time", "hp_filter_freq", "lp_filter_freq", "hp_lifter_freq", "lp_lifter_freq"}) do
    if o[k] <= 0 then error(("%s: %s must be positive, got %g"):format(fname, k, o[k]), 3) end
  end
  local s = {}
  local duration = o.measure_duration or 2.0 / o.measure_freq
  s.L = trunc(sr * duration + 0.5)
  s.dft = 16
  while s.dft < s.L do s.dft = s.dft * 2 end
  s.period = trunc(sr / o.measure_freq + 0.5)
  s.n = math.ceil(o.search_time * o.measure_freq)
  s.gap = trunc(o.allowed_gap * o.measure_freq + 0.5)
  s.samples_len = trunc(o.pre_trigger_time * sr + 0.5) + s.n * s.period + s.L
  s.ss = math.max(trunc(o.hp_filter_freq / sr * s.dft + 0.5), 1)
  s.se = math.min(trunc(o.lp_filter_freq / sr * s.dft + 0.5), s.dft // 2)
  s.cs = math.ceil(sr * 0.5 / o.lp_lifter_freq)
  s.ce = math.min(math.floor(sr * 0.5 / o.hp_lifter_freq), s.dft // 4)
  if s.L < 1 or s.period < 1 then
    error(("%s: measure_duration and 1/measure_freq must be at least one sample at %g Hz"):format(fname, sr), 3)
  end
  if s.se <= s.ss then
    error(("%s: the filter band %g..%g Hz is empty at %g Hz (bins %d..%d)"):format(fname, o.hp_filter_freq,
      o.lp_filter_freq, sr, s.ss, s.se), 3)
  end
  if s.ce <= s.cs then
    error(("%s: the lifter band needs cepstrum_start %d < cepstrum_end %d (hp_lifter_freq %g, lp_lifter_freq %g)")
      :format(fname, s.cs, s.ce, o.hp_lifter_freq, o.lp_lifter_freq), 3)
  end
  s.up = math.exp(-1.0 / (o.noise_up_time * o.measure_freq))
  s.down = math.exp(-1.0 / (o.noise_down_time * o.measure_freq))
  s.smooth = math.exp(-1.0 / (o.measure_smooth_time * o.measure_freq))
  s.trigger = math.exp(-1.0 / (o.trigger_time * o.measure_freq))
  s.boot_max = trunc(o.boot_time * o.measure_freq - 0.5)
  return s
end

-- hann(n) float32 [n] scaled by 2 / sqrt(n) (SoX's windows)
local function scaled_hann(n, dev)
  return torch.hann_window(n, {dtype = torch.float32, device = dev}) * f32(2.0 / math.sqrt(n))
end

-- Measures(x [C, T] float32, s, nra) -> a function measure(first, count)
-- returning {[c] = {measures of frames first .. first + count - 1}} (0-based
-- frames) and carrying the smoothed spectrum and noise between calls
local function measurer(x, s, nra)
  local dev, C = x.device, x:size(1)
  local nb = s.se - s.ss
  local swin = scaled_hann(s.L, dev)
  local cwin = scaled_hann(nb, dev)
  local frames = x:unfold(-1, s.L, s.period) -- [C, K, L]
  local spectrum = torch.zeros(C, nb, {dtype = torch.float32, device = dev})
  local noise = torch.zeros(C, nb, {dtype = torch.float32, device = dev})
  local up = torch.tensor(s.up, {dtype = torch.float32, device = dev})
  local down = torch.tensor(s.down, {dtype = torch.float32, device = dev})
  return function(first, count)
    local f = frames:narrow(2, first + 1, count) * swin
    local mag = torch.fft.rfft(NF.pad(f, {0, s.dft - s.L}), nil, -1):abs():narrow(3, s.ss + 1, nb)
    local rows = {}
    for j = 1, count do
      local k = first + j - 1
      local boot = k <= s.boot_max and k or -1
      local mult = boot >= 0 and boot / (1.0 + boot) or s.smooth
      spectrum = spectrum * mult + mag:select(2, j) * (1 - mult)
      local d = spectrum * spectrum
      if boot >= 0 then
        noise = d
      else
        local m = torch.where(d:gt(noise), up, down)
        noise = noise * m + d * (1 - m)
      end
      rows[j] = torch.sqrt(torch.clamp(d - noise * nra, {min = 0}))
    end
    local cep = torch.stack(rows, 2) * cwin -- [C, count, nb]
    cep = NF.pad(cep, {s.ss, s.dft // 2 - s.se})
    local power = torch.fft.rfft(cep, nil, -1):abs():pow(2):narrow(3, s.cs + 1, s.ce - s.cs):sum(-1)
    local out = power:tolist()
    for c = 1, C do
      for j = 1, count do
        local r = out[c][j]
        out[c][j] = r > 0 and math.max(0, 21 + math.log(r / (s.ce - s.cs))) or 0
      end
    end
    return out
  end
end

-- vad(waveform, sample_rate[, trigger_level=7.0, trigger_time=0.25,
-- search_time=1.0, allowed_gap=0.25, pre_trigger_time=0.0, boot_time=0.35,
-- noise_up_time=0.1, noise_down_time=0.01, noise_reduction_amount=1.35,
-- measure_freq=20.0, measure_duration=2/measure_freq,
-- measure_smooth_time=0.4, hp_filter_freq=50.0, lp_filter_freq=6000.0,
-- hp_lifter_freq=150.0, lp_lifter_freq=2000.0]) -> waveform [..., time]
-- from the start of the speech (every row of the leading dims counts as a
-- channel of one recording); [..., 0] when no speech triggers
function F.vad(waveform, sample_rate, ...)
  local fname = P .. "vad"
  CK.float_tensor(fname, "waveform", waveform, 1, "[..., time]")
  CK.positive_rate(fname, sample_rate)
  local o = U.args(fname, NAMES, DEFAULTS, ...)
  local s = setup(fname, sample_rate, o)
  local shape = waveform:size()
  local T = shape[#shape]
  local x = waveform:reshape(-1, T)
  local C = x:size(1)
  local total = T > s.L and (T - s.L - 1) // s.period + 1 or 0
  local measure = total > 0 and measurer(x:detach():to(torch.float32), s, o.noise_reduction_amount)
  local level = f32(o.trigger_level)
  local tm, tm1 = f32(s.trigger), 1.0 - s.trigger
  local mean, measures = {}, {}
  for c = 1, C do
    mean[c], measures[c] = 0.0, {}
    for j = 0, s.n - 1 do measures[c][j] = 0.0 end
  end
  local index, flush, triggered, pos = 0, 0, false, 0
  local first = 0
  while first < total and not triggered do
    local count = math.min(CHUNK, total - first)
    local meas = measure(first, count)
    for j = 1, count do
      pos = s.L + (first + j - 1) * s.period
      for c = 1, C do
        local m = meas[c][j]
        measures[c][index] = f32(m)
        mean[c] = f32(f32(mean[c] * tm) + f32(m * tm1))
        triggered = triggered or mean[c] >= level
        if triggered then
          local n, k = s.n, index
          local j_trigger, j_zero = n, n
          for jj = 0, n - 1 do
            local v = measures[c][k]
            if v >= level and jj <= j_trigger + s.gap then j_zero, j_trigger = jj, jj
            elseif v == 0 and j_trigger >= j_zero then j_zero = jj end
            k = (k + n - 1) % n
          end
          flush = math.min(math.max(flush, math.min(n - 1, j_zero)), n)
        end
      end
      index = (index + 1) % s.n
      if triggered then break end
    end
    first = first + count
  end
  if not triggered then return waveform:narrow(-1, 1, 0) end
  local start = pos - s.samples_len + (s.n - flush) * s.period
  if start < 0 then start = math.max(0, T + start) end -- a negative start counts from the end (torchaudio's slice)
  return waveform:narrow(-1, start + 1, T - start)
end

return U.public_table(F, P)
