-- torch.audio.transforms._beamforming -- torchaudio's beamforming modules
-- without state: PSD, SoudenMVDR, RTFMVDR (functions of
-- torch.audio.functional._beamforming as modules; reference_channel is
-- 1-based or a weight tensor [..., channel]).
local U = require "torch.nn.util"
local Module = require("torch.nn.module").Module
local AF = require "torch.audio.functional"

local T = {}

-- PSD([multi_mask=false, normalize=true, eps=1e-15]): forward(specgram[,
-- mask]) -> [..., freq, channel, channel]; with multi_mask, mask [...,
-- channel, freq, time] is averaged over channels first
T.PSD = Module:extend("PSD")
function T.PSD:__init(...)
  local o = U.args("PSD", {"multi_mask", "normalize", "eps"}, {multi_mask = false, normalize = true, eps = 1e-15}, ...)
  U.number("PSD", "eps", o.eps)
  self.multi_mask, self.normalize, self.eps = not not o.multi_mask, not not o.normalize, o.eps
end
function T.PSD:forward(specgram, mask)
  if mask and self.multi_mask then mask = mask:mean(-3) end
  return AF.psd(specgram, mask or false, self.normalize, self.eps)
end
function T.PSD:extra_repr()
  return ("multi_mask=%s, normalize=%s, eps=%g"):format(tostring(self.multi_mask), tostring(self.normalize), self.eps)
end

local BEAM_OPTS = {"diagonal_loading", "diag_eps", "eps"}
local BEAM_DEFAULTS = {diagonal_loading = true, diag_eps = 1e-7, eps = 1e-8}

-- SoudenMVDR(): forward(specgram, psd_s, psd_n, reference_channel[,
-- diagonal_loading=true, diag_eps=1e-7, eps=1e-8]) -> [..., freq, time]
T.SoudenMVDR = Module:extend("SoudenMVDR")
function T.SoudenMVDR:__init() end
function T.SoudenMVDR:forward(specgram, psd_s, psd_n, reference_channel, ...)
  local o = U.args("SoudenMVDR", BEAM_OPTS, BEAM_DEFAULTS, ...)
  local w = AF.mvdr_weights_souden(psd_s, psd_n, reference_channel, o)
  return AF.apply_beamforming(w, specgram)
end

-- RTFMVDR(): forward(specgram, rtf, psd_n, reference_channel[,
-- diagonal_loading=true, diag_eps=1e-7, eps=1e-8]) -> [..., freq, time]
T.RTFMVDR = Module:extend("RTFMVDR")
function T.RTFMVDR:__init() end
function T.RTFMVDR:forward(specgram, rtf, psd_n, reference_channel, ...)
  local o = U.args("RTFMVDR", BEAM_OPTS, BEAM_DEFAULTS, ...)
  local w = AF.mvdr_weights_rtf(rtf, psd_n, {reference_channel = reference_channel, diagonal_loading =
    o.diagonal_loading, diag_eps = o.diag_eps, eps = o.eps})
  return AF.apply_beamforming(w, specgram)
end

return T
