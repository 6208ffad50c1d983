-- tests/cuda/test_cuda_audio_filters.lua -- the lfilter engine op's CUDA
-- kernels (tensor/cuda/lfilter.cu) against the CPU on the same inputs:
-- forward in float32 and float64, filter banks, streams (state on the
-- GPU), gradients wrt waveform, a and b (the coefficient correlation
-- kernel), and the biquads. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU audio filter tests skipped\n")
  return
end

torch.set_default_device("cpu")
local AF = torch.audio.functional

local function same(g, c, tol)
  check(g.is_cuda, "the result stays on cuda")
  check_close(g:cpu(), c, tol)
end

test("lfilter on CUDA matches the CPU (float32, float64, K = 2..6, filter banks)", function()
  torch.manual_seed(1)
  for _, dt in ipairs({torch.float32, torch.float64}) do
    local tol = dt == torch.float64 and {rtol = 1e-10, atol = 1e-12} or {rtol = 1e-4, atol = 1e-5}
    local x = (torch.rand(3, 4, 1000, {dtype = dt}) - 0.5) * 1.5
    for K = 2, 6 do
      local a = torch.rand(K, {dtype = dt}) * 0.3
      a[1] = 1.0
      local b = torch.rand(K, {dtype = dt}) - 0.5
      same(AF.lfilter(x:cuda(), a:cuda(), b:cuda(), {clamp = false}), AF.lfilter(x, a, b, {clamp = false}), tol)
    end
    local a2 = torch.rand(4, 3, {dtype = dt}) * 0.3 + torch.tensor({1, 0, 0}, {dtype = dt})
    local b2 = torch.rand(4, 3, {dtype = dt})
    same(AF.lfilter(x:cuda(), a2:cuda(), b2:cuda()), AF.lfilter(x, a2, b2), tol)
    same(AF.filtfilt(x:cuda(), a2:cuda(), b2:cuda()), AF.filtfilt(x, a2, b2), tol)
  end
end)

test("biquads and streams on CUDA", function()
  local x = (torch.rand(2, 3000, {dtype = torch.float64}) - 0.5)
  local tol = {rtol = 1e-10, atol = 1e-12}
  same(AF.lowpass_biquad(x:cuda(), 16000, 1000.0), AF.lowpass_biquad(x, 16000, 1000.0), tol)
  same(AF.riaa_biquad(x:cuda(), 44100), AF.riaa_biquad(x, 44100), tol)
  local s = AF.filter_stream("equalizer_biquad", 16000, 1000.0, 4.0)
  local xc = x:cuda()
  local y = torch.cat({s:process(xc:narrow(2, 1, 1234)), s:process(xc:narrow(2, 1235, 1766))}, 2)
  same(y, AF.equalizer_biquad(x, 16000, 1000.0, 4.0), tol)
end)

test("lfilter gradients on CUDA match the CPU's", function()
  local function grads(dev)
    torch.manual_seed(2)
    local x = (torch.rand(2, 3, 200, {dtype = torch.float64}) - 0.5):to(dev):requires_grad_(true)
    local a = (torch.rand(3, 3, {dtype = torch.float64}) * 0.3 + torch.tensor({1.0, 0, 0}, {dtype = torch.float64}))
      :to(dev):requires_grad_(true)
    local b = torch.rand(3, 3, {dtype = torch.float64}):to(dev):requires_grad_(true)
    local w = torch.rand(2, 3, 200, {dtype = torch.float64}):to(dev)
    local loss = (AF.lfilter(x, a, b, {clamp = false}) * w):sum()
    return torch.autograd.grad({loss}, {x, a, b})
  end
  local gc, gg = grads("cpu"), grads("cuda")
  for i = 1, 3 do same(gg[i], gc[i], {rtol = 1e-9, atol = 1e-11}) end
end)
