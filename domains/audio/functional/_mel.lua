-- torch.audio.functional._mel -- the filter banks and the DCT matrix of
-- the spectral transforms (torchaudio's melscale_fbanks, linear_fbanks,
-- create_dct) and the Hz <-> mel conversions they use. The matrices are
-- built in float64 and returned in the default dtype; nothing here touches
-- a signal.
local torch = require "torch"
local U = require "torch.nn.util"

local M = {}

local F64 = {dtype = torch.float64}
local LOG_STEP = math.log(6.4) / 27.0 -- slaney: the log part's step per mel
local F_SP = 200.0 / 3                 -- slaney: Hz per mel below 1 kHz
local MIN_LOG_HZ, MIN_LOG_MEL = 1000.0, 1000.0 / (200.0 / 3)

local function check_scale(fname, mel_scale)
  if mel_scale ~= "htk" and mel_scale ~= "slaney" then
    error(('%s: mel_scale should be "htk" or "slaney", got %s'):format(fname, tostring(mel_scale)), 3)
  end
end

-- hz_to_mel(freq[, mel_scale="htk"]): freq (a number or a tensor) in mels
function M.hz_to_mel(freq, mel_scale)
  mel_scale = mel_scale or "htk"
  check_scale("hz_to_mel", mel_scale)
  if torch.is_tensor(freq) then
    if mel_scale == "htk" then return (freq / 700.0 + 1.0):log10() * 2595.0 end
    local lin = freq / F_SP
    local log = (freq / MIN_LOG_HZ):clamp(1e-300):log() / LOG_STEP + MIN_LOG_MEL
    return torch.where(freq:ge(MIN_LOG_HZ), log, lin)
  end
  U.number("hz_to_mel", "freq", freq)
  if mel_scale == "htk" then return 2595.0 * math.log(1.0 + freq / 700.0, 10) end
  if freq >= MIN_LOG_HZ then return MIN_LOG_MEL + math.log(freq / MIN_LOG_HZ) / LOG_STEP end
  return freq / F_SP
end

-- mel_to_hz(mels[, mel_scale="htk"]): mels (a number or a tensor) in Hz
function M.mel_to_hz(mels, mel_scale)
  mel_scale = mel_scale or "htk"
  check_scale("mel_to_hz", mel_scale)
  if torch.is_tensor(mels) then
    if mel_scale == "htk" then return (torch.pow(10.0, mels / 2595.0) - 1.0) * 700.0 end
    local log = ((mels - MIN_LOG_MEL) * LOG_STEP):exp() * MIN_LOG_HZ
    return torch.where(mels:ge(MIN_LOG_MEL), log, mels * F_SP)
  end
  U.number("mel_to_hz", "mels", mels)
  if mel_scale == "htk" then return 700.0 * (10.0 ^ (mels / 2595.0) - 1.0) end
  if mels >= MIN_LOG_MEL then return MIN_LOG_HZ * math.exp(LOG_STEP * (mels - MIN_LOG_MEL)) end
  return mels * F_SP
end

-- triangular(all_freqs [n_freqs], f_pts [n_filter + 2]) -> [n_freqs, n_filter]:
-- filter j rises from f_pts[j] to 1 at f_pts[j+1] and falls to 0 at f_pts[j+2]
local function triangular(all_freqs, f_pts)
  local n = f_pts:size(1)
  local f_diff = f_pts:narrow(1, 2, n - 1) - f_pts:narrow(1, 1, n - 1)
  local slopes = f_pts:unsqueeze(1) - all_freqs:unsqueeze(2)
  local down = -slopes:narrow(2, 1, n - 2) / f_diff:narrow(1, 1, n - 2)
  local up = slopes:narrow(2, 3, n - 2) / f_diff:narrow(1, 2, n - 2)
  return torch.minimum(down, up):clamp(0)
end

