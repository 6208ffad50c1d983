-- torch.audio.functional._lfilter_core -- what lfilter, filtfilt, the
-- biquads and the filter streams share: torchaudio's batching rules
-- (waveform [..., time], coefficients [K] or [num_filters, K]) turned into
-- the engine op's layout (torch.audio._filter.lfilter: x [N, C, T], a and b
-- [C, K]), and the coefficient lists of the named filters.
local torch = require "torch"
local Fi = require "torch.audio._filter"

local C = {}

local function shape_str(t) return "[" .. table.concat(t.shape, ", ") .. "]" end
C.shape_str = shape_str

-- coeff(fname, what, v, like): v (a tensor, or a list of numbers) as a
-- tensor of like's dtype and device
function C.coeff(fname, what, v, like)
  if type(v) == "table" and not torch.is_tensor(v) then v = torch.tensor(v, {dtype = torch.float64}) end
  if not torch.is_tensor(v) then error(("%s: %s must be a tensor, got %s"):format(fname, what, type(v)), 4) end
  return v:to(like.dtype):to(like.device)
end

-- prepare(fname, x, a, b, batching) -> x3 [N, C, T], a2, b2 [C, K], shape
-- (the result's shape). Raises torchaudio's errors, naming fname and the
-- shapes.
function C.prepare(fname, x, a, b, batching)
  if not torch.is_tensor(x) then error(("%s: waveform must be a tensor, got %s"):format(fname, type(x)), 3) end
  if not x:is_floating_point() or (x.dtype ~= torch.float32 and x.dtype ~= torch.float64) then
    error(("%s: waveform must be float32 or float64, got %s"):format(fname, tostring(x.dtype)), 3)
  end
  if x:dim() < 1 then error(("%s: waveform must have a time dimension, got a 0-d tensor"):format(fname), 3) end
  a, b = C.coeff(fname, "a_coeffs", a, x), C.coeff(fname, "b_coeffs", b, x)
  if shape_str(a) ~= shape_str(b) then
    error(("%s: a_coeffs %s and b_coeffs %s must have the same size"):format(fname, shape_str(a), shape_str(b)), 3)
  end
  if a:dim() == 0 or a:dim() > 2 then
    error(("%s: coefficients must be [K] or [num_filters, K], got %s"):format(fname, shape_str(a)), 3)
  end
  if a:dim() == 2 then
    if batching then
      if x:dim() < 2 or x:size(-2) ~= a:size(1) then
        error(("%s: waveform %s must have as many channels (dim -2) as there are filters (%d in a_coeffs %s)")
          :format(fname, shape_str(x), a:size(1), shape_str(a)), 3)
      end
    else
      local sz = x.shape
      table.insert(sz, #sz, a:size(1))
      x = x:unsqueeze(-2):expand(sz)
    end
  else
    a, b = a:unsqueeze(1), b:unsqueeze(1)
  end
  local shape = x.shape
  local n = 1 -- the signals per filter (counted: reshape cannot infer it when time is empty)
  for i = 1, #shape - 1 do n = n * shape[i] end
  return x:reshape(n // a:size(1), a:size(1), x:size(-1)), a, b, shape
end

-- run(x3, a, b, clamp, shape[, zi]) -> y (clamped as asked, in shape), y3
-- (unclamped [N, C, T])
function C.run(x3, a, b, clamp, shape, zi)
  local y3 = Fi.lfilter(x3, a, b, zi)
  local y = clamp and torch.clamp(y3, -1, 1) or y3
  return y:reshape(shape), y3
end

local TWO_PI = 2 * math.pi

-- The named filters' coefficients: NAMED[name](args...) -> a, b (lists
-- [a0, a1, a2], [b0, b1, b2]) and whether the output is clamped
-- (torchaudio's biquads clamp, being lfilter with its default).
local NAMED = {}
C.NAMED = NAMED

local function biq(b0, b1, b2, a0, a1, a2) return {a0, a1, a2}, {b0, b1, b2}, true end

-- w0 and alpha of the audio EQ cookbook
local function w0_alpha(fname, sample_rate, freq, Q)
  if type(sample_rate) ~= "number" or sample_rate <= 0 then
    error(("%s: sample_rate must be a positive number, got %s"):format(fname, tostring(sample_rate)), 4)
  end
  if type(freq) ~= "number" then error(("%s: the frequency must be a number, got %s"):format(fname, type(freq)), 4) end
  if type(Q) ~= "number" or Q <= 0 then error(("%s: Q must be a positive number, got %s"):format(fname, tostring(Q)), 4) end
  local w0 = TWO_PI * freq / sample_rate
  return w0, math.sin(w0) / 2 / Q
end

function NAMED.biquad(b0, b1, b2, a0, a1, a2)
  for _, v in ipairs({b0, b1, b2, a0, a1, a2}) do
    if type(v) ~= "number" then error("biquad: the six coefficients must be numbers", 4) end
  end
  return biq(b0, b1, b2, a0, a1, a2)
end

function NAMED.allpass_biquad(sr, f, Q)
  local w0, al = w0_alpha("allpass_biquad", sr, f, Q or 0.707)
  return biq(1 - al, -2 * math.cos(w0), 1 + al, 1 + al, -2 * math.cos(w0), 1 - al)
end

function NAMED.band_biquad(sr, f, Q, noise)
  Q = Q or 0.707
  local w0 = w0_alpha("band_biquad", sr, f, Q)
  local bw = f / Q
  local a2 = math.exp(-TWO_PI * bw / sr)
  local a1 = -4 * a2 / (1 + a2) * math.cos(w0)
  local b0 = math.sqrt(1 - a1 * a1 / (4 * a2)) * (1 - a2)
  if noise then b0 = math.sqrt(((1 + a2) * (1 + a2) - a1 * a1) * (1 - a2) / (1 + a2)) end
  return biq(b0, 0, 0, 1, a1, a2)
end

function NAMED.bandpass_biquad(sr, f, Q, const_skirt_gain)
  local w0, al = w0_alpha("bandpass_biquad", sr, f, Q or 0.707)
  local g = const_skirt_gain and math.sin(w0) / 2 or al
  return biq(g, 0, -g, 1 + al, -2 * math.cos(w0), 1 - al)
end

function NAMED.bandreject_biquad(sr, f, Q)
  local w0, al = w0_alpha("bandreject_biquad", sr, f, Q or 0.707)
  return biq(1, -2 * math.cos(w0), 1, 1 + al, -2 * math.cos(w0), 1 - al)
end

-- the shelving filters' terms: A, 2 sqrt(A) alpha, (A-1) cos w0, (A+1) cos w0
local function shelf(fname, sr, gain, f, Q)
  if type(gain) ~= "number" then error(("%s: gain must be a number, got %s"):format(fname, type(gain)), 4) end
  local w0, al = w0_alpha(fname, sr, f, Q)
  local A = math.exp(gain / 40 * math.log(10))
  return A, 2 * math.sqrt(A) * al, (A - 1) * math.cos(w0), (A + 1) * math.cos(w0)
end

function NAMED.bass_biquad(sr, gain, f, Q)
  local A, t1, t2, t3 = shelf("bass_biquad", sr, gain, f or 100, Q or 0.707)
  local a0 = (A + 1) + t2 + t1
  return biq(A * ((A + 1) - t2 + t1) / a0, 2 * A * ((A - 1) - t3) / a0, A * ((A + 1) - t2 - t1) / a0, 1,
    -2 * ((A - 1) + t3) / a0, ((A + 1) + t2 - t1) / a0)
end

function NAMED.treble_biquad(sr, gain, f, Q)
  local A, t1, t2, t3 = shelf("treble_biquad", sr, gain, f or 3000, Q or 0.707)
  return biq(A * ((A + 1) + t2 + t1), -2 * A * ((A - 1) + t3), A * ((A + 1) + t2 - t1), (A + 1) - t2 + t1,
    2 * ((A - 1) - t3), (A + 1) - t2 - t1)
end

function NAMED.equalizer_biquad(sr, f, gain, Q)
  if type(gain) ~= "number" then error(("equalizer_biquad: gain must be a number, got %s"):format(type(gain)), 4) end
  local w0, al = w0_alpha("equalizer_biquad", sr, f, Q or 0.707)
  local A = math.exp(gain / 40 * math.log(10))
  return biq(1 + al * A, -2 * math.cos(w0), 1 - al * A, 1 + al / A, -2 * math.cos(w0), 1 - al / A)
end

function NAMED.highpass_biquad(sr, f, Q)
  local w0, al = w0_alpha("highpass_biquad", sr, f, Q or 0.707)
  local c = math.cos(w0)
  return biq((1 + c) / 2, -1 - c, (1 + c) / 2, 1 + al, -2 * c, 1 - al)
end

function NAMED.lowpass_biquad(sr, f, Q)
  local w0, al = w0_alpha("lowpass_biquad", sr, f, Q or 0.707)
  local c = math.cos(w0)
  return biq((1 - c) / 2, 1 - c, (1 - c) / 2, 1 + al, -2 * c, 1 - al)
end

-- ISO 908 CD de-emphasis: SoX's shelf at 44.1 or 48 kHz
local DEEMPH = {[44100] = {5283, 0.4845, -9.477}, [48000] = {5356, 0.479, -9.62}}
function NAMED.deemph_biquad(sr)
  local p = DEEMPH[sr]
  if not p then error(("deemph_biquad: sample_rate must be 44100 (audio CD) or 48000 (DAT), got %s"):format(tostring(sr)), 4) end
  local w0 = TWO_PI * p[1] / sr
  local A = math.exp(p[3] / 40 * math.log(10))
  local al = math.sin(w0) / 2 * math.sqrt((A + 1 / A) * (1 / p[2] - 1) + 2)
  local t1, t2, t3 = 2 * math.sqrt(A) * al, (A - 1) * math.cos(w0), (A + 1) * math.cos(w0)
  return biq(A * ((A + 1) + t2 + t1), -2 * A * ((A - 1) + t3), A * ((A + 1) + t2 - t1), (A + 1) - t2 + t1,
    2 * ((A - 1) - t3), (A + 1) - t2 - t1)
end

-- RIAA playback: SoX's zeros and poles per rate, 0 dB at 1 kHz
local RIAA = {
  [44100] = {{-0.2014898, 0.9233820}, {0.7083149, 0.9924091}},
  [48000] = {{-0.1766069, 0.9321590}, {0.7396325, 0.9931330}},
  [88200] = {{-0.1168735, 0.9648312}, {0.8590646, 0.9964002}},
  [96000] = {{-0.1141486, 0.9676817}, {0.8699137, 0.9966946}},
}
function NAMED.riaa_biquad(sr)
  local zp = RIAA[sr]
  if not zp then error(("riaa_biquad: sample_rate must be 44100, 48000, 88200 or 96000, got %s"):format(tostring(sr)), 4) end
  local z, p = zp[1], zp[2]
  local b0, b1, b2 = 1, -(z[1] + z[2]), z[1] * z[2]
  local a0, a1, a2 = 1, -(p[1] + p[2]), p[1] * p[2]
  local y = TWO_PI * 1000 / sr
  local bre, are = b0 + b1 * math.cos(-y) + b2 * math.cos(-2 * y), a0 + a1 * math.cos(-y) + a2 * math.cos(-2 * y)
  local bim, aim = b1 * math.sin(-y) + b2 * math.sin(-2 * y), a1 * math.sin(-y) + a2 * math.sin(-2 * y)
  local g = 1 / math.sqrt((bre ^ 2 + bim ^ 2) / (are ^ 2 + aim ^ 2))
  return biq(b0 * g, b1 * g, b2 * g, a0, a1, a2)
end

-- first-order emphasis: y[t] = x[t] - coeff x[t-1] and its inverse
local function emph_coeff(fname, coeff)
  coeff = coeff == nil and 0.97 or coeff
  if type(coeff) ~= "number" then error(("%s: coeff must be a number, got %s"):format(fname, type(coeff)), 5) end
  return coeff
end
function NAMED.preemphasis(coeff)
  coeff = emph_coeff("preemphasis", coeff)
  return {1, 0}, {1, -coeff}, false
end
function NAMED.deemphasis(coeff)
  coeff = emph_coeff("deemphasis", coeff)
  return {1, -coeff}, {1, 0}, true
end

return C
