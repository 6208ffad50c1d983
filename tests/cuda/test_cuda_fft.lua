-- tests/cuda/test_cuda_fft.lua -- the transforms on CUDA (tensor/cuda/
-- fft_cufft.c through tensor/fft.c) against the CPU's FFTW results on the
-- same data: c2c, r2c, c2r over trailing and non-trailing dims, every norm,
-- float32 and float64, gradients, and torch.stft/istft. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; cuFFT tests skipped\n")
  return
end

torch.set_default_device("cpu")
local C = torch._fft

local function same(g, c, what, tol)
  check(g.is_cuda, what .. ": the result stays on cuda")
  check_close(g:cpu(), c, {rtol = tol, atol = tol})
end

for _, dt in ipairs {torch.float32, torch.float64} do
  local tol = dt == torch.float32 and 1e-4 or 1e-10
  test("engine transforms on CUDA match FFTW (" .. tostring(dt) .. ")", function()
    torch.manual_seed(7)
    local z = torch.randn(3, 10, 12, 2, {dtype = dt})
    for _, m in ipairs {1, 2, 4, 6, 5, 7} do
      for norm = 0, 2 do
        same(C.fft_c2c(z:cuda(), m, true, norm), C.fft_c2c(z, m, true, norm), "c2c mask " .. m, tol)
        same(C.fft_c2c(z:cuda(), m, false, norm), C.fft_c2c(z, m, false, norm), "c2c inverse mask " .. m, tol)
      end
    end
    local x = torch.randn(4, 9, 16, {dtype = dt})
    for _, m in ipairs {4, 2, 6, 7} do
      same(C.fft_r2c(x:cuda(), m, 1), C.fft_r2c(x, m, 1), "r2c mask " .. m, tol)
    end
    local h = C.fft_r2c(x, 4, 0)
    same(C.fft_c2r(h:cuda(), 4, 16, 2), C.fft_c2r(h, 4, 16, 2), "c2r", tol)
    same(C.fft_c2r(h:cuda(), 6, 16, 2), C.fft_c2r(h, 6, 16, 2), "c2r 2 dims", tol)
  end)
end

test("torch.fft functions and gradients on CUDA match the CPU", function()
  torch.manual_seed(8)
  local x = torch.randn(5, 33, {dtype = torch.float64})
  local xc = x:cuda():requires_grad_()
  local xh = x:clone():requires_grad_()
  local yc, yh = torch.fft.rfft(xc, {norm = "ortho"}), torch.fft.rfft(xh, {norm = "ortho"})
  same(torch.view_as_real(yc), torch.view_as_real(yh), "rfft", 1e-10)
  torch.view_as_real(yc):pow(2):sum():backward()
  torch.view_as_real(yh):pow(2):sum():backward()
  same(xc.grad, xh.grad, "rfft gradient", 1e-10)
  same(torch.fft.irfft(torch.fft.rfft(x:cuda()), {n = 33}), x, "irfft(rfft)", 1e-10)
end)

test("torch.stft and torch.istft on CUDA match the CPU", function()
  torch.manual_seed(9)
  local x = torch.randn(2, 4000)
  local w = torch.hann_window(400)
  local sc = torch.stft(x:cuda(), 400, {hop_length = 160, window = w:cuda(), return_complex = true})
  local sh = torch.stft(x, 400, {hop_length = 160, window = w, return_complex = true})
  same(torch.view_as_real(sc), torch.view_as_real(sh), "stft", 1e-3)
  local yc = torch.istft(sc, 400, {hop_length = 160, window = w:cuda(), length = 4000})
  same(yc, x, "istft(stft)", 1e-4)
end)
