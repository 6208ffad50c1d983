-- torch.audio.functional._loudness -- loudness: the integrated loudness of
-- ITU-R BS.1770-4 in LKFS, as torchaudio measures it (K-weighting by two
-- clamped biquads, 400 ms blocks with 75% overlap, an absolute gate at -70
-- LKFS and a relative gate 10 LU below the absolutely gated level).
local torch = require "torch"
local U = require "torch.nn.util"
local CK = require "torch.audio.functional._checks"
local FI = require "torch.audio.functional._filtering"

local F = {}
local P = "torch.audio.functional."

-- Channel weights of BS.1770 (left, right, centre, left and right surround).
local WEIGHTS = {1.0, 1.0, 1.0, 1.41, 1.41}

-- Python's round(): to the nearest integer, halves to the even one.
local function round_even(v)
  local f = math.floor(v)
  if v - f ~= 0.5 then return math.floor(v + 0.5) end
  return f % 2 == 0 and f or f + 1
end

-- gated_level(energy [..., C, blocks], g [C, 1], gate [..., 1, blocks]) ->
-- [...]: -0.691 + 10 log10 of the weighted mean energy of the gated blocks
local function gated_level(energy, g, gate)
  local kept = (energy * gate):sum(-1) / gate:sum(-1) -- [..., C]
  return torch.log10((kept * g:squeeze(-1)):sum(-1)) * 10 - 0.691
end

-- loudness(waveform, sample_rate) -> [...]: LKFS of waveform [..., channels,
-- time] (1 to 5 channels, in BS.1770's order)
function F.loudness(waveform, sample_rate)
  local fname = P .. "loudness"
  CK.float_tensor(fname, "waveform", waveform, 2, "[..., channels, time]")
  CK.positive_rate(fname, sample_rate)
  local C = waveform:size(-2)
  if C > 5 then error(("%s: at most 5 channels are supported, got %d"):format(fname, C), 2) end
  local gate_samples = round_even(0.4 * sample_rate)
  local step = round_even(gate_samples * 0.25)
  if waveform:size(-1) < gate_samples then
    error(("%s: the waveform has %d samples, fewer than one 400 ms block (%d at %g Hz)"):format(fname,
      waveform:size(-1), gate_samples, sample_rate), 2)
  end
  local x = FI.treble_biquad(waveform, sample_rate, 4.0, 1500.0, 1 / math.sqrt(2))
  x = FI.highpass_biquad(x, sample_rate, 38.0, 0.5)
  local energy = (x * x):unfold(-1, gate_samples, step):mean(-1) -- [..., C, blocks]
  local g = torch.tensor({table.unpack(WEIGHTS, 1, C)}, {dtype = x.dtype, device = x.device}):unsqueeze(-1)
  local block_level = torch.log10((energy * g):sum(-2)) * 10 - 0.691 -- [..., blocks]
  local gate = block_level:gt(-70.0):unsqueeze(-2)
  local relative = gated_level(energy, g, gate:to(x.dtype)) - 10
  gate = torch.logical_and(gate, block_level:gt(relative:unsqueeze(-1)):unsqueeze(-2))
  return gated_level(energy, g, gate:to(x.dtype))
end

return U.public_table(F, P)
