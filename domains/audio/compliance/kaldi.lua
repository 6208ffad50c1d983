-- torch.audio.compliance.kaldi -- Kaldi's feature extractors as torchaudio
-- computes them: spectrogram, fbank and mfcc of one channel of a waveform
-- [channels, time], with Kaldi's defaults (25 ms frames every 10 ms, povey
-- window, pre-emphasis 0.97, DC removal, snip_edges). Frames are cut with
-- unfold, their spectra come from the engine's r2c transform; the mel
-- banks are built in float64. Output: [frames, features].
local torch = require "torch"
local U = require "torch.nn.util"
local AF = require "torch.audio.functional._mel"
local S = require "torch.audio.functional._stft_real"

local K = {}
local EPS = 1.1920928955078125e-07 -- Kaldi's floor: float epsilon, in every dtype
local F64 = {dtype = torch.float64}

-- the options of all three, in torchaudio's order, with Kaldi's defaults
local COMMON = {
  {"blackman_coeff", 0.42}, {"channel", 1}, {"dither", 0.0}, {"energy_floor", 1.0}, {"frame_length", 25.0},
  {"frame_shift", 10.0}, {"min_duration", 0.0}, {"preemphasis_coefficient", 0.97}, {"raw_energy", true},
  {"remove_dc_offset", true}, {"round_to_power_of_two", true}, {"sample_frequency", 16000.0},
  {"snip_edges", true}, {"subtract_mean", false}, {"window_type", "povey"},
}
local MEL = {
  {"high_freq", 0.0}, {"htk_compat", false}, {"low_freq", 20.0}, {"num_mel_bins", 23}, {"use_energy", false},
  {"vtln_high", -500.0}, {"vtln_low", 100.0}, {"vtln_warp", 1.0},
}
local FBANK = {{"use_log_fbank", true}, {"use_power", true}}
local MFCC = {{"cepstral_lifter", 22.0}, {"num_ceps", 13}}

