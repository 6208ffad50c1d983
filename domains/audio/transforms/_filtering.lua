-- torch.audio.transforms._filtering -- torchaudio's filter and level
-- transforms as nn modules: Vol, Fade, Preemphasis and Deemphasis (which
-- also stream: process(chunk) keeps the filter's state between chunks,
-- reset() forgets it), Convolve, FFTConvolve and AddNoise.
local torch = require "torch"
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional"

local T = {}

-- Vol(gain[, gain_type="amplitude"]): the waveform scaled by gain
-- (amplitude ratio, dB, or power ratio), clamped to [-1, 1]
T.Vol = Module:extend("Vol")
function T.Vol:__init(gain, ...)
  local o = U.args("Vol", {"gain_type"}, {gain_type = "amplitude"}, ...)
  if type(gain) ~= "number" then error(("Vol: gain must be a number, got %s"):format(type(gain)), 3) end
  U.choice("Vol", "gain_type", o.gain_type, "amplitude power db")
  if (o.gain_type == "amplitude" or o.gain_type == "power") and gain < 0 then
    error(("Vol: gain must be positive for gain_type %s, got %g"):format(o.gain_type, gain), 3)
  end
  self.gain, self.gain_type = gain, o.gain_type
end
function T.Vol:forward(waveform)
  local w = waveform
  if self.gain_type == "amplitude" then w = w * self.gain
  elseif self.gain_type == "db" then w = AF.gain(w, self.gain)
  else w = AF.gain(w, 10 * math.log(self.gain, 10)) end
  return torch.clamp(w, -1, 1)
end
function T.Vol:extra_repr() return ("gain=%g, gain_type=%s"):format(self.gain, self.gain_type) end

-- The fade shapes over f = linspace(0, 1, n): fade in, then fade out.
local FADE_IN = {
  linear = function(f) return f end,
  exponential = function(f) return (2 ^ (f - 1)) * f end,
  logarithmic = function(f) return torch.log10(f + 0.1) + 1 end,
  quarter_sine = function(f) return torch.sin(f * (math.pi / 2)) end,
  half_sine = function(f) return torch.sin(f * math.pi - math.pi / 2) / 2 + 0.5 end,
}
local FADE_OUT = {
  linear = function(f) return 1 - f end,
  exponential = function(f) return (2 ^ (-f)) * (1 - f) end,
  logarithmic = function(f) return torch.log10(1.1 - f) + 1 end,
  quarter_sine = function(f) return torch.sin(f * (math.pi / 2) + math.pi / 2) end,
  half_sine = function(f) return torch.sin(f * math.pi + math.pi / 2) / 2 + 0.5 end,
}

-- Fade([fade_in_len=0, fade_out_len=0, fade_shape="linear"])
T.Fade = Module:extend("Fade")
function T.Fade:__init(...)
  local o = U.args("Fade", {"fade_in_len", "fade_out_len", "fade_shape"},
    {fade_in_len = 0, fade_out_len = 0, fade_shape = "linear"}, ...)
  U.size("Fade", "fade_in_len", o.fade_in_len)
  U.size("Fade", "fade_out_len", o.fade_out_len)
  U.choice("Fade", "fade_shape", o.fade_shape, "linear exponential logarithmic quarter_sine half_sine")
  self.fade_in_len, self.fade_out_len, self.fade_shape = o.fade_in_len, o.fade_out_len, o.fade_shape
end
-- the envelope of length L: fade in first, fade out last (either may
-- overlap the other), in [0, 1]
function T.Fade:_envelope(L, dtype, device)
  if self.fade_in_len > L or self.fade_out_len > L then
    error(("Fade: fade lengths (%d in, %d out) exceed the waveform's %d samples"):format(self.fade_in_len,
      self.fade_out_len, L), 3)
  end
  local opts = {dtype = dtype, device = device}
  local fin = FADE_IN[self.fade_shape](torch.linspace(0, 1, self.fade_in_len, opts))
  local fout = FADE_OUT[self.fade_shape](torch.linspace(0, 1, self.fade_out_len, opts))
  local e_in = torch.cat({fin, torch.ones(L - self.fade_in_len, opts)}):clamp(0, 1)
  local e_out = torch.cat({torch.ones(L - self.fade_out_len, opts), fout}):clamp(0, 1)
  return e_in * e_out
end
function T.Fade:forward(waveform)
  local dt = waveform:is_floating_point() and waveform.dtype or torch.float32
  return self:_envelope(waveform:size(-1), dt, waveform.device) * waveform
end
function T.Fade:extra_repr()
  return ("fade_in_len=%d, fade_out_len=%d, fade_shape=%s"):format(self.fade_in_len, self.fade_out_len, self.fade_shape)
end

-- A first-order emphasis module: forward filters a whole waveform;
-- process(chunk) / reset() stream it.
local function emphasis(name)
  local M = Module:extend(name)
  local fn = name:lower()
  function M:__init(...)
    local o = U.args(name, {"coeff"}, {coeff = 0.97}, ...)
    if type(o.coeff) ~= "number" then error(("%s: coeff must be a number, got %s"):format(name, type(o.coeff)), 3) end
    self.coeff = o.coeff
  end
  function M:forward(waveform) return AF[fn](waveform, self.coeff) end
  function M:process(chunk)
    self._stream = self._stream or AF.filter_stream(fn, self.coeff)
    return self._stream:process(chunk)
  end
  function M:reset()
    self._stream = nil
    return self
  end
  function M:extra_repr() return ("coeff=%g"):format(self.coeff) end
  return M
end
-- Preemphasis([coeff=0.97]): y[t] = x[t] - coeff x[t-1]
T.Preemphasis = emphasis("Preemphasis")
-- Deemphasis([coeff=0.97]): y[t] = x[t] + coeff y[t-1]
T.Deemphasis = emphasis("Deemphasis")

-- Convolve([mode="full"]) and FFTConvolve([mode="full"]): forward(x, y)
local function conv_module(name, fn)
  local M = Module:extend(name)
  function M:__init(...)
    local o = U.args(name, {"mode"}, {mode = "full"}, ...)
    U.choice(name, "mode", o.mode, "full valid same")
    self.mode = o.mode
  end
  function M:forward(x, y) return AF[fn](x, y, self.mode) end
  function M:extra_repr() return "mode=" .. self.mode end
  return M
end
T.Convolve = conv_module("Convolve", "convolve")
T.FFTConvolve = conv_module("FFTConvolve", "fftconvolve")

-- AddNoise(): forward(waveform, noise, snr[, lengths])
T.AddNoise = Module:extend("AddNoise")
function T.AddNoise:forward(waveform, noise, snr, lengths)
  return AF.add_noise(waveform, noise, snr, {lengths = lengths or false})
end

return T
