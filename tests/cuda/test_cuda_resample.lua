-- tests/cuda/test_cuda_resample.lua -- torch.audio's resample on the GPU
-- (tensor/cuda/resample.cu): the sinc filters and their adjoint against the
-- CPU kernels and torchaudio's values (tests/ref/audio_resample.lua),
-- gradients, the streaming Resampler, and soxr_hq's round trip through the
-- host. Skipped without a GPU.
if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU resample tests skipped\n")
  test("resample runs on the CPU without a GPU", function()
    check_shape(torch.audio.functional.resample(torch.randn(2, 30), 3, 1), {2, 10})
  end)
  return
end

local F = torch.audio.functional
local R = ref("audio_resample")
local DT = {float32 = torch.float32, float64 = torch.float64}

test("resample on CUDA matches torchaudio and the CPU", function()
  local n = 0
  for name, c in pairs(R.cases) do
    if not c.opts.transform then
      local x = torch.tensor(c.x, {dtype = DT[c.dtype]}):reshape(c.shape)
      local opts = {}
      for k, v in pairs(c.opts) do opts[k] = v end
      local y = F.resample(x:cuda(), c.orig, c.new, opts)
      check(y.is_cuda, name .. " stays on cuda")
      local tol = x.dtype == torch.float64 and {atol = 1e-10, rtol = c.opts.beta and 2e-7 or 1e-10}
        or {atol = 1e-5, rtol = 1e-5}
      local ok, err = pcall(check_close, y:cpu(), torch.tensor(c.y, {dtype = x.dtype}):reshape(c.yshape), tol)
      check(ok, name .. ": " .. tostring(err))
      check_close(y:cpu(), F.resample(x, c.orig, c.new, opts), x.dtype == torch.float64 and {atol = 1e-12, rtol = 1e-12}
        or {atol = 1e-6, rtol = 1e-6})
      n = n + 1
    end
  end
  check(n >= 40, "cases: " .. n)
end)

test("resample's gradient on CUDA equals the CPU's (adjoint kernel) and gradchecks", function()
  for _, p in ipairs{{48000, 16000}, {44100, 48000}, {16000, 44100}, {3, 5}} do
    local x = torch.randn(3, 1001, {dtype = torch.float64})
    local w = torch.randn(3, (p[2] * 1001 + p[1] - 1) // p[1], {dtype = torch.float64})
    local function grad(dev)
      local xd = x:to(dev):requires_grad_()
      local loss = (F.resample(xd, p[1], p[2]) * w:to(dev)):sum()
      loss:backward()
      return xd.grad:cpu()
    end
    check_close(grad("cuda"), grad("cpu"), {atol = 1e-12, rtol = 1e-12})
  end
  local x = torch.randn(2, 29, {dtype = torch.float64}):cuda():requires_grad_()
  check(torch.autograd.gradcheck(function(t) return F.resample(t, 16000, 44100) end, {x}), "gradcheck")
end)

test("Resampler and soxr_hq with CUDA blocks", function()
  local x = torch.randn(2, 5000):cuda()
  local r = F.Resampler(44100, 16000)
  local parts = {}
  for i = 0, 4 do parts[#parts + 1] = r:process(x:narrow(2, i * 1000 + 1, 1000)) end
  parts[#parts + 1] = r:flush()
  local y = torch.cat(parts, 2)
  check(y.is_cuda, "stays on cuda")
  check_close(y:cpu(), F.resample(x, 44100, 16000):cpu(), {atol = 1e-6, rtol = 1e-6})
  local s = F.resample(x, 44100, 16000, {resampling_method = "soxr_hq"})
  check(s.is_cuda, "soxr_hq's result comes back to the device")
  check_close(s:cpu(), F.resample(x:cpu(), 44100, 16000, {resampling_method = "soxr_hq"}), {atol = 0, rtol = 0})
end)
