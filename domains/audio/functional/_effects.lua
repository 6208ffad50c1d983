-- torch.audio.functional._effects -- torchaudio's sample-wise effects and
-- level conversions: gain, contrast, dcshift, mu-law companding,
-- amplitude_to_DB / DB_to_amplitude, and compute_deltas (the regression
-- slope over a window along time, one grouped convolution).
local torch = require "torch"
local U = require "torch.nn.util"
local NF = require "torch.nn.functional"

local F = {}
local P = "torch.audio.functional."

local function check_tensor(fname, what, x)
  if not torch.is_tensor(x) then error(("%s: %s must be a tensor, got %s"):format(fname, what, type(x)), 3) end
end

local function check_number(fname, what, v)
  if type(v) ~= "number" then error(("%s: %s must be a number, got %s"):format(fname, what, type(v)), 3) end
end

-- gain(waveform[, gain_db=1.0]): waveform * 10^(gain_db / 20)
function F.gain(waveform, ...)
  local fname = P .. "gain"
  check_tensor(fname, "waveform", waveform)
  local o = U.args(fname, {"gain_db"}, {gain_db = 1.0}, ...)
  check_number(fname, "gain_db", o.gain_db)
  if o.gain_db == 0 then return waveform end
  return waveform * 10 ^ (o.gain_db / 20)
end

-- contrast(waveform[, enhancement_amount=75.0]): SoX's contrast,
-- sin(x pi/2 + c sin(x 2 pi)), c = amount / 750
function F.contrast(waveform, ...)
  local fname = P .. "contrast"
  check_tensor(fname, "waveform", waveform)
  local o = U.args(fname, {"enhancement_amount"}, {enhancement_amount = 75.0}, ...)
  local e = o.enhancement_amount
  check_number(fname, "enhancement_amount", e)
  if e < 0 or e > 100 then error(("%s: enhancement_amount must be in 0..100, got %g"):format(fname, e), 2) end
  local t1 = waveform * (math.pi / 2)
  return torch.sin(t1 + torch.sin(t1 * 4) * (e / 750))
end

-- dcshift(waveform, shift[, limiter_gain=false]): waveform + shift in
-- [-1, 1]; with limiter_gain, peaks beyond the threshold 1 - (|shift| -
-- limiter_gain) on the shift's side are compressed by limiter_gain
function F.dcshift(waveform, shift, ...)
  local fname = P .. "dcshift"
  check_tensor(fname, "waveform", waveform)
  check_number(fname, "shift", shift)
  local o = U.args(fname, {"limiter_gain"}, nil, ...)
  local lg = o.limiter_gain
  local plain = torch.clamp(waveform + shift, -1, 1)
  if not lg or shift == 0 then return plain end
  check_number(fname, "limiter_gain", lg)
  local thr = 1.0 - (math.abs(shift) - lg)
  if shift > 0 then
    local peak = torch.clamp((waveform - thr) * lg / (1 - thr) + thr + shift, {max = thr})
    return torch.where(waveform:gt(thr), peak, plain)
  end
  local peak = torch.clamp((waveform + thr) * lg / (1 - thr) - thr + shift, {min = -thr})
  return torch.where(waveform:lt(-thr), peak, plain)
end

local function channels(fname, qc)
  if math.type(qc) ~= "integer" or qc < 2 then
    error(("%s: quantization_channels must be an integer >= 2, got %s"):format(fname, tostring(qc)), 3)
  end
end

