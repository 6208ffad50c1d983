-- tests/cuda/test_cuda_spectral.lua -- the power spectrogram's one-pass
-- engine op on CUDA (tensor/cuda/stft_power.c: frames with reflect padding
-- read in place, cuFFT, |X|^power) against the CPU and against the
-- recorded ops the autograd path runs; MelSpectrogram and MFCC on CUDA
-- against the CPU. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU spectrogram tests skipped\n")
  return
end

torch.set_default_device("cpu")
local AF, T = torch.audio.functional, torch.audio.transforms
local C = require "torch.audio._spectral"

local function tol(dt) return dt == torch.float64 and {rtol = 1e-9, atol = 1e-10} or {rtol = 1e-4, atol = 1e-4} end

test("the one-pass power spectrogram on CUDA equals the CPU's (reflect pad in place, odd sizes, powers 1, 2, 0.7)", function()
  torch.manual_seed(2)
  for _, dt in ipairs{torch.float32, torch.float64} do
    for _, c in ipairs{{3, 4000, 400, 160, 200}, {2, 1001, 255, 77, 127}, {1, 512, 512, 128, 0}, {5, 300, 64, 1, 32}} do
      local B, n, nfft, hop, pad = table.unpack(c)
      local x, w = torch.randn(B, n, {dtype = dt}), torch.hann_window(nfft, {dtype = dt})
      for _, p in ipairs{2.0, 1.0, 0.7} do
        local got = C.stft_power(x:cuda(), w:cuda(), hop, p, pad)
        check(got.is_cuda, "stays on CUDA")
        check_close(got:cpu(), C.stft_power(x, w, hop, p, pad), tol(dt),
          ("B %d T %d n_fft %d hop %d pad %d power %g %s"):format(B, n, nfft, hop, pad, p, tostring(dt)))
      end
    end
  end
end)

test("spectrogram on CUDA: the fast path (no grad) equals the recorded path (grad) and the CPU", function()
  torch.manual_seed(3)
  local x = torch.randn(2, 3, 5000)
  for _, o in ipairs{{n_fft = 400, hop_length = 160}, {n_fft = 256, hop_length = 100, center = false},
                     {n_fft = 512, win_length = 300, hop_length = 128, normalized = true}} do
    local S = T.Spectrogram(o)
    local cpu = S(x)
    local fast = S:to("cuda")(x:cuda())
    local xg = x:cuda():requires_grad_()
    local slow = S(xg)
    check_close(fast:cpu(), cpu, {rtol = 1e-4, atol = 1e-3}, "fast path vs CPU")
    check_close(slow:detach():cpu(), cpu, {rtol = 1e-4, atol = 1e-3}, "recorded path vs CPU")
    slow:sum():backward()
    check(xg.grad ~= nil and xg.grad.is_cuda, "the recorded path has gradients on CUDA")
  end
end)

test("MelSpectrogram and MFCC on CUDA equal the CPU's", function()
  torch.manual_seed(4)
  local x = torch.randn(4, 16000)
  local mel = T.MelSpectrogram{sample_rate = 16000, n_fft = 400, hop_length = 160, n_mels = 80}
  local mfcc = T.MFCC{sample_rate = 16000, n_mfcc = 40, melkwargs = {n_fft = 400, hop_length = 160, n_mels = 80}}
  local mc, fc = mel(x), mfcc(x)
  check_close(mel:to("cuda")(x:cuda()):cpu(), mc, {rtol = 1e-4, atol = 1e-3})
  check_close(mfcc:to("cuda")(x:cuda()):cpu(), fc, {rtol = 1e-4, atol = 1e-3})
end)

test("bad input: mixed devices and dtypes are errors naming the op", function()
  local x, w = torch.randn(1, 1000):cuda(), torch.hann_window(400)
  check_error(function() C.stft_power(x, w, 160, 2.0, 200) end, "same device")
  check_error(function() C.stft_power(x, w:double():cuda(), 160, 2.0, 200) end, "window is float64")
  check_error(function() C.stft_power(x, w:cuda(), 0, 2.0, 200) end, "bad sizes")
end)
