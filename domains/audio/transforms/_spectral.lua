-- torch.audio.transforms._spectral -- torchaudio's short-time spectral
-- transforms: Spectrogram (which also streams: process / flush / reset),
-- InverseSpectrogram, GriffinLim, TimeStretch, PitchShift and
-- SpectralCentroid; each holds its window as a buffer and calls
-- torch.audio.functional.
local torch = require "torch"
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional._spectral"
local Stream = require "torch.audio.transforms._stream"
local S = require "torch.audio.functional._stft_real"

local M = {}
local PREFIX = "torch.audio.transforms."

local function class(name)
  local C = Module:extend(name)
  C.__prefix = PREFIX
  return C
end

-- make_window(self, fname, o): the window buffer from window_fn(win_length[, wkwargs])
local function make_window(self, fname, o)
  local fn = o.window_fn or torch.hann_window
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    error(("%s: window_fn must be a function of the window length, got %s"):format(fname, type(fn)), 3)
  end
  local w = o.wkwargs and fn(self.win_length, o.wkwargs) or fn(self.win_length)
  if not torch.is_tensor(w) or w:dim() ~= 1 or w:size(1) ~= self.win_length then
    error(("%s: window_fn(%d) must return a 1-D tensor of %d points"):format(fname, self.win_length,
      self.win_length), 3)
  end
  self:register_buffer("window", w)
end

