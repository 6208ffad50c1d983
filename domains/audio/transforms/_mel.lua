-- torch.audio.transforms._mel -- the mel-scale transforms of torchaudio:
-- MelScale, InverseMelScale, MelSpectrogram, MFCC and LFCC. Each holds its
-- filter bank / DCT matrix as a buffer and applies it with one matmul over
-- the [..., freq, time] spectrogram; MelSpectrogram streams like
-- Spectrogram (see transforms._spectral).
local torch = require "torch"
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional._mel"

local M = {}
local PREFIX = "torch.audio.transforms."

local function class(name)
  local C = Module:extend(name)
  C.__prefix = PREFIX
  return C
end

-- apply_fb(fb_t [n_out, n_in], spec [..., n_in, time]) -> [..., n_out, time]
local function apply_fb(fb_t, spec, fname)
  if spec:dim() < 2 or spec:size(-2) ~= fb_t:size(2) then
    error(("%s: expected a spectrogram [..., %d, time], got shape %s"):format(fname, fb_t:size(2),
      U.shape_str(spec)), 3)
  end
  local fb = fb_t
  if fb.device ~= spec.device or fb.dtype ~= spec.dtype then fb = fb:to(spec.device, spec.dtype) end
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
  return apply_fb(self._fb_t, specgram, PREFIX .. "MelScale")
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

return M
