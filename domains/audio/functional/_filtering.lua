-- torch.audio.functional._filtering -- torchaudio's IIR filters: lfilter
-- (the engine op torch.audio._filter.lfilter, differentiable in the
-- waveform and both coefficient tensors), filtfilt, biquad and the named
-- biquads of SoX and the audio EQ cookbook, and, beyond torchaudio,
-- streams that filter a long signal block by block with the filter's
-- state carried between blocks (lfilter_stream, filter_stream).
local torch = require "torch"
local U = require "torch.nn.util"
local C = require "torch.audio.functional._lfilter_core"

local F = {}
local P = "torch.audio.functional."

-- lfilter(waveform, a_coeffs, b_coeffs[, clamp=true, batching=true])
function F.lfilter(waveform, a_coeffs, b_coeffs, ...)
  local fname = P .. "lfilter"
  local o = U.args(fname, {"clamp", "batching"}, {clamp = true, batching = true}, ...)
  local x3, a, b, shape = C.prepare(fname, waveform, a_coeffs, b_coeffs, o.batching)
  return (C.run(x3, a, b, o.clamp, shape))
end

-- filtfilt(waveform, a_coeffs, b_coeffs[, clamp=true]): forward, then
-- backward in time (zero phase); only the second pass is clamped
function F.filtfilt(waveform, a_coeffs, b_coeffs, ...)
  local fname = P .. "filtfilt"
  local o = U.args(fname, {"clamp"}, {clamp = true}, ...)
  local x3, a, b, shape = C.prepare(fname, waveform, a_coeffs, b_coeffs, true)
  local Fi = require "torch.audio._filter"
  local y = Fi.lfilter(Fi.lfilter(x3, a, b), a, b, nil, 0, true)
  if o.clamp then y = torch.clamp(y, -1, 1) end
  return y:reshape(shape)
end

-- A named filter applied to a whole waveform: NAMED[name](args...) gives
-- its coefficients.
local function named(name, waveform, ...)
  local a, b, clamp = C.NAMED[name](...)
  local x3, at, bt, shape = C.prepare(P .. name, waveform, a, b, true)
  return (C.run(x3, at, bt, clamp, shape))
end

-- biquad(waveform, b0, b1, b2, a0, a1, a2)
function F.biquad(waveform, b0, b1, b2, a0, a1, a2) return named("biquad", waveform, b0, b1, b2, a0, a1, a2) end

-- Each cookbook biquad: its required arguments, then its optional ones
-- (positional or by name), in torchaudio's order.
local BIQUADS = {
  allpass_biquad = {{"sample_rate", "central_freq"}, {"Q"}},
  band_biquad = {{"sample_rate", "central_freq"}, {"Q", "noise"}},
  bandpass_biquad = {{"sample_rate", "central_freq"}, {"Q", "const_skirt_gain"}},
  bandreject_biquad = {{"sample_rate", "central_freq"}, {"Q"}},
  bass_biquad = {{"sample_rate", "gain"}, {"central_freq", "Q"}},
  treble_biquad = {{"sample_rate", "gain"}, {"central_freq", "Q"}},
  equalizer_biquad = {{"sample_rate", "center_freq", "gain"}, {"Q"}},
  highpass_biquad = {{"sample_rate", "cutoff_freq"}, {"Q"}},
  lowpass_biquad = {{"sample_rate", "cutoff_freq"}, {"Q"}},
  deemph_biquad = {{"sample_rate"}, {}},
  riaa_biquad = {{"sample_rate"}, {}},
  preemphasis = {{}, {"coeff"}},
}

