-- bench/audio_filters.lua -- torch.audio's filters on a batch of 16 ten-
-- second signals at 16 kHz ([16, 160000] float32): lfilter with a biquad
-- (K = 3) and a K = 8 filter, lowpass_biquad, filtfilt, a filter bank
-- (16 filters, one per channel) and lfilter's backward. Peer:
-- bench/peers/audio_filters.py (torchaudio).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local AF = torch.audio.functional
local only = arg and arg[1]
local function want(name) return not only or only == name end

torch.manual_seed(0)
local x = (torch.rand(16, 160000) - 0.5) * 0.5
local a3, b3 = torch.tensor({1.0, -1.6, 0.64}), torch.tensor({0.01, 0.02, 0.01})
local a8 = torch.tensor({1.0, -0.5, 0.2, -0.1, 0.05, -0.02, 0.01, -0.005})
local b8 = torch.tensor({0.1, 0.2, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01})
local abank = torch.tensor({1.0, -1.6, 0.64}):reshape(1, 3):expand(16, 3):contiguous()
local bbank = torch.rand(16, 3)
local xg = x:clone():requires_grad_(true)

local rows = {
  {"lfilter_k3", function() local _ = AF.lfilter(x, a3, b3) end, 5},
  {"lfilter_k8", function() local _ = AF.lfilter(x, a8, b8) end, 3},
  {"lowpass_biquad", function() local _ = AF.lowpass_biquad(x, 16000, 1000.0) end, 5},
  {"filtfilt_k3", function() local _ = AF.filtfilt(x, a3, b3) end, 3},
  {"lfilter_bank16", function() local _ = AF.lfilter(x, abank, bbank) end, 5},
  {"lfilter_k3_backward", function()
    local y = AF.lfilter(xg, a3, b3, {clamp = false})
    local _ = torch.autograd.grad({y:sum()}, {xg})
  end, 2},
}

for _, r in ipairs(rows) do
  if want(r[1]) then B.report(r[1], B.time(r[2], r[3], 5)) end
end
