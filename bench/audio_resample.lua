-- bench/audio_resample.lua -- torch.audio's resample on [8, 10 s] float32
-- batches: the sinc filter (sinc_interp_hann, the engine op) for 48k ->
-- 16k, 44.1k -> 48k and 16k -> 8k, and soxr_hq (libsoxr) for 48k -> 16k
-- and 44.1k -> 48k; CUDA rows (device ms) with a GPU. Each row also
-- prints seconds of audio resampled per second. Peer:
-- bench/peers/audio_resample.py (torchaudio's resample: a strided conv1d;
-- the soxr rows' peer is the same sinc resample).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local F = torch.audio.functional
local only = arg and arg[1]
local function want(name) return not only or only == "all" or only == name end

local cases = {
  {"48k_16k", 48000, 16000, "sinc_interp_hann"},
  {"44k_48k", 44100, 48000, "sinc_interp_hann"},
  {"16k_8k", 16000, 8000, "sinc_interp_hann"},
  {"soxr_48k_16k", 48000, 16000, "soxr_hq"},
  {"soxr_44k_48k", 44100, 48000, "soxr_hq"},
}

local SECONDS, BATCH = 10, 8

for _, dev in ipairs({"cpu", "cuda"}) do
  if dev == "cpu" or torch.cuda.is_available() then
    for _, c in ipairs(cases) do
      local tag, orig, new, method = table.unpack(c)
      local name = ("resample_%s%s"):format(dev == "cuda" and "cuda_" or "", tag)
      if want(name) and not (dev == "cuda" and method == "soxr_hq") then
        torch.manual_seed(0)
        local x = torch.randn(BATCH, orig * SECONDS):to(dev)
        local fn = function() local _ <close> = F.resample(x, orig, new, {resampling_method = method}) end
        local secs = dev == "cuda" and B.cuda_ms(fn, 20) / 1e3 or B.time(fn, 3)
        B.report(name, secs, BATCH * SECONDS / secs, "audio_s/s")
      end
    end
  end
end