-- mu_law_encoding(x, quantization_channels): x in [-1, 1] to int64 codes
-- 0 .. qc-1 (computed in x's floating dtype, float32 for integers)
function F.mu_law_encoding(x, quantization_channels)
  local fname = P .. "mu_law_encoding"
  check_tensor(fname, "x", x)
  channels(fname, quantization_channels)
  if not x:is_floating_point() then x = x:float() end
  local mu = torch.tensor(quantization_channels - 1, {dtype = x.dtype, device = x.device})
  local xm = torch.sign(x) * torch.log1p(torch.abs(x) * mu) / torch.log1p(mu)
  return ((xm + 1) / 2 * mu + 0.5):long()
end

-- mu_law_decoding(x_mu, quantization_channels): codes back to [-1, 1]
function F.mu_law_decoding(x_mu, quantization_channels)
  local fname = P .. "mu_law_decoding"
  check_tensor(fname, "x_mu", x_mu)
  channels(fname, quantization_channels)
  if not x_mu:is_floating_point() then x_mu = x_mu:float() end
  local mu = torch.tensor(quantization_channels - 1, {dtype = x_mu.dtype, device = x_mu.device})
  local x = x_mu / mu * 2 - 1
  return torch.sign(x) * (torch.exp(torch.abs(x) * torch.log1p(mu)) - 1) / mu
end

-- amplitude_to_DB(x, multiplier, amin, db_multiplier[, top_db=false]):
-- multiplier log10(max(x, amin)) - multiplier db_multiplier; with top_db,
-- floored at top_db below the maximum of each spectrogram ([..., C, F, T]:
-- each item of the leading dims, over channels, freq and time)
function F.amplitude_to_DB(x, multiplier, amin, db_multiplier, ...)
  local fname = P .. "amplitude_to_DB"
  check_tensor(fname, "x", x)
  check_number(fname, "multiplier", multiplier)
  check_number(fname, "amin", amin)
  check_number(fname, "db_multiplier", db_multiplier)
  local o = U.args(fname, {"top_db"}, nil, ...)
  local clamped <close> = torch.clamp(x, {min = amin}) -- temporaries freed at once (no GC wait)
  local logs <close> = torch.log10(clamped)
  local db = logs * multiplier
  if db_multiplier ~= 0 then db = db - multiplier * db_multiplier end
  if not o.top_db then return db end
  check_number(fname, "top_db", o.top_db)
  if db:dim() < 2 then error(("%s: top_db needs a spectrogram [..., freq, time], got %d-d"):format(fname, db:dim()), 2) end
  local shape = db.shape
  local packed = db:dim() > 2 and db:size(-3) or 1
  local d4 = db:reshape(-1, packed, db:size(-2), db:size(-1))
  local top <close> = d4:amax({2, 3, 4})
  local floor <close> = (top - o.top_db):reshape(-1, 1, 1, 1)
  return torch.maximum(d4, floor):reshape(shape)
end

-- DB_to_amplitude(x, ref, power): ref * (10^(x / 10))^power
function F.DB_to_amplitude(x, ref, power)
  local fname = P .. "DB_to_amplitude"
  check_tensor(fname, "x", x)
  check_number(fname, "ref", ref)
  check_number(fname, "power", power)
  return (10 ^ (x * 0.1)) ^ power * ref
end

-- compute_deltas(specgram[, win_length=5, mode="replicate"]): the slope
-- sum_k k (x[t+k] - x[t-k]) / (2 sum k^2), k = 1..(win_length-1)/2, with
-- the ends padded by mode
function F.compute_deltas(specgram, ...)
  local fname = P .. "compute_deltas"
  check_tensor(fname, "specgram", specgram)
  local o = U.args(fname, {"win_length", "mode"}, {win_length = 5, mode = "replicate"}, ...)
  if math.type(o.win_length) ~= "integer" or o.win_length < 3 then
    error(("%s: win_length must be an integer >= 3, got %s"):format(fname, tostring(o.win_length)), 2)
  end
  if specgram:dim() < 1 then error(fname .. ": specgram must have a time dimension", 2) end
  local shape = specgram.shape
  local n = (o.win_length - 1) // 2
  local denom = n * (n + 1) * (2 * n + 1) / 3
  local x = specgram:reshape(1, -1, specgram:size(-1))
  x = NF.pad(x, {n, n}, {mode = o.mode})
  local rows = x:size(2)
  local kernel = torch.arange(-n, n + 1, {dtype = x.dtype, device = x.device}):reshape(1, 1, -1):expand(rows, 1, 2 * n + 1)
  return (NF.conv1d(x, kernel:contiguous(), {groups = rows}) / denom):reshape(shape)
end

return U.public_table(F, P)