-- set_sizes(self, fname, o): n_fft, win_length (n_fft), hop_length (win // 2)
local function set_sizes(self, fname, o, hop_div)
  U.size(fname, "n_fft", o.n_fft, 1)
  self.n_fft = o.n_fft
  self.win_length = o.win_length or o.n_fft
  self.hop_length = o.hop_length or self.win_length // (hop_div or 2)
  U.size(fname, "win_length", self.win_length, 1)
  U.size(fname, "hop_length", self.hop_length, 1)
  if self.win_length > self.n_fft then
    error(("%s: win_length (%d) must not exceed n_fft (%d)"):format(fname, self.win_length, self.n_fft), 3)
  end
end
M._set_sizes, M._make_window = set_sizes, make_window

-- check_spec_options(fname, o): power, normalized, pad_mode as spectrogram takes them
local function check_spec_options(fname, o)
  if o.power ~= false and (type(o.power) ~= "number" or o.power <= 0) then
    error(("%s: power must be a positive number or false (complex output), got %s"):format(fname,
      tostring(o.power)), 3)
  end
  S.norms(fname, o.normalized)
  S.check_pad_mode(fname, o.pad_mode)
end
M._check_spec_options = check_spec_options

local SPEC_NAMES = {"n_fft", "win_length", "hop_length", "pad", "window_fn", "power", "normalized", "wkwargs",
                    "center", "pad_mode", "onesided"}
local SPEC_DEFAULTS = {n_fft = 400, pad = 0, power = 2.0, normalized = false, center = true, pad_mode = "reflect",
                       onesided = true}

-- Spectrogram([n_fft=400, win_length=n_fft, hop_length=win_length // 2,
-- pad=0, window_fn=torch.hann_window, power=2, normalized=false, wkwargs,
-- center=true, pad_mode="reflect", onesided=true]): [..., time] ->
-- [..., n_fft // 2 + 1, frames]; power=false gives the complex STFT
M.Spectrogram = class("Spectrogram")
function M.Spectrogram:__init(...)
  local fname = PREFIX .. "Spectrogram"
  local o = U.args(fname, SPEC_NAMES, SPEC_DEFAULTS, ...)
  set_sizes(self, fname, o)
  make_window(self, fname, o)
  self.pad, self.power, self.normalized = o.pad, o.power, o.normalized
  self.center, self.pad_mode, self.onesided = o.center, o.pad_mode, o.onesided
  check_spec_options(fname, self)
end
function M.Spectrogram:_opts(center, pad)
  if center == nil then center = self.center end
  return {pad = pad or self.pad, window = self.window, n_fft = self.n_fft, hop_length = self.hop_length,
    win_length = self.win_length, power = self.power, normalized = self.normalized,
    center = center, pad_mode = self.pad_mode, onesided = self.onesided}
end
function M.Spectrogram:forward(waveform)
  return AF.spectrogram(waveform, self:_opts())
end
function M.Spectrogram:extra_repr()
  return ("n_fft=%d, win_length=%d, hop_length=%d, power=%s"):format(self.n_fft, self.win_length,
    self.hop_length, tostring(self.power))
end

-- frames(self, samples) -> the spectrogram of the stream's ready samples
-- (already padded: center and pad off), [..., freq, 0] when none
local function stream_frames(self, samples, lead_of)
  if samples ~= nil then return AF.spectrogram(samples, self:_opts(false, 0)) end
  local shape = lead_of:size()
  shape[#shape] = self.onesided and self.n_fft // 2 + 1 or self.n_fft
  shape[#shape + 1] = 0
  local dtype = self.power == false and (lead_of.dtype == torch.float64 and torch.complex128 or torch.complex64)
    or lead_of.dtype
  return torch.empty(shape, {dtype = dtype, device = lead_of.device})
end

-- process(chunk [..., time]) -> [..., freq, k]: the frames the signal so
-- far completes (k may be 0); the chunks of one signal give the whole
-- signal's frames once flush() has added the last ones
function M.Spectrogram:process(chunk)
  self._stream = self._stream or Stream.new(PREFIX .. "Spectrogram:process", self)
  self._like = chunk
  return stream_frames(self, self._stream:process(chunk), chunk)
end

-- flush() -> [..., freq, k]: the last frames (end padding); the stream then starts over
function M.Spectrogram:flush()
  if not self._stream or not self._like then
    error(PREFIX .. "Spectrogram:flush: no signal was given to process()", 2)
  end
  local like = self._like
  local out = stream_frames(self, self._stream:flush(), like)
  self._like = nil
  return out
end

-- reset(): forget the streamed signal
function M.Spectrogram:reset()
  if self._stream then self._stream:reset() end
  self._like = nil
end

-- InverseSpectrogram([n_fft=400, win_length, hop_length, pad=0, window_fn,
-- normalized=false, wkwargs, center=true, pad_mode, onesided=true]):
-- complex [..., freq, frames] (and a length) -> [..., time]
M.InverseSpectrogram = class("InverseSpectrogram")
function M.InverseSpectrogram:__init(...)
  local fname = PREFIX .. "InverseSpectrogram"
  local o = U.args(fname, {"n_fft", "win_length", "hop_length", "pad", "window_fn", "normalized", "wkwargs",
    "center", "pad_mode", "onesided"}, {n_fft = 400, pad = 0, normalized = false, center = true,
    pad_mode = "reflect", onesided = true}, ...)
  set_sizes(self, fname, o)
  make_window(self, fname, o)
  self.pad, self.normalized, self.center, self.pad_mode, self.onesided = o.pad, o.normalized, o.center,
    o.pad_mode, o.onesided
end
function M.InverseSpectrogram:forward(spec, length)
  return AF.inverse_spectrogram(spec, {length = length or false, pad = self.pad, window = self.window,
    n_fft = self.n_fft, hop_length = self.hop_length, win_length = self.win_length, normalized = self.normalized,
    center = self.center, pad_mode = self.pad_mode, onesided = self.onesided})
end

-- GriffinLim([n_fft=400, n_iter=32, win_length, hop_length, window_fn,
-- power=2, wkwargs, momentum=0.99, length=false, rand_init=true])
M.GriffinLim = class("GriffinLim")
function M.GriffinLim:__init(...)
  local fname = PREFIX .. "GriffinLim"
  local o = U.args(fname, {"n_fft", "n_iter", "win_length", "hop_length", "window_fn", "power", "wkwargs",
    "momentum", "length", "rand_init"}, {n_fft = 400, n_iter = 32, power = 2.0, momentum = 0.99, length = false,
    rand_init = true}, ...)
  if type(o.momentum) ~= "number" or not (o.momentum >= 0 and o.momentum < 1) then
    error(("%s: momentum must be in the range [0, 1), got %s"):format(fname, tostring(o.momentum)), 2)
  end
  set_sizes(self, fname, o)
  make_window(self, fname, o)
  self.n_iter, self.power, self.momentum, self.length, self.rand_init = o.n_iter, o.power, o.momentum, o.length,
    o.rand_init
end
function M.GriffinLim:forward(specgram)
  return AF.griffinlim(specgram, {window = self.window, n_fft = self.n_fft, hop_length = self.hop_length,
    win_length = self.win_length, power = self.power, n_iter = self.n_iter, momentum = self.momentum,
    length = self.length, rand_init = self.rand_init})
end

-- TimeStretch([hop_length=n_fft // 2, n_freq=201, fixed_rate=false]):
-- complex [..., freq, frames] -> [..., freq, ceil(frames / rate)]
M.TimeStretch = class("TimeStretch")
function M.TimeStretch:__init(...)
  local fname = PREFIX .. "TimeStretch"
  local o = U.args(fname, {"hop_length", "n_freq", "fixed_rate"}, {n_freq = 201, fixed_rate = false}, ...)
  U.size(fname, "n_freq", o.n_freq, 1)
  local n_fft = (o.n_freq - 1) * 2
  local hop = o.hop_length or n_fft // 2
  self.fixed_rate = o.fixed_rate
  self:register_buffer("phase_advance", torch.linspace(0, math.pi * hop, o.n_freq):unsqueeze(2))
end
function M.TimeStretch:forward(z, overriding_rate)
  local rate = overriding_rate or self.fixed_rate
  if not rate then
    error(PREFIX .. "TimeStretch: no rate: give fixed_rate when making it or a rate to forward", 2)
  end
  return AF.phase_vocoder(z, rate, self.phase_advance)
end

-- SpectralCentroid(sample_rate[, n_fft=400, win_length, hop_length, pad=0,
-- window_fn, wkwargs]): [..., time] -> [..., frames]
M.SpectralCentroid = class("SpectralCentroid")
function M.SpectralCentroid:__init(sample_rate, ...)
  local fname = PREFIX .. "SpectralCentroid"
  U.number(fname, "sample_rate", sample_rate)
  local o = U.args(fname, {"n_fft", "win_length", "hop_length", "pad", "window_fn", "wkwargs"},
    {n_fft = 400, pad = 0}, ...)
  set_sizes(self, fname, o)
  make_window(self, fname, o)
  self.sample_rate, self.pad = sample_rate, o.pad
end
function M.SpectralCentroid:forward(waveform)
  return AF.spectral_centroid(waveform, self.sample_rate, {pad = self.pad, window = self.window,
    n_fft = self.n_fft, hop_length = self.hop_length, win_length = self.win_length})
end

-- PitchShift(sample_rate, n_steps[, bins_per_octave=12, n_fft=512,
-- win_length, hop_length=win_length // 4, window_fn, wkwargs])
M.PitchShift = class("PitchShift")
function M.PitchShift:__init(sample_rate, n_steps, ...)
  local fname = PREFIX .. "PitchShift"
  U.number(fname, "sample_rate", sample_rate)
  U.number(fname, "n_steps", n_steps)
  local o = U.args(fname, {"bins_per_octave", "n_fft", "win_length", "hop_length", "window_fn", "wkwargs"},
    {bins_per_octave = 12, n_fft = 512}, ...)
  set_sizes(self, fname, o, 4)
  make_window(self, fname, o)
  self.sample_rate, self.n_steps, self.bins_per_octave = sample_rate, n_steps, o.bins_per_octave
end
function M.PitchShift:forward(waveform)
  return AF.pitch_shift(waveform, self.sample_rate, self.n_steps, {bins_per_octave = self.bins_per_octave,
    n_fft = self.n_fft, win_length = self.win_length, hop_length = self.hop_length, window = self.window})
end

return M
