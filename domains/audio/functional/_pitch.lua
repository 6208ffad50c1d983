-- torch.audio.functional._pitch -- detect_pitch_frequency: torchaudio's
-- pitch tracker (normalized cross-correlation per frame and lag, the best
-- lag per frame, median smoothing over frames). Every step is a tensor op
-- over all frames and lags; the frames are taken in chunks so the lag
-- windows of a long signal never sit in memory at once.
local torch = require "torch"
local U = require "torch.nn.util"
local CK = require "torch.audio.functional._checks"
local NF = require "torch.nn.functional"

local F = {}
local P = "torch.audio.functional."

-- Elements of the lag windows built per chunk (about 64 MiB of float32).
local CHUNK_ELEMS = 1 << 24

-- nccf(w [B, T'], nframes, fs, lags) -> [B, nframes, lags]: for frame i and
-- lag l, sum(s1 s2) / (eps + |s1|)^2 / (eps + |s2|)^2 with s1 the frame at
-- i fs and s2 the window l samples later (torchaudio's normalization, both
-- norms squared)
local function nccf(w, nframes, fs, lags)
  local eps = 1e-9
  local windows = w:unfold(-1, fs, 1) -- [B, T' - fs + 1, fs], a view
  local B = w:size(1)
  local per = math.max(1, CHUNK_ELEMS // math.max(1, B * lags * fs))
  local parts = {}
  for first = 0, nframes - 1, per do
    local n = math.min(per, nframes - first)
    local starts = torch.arange(first, first + n, {dtype = torch.int64, device = w.device}) * fs
    local s1 = windows:index_select(2, starts + 1):unsqueeze(3) -- [B, n, 1, fs]
    local lag = torch.arange(1, lags + 1, {dtype = torch.int64, device = w.device})
    local idx = (starts:unsqueeze(2) + lag:unsqueeze(1)):reshape(-1) + 1
    local s2 = windows:index_select(2, idx):reshape(B, n, lags, fs)
    local num = (s1 * s2):sum(-1)
    local n1 = (torch.linalg.vector_norm(s1, 2, -1) + eps):pow(2)
    local n2 = (torch.linalg.vector_norm(s2, 2, -1) + eps):pow(2)
    parts[#parts + 1] = num / n1 / n2
  end
  return #parts == 1 and parts[1] or torch.cat(parts, 2)
end

-- best_lag(c [B, nframes, lags], lag_min) -> int64 [B, nframes]: per frame
-- the lag (in samples, 1-based lag + torchaudio's calibration offset) of the
-- largest value from lag_min on, or of the largest in the first half of the
-- lags when that comes within 1% of it
local function best_lag(c, lag_min)
  local lags = c:size(3)
  local best_v, best_i = c:narrow(3, lag_min + 1, lags - lag_min):max(-1)
  local half_v, half_i = c:narrow(3, lag_min + 1, lags // 2 - lag_min):max(-1)
  local take_half = half_v:gt(best_v * 0.99)
  return torch.where(take_half, half_i, best_i) + lag_min
end

-- median_smooth(idx [B, n], win) -> [B, n + (win-1)//2 - win + 1]: the
-- lower median over windows of win frames, the first frame repeated
-- (win-1)//2 times in front (torchaudio pads only the front)
local function median_smooth(idx, win)
  local pad = (win - 1) // 2
  if pad > 0 then idx = torch.cat({idx:narrow(2, 1, 1):expand(idx:size(1), pad), idx}, 2) end
  local values = idx:unfold(-1, win, 1):median(-1)
  return values
end

-- detect_pitch_frequency(waveform, sample_rate[, frame_time=0.01,
-- win_length=30, freq_low=85, freq_high=3400]) -> float32 [..., frames]:
-- the pitch in Hz of each frame of frame_time seconds
function F.detect_pitch_frequency(waveform, sample_rate, ...)
  local fname = P .. "detect_pitch_frequency"
  CK.float_tensor(fname, "waveform", waveform, 1, "[..., time]")
  U.number(fname, "sample_rate", sample_rate)
  local o = U.args(fname, {"frame_time", "win_length", "freq_low", "freq_high"},
    {frame_time = 1e-2, win_length = 30, freq_low = 85, freq_high = 3400}, ...)
  U.number(fname, "frame_time", o.frame_time)
  U.size(fname, "win_length", o.win_length, 1)
  U.number(fname, "freq_low", o.freq_low)
  U.number(fname, "freq_high", o.freq_high)
  if sample_rate <= 0 or o.frame_time <= 0 or o.freq_low <= 0 or o.freq_high <= 0 then
    error(("%s: sample_rate (%g), frame_time (%g), freq_low (%g) and freq_high (%g) must be positive"):format(
      fname, sample_rate, o.frame_time, o.freq_low, o.freq_high), 2)
  end
  local lags = math.ceil(sample_rate / o.freq_low)
  local fs = math.ceil(sample_rate * o.frame_time)
  local lag_min = math.ceil(sample_rate / o.freq_high)
  if lag_min >= lags // 2 then
    error(("%s: freq_high %g must be above twice freq_low %g (lags %d..%d at %g Hz)"):format(fname, o.freq_high,
      o.freq_low, lag_min, lags, sample_rate), 2)
  end
  local shape = waveform:size()
  local T = shape[#shape]
  local nframes = math.ceil(T / fs)
  local smoothed = nframes + (o.win_length - 1) // 2 - o.win_length + 1
  if nframes == 0 or smoothed < 1 then
    error(("%s: %d samples make %d frames of %d samples, fewer than win_length %d needs"):format(fname, T,
      nframes, fs, o.win_length), 2)
  end
  local w = waveform:reshape(-1, T)
  w = NF.pad(w, {0, lags + nframes * fs - T})
  local idx = median_smooth(best_lag(nccf(w, nframes, fs, lags), lag_min), o.win_length)
  local freq = sample_rate / (idx:to(torch.float32) + 1e-9)
  shape[#shape] = freq:size(-1)
  return freq:reshape(shape)
end

return U.public_table(F, P)
