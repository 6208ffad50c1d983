-- torch.audio.transforms._loudness -- Loudness: ITU-R BS.1770-4 integrated
-- loudness (LKFS) of [..., channels, time], torch.audio.functional.loudness
-- as a module.
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional"

local T = {}

-- Loudness(sample_rate)
T.Loudness = Module:extend("Loudness")
function T.Loudness:__init(sample_rate)
  U.number("Loudness", "sample_rate", sample_rate)
  if sample_rate <= 0 then error(("Loudness: sample_rate must be positive, got %g"):format(sample_rate), 3) end
  self.sample_rate = sample_rate
end
function T.Loudness:forward(wave) return AF.loudness(wave, self.sample_rate) end
function T.Loudness:extra_repr() return "sample_rate=" .. tostring(self.sample_rate) end

return T
