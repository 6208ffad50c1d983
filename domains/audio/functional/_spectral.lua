-- torch.audio.functional._spectral -- torchaudio's short-time spectral
-- functions: spectrogram, inverse_spectrogram, griffinlim, phase_vocoder,
-- spectral_centroid, pitch_shift. Inputs are batched over leading dims
-- ([..., time] or [..., freq, frames]); arguments come positionally in
-- torchaudio's order or in a trailing options table.
local torch = require "torch"
local U = require "torch.nn.util"
local NF = require "torch.nn.functional"
local S = require "torch.audio.functional._stft_real"

local M = {}

local SPEC_ARGS = {"pad", "window", "n_fft", "hop_length", "win_length", "power", "normalized", "center",
                   "pad_mode", "onesided"}

-- sizes(o): fills n_fft / win_length / hop_length defaults (400, n_fft, win // 2)
local function sizes(fname, o)
  o.n_fft = o.n_fft or 400
  o.win_length = o.win_length or o.n_fft
  o.hop_length = o.hop_length or o.win_length // 2
  S.check_sizes(fname, o.n_fft, o.hop_length, o.win_length)
  return o
end

local function check_signal(fname, x, min_dim)
  if not torch.is_tensor(x) or x:dim() < (min_dim or 1) then
    error(("%s: expected a tensor [..., time], got %s"):format(fname,
      torch.is_tensor(x) and "a " .. x:dim() .. "-d tensor" or type(x)), 3)
  end
  if not x:is_floating_point() then
    error(("%s: expected a floating-point signal, got %s"):format(fname, tostring(x.dtype)), 3)
  end
end

-- lead_shape(shape, k) -> the first #shape - k sizes
local function lead_shape(shape, k)
  local s = {}
  for i = 1, #shape - k do s[i] = shape[i] end
  return s
end

local function with(t, ...)
  local r = {}
  for i, v in ipairs(t) do r[i] = v end
  for _, v in ipairs{...} do r[#r + 1] = v end
  return r
end

-- prepared(fname, waveform, o[, skip_center]) -> the signal [B, T'] padded
-- as the STFT frames it (but for the center padding with skip_center), the window of n_fft points (scaled by the normalization) and
-- the batch shape; o: spectrogram's options
local function prepared(fname, waveform, o, skip_center)
  local shape = waveform:size()
  local x = waveform
  if o.pad > 0 then x = NF.pad(x, {o.pad, o.pad}) end
  x = x:reshape(-1, x:size(-1))
  local window = S.window_for(fname, o.window, o.win_length, o.n_fft, x)
  if o.center and not skip_center then x = S.center_pad(fname, x, o.n_fft, o.pad_mode) end
  local frame_norm, window_norm = S.norms(fname, o.normalized)
  if frame_norm then window = window * (1 / math.sqrt(o.n_fft)) end
  if window_norm then window = window / window:pow(2):sum():sqrt() end
  return x, window, lead_shape(shape, 1)
end

-- spectrum_view(fname, waveform, o) -> the [B, frames, freq, 2] real view of
-- the (normalized) STFT and the batch shape
local function spectrum_view(fname, waveform, o)
  local x, window, lead = prepared(fname, waveform, o)
  local v = S.frames_spectrum(fname, x, window, o.n_fft, o.hop_length)
  if not o.onesided then v = S.full_from_half(v, o.n_fft) end
  return v, lead
end
M._spectrum_view = spectrum_view

-- power_frames(fname, waveform, o) -> |STFT|^power as [B, frames, freq]
-- (the C fast path where it applies) and the batch shape
local function power_frames(fname, waveform, o)
  if o.onesided then
    -- reflect center padding is read in place by the C path
    local inplace = o.center and o.pad_mode == "reflect" and o.n_fft // 2 < waveform:size(-1) + 2 * o.pad
    local x, window, lead = prepared(fname, waveform, o, inplace)
    local rp = inplace and o.n_fft // 2 or 0
    if x:size(-1) + 2 * rp >= o.n_fft then
      local p = S.fast_power(x, window, o.hop_length, o.power, rp)
      if p then return p, lead end
    end
  end
  local v <close>, lead = spectrum_view(fname, waveform, o)
  return S.power_of(v, o.power), lead
end

-- spectrogram(waveform, pad, window, n_fft, hop_length, win_length, power,
-- normalized[, center=true, pad_mode="reflect", onesided=true]) -> [...,
-- freq, frames]: |STFT|^power, or the complex STFT when power is false
function M.spectrogram(waveform, ...)
  local fname = "torch.audio.functional.spectrogram"
  check_signal(fname, waveform)
  local o = U.args(fname, SPEC_ARGS, {pad = 0, power = 2.0, normalized = false, center = true,
    pad_mode = "reflect", onesided = true}, ...)
  sizes(fname, o)
  if o.power ~= false and (type(o.power) ~= "number" or o.power <= 0) then
    error(("%s: power must be a positive number or false (complex output), got %s"):format(fname,
      tostring(o.power)), 2)
  end
  if o.power == false then
    local v, lead = spectrum_view(fname, waveform, o)
    local z = torch.view_as_complex(v:contiguous()):transpose(-1, -2)
    return z:reshape(with(lead, z:size(-2), z:size(-1)))
  end
  local p, lead = power_frames(fname, waveform, o)
  p = p:transpose(-1, -2)
  return p:reshape(with(lead, p:size(-2), p:size(-1)))
end

-- inverse_spectrogram(spectrogram, length, pad, window, n_fft, hop_length,
-- win_length, normalized[, center=true, pad_mode, onesided=true]) ->
-- [..., time]: the least-squares signal of a complex spectrogram (istft)
function M.inverse_spectrogram(spec, ...)
  local fname = "torch.audio.functional.inverse_spectrogram"
  if not torch.is_tensor(spec) or not (spec.is_complex and spec:is_complex()) then
    error(fname .. ": expected a complex spectrogram [..., freq, frames]", 2)
  end
  local o = U.args(fname, {"length", "pad", "window", "n_fft", "hop_length", "win_length", "normalized", "center",
    "pad_mode", "onesided"}, {length = false, pad = 0, normalized = false, center = true, pad_mode = "reflect",
    onesided = true}, ...)
  sizes(fname, o)
  local frame_norm, window_norm = S.norms(fname, o.normalized)
  local real = torch.view_as_real(spec)
  local window = S.window_for(fname, o.window, o.win_length, o.win_length, real)
  if window_norm then spec = spec * window:pow(2):sum():sqrt() end
  local shape = spec:size()
  spec = spec:reshape(-1, shape[#shape - 1], shape[#shape])
  local length = o.length ~= false and o.length + 2 * o.pad or nil
  local y = torch.istft(spec, o.n_fft, {hop_length = o.hop_length, win_length = o.win_length, window = window,
    center = o.center, normalized = frame_norm, onesided = o.onesided, length = length})
  if o.length ~= false and o.pad > 0 then y = y:narrow(-1, o.pad + 1, y:size(-1) - 2 * o.pad) end
  return y:reshape(with(lead_shape(shape, 2), y:size(-1)))
end

-- griffinlim(specgram, window, n_fft, hop_length, win_length, power,
-- n_iter, momentum, length, rand_init) -> [..., time]: a signal whose
-- magnitude spectrogram approaches specgram (fast Griffin-Lim). The phases
-- live as real views [..., 2]: no complex tensors are needed.
function M.griffinlim(specgram, ...)
  local fname = "torch.audio.functional.griffinlim"
  check_signal(fname, specgram, 2)
  local o = U.args(fname, {"window", "n_fft", "hop_length", "win_length", "power", "n_iter", "momentum", "length",
    "rand_init"}, {power = 2.0, n_iter = 32, momentum = 0.99, length = false, rand_init = true}, ...)
  o.n_fft = o.n_fft or (specgram:size(-2) - 1) * 2
  sizes(fname, o)
  if type(o.momentum) ~= "number" or not (o.momentum >= 0 and o.momentum < 1) then
    error(("%s: momentum must be in [0, 1), got %s"):format(fname, tostring(o.momentum)), 2)
  end
  if specgram:size(-2) ~= o.n_fft // 2 + 1 then
    error(("%s: expected %d frequency bins (n_fft // 2 + 1), got shape %s"):format(fname, o.n_fft // 2 + 1,
      U.shape_str(specgram)), 2)
  end
  local shape = specgram:size()
  -- magnitudes [B, frames, freq, 1]
  local mag = specgram:reshape(-1, shape[#shape - 1], shape[#shape]):pow(1 / o.power):transpose(2, 3):unsqueeze(-1)
  local window = S.window_for(fname, o.window, o.win_length, o.n_fft, mag)
  local m = o.momentum / (1 + o.momentum)
  local vshape = mag:size()
  vshape[4] = 2
  local angles
  if o.rand_init then angles = torch.rand(vshape, {dtype = mag.dtype, device = mag.device})
  else angles = torch.cat({torch.ones_like(mag), torch.zeros_like(mag)}, -1) end
  local length = o.length ~= false and o.length or nil
  local tprev
  for _ = 1, o.n_iter do
    local inverse = S.istft_view(fname, angles * mag, o.n_fft, o.hop_length, window, length, true)
    local rebuilt = S.frames_spectrum(fname, S.center_pad(fname, inverse, o.n_fft, "reflect"), window, o.n_fft,
      o.hop_length)
    angles = rebuilt
    if m ~= 0 and tprev then angles = angles - tprev * m end
    angles = angles / (S.magnitude(angles):unsqueeze(-1) + 1e-16)
    tprev = rebuilt
  end
  local y = S.istft_view(fname, angles * mag, o.n_fft, o.hop_length, window, length, true)
  return y:reshape(with(lead_shape(shape, 2), y:size(-1)))
end

-- vocoder_view(v [B, freq, frames, 2], rate, phase_advance [freq, 1]) ->
-- [B, freq, ceil(frames / rate), 2]: phase_vocoder on real views
local function vocoder_view(v, rate, phase_advance)
  local nfr = v:size(3)
  local steps = torch.arange(0, nfr, rate, {dtype = v.dtype, device = v.device})
  local alphas = steps:remainder(1.0)
  local phase_0 = S.phase(v:narrow(3, 1, 1))
  local zshape = v:size()
  zshape[3] = 2
  local padded = torch.cat({v, torch.zeros(zshape, {dtype = v.dtype, device = v.device})}, 3)
  local idx = steps:long()
  local z0, z1 = padded:index_select(3, idx + 1), padded:index_select(3, idx + 2) -- 1-based
  local adv = phase_advance:to(v.device, v.dtype)
  local phase = S.phase(z1) - S.phase(z0) - adv
  phase = phase - torch.round(phase / (2 * math.pi)) * (2 * math.pi)
  phase = phase + adv
  phase = torch.cat({phase_0, phase:narrow(-1, 1, phase:size(-1) - 1)}, -1)
  local acc = torch.cumsum(phase, -1)
  local mag = alphas * S.magnitude(z1) + (1 - alphas) * S.magnitude(z0)
  return S.polar(mag, acc)
end

M._vocoder_view = vocoder_view

-- phase_vocoder(complex_specgrams, rate, phase_advance) -> [..., freq,
-- ceil(frames / rate)]: the spectrogram sped up by rate, pitch kept
-- (phase_advance [freq, 1]: the expected phase advance per bin and hop)
function M.phase_vocoder(z, rate, phase_advance)
  local fname = "torch.audio.functional.phase_vocoder"
  if not torch.is_tensor(z) or not (z.is_complex and z:is_complex()) or z:dim() < 2 then
    error(fname .. ": expected a complex spectrogram [..., freq, frames]", 2)
  end
  U.number(fname, "rate", rate)
  if rate <= 0 then error(("%s: rate must be positive, got %g"):format(fname, rate), 2) end
  if rate == 1.0 then return z end
  local shape = z:size()
  local v = torch.view_as_real(z):reshape(-1, shape[#shape - 1], shape[#shape], 2)
  local out = torch.view_as_complex(vocoder_view(v, rate, phase_advance):contiguous())
  return out:reshape(with(lead_shape(shape, 1), out:size(-1)))
end

-- spectral_centroid(waveform, sample_rate, pad, window, n_fft, hop_length,
-- win_length) -> [..., frames]: the magnitude-weighted mean frequency
function M.spectral_centroid(waveform, sample_rate, ...)
  local fname = "torch.audio.functional.spectral_centroid"
  check_signal(fname, waveform)
  U.number(fname, "sample_rate", sample_rate)
  local o = U.args(fname, {"pad", "window", "n_fft", "hop_length", "win_length"}, {pad = 0}, ...)
  sizes(fname, o)
  local spec = M.spectrogram(waveform, {pad = o.pad, window = o.window, n_fft = o.n_fft, hop_length = o.hop_length,
    win_length = o.win_length, power = 1.0, normalized = false})
  local freqs = torch.linspace(0, sample_rate // 2, 1 + o.n_fft // 2, {dtype = spec.dtype, device = spec.device})
  return (spec * freqs:unsqueeze(2)):sum(-2) / spec:sum(-2)
end

-- pitch_shift(waveform, sample_rate, n_steps[, bins_per_octave=12,
-- n_fft=512, win_length=n_fft, hop_length=win_length // 4, window=hann])
-- -> [..., time]: the pitch moved by n_steps, length kept
function M.pitch_shift(waveform, sample_rate, n_steps, ...)
  local fname = "torch.audio.functional.pitch_shift"
  check_signal(fname, waveform)
  U.number(fname, "sample_rate", sample_rate)
  U.number(fname, "n_steps", n_steps)
  local o = U.args(fname, {"bins_per_octave", "n_fft", "win_length", "hop_length", "window"},
    {bins_per_octave = 12, n_fft = 512}, ...)
  o.win_length = o.win_length or o.n_fft
  o.hop_length = o.hop_length or o.win_length // 4
  local stretched = M._stretch(fname, waveform, n_steps, o)
  local rate = 2.0 ^ (-n_steps / o.bins_per_octave)
  local resample = require("torch.audio.functional").resample
  if not resample then error(fname .. ": needs torch.audio.functional.resample, which this build lacks", 2) end
  local shifted = resample(stretched, math.floor(sample_rate / rate), sample_rate)
  return M._fix_length(shifted, waveform:size(-1))
end

-- _stretch(fname, waveform, n_steps, o) -> the waveform time-stretched by
-- 2^(n_steps / bins_per_octave) through the phase vocoder (on real views)
function M._stretch(fname, waveform, n_steps, o)
  S.check_sizes(fname, o.n_fft, o.hop_length, o.win_length)
  local shape = waveform:size()
  local x = waveform:reshape(-1, shape[#shape])
  local window = S.window_for(fname, o.window, o.win_length, o.n_fft, x)
  local rate = 2.0 ^ (-n_steps / o.bins_per_octave)
  local v = S.frames_spectrum(fname, S.center_pad(fname, x, o.n_fft, "reflect"), window, o.n_fft, o.hop_length)
  local adv = torch.linspace(0, math.pi * o.hop_length, v:size(3), {dtype = x.dtype, device = x.device})
  local stretched = vocoder_view(v:transpose(2, 3), rate, adv:unsqueeze(2)):transpose(2, 3)
  local len = math.floor(shape[#shape] / rate + 0.5)
  local y = S.istft_view(fname, stretched, o.n_fft, o.hop_length, window, len, true)
  return y:reshape(with(lead_shape(shape, 1), y:size(-1)))
end

-- _fix_length(y, n) -> y cut or zero-padded to n samples
function M._fix_length(y, n)
  local m = y:size(-1)
  if m > n then return y:narrow(-1, 1, n) end
  if m < n then return NF.pad(y, {0, n - m}) end
  return y
end

return U.public_table(M, "torch.audio.functional.")
