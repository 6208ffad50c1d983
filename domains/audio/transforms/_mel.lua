-- torch.audio.transforms._mel -- the mel-scale transforms of torchaudio:
-- MelScale, InverseMelScale, MelSpectrogram, MFCC and LFCC. Each holds its
-- filter bank / DCT matrix as a buffer and applies it with one matmul over
-- the [..., freq, time] spectrogram; MelSpectrogram streams like
-- Spectrogram (see transforms._spectral).
local torch = require "torch"
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional._mel"
local TS = require "torch.audio.transforms._spectral"

local M = {}
local PREFIX = "torch.audio.transforms."

local function class(name)
  local C = Module:extend(name)
  C.__prefix = PREFIX
  return C
end

-- apply_fb(fb_t [n_out, n_in], spec [..., n_in, time][, fb [n_in, n_out]])
-- -> [..., n_out, time] (a transposed view, as torchaudio's, when spec is
-- one; fb, the contiguous [n_in, n_out] matrix, then serves the product)
local function apply_fb(fb_t, spec, fname, fb_plain)
  if spec:dim() < 2 or spec:size(-2) ~= fb_t:size(2) then
    error(("%s: expected a spectrogram [..., %d, time], got shape %s"):format(fname, fb_t:size(2),
      U.shape_str(spec)), 3)
  end
  local fb = fb_t
  if fb.device ~= spec.device or fb.dtype ~= spec.dtype then fb = fb:to(spec.device, spec.dtype) end
  if spec:dim() > 2 and spec:stride(-2) == 1 and spec:transpose(-1, -2):is_contiguous() then
    -- frames-major memory (a spectrogram's own layout): one [frames, n_in] x [n_in, n_out] product
    local right = fb_plain or fb:t()
    if right.device ~= spec.device or right.dtype ~= spec.dtype then right = right:to(spec.device, spec.dtype) end
    return torch.matmul(spec:transpose(-1, -2), right):transpose(-1, -2)
  end
  return torch.matmul(fb, spec)
end
M._apply_fb = apply_fb

local function f_max_of(f_max, sample_rate)
  if f_max == nil or f_max == false then return sample_rate // 2 + 0.0 end
  return f_max
end

-- MelScale([n_mels=128, sample_rate=16000, f_min=0, f_max=sr//2, n_stft=201,
-- norm=false, mel_scale="htk"]): [..., n_stft, time] -> [..., n_mels, time]
M.MelScale = class("MelScale")
function M.MelScale:__init(...)
  local fname = PREFIX .. "MelScale"
  local o = U.args(fname, {"n_mels", "sample_rate", "f_min", "f_max", "n_stft", "norm", "mel_scale"},
    {n_mels = 128, sample_rate = 16000, f_min = 0.0, n_stft = 201, norm = false, mel_scale = "htk"}, ...)
  self.n_mels, self.sample_rate, self.f_min = o.n_mels, o.sample_rate, o.f_min
  self.f_max = f_max_of(o.f_max, o.sample_rate)
  self.norm, self.mel_scale = o.norm, o.mel_scale
  if self.f_min > self.f_max then
    error(("%s: require f_min <= f_max, got f_min=%g, f_max=%g"):format(fname, self.f_min, self.f_max), 2)
  end
  local fb = AF.melscale_fbanks(o.n_stft, self.f_min, self.f_max, self.n_mels, self.sample_rate,
    {norm = o.norm, mel_scale = o.mel_scale})
  self:register_buffer("fb", fb)
end
function M.MelScale:forward(specgram)
  if self._fb_src ~= self.fb then -- fb^T, made again when fb is replaced (load_state_dict)
    self._fb_t, self._fb_src = self.fb:t():contiguous(), self.fb
  end
  return apply_fb(self._fb_t, specgram, PREFIX .. "MelScale", self.fb)
end
function M.MelScale:extra_repr()
  return ("n_mels=%d, sample_rate=%s, f_min=%g, f_max=%g"):format(self.n_mels, self.sample_rate, self.f_min,
    self.f_max)
end

local DRIVERS = {gels = "gelsd", gelsy = "gelsy", gelsd = "gelsd", gelss = "gelsd"}

-- InverseMelScale(n_stft[, n_mels=128, sample_rate=16000, f_min=0,
-- f_max=sr//2, norm=false, mel_scale="htk", driver="gels"]): the
-- non-negative least-squares spectrogram [..., n_stft, time] whose mel
-- projection is the input (torchaudio 2.x: relu of lstsq's solution)
M.InverseMelScale = class("InverseMelScale")
function M.InverseMelScale:__init(n_stft, ...)
  local fname = PREFIX .. "InverseMelScale"
  U.size(fname, "n_stft", n_stft, 1)
  local o = U.args(fname, {"n_mels", "sample_rate", "f_min", "f_max", "norm", "mel_scale", "driver"},
    {n_mels = 128, sample_rate = 16000, f_min = 0.0, norm = false, mel_scale = "htk", driver = "gels"}, ...)
  self.n_stft, self.n_mels, self.sample_rate, self.f_min = n_stft, o.n_mels, o.sample_rate, o.f_min
  self.f_max = f_max_of(o.f_max, o.sample_rate)
  if self.f_min > self.f_max then
    error(("%s: require f_min <= f_max, got f_min=%g, f_max=%g"):format(fname, self.f_min, self.f_max), 2)
  end
  if not DRIVERS[o.driver] then
    error(('%s: driver must be one of "gels", "gelsy", "gelsd", "gelss", got %s'):format(fname,
      tostring(o.driver)), 2)
  end
  self.driver = o.driver
  self:register_buffer("fb", AF.melscale_fbanks(n_stft, self.f_min, self.f_max, self.n_mels, self.sample_rate,
    {norm = o.norm, mel_scale = o.mel_scale}))
end
function M.InverseMelScale:forward(melspec)
  local fname = PREFIX .. "InverseMelScale"
  if melspec:dim() < 2 or melspec:size(-2) ~= self.n_mels then
    error(("%s: expected an input with %d mel bins [..., %d, time], got shape %s"):format(fname, self.n_mels,
      self.n_mels, U.shape_str(melspec)), 2)
  end
  local shape = melspec:size()
  local time = shape[#shape]
  local b = melspec:reshape(-1, self.n_mels, time)
  local a = self.fb:to(melspec.device, melspec.dtype):t():unsqueeze(1):expand(b:size(1), self.n_mels, self.n_stft)
  local x = torch.linalg.lstsq(a:contiguous(), b, nil, {driver = DRIVERS[self.driver]})
  shape[#shape - 1] = self.n_stft
  return torch.relu(x):reshape(shape)
end
function M.InverseMelScale:extra_repr()
  return ("n_stft=%d, n_mels=%d, driver=%s"):format(self.n_stft, self.n_mels, self.driver)
end

-- MelSpectrogram([sample_rate=16000, n_fft=400, win_length, hop_length,
-- f_min=0, f_max, pad=0, n_mels=128, window_fn, power=2, normalized=false,
-- wkwargs, center=true, pad_mode="reflect", onesided, norm=false,
-- mel_scale="htk"]): [..., time] -> [..., n_mels, frames]; streams like
-- Spectrogram (process / flush / reset)
M.MelSpectrogram = class("MelSpectrogram")
function M.MelSpectrogram:__init(...)
  local fname = PREFIX .. "MelSpectrogram"
  local o = U.args(fname, {"sample_rate", "n_fft", "win_length", "hop_length", "f_min", "f_max", "pad", "n_mels",
    "window_fn", "power", "normalized", "wkwargs", "center", "pad_mode", "onesided", "norm", "mel_scale"},
    {sample_rate = 16000, n_fft = 400, f_min = 0.0, pad = 0, n_mels = 128, power = 2.0, normalized = false,
     center = true, pad_mode = "reflect", norm = false, mel_scale = "htk"}, ...)
  if o.power == false then error(fname .. ": power must be a positive number (a mel spectrogram is real)", 2) end
  self.sample_rate, self.n_mels, self.f_min, self.f_max = o.sample_rate, o.n_mels, o.f_min, o.f_max
  self.spectrogram = TS.Spectrogram{n_fft = o.n_fft, win_length = o.win_length, hop_length = o.hop_length,
    pad = o.pad, window_fn = o.window_fn, power = o.power, normalized = o.normalized, wkwargs = o.wkwargs,
    center = o.center, pad_mode = o.pad_mode, onesided = true}
  self.n_fft, self.win_length, self.hop_length = o.n_fft, self.spectrogram.win_length, self.spectrogram.hop_length
  self.mel_scale = M.MelScale{n_mels = o.n_mels, sample_rate = o.sample_rate, f_min = o.f_min, f_max = o.f_max,
    n_stft = o.n_fft // 2 + 1, norm = o.norm, mel_scale = o.mel_scale}
end
function M.MelSpectrogram:forward(waveform)
  return self.mel_scale(self.spectrogram(waveform))
end
-- process(chunk) -> [..., n_mels, k]: the mel frames the signal so far completes
function M.MelSpectrogram:process(chunk) return self.mel_scale(self.spectrogram:process(chunk)) end
-- flush() -> [..., n_mels, k]: the last frames; the stream then starts over
function M.MelSpectrogram:flush() return self.mel_scale(self.spectrogram:flush()) end
-- reset(): forget the streamed signal
function M.MelSpectrogram:reset() self.spectrogram:reset() end
function M.MelSpectrogram:extra_repr()
  return ("sample_rate=%s, n_fft=%d, hop_length=%d, n_mels=%d"):format(self.sample_rate, self.n_fft,
    self.hop_length, self.n_mels)
end

-- to_db(x): torchaudio's AmplitudeToDB("power", top_db=80) over [..., n, time]
-- (torch.audio.functional.amplitude_to_DB when the build has it)
-- (its CPU fast path, outside autograd and compile: one C pass and a
-- floor pass over the items that share a maximum)
local function to_db(x)
  if x.is_cuda and x:dim() > 2 and x:stride(-2) == 1 and x:transpose(-1, -2):is_contiguous() then
    -- frames-major memory: the same values computed along it (the top_db maximum spans both dims)
    return to_db(x:transpose(-1, -2)):transpose(-1, -2)
  end
  local shape = x:size()
  local packed = x:dim() > 2 and shape[#shape - 2] or 1
  if not x.is_cuda and (x.dtype == torch.float32 or x.dtype == torch.float64) and x:dim() >= 2
     and not (torch.is_grad_enabled() and x.requires_grad) and not torch.compiler.is_compiling() then
    local C = require "torch.audio._spectral"
    return C.db(x:contiguous():view(-1, packed * shape[#shape - 1] * shape[#shape]), 10.0, 1e-10, 80.0):view(shape)
  end
  local F = require "torch.audio.functional"
  if F.amplitude_to_DB then return F.amplitude_to_DB(x, 10.0, 1e-10, 0.0, 80.0) end
  local db = x:clamp(1e-10):log10() * 10.0
  local v = db:reshape(-1, packed, shape[#shape - 1], shape[#shape])
  local floor = v:amax({2, 3, 4}) - 80.0
  return torch.maximum(v, floor:view(-1, 1, 1, 1)):reshape(shape)
end

-- cepstra(self, spec [..., n, time], log_offset?) -> [..., n_coef, time]
local function cepstra(self, spec, use_log)
  if use_log then spec = (spec + 1e-6):log() else spec = to_db(spec) end
  return apply_fb(self._dct_t(self), spec, self:_get_name(), self.dct_mat)
end

local function dct_t(self)
  if self._dct_src ~= self.dct_mat then self._dct, self._dct_src = self.dct_mat:t():contiguous(), self.dct_mat end
  return self._dct
end

local function check_dct(fname, dct_type, norm)
  if dct_type ~= 2 then error(("%s: DCT type not supported: %s (only 2)"):format(fname, tostring(dct_type)), 3) end
  if norm ~= false and norm ~= "ortho" then
    error(('%s: norm must be "ortho" or false, got %s'):format(fname, tostring(norm)), 3)
  end
end

-- MFCC([sample_rate=16000, n_mfcc=40, dct_type=2, norm="ortho",
-- log_mels=false, melkwargs={}]): [..., time] -> [..., n_mfcc, frames]
M.MFCC = class("MFCC")
function M.MFCC:__init(...)
  local fname = PREFIX .. "MFCC"
  local o = U.args(fname, {"sample_rate", "n_mfcc", "dct_type", "norm", "log_mels", "melkwargs"},
    {sample_rate = 16000, n_mfcc = 40, dct_type = 2, norm = "ortho", log_mels = false}, ...)
  check_dct(fname, o.dct_type, o.norm)
  self.sample_rate, self.n_mfcc, self.dct_type, self.norm, self.log_mels = o.sample_rate, o.n_mfcc, o.dct_type,
    o.norm, o.log_mels
  self.top_db = 80.0
  local mk = {}
  for k, v in pairs(o.melkwargs or {}) do mk[k] = v end
  mk.sample_rate = o.sample_rate
  self.MelSpectrogram = M.MelSpectrogram(mk)
  if o.n_mfcc > self.MelSpectrogram.n_mels then
    error(("%s: cannot select more MFCC coefficients (%d) than mel bins (%d)"):format(fname, o.n_mfcc,
      self.MelSpectrogram.n_mels), 2)
  end
  self:register_buffer("dct_mat", AF.create_dct(o.n_mfcc, self.MelSpectrogram.n_mels, o.norm))
  self._dct_t = dct_t
end
function M.MFCC:forward(waveform)
  return cepstra(self, self.MelSpectrogram(waveform), self.log_mels)
end

-- LFCC([sample_rate=16000, n_filter=128, f_min=0, f_max=sr // 2,
-- n_lfcc=40, dct_type=2, norm="ortho", log_lf=false, speckwargs={}])
M.LFCC = class("LFCC")
function M.LFCC:__init(...)
  local fname = PREFIX .. "LFCC"
  local o = U.args(fname, {"sample_rate", "n_filter", "f_min", "f_max", "n_lfcc", "dct_type", "norm", "log_lf",
    "speckwargs"}, {sample_rate = 16000, n_filter = 128, f_min = 0.0, n_lfcc = 40, dct_type = 2, norm = "ortho",
    log_lf = false}, ...)
  check_dct(fname, o.dct_type, o.norm)
  self.sample_rate, self.n_filter, self.n_lfcc, self.log_lf = o.sample_rate, o.n_filter, o.n_lfcc, o.log_lf
  self.f_min, self.f_max = o.f_min, f_max_of(o.f_max, o.sample_rate)
  self.dct_type, self.norm, self.top_db = o.dct_type, o.norm, 80.0
  self.Spectrogram = TS.Spectrogram(o.speckwargs or {})
  if o.n_lfcc > self.Spectrogram.n_fft then
    error(("%s: cannot select more LFCC coefficients (%d) than FFT bins (%d)"):format(fname, o.n_lfcc,
      self.Spectrogram.n_fft), 2)
  end
  self:register_buffer("filter_mat", AF.linear_fbanks(self.Spectrogram.n_fft // 2 + 1, self.f_min, self.f_max,
    o.n_filter, o.sample_rate))
  self:register_buffer("dct_mat", AF.create_dct(o.n_lfcc, o.n_filter, o.norm))
  self._dct_t = dct_t
end
function M.LFCC:forward(waveform)
  if self._fm_src ~= self.filter_mat then self._fm, self._fm_src = self.filter_mat:t():contiguous(), self.filter_mat end
  local spec = apply_fb(self._fm, self.Spectrogram(waveform), PREFIX .. "LFCC", self.filter_mat)
  return cepstra(self, spec, self.log_lf)
end

return M
