-- bench/audio_spectral.lua -- torch.audio's MelSpectrogram (n_fft 400, hop
-- 160, 80 mels), MFCC (40 coefficients over it) and kaldi.fbank on 8 clips
-- of 10 s at 16 kHz, float32; the extra column is seconds of audio per
-- second; with a GPU, MelSpectrogram and MFCC again on CUDA (device time).
-- Peer: bench/peers/audio_spectral.py (torchaudio).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local T = torch.audio.transforms
local K = torch.audio.compliance.kaldi
local only = arg and arg[1]

torch.manual_seed(0)
local x = torch.randn(8, 160000)
local one = x:narrow(1, 1, 1) * 1000
local mel = T.MelSpectrogram{sample_rate = 16000, n_fft = 400, hop_length = 160, n_mels = 80}
local mfcc = T.MFCC{sample_rate = 16000, n_mfcc = 40, melkwargs = {n_fft = 400, hop_length = 160, n_mels = 80}}

local rows = {
  {"melspectrogram_8x10s", function() local _ = mel(x) end, 80},
  {"mfcc_8x10s", function() local _ = mfcc(x) end, 80},
  {"kaldi_fbank_10s", function() local _ = K.fbank(one, {num_mel_bins = 80}) end, 10},
}
for _, r in ipairs(rows) do
  if not only or only == r[1] then
    local t = B.time(r[2], 2, 5)
    B.report(r[1], t, r[3] / t, "audio_s/s")
  end
end

if torch.cuda.is_available() then
  local xc = x:to("cuda")
  local melc, mfccc = mel:to("cuda"), mfcc:to("cuda")
  local cuda_rows = {
    {"melspectrogram_cuda_8x10s", function() local _ <close> = melc(xc) end},
    {"mfcc_cuda_8x10s", function() local _ <close> = mfccc(xc) end},
  }
  for _, r in ipairs(cuda_rows) do
    if not only or only == r[1] then
      local t = B.cuda_ms(r[2], 20) / 1e3
      B.report(r[1], t, 80 / t, "audio_s/s")
    end
  end
end
