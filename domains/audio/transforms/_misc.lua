-- torch.audio.transforms._misc -- torchaudio's spectrogram-side small
-- transforms: AmplitudeToDB, MuLawEncoding, MuLawDecoding, ComputeDeltas,
-- and SpecAugment's masks (FrequencyMasking, TimeMasking, SpecAugment).
local torch = require "torch"
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional"

local T = {}

-- AmplitudeToDB([stype="power", top_db=false])
T.AmplitudeToDB = Module:extend("AmplitudeToDB")
function T.AmplitudeToDB:__init(...)
  local o = U.args("AmplitudeToDB", {"stype", "top_db"}, {stype = "power"}, ...)
  U.choice("AmplitudeToDB", "stype", o.stype, "power magnitude")
  if o.top_db and (type(o.top_db) ~= "number" or o.top_db < 0) then
    error(("AmplitudeToDB: top_db must be a positive number, got %s"):format(tostring(o.top_db)), 3)
  end
  self.stype, self.top_db = o.stype, o.top_db or false
  self.multiplier = o.stype == "power" and 10.0 or 20.0
  self.amin, self.ref_value = 1e-10, 1.0
  self.db_multiplier = math.log(math.max(self.amin, self.ref_value), 10)
end
function T.AmplitudeToDB:forward(x)
  return AF.amplitude_to_DB(x, self.multiplier, self.amin, self.db_multiplier, self.top_db)
end
function T.AmplitudeToDB:extra_repr() return ("stype=%s, top_db=%s"):format(self.stype, tostring(self.top_db)) end

local function mulaw(name, fn)
  local M = Module:extend(name)
  function M:__init(...)
    local o = U.args(name, {"quantization_channels"}, {quantization_channels = 256}, ...)
    U.size(name, "quantization_channels", o.quantization_channels, 2)
    self.quantization_channels = o.quantization_channels
  end
  function M:forward(x) return AF[fn](x, self.quantization_channels) end
  function M:extra_repr() return "quantization_channels=" .. self.quantization_channels end
  return M
end
-- MuLawEncoding([quantization_channels=256]), MuLawDecoding([...=256])
T.MuLawEncoding = mulaw("MuLawEncoding", "mu_law_encoding")
T.MuLawDecoding = mulaw("MuLawDecoding", "mu_law_decoding")

-- ComputeDeltas([win_length=5, mode="replicate"])
T.ComputeDeltas = Module:extend("ComputeDeltas")
function T.ComputeDeltas:__init(...)
  local o = U.args("ComputeDeltas", {"win_length", "mode"}, {win_length = 5, mode = "replicate"}, ...)
  U.size("ComputeDeltas", "win_length", o.win_length, 3)
  self.win_length, self.mode = o.win_length, o.mode
end
function T.ComputeDeltas:forward(specgram) return AF.compute_deltas(specgram, self.win_length, self.mode) end
function T.ComputeDeltas:extra_repr() return ("win_length=%d, mode=%s"):format(self.win_length, self.mode) end

-- An axis mask along frequency (axis 1) or time (axis 2) of the last two
-- dims; forward(specgram[, mask_value=0])
local function axis_masking(name, axis, pname)
  local M = Module:extend(name)
  function M:__init(mask_param, ...)
    local o = U.args(name, {"iid_masks", "p"}, {iid_masks = false, p = 1.0}, ...)
    U.size(name, pname, mask_param)
    self.mask_param, self.axis, self.iid_masks, self.p = mask_param, axis, o.iid_masks, o.p
  end
  function M:forward(specgram, mask_value)
    mask_value = mask_value or 0.0
    local ax = specgram:dim() - 2 + self.axis
    if self.iid_masks and specgram:dim() >= 3 then
      return AF.mask_along_axis_iid(specgram, self.mask_param, mask_value, ax, self.p)
    end
    return AF.mask_along_axis(specgram, self.mask_param, mask_value, ax, self.p)
  end
  function M:extra_repr()
    return ("%s=%d, iid_masks=%s, p=%g"):format(pname, self.mask_param, tostring(self.iid_masks), self.p)
  end
  return M
end
-- FrequencyMasking(freq_mask_param[, iid_masks=false, p=1.0])
T.FrequencyMasking = axis_masking("FrequencyMasking", 1, "freq_mask_param")
-- TimeMasking(time_mask_param[, iid_masks=false, p=1.0])
T.TimeMasking = axis_masking("TimeMasking", 2, "time_mask_param")

-- SpecAugment(n_time_masks, time_mask_param, n_freq_masks, freq_mask_param[,
-- iid_masks=true, p=1.0, zero_masking=false]): the time masks, then the
-- frequency masks, filled with 0 or the spectrogram's mean
T.SpecAugment = Module:extend("SpecAugment")
function T.SpecAugment:__init(n_time_masks, time_mask_param, n_freq_masks, freq_mask_param, ...)
  local o = U.args("SpecAugment", {"iid_masks", "p", "zero_masking"}, {iid_masks = true, p = 1.0, zero_masking = false}, ...)
  U.size("SpecAugment", "n_time_masks", n_time_masks)
  U.size("SpecAugment", "time_mask_param", time_mask_param)
  U.size("SpecAugment", "n_freq_masks", n_freq_masks)
  U.size("SpecAugment", "freq_mask_param", freq_mask_param)
  self.n_time_masks, self.time_mask_param = n_time_masks, time_mask_param
  self.n_freq_masks, self.freq_mask_param = n_freq_masks, freq_mask_param
  self.iid_masks, self.p, self.zero_masking = o.iid_masks, o.p, o.zero_masking
end
function T.SpecAugment:forward(specgram)
  local value = self.zero_masking and 0.0 or specgram:mean():item()
  local tdim = specgram:dim()
  local mask = (specgram:dim() > 2 and self.iid_masks) and AF.mask_along_axis_iid or AF.mask_along_axis
  for _ = 1, self.n_time_masks do specgram = mask(specgram, self.time_mask_param, value, tdim, self.p) end
  for _ = 1, self.n_freq_masks do specgram = mask(specgram, self.freq_mask_param, value, tdim - 1, self.p) end
  return specgram
end
function T.SpecAugment:extra_repr()
  return ("n_time_masks=%d, time_mask_param=%d, n_freq_masks=%d, freq_mask_param=%d"):format(self.n_time_masks,
    self.time_mask_param, self.n_freq_masks, self.freq_mask_param)
end

return T