-- options(fname, lists, ...) -> the call's options with defaults filled in
local function options(fname, lists, ...)
  local names, defaults = {}, {}
  for _, list in ipairs(lists) do
    for _, nd in ipairs(list) do names[#names + 1] = nd[1]; defaults[nd[1]] = nd[2] end
  end
  return U.args(fname, names, defaults, ...)
end

local function next_pow2(x)
  local p = 1
  while p < x do p = p * 2 end
  return p
end

-- properties(fname, waveform, o) -> the channel's samples [n], window shift,
-- window size and padded size (in samples), after Kaldi's checks
local function properties(fname, waveform, o)
  if not torch.is_tensor(waveform) or waveform:dim() ~= 2 then
    error(("%s: expected a waveform [channels, time], got %s"):format(fname,
      torch.is_tensor(waveform) and "shape " .. U.shape_str(waveform) or type(waveform)), 3)
  end
  if not waveform:is_floating_point() then
    error(("%s: expected a floating-point waveform, got %s"):format(fname, tostring(waveform.dtype)), 3)
  end
  local c = o.channel
  if math.type(c) ~= "integer" or c < 1 or c > waveform:size(1) then
    error(("%s: channel %s is not among the waveform's %d channels (1-based)"):format(fname, tostring(c),
      waveform:size(1)), 3)
  end
  local x = waveform[c]
  local sf = o.sample_frequency
  if type(sf) ~= "number" or sf <= 0 then
    error(("%s: sample_frequency must be greater than zero, got %s"):format(fname, tostring(sf)), 3)
  end
  local shift = math.floor(sf * o.frame_shift * 0.001)
  local size = math.floor(sf * o.frame_length * 0.001)
  local padded = o.round_to_power_of_two and next_pow2(size) or size
  if size < 2 or size > x:size(1) then
    error(("%s: the window size %d (frame_length %g ms at %g Hz) must be in [2, %d], the signal's length")
      :format(fname, size, o.frame_length, sf, x:size(1)), 3)
  end
  if shift <= 0 then error(("%s: the window shift must be > 0, got %d samples"):format(fname, shift), 3) end
  if padded % 2 ~= 0 then
    error(("%s: the padded window size %d must be even: use round_to_power_of_two or change frame_length")
      :format(fname, padded), 3)
  end
  local p = o.preemphasis_coefficient
  if p < 0 or p > 1 then error(("%s: preemphasis_coefficient must be in [0, 1], got %g"):format(fname, p), 3) end
  return x, shift, size, padded
end

-- frames(x [n], size, shift, snip_edges) -> [m, size]; without snip_edges
-- the signal is mirrored at both ends (sample 0 repeated) and m = round(n / shift)
local function frames(x, size, shift, snip_edges)
  local n = x:size(1)
  if snip_edges then
    if n < size then return torch.empty(0, size, {dtype = x.dtype, device = x.device}) end
    return x:unfold(1, size, shift)
  end
  local m = (n + shift // 2) // shift
  local pad = size // 2 - shift // 2
  local rev = x:flip(1)
  local padded
  if pad > 0 then padded = torch.cat({rev:narrow(1, n - pad + 1, pad), x, rev})
  else padded = torch.cat({x:narrow(1, -pad + 1, n + pad), rev}) end
  return padded:unfold(1, size, shift):narrow(1, 1, m)
end

-- window(type, size, blackman_coeff, dtype) -> [size]: Kaldi's symmetric windows
local function window(fname, kind, size, coeff, dtype)
  local a = 2 * math.pi / (size - 1)
  local n = torch.arange(size, F64)
  local w
  if kind == "hanning" then w = 0.5 - (n * a):cos() * 0.5
  elseif kind == "hamming" then w = 0.54 - (n * a):cos() * 0.46
  elseif kind == "povey" then w = (0.5 - (n * a):cos() * 0.5):pow(0.85)
  elseif kind == "rectangular" then w = torch.ones(size, F64)
  elseif kind == "blackman" then w = coeff - (n * a):cos() * 0.5 + (n * (2 * a)):cos() * (0.5 - coeff)
  else
    error(('%s: window_type must be "hamming", "hanning", "povey", "rectangular" or "blackman", got %s')
      :format(fname, tostring(kind)), 4)
  end
  return w:to(dtype)
end

-- log_energy(frames [m, k], floor) -> [m]: log of each frame's energy
local function log_energy(f, floor)
  local e = f:pow(2):sum(2):clamp(EPS):log()
  if floor == 0 then return e end
  return e:clamp(math.log(floor))
end

-- windowed(fname, x, o, size, shift, padded) -> the frames ready for the
-- FFT [m, padded] and their log energies [m]
local function windowed(fname, x, o, size, shift, padded)
  local f = frames(x, size, shift, o.snip_edges)
  if o.dither ~= 0 then f = f + torch.randn(f:size(), {dtype = f.dtype, device = f.device}) * o.dither end
  if o.remove_dc_offset then f = f - f:mean(2, true) end
  local energy
  if o.raw_energy then energy = log_energy(f, o.energy_floor) end
  local p = o.preemphasis_coefficient
  if p ~= 0 then
    local prev = torch.cat({f:narrow(2, 1, 1), f:narrow(2, 1, size - 1)}, 2)
    f = f - prev * p
  end
  f = f * window(fname, o.window_type, size, o.blackman_coeff, f.dtype):to(f.device)
  if padded ~= size then f = torch.nn.functional.pad(f, {0, padded - size}) end
  if not o.raw_energy then energy = log_energy(f, o.energy_floor) end
  return f, energy
end

local function subtract_mean(t, yes)
  if yes then return t - t:mean(1, true) end
  return t
end

-- the power |rfft|^2 of each frame [m, padded // 2 + 1] (the C fast path
-- with each row one frame, else the real-view r2c: no complex tensor)
local function power(f)
  local n = f:size(2)
  if f:size(1) > 0 then
    local p = S.fast_power(f, torch.ones(n, {dtype = f.dtype}), n, 2)
    if p then return p:squeeze(2) end
  end
  return S.power_of(S.rfft_view(f), 2)
end

-- spectrogram(waveform[, {options}]) -> [frames, padded // 2 + 1]: log power
-- spectra; column 1 holds each frame's log energy
function K.spectrogram(waveform, ...)
  local fname = "torch.audio.compliance.kaldi.spectrogram"
  local o = options(fname, {COMMON}, ...)
  local x, shift, size, padded = properties(fname, waveform, o)
  if x:size(1) < o.min_duration * o.sample_frequency then return torch.empty(0, {dtype = x.dtype}) end
  local f, energy = windowed(fname, x, o, size, shift, padded)
  local spec = power(f):clamp(EPS):log()
  spec:select(2, 1):copy_(energy)
  return subtract_mean(spec, o.subtract_mean)
end

local function kaldi_mel(hz) return 1127.0 * math.log(1.0 + hz / 700.0) end
local function kaldi_mel_t(hz) return (hz / 700.0 + 1.0):log() * 1127.0 end
local function kaldi_hz_t(mel) return ((mel / 1127.0):exp() - 1.0) * 700.0 end

-- vtln_warp_freq: Kaldi's piecewise-linear warp of frequencies hz (a float64
-- tensor) by factor w between cutoffs lo_c and hi_c, inside [low, high]
local function vtln_warp_freq(fname, lo_c, hi_c, low, high, w, hz)
  if not (lo_c > low) then error(fname .. ": vtln_low must be higher than low_freq", 5) end
  if not (hi_c < high) then error(fname .. ": vtln_high must be lower than high_freq", 5) end
  local l, h = lo_c * math.max(1.0, w), hi_c * math.min(1.0, w)
  local scale = 1.0 / w
  local fl, fh = scale * l, scale * h
  local scale_left = (fl - low) / (l - low)
  local scale_right = (high - fh) / (high - h)
  local res = torch.where(hz:lt(h), hz * scale, (hz - high) * scale_right + high)
  res = torch.where(hz:lt(l), (hz - low) * scale_left + low, res)
  return torch.where(hz:lt(low):logical_or(hz:gt(high)), hz, res)
end

-- mel_banks(fname, o, padded) -> [num_mel_bins, padded // 2] triangular
-- filters on Kaldi's mel scale (float64), warped when vtln_warp ~= 1
local function mel_banks(fname, o, padded)
  local nb, sf = o.num_mel_bins, o.sample_frequency
  if math.type(nb) ~= "integer" or nb <= 3 then
    error(("%s: num_mel_bins must be an integer > 3, got %s"):format(fname, tostring(nb)), 4)
  end
  local nyquist = 0.5 * sf
  local low, high = o.low_freq, o.high_freq
  if high <= 0 then high = high + nyquist end
  if not (low >= 0 and low < nyquist and high > 0 and high <= nyquist and low < high) then
    error(("%s: bad low_freq %g and high_freq %g for the Nyquist frequency %g"):format(fname, o.low_freq,
      o.high_freq, nyquist), 4)
  end
  local mlow, mhigh = kaldi_mel(low), kaldi_mel(high)
  local delta = (mhigh - mlow) / (nb + 1)
  local vlow, vhigh, w = o.vtln_low, o.vtln_high, o.vtln_warp
  if vhigh < 0 then vhigh = vhigh + nyquist end
  if w ~= 1.0 and not (low < vlow and vlow < high and vhigh > 0 and vhigh < high and vlow < vhigh) then
    error(("%s: bad vtln_low %g and vtln_high %g for low_freq %g and high_freq %g"):format(fname, vlow, vhigh,
      low, high), 4)
  end
  local b = torch.arange(nb, F64):unsqueeze(2)
  local left, center, right = b * delta + mlow, (b + 1) * delta + mlow, (b + 2) * delta + mlow
  if w ~= 1.0 then
    local function warp(m) return kaldi_mel_t(vtln_warp_freq(fname, vlow, vhigh, low, high, w, kaldi_hz_t(m))) end
    left, center, right = warp(left), warp(center), warp(right)
  end
  local mel = kaldi_mel_t(torch.arange(padded // 2, F64) * (sf / padded)):unsqueeze(1)
  local up = (mel - left) / (center - left)
  local down = (right - mel) / (right - center)
  if w == 1.0 then return torch.minimum(up, down):clamp(0) end
  local zero = torch.zeros_like(up)
  local r = torch.where(mel:gt(left):logical_and(mel:le(center)), up, zero)
  return torch.where(mel:gt(center):logical_and(mel:lt(right)), down, r)
end

-- fbank_of(fname, waveform, o) -> mel energies [m, bins (+1 with use_energy)]
local function fbank_of(fname, waveform, o)
  local x, shift, size, padded = properties(fname, waveform, o)
  if x:size(1) < o.min_duration * o.sample_frequency then return nil, x end
  local f, energy = windowed(fname, x, o, size, shift, padded)
  local spec = power(f)
  if not o.use_power then spec = spec:sqrt() end
  local banks = mel_banks(fname, o, padded)
  banks = torch.nn.functional.pad(banks, {0, 1}):to(spec.dtype):to(spec.device)
  local mel = torch.matmul(spec, banks:t())
  if o.use_log_fbank then mel = mel:clamp(EPS):log() end
  if o.use_energy then
    local e = energy:unsqueeze(2)
    mel = o.htk_compat and torch.cat({mel, e}, 2) or torch.cat({e, mel}, 2)
  end
  return mel, x
end

-- fbank(waveform[, {options}]) -> [frames, num_mel_bins (+1 with
-- use_energy)]: log mel filter bank energies
function K.fbank(waveform, ...)
  local fname = "torch.audio.compliance.kaldi.fbank"
  local o = options(fname, {COMMON, MEL, FBANK}, ...)
  local mel, x = fbank_of(fname, waveform, o)
  if not mel then return torch.empty(0, {dtype = x.dtype, device = x.device}) end
  return subtract_mean(mel, o.subtract_mean)
end

-- dct_matrix(num_ceps, num_mel_bins) -> [bins, ceps]: the orthonormal
-- DCT-II with Kaldi's first column (sqrt(1 / bins))
local function dct_matrix(num_ceps, nb)
  local d = AF._dct("torch.audio.compliance.kaldi.mfcc", nb, nb, "ortho")
  d:select(2, 1):fill_(math.sqrt(1.0 / nb))
  return d:narrow(2, 1, num_ceps)
end

-- mfcc(waveform[, {options}]) -> [frames, num_ceps]: cepstra of the log mel
-- energies, liftered; with use_energy the first (htk_compat: last) is the
-- frame's log energy
function K.mfcc(waveform, ...)
  local fname = "torch.audio.compliance.kaldi.mfcc"
  local o = options(fname, {COMMON, MEL, MFCC}, ...)
  local nb, nc = o.num_mel_bins, o.num_ceps
  if math.type(nc) ~= "integer" or nc < 1 or (math.type(nb) == "integer" and nc > nb) then
    error(("%s: num_ceps must be an integer in [1, num_mel_bins = %s], got %s"):format(fname, tostring(nb),
      tostring(nc)), 2)
  end
  o.use_log_fbank, o.use_power = true, true
  local sub = o.subtract_mean
  local feat, x = fbank_of(fname, waveform, o)
  if not feat then return torch.empty(0, {dtype = x.dtype, device = x.device}) end
  local energy
  if o.use_energy then
    energy = feat:select(2, o.htk_compat and nb + 1 or 1):clone()
    feat = feat:narrow(2, o.htk_compat and 1 or 2, nb)
  end
  feat = torch.matmul(feat, dct_matrix(nc, nb):to(feat.dtype):to(feat.device))
  local L = o.cepstral_lifter
  if L ~= 0 then
    local lifter = (torch.arange(nc, F64) * (math.pi / L)):sin() * (0.5 * L) + 1.0
    feat = feat * lifter:to(feat.dtype):to(feat.device)
  end
  if energy then feat:select(2, 1):copy_(energy) end
  if o.htk_compat then
    local c0 = feat:narrow(2, 1, 1)
    if not o.use_energy then c0 = c0 * math.sqrt(2) end
    feat = torch.cat({feat:narrow(2, 2, nc - 1), c0}, 2)
  end
  return subtract_mean(feat, sub)
end

-- the mel scale Kaldi uses (1127 ln(1 + f/700)) and its inverse, on numbers or tensors
function K.mel_scale(hz) return torch.is_tensor(hz) and kaldi_mel_t(hz) or kaldi_mel(hz) end
function K.inverse_mel_scale(mel)
  if torch.is_tensor(mel) then return kaldi_hz_t(mel) end
  return 700.0 * (math.exp(mel / 1127.0) - 1.0)
end

return U.public_table(K, "torch.audio.compliance.kaldi.")