local function check_counts(fname, n_freqs, n_filter, what, sample_rate)
  U.size(fname, "n_freqs", n_freqs, 1)
  U.size(fname, what, n_filter, 1)
  U.number(fname, "sample_rate", sample_rate)
end

local function warn_empty(fname, fb, n_mels, n_freqs)
  if fb:amax(1):eq(0):any():item() then
    warn(("%s: at least one filter bank has all zero values; n_mels (%d) may be too high or n_freqs (%d) too low")
      :format(fname, n_mels, n_freqs))
  end
end

-- melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate[, norm, mel_scale])
-- -> [n_freqs, n_mels]: triangular mel filters over the STFT bins 0..sr//2
function M.melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, ...)
  local fname = "melscale_fbanks"
  local o = U.args(fname, {"norm", "mel_scale"}, {norm = false, mel_scale = "htk"}, ...)
  check_counts(fname, n_freqs, n_mels, "n_mels", sample_rate)
  U.number(fname, "f_min", f_min); U.number(fname, "f_max", f_max)
  if o.norm ~= false and o.norm ~= "slaney" then
    error(('%s: norm must be false or "slaney", got %s'):format(fname, tostring(o.norm)), 2)
  end
  check_scale(fname, o.mel_scale)
  local all_freqs = torch.linspace(0, sample_rate // 2, n_freqs, F64)
  local m_pts = torch.linspace(M.hz_to_mel(f_min, o.mel_scale), M.hz_to_mel(f_max, o.mel_scale), n_mels + 2, F64)
  local f_pts = M.mel_to_hz(m_pts, o.mel_scale)
  local fb = triangular(all_freqs, f_pts)
  if o.norm == "slaney" then
    fb = fb * (2.0 / (f_pts:narrow(1, 3, n_mels) - f_pts:narrow(1, 1, n_mels))):unsqueeze(1)
  end
  warn_empty(fname, fb, n_mels, n_freqs)
  return fb:to(torch.get_default_dtype())
end

-- linear_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate) -> [n_freqs,
-- n_filter]: triangular filters evenly spaced in Hz
function M.linear_fbanks(n_freqs, f_min, f_max, n_filter, sample_rate)
  local fname = "linear_fbanks"
  check_counts(fname, n_freqs, n_filter, "n_filter", sample_rate)
  U.number(fname, "f_min", f_min); U.number(fname, "f_max", f_max)
  local all_freqs = torch.linspace(0, sample_rate // 2, n_freqs, F64)
  local f_pts = torch.linspace(f_min, f_max, n_filter + 2, F64)
  return triangular(all_freqs, f_pts):to(torch.get_default_dtype())
end

-- _dct(fname, n_mfcc, n_mels, norm) -> create_dct's matrix in float64
function M._dct(fname, n_mfcc, n_mels, norm)
  U.size(fname, "n_mfcc", n_mfcc, 1)
  U.size(fname, "n_mels", n_mels, 1)
  if norm ~= nil and norm ~= false and norm ~= "ortho" then
    error(('%s: norm must be "ortho" or false, got %s'):format(fname, tostring(norm)), 3)
  end
  local n = torch.arange(n_mels, F64) + 0.5
  local k = torch.arange(n_mfcc, F64):unsqueeze(2)
  local dct = (n * k * (math.pi / n_mels)):cos()
  if norm == "ortho" then
    dct = dct * math.sqrt(2.0 / n_mels)
    dct[1]:mul_(1.0 / math.sqrt(2.0))
  else
    dct = dct * 2.0
  end
  return dct:t():contiguous()
end

-- create_dct(n_mfcc, n_mels, norm) -> [n_mels, n_mfcc]: the DCT-II matrix
-- (norm "ortho": orthonormal columns; false: the unnormalized 2*cos form),
-- right-multiplied to rows of n_mels values
function M.create_dct(n_mfcc, n_mels, norm)
  return M._dct("create_dct", n_mfcc, n_mels, norm):to(torch.get_default_dtype())
end

return U.public_table(M, "torch.audio.functional.")
