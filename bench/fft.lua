-- bench/fft.lua -- torch.fft and torch.stft on audio-sized batches (CPU,
-- float32): rfft and irfft of 16 signals of one second at 16 kHz, fft of
-- 64 x 4096, rfft2 of 8 x 256 x 256, stft of 8 seconds-long signals (n_fft
-- 400, hop 160, Hann: the Whisper/torchaudio front end) and its istft, and
-- rfft's backward. Peer: bench/peers/fft.py (PyTorch's pocketfft/MKL).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == "all" or only == name end

torch.manual_seed(0)
local sig = torch.randn(16, 16000)
local spec = torch.fft.rfft(sig)
local x4096 = torch.randn(64, 4096)
local img = torch.randn(8, 256, 256)
local audio = torch.randn(8, 16000)
local w = torch.hann_window(400)
local st = torch.stft(audio, 400, {hop_length = 160, window = w, return_complex = true})
local xg = torch.randn(16, 16000):requires_grad_()

local rows = {
  {"rfft_b16_16000", function() local _ <close> = torch.fft.rfft(sig) end, 50},
  {"irfft_b16_16000", function() local _ <close> = torch.fft.irfft(spec, {n = 16000}) end, 50},
  {"fft_b64_4096", function() local _ <close> = torch.fft.fft(x4096) end, 50},
  {"rfft2_b8_256", function() local _ <close> = torch.fft.rfft2(img) end, 20},
  {"stft_b8_16000_n400_h160", function()
    local _ <close> = torch.stft(audio, 400, {hop_length = 160, window = w, return_complex = true})
  end, 50},
  {"istft_b8_16000_n400_h160", function()
    local _ <close> = torch.istft(st, 400, {hop_length = 160, window = w, length = 16000})
  end, 20},
  {"rfft_backward_b16_16000", function()
    local y = torch.view_as_real(torch.fft.rfft(xg))
    y:sum():backward()
    xg.grad = nil
  end, 20},
}
for _, r in ipairs(rows) do
  if want(r[1]) then B.report(r[1], B.time(r[2], r[3])) end
end