-- The coefficient arguments of name from a call's arguments (required
-- positionally, then the optional ones), as a list for NAMED[name].
local function biquad_args(name, ...)
  local spec, n = BIQUADS[name], select("#", ...)
  local req, opt = spec[1], spec[2]
  if n < #req then
    error(("%s%s: expected %d arguments after the waveform (%s), got %d"):format(P, name, #req,
      table.concat(req, ", "), n), 4)
  end
  local args = {...}
  local o = U.args(P .. name, opt, nil, table.unpack(args, #req + 1, n))
  for i, k in ipairs(opt) do args[#req + i] = o[k] end
  return args, #req + #opt
end

for name in pairs(BIQUADS) do
  if name ~= "preemphasis" then
    F[name] = function(waveform, ...)
      local args, n = biquad_args(name, ...)
      return named(name, waveform, table.unpack(args, 1, n))
    end
  end
end

-- deemphasis(waveform[, coeff=0.97]): y[t] = x[t] + coeff y[t-1], clamped
function F.deemphasis(waveform, ...)
  local o = U.args(P .. "deemphasis", {"coeff"}, nil, ...)
  return named("deemphasis", waveform, o.coeff)
end

-- preemphasis(waveform[, coeff=0.97]): y[t] = x[t] - coeff x[t-1]
function F.preemphasis(waveform, ...)
  local o = U.args(P .. "preemphasis", {"coeff"}, nil, ...)
  return named("preemphasis", waveform, o.coeff)
end

-- overdrive(waveform[, gain=20, colour=20]): SoX's overdrive: the boosted
-- signal (gain dB, offset colour/200) through a soft clipper, its DC
-- removed by the filter y[t] = v[t] - v[t-1] + 0.995 y[t-1], mixed as
-- 0.5 x + 0.75 y and clamped to [-1, 1]
function F.overdrive(waveform, ...)
  local fname = P .. "overdrive"
  local o = U.args(fname, {"gain", "colour"}, {gain = 20, colour = 20}, ...)
  if type(o.gain) ~= "number" or type(o.colour) ~= "number" then error(fname .. ": gain and colour must be numbers", 2) end
  local x3, a, b, shape = C.prepare(fname, waveform, {1, -0.995}, {1, -1}, true)
  local v = x3 * math.exp(o.gain * math.log(10) / 20) + o.colour / 200
  local soft = v - v * v * v / 3
  v = torch.where(v:lt(-1), -2.0 / 3.0, torch.where(v:gt(1), 2.0 / 3.0, soft))
  local y = require("torch.audio._filter").lfilter(v, a, b)
  return torch.clamp(x3 * 0.5 + y * 0.75, -1, 1):reshape(shape)
end

---------------------------------------------------------------------------
-- Streams: a filter whose state (the last K-1 inputs and outputs of every
-- channel, direct form I) survives between calls of process, so a signal
-- cut in blocks of any sizes filters to exactly the whole signal's result.

local Stream = {}
Stream.__index = Stream
Stream.__name = "torch.audio.functional.FilterStream"

local function new_stream(fname, a, b, clamp, batching)
  return setmetatable({fname = fname, a = a, b = b, clamp = clamp, batching = batching}, Stream)
end

-- The last H samples along dim 3 of the history hist [N, C, H] followed by x3.
local function tail(hist, x3, H)
  local xs = torch.cat({hist, x3}, 3)
  return xs:narrow(3, xs:size(3) - H + 1, H)
end

-- stream:process(chunk) -> the filtered chunk (chunk [..., time]; every
-- chunk of a stream has the same leading shape, dtype and device)
function Stream:process(chunk)
  local fname = self.fname .. ":process"
  local x3, a, b, shape = C.prepare(fname, chunk, self.a, self.b, self.batching)
  local H = a:size(2) - 1
  local lead = C.shape_str(x3:narrow(3, 1, 0))
  if self.state and (self.lead ~= lead or self.state.dtype ~= x3.dtype or
      tostring(self.state.device) ~= tostring(x3.device)) then
    error(("%s: chunk %s (%s) does not continue the stream's signal (%s, %s); call reset() to start a new one")
      :format(fname, C.shape_str(chunk), tostring(chunk.dtype), self.shape_of, tostring(self.state.dtype)), 2)
  end
  if H == 0 then return (C.run(x3, a, b, self.clamp, shape)) end
  local zi = self.state
  local y, y3 = C.run(x3, a, b, self.clamp, shape, zi)
  local zero = zi or torch.zeros(x3:size(1), x3:size(2), 2 * H, {dtype = x3.dtype, device = x3.device})
  local no <close> = torch.no_grad()
  self.state = torch.cat({tail(zero:narrow(3, 1, H), x3, H), tail(zero:narrow(3, H + 1, H), y3, H)}, 3)
    :detach():contiguous()
  self.lead, self.shape_of = lead, C.shape_str(chunk)
  return y
end

-- stream:reset(): forget the signal (the next chunk starts from silence)
function Stream:reset()
  self.state, self.lead, self.shape_of = nil, nil, nil
  return self
end

function Stream:__tostring()
  return ("%s(%s)"):format(self.fname, self.state and "running" or "fresh")
end

-- lfilter_stream(a_coeffs, b_coeffs[, clamp=true, batching=true])
function F.lfilter_stream(a_coeffs, b_coeffs, ...)
  local o = U.args(P .. "lfilter_stream", {"clamp", "batching"}, {clamp = true, batching = true}, ...)
  return new_stream(P .. "lfilter_stream", a_coeffs, b_coeffs, o.clamp, o.batching)
end

-- filter_stream(name, args...): a stream of the named filter (biquad,
-- lowpass_biquad, ..., riaa_biquad, deemph_biquad, preemphasis,
-- deemphasis) with that function's arguments after the waveform
function F.filter_stream(name, ...)
  local fname = P .. "filter_stream"
  if type(name) ~= "string" or not C.NAMED[name] then
    local names = {}
    for k in pairs(C.NAMED) do names[#names + 1] = k end
    table.sort(names)
    error(("%s: unknown filter %s (one of %s)"):format(fname, tostring(name), table.concat(names, ", ")), 2)
  end
  local a, b, clamp
  if BIQUADS[name] then
    local args, n = biquad_args(name, ...)
    a, b, clamp = C.NAMED[name](table.unpack(args, 1, n))
  elseif name == "deemphasis" then
    a, b, clamp = C.NAMED[name](U.args(fname, {"coeff"}, nil, ...).coeff)
  else
    a, b, clamp = C.NAMED[name](...)
  end
  return new_stream(P .. name, a, b, clamp, true)
end

return U.public_table(F, P)
