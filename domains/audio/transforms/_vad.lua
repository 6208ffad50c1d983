-- torch.audio.transforms._vad -- Vad: SoX's voice activity detector (trims
-- the silence before speech), torch.audio.functional.vad as a module.
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional"

local T = {}

local NAMES = {"trigger_level", "trigger_time", "search_time", "allowed_gap", "pre_trigger_time", "boot_time",
  "noise_up_time", "noise_down_time", "noise_reduction_amount", "measure_freq", "measure_duration",
  "measure_smooth_time", "hp_filter_freq", "lp_filter_freq", "hp_lifter_freq", "lp_lifter_freq"}

-- Vad(sample_rate[, trigger_level=7.0, ..., lp_lifter_freq=2000.0]): the
-- options of torch.audio.functional.vad, positionally or by name
T.Vad = Module:extend("Vad")
function T.Vad:__init(sample_rate, ...)
  U.number("Vad", "sample_rate", sample_rate)
  if sample_rate <= 0 then error(("Vad: sample_rate must be positive, got %g"):format(sample_rate), 3) end
  self.sample_rate = sample_rate
  self.options = U.args("Vad", NAMES, nil, ...)
end
function T.Vad:forward(waveform) return AF.vad(waveform, self.sample_rate, self.options) end
function T.Vad:extra_repr() return "sample_rate=" .. tostring(self.sample_rate) end

return T
