-- torch.audio.transforms._cmn -- SlidingWindowCmn: sliding-window cepstral
-- mean (and variance) normalization of [..., time, freq],
-- torch.audio.functional.sliding_window_cmn as a module.
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional"

local T = {}

-- SlidingWindowCmn([cmn_window=600, min_cmn_window=100, center=false, norm_vars=false])
T.SlidingWindowCmn = Module:extend("SlidingWindowCmn")
function T.SlidingWindowCmn:__init(...)
  local name = "SlidingWindowCmn"
  local o = U.args(name, {"cmn_window", "min_cmn_window", "center", "norm_vars"},
    {cmn_window = 600, min_cmn_window = 100, center = false, norm_vars = false}, ...)
  U.size(name, "cmn_window", o.cmn_window, 1)
  U.size(name, "min_cmn_window", o.min_cmn_window, 0)
  self.cmn_window, self.min_cmn_window = o.cmn_window, o.min_cmn_window
  self.center, self.norm_vars = not not o.center, not not o.norm_vars
end
function T.SlidingWindowCmn:forward(specgram)
  return AF.sliding_window_cmn(specgram, self.cmn_window, self.min_cmn_window, self.center, self.norm_vars)
end
function T.SlidingWindowCmn:extra_repr()
  return ("cmn_window=%d, min_cmn_window=%d, center=%s, norm_vars=%s"):format(self.cmn_window,
    self.min_cmn_window, tostring(self.center), tostring(self.norm_vars))
end

return T
