-- tests/cuda/test_cuda_audio_extras.lua -- detect_pitch_frequency,
-- loudness, sliding_window_cmn, dither (TPDF), flanger, phaser and vad on
-- CUDA against the CPU on the same inputs (the CPU results are checked
-- against torchaudio in tests/domains/audio/test_extras.lua). Skips
-- without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU audio extras tests skipped\n")
  return
end

torch.set_default_device("cpu")
local AF = torch.audio.functional
local f32 = {rtol = 1e-4, atol = 1e-5}
local f64 = {rtol = 1e-10, atol = 1e-12}

local function same(g, c, tol)
  check(g.is_cuda, "the result stays on cuda")
  check_close(g:cpu(), c, tol)
end

test("pitch, loudness, cmn and dither on CUDA match the CPU", function()
  torch.manual_seed(1)
  local t = torch.arange(0, 8000) / 8000
  local x = torch.stack({torch.sin(t * (2 * math.pi * 220)), torch.sin(t * (2 * math.pi * 330)) * 0.5}) +
    (torch.rand(2, 8000) - 0.5) * 0.05
  same(AF.detect_pitch_frequency(x:cuda(), 8000), AF.detect_pitch_frequency(x, 8000), f32)
  local w = (torch.rand(2, 2, 16000, {dtype = torch.float64}) - 0.5) * 0.4
  same(AF.loudness(w:cuda(), 16000), AF.loudness(w, 16000), f64)
  local s = torch.rand(2, 300, 13) * 4
  same(AF.sliding_window_cmn(s:cuda(), 100, 20, false, true), AF.sliding_window_cmn(s, 100, 20, false, true), f32)
  local d = torch.rand(2, 500) - 0.5
  same(AF.dither(d:cuda(), "TPDF", true), AF.dither(d, "TPDF", true), f32)
end)

test("flanger, phaser and vad on CUDA match the CPU", function()
  torch.manual_seed(2)
  local x = (torch.rand(2, 2, 4000, {dtype = torch.float64}) - 0.5) * 0.8
  same(AF.flanger(x:cuda(), 8000), AF.flanger(x, 8000), f64)
  same(AF.flanger(x:cuda(), 8000, {delay = 1.0, regen = 40.0, interpolation = "quadratic"}),
    AF.flanger(x, 8000, {delay = 1.0, regen = 40.0, interpolation = "quadratic"}), f64)
  same(AF.phaser(x:cuda(), 8000), AF.phaser(x, 8000), f64)
  local v = torch.cat({(torch.rand(8000) - 0.5) * 0.002, torch.sin(torch.arange(0, 16000) * 0.2) *
    (torch.sin(torch.arange(0, 16000) * 0.003):abs())})
  local got, want = AF.vad(v:cuda(), 16000), AF.vad(v, 16000)
  check_eq(got:size(-1), want:size(-1))
end)

test("beamforming on CUDA matches the CPU", function()
  torch.manual_seed(3)
  local f = torch.float64
  local spec = torch.complex(torch.randn(2, 3, 5, 40, {dtype = f}), torch.randn(2, 3, 5, 40, {dtype = f}))
  local mask = torch.rand(2, 5, 40, {dtype = f})
  local ps, pn = AF.psd(spec, mask), AF.psd(spec, 1 - mask)
  local function c(x) return torch.view_as_real(x) end
  same(c(AF.psd(spec:cuda(), mask:cuda())), c(ps), f64)
  local w = AF.mvdr_weights_souden(ps, pn, 1)
  same(c(AF.mvdr_weights_souden(ps:cuda(), pn:cuda(), 1)), c(w), {rtol = 1e-8, atol = 1e-10})
  same(c(AF.rtf_power(ps:cuda(), pn:cuda(), 2)), c(AF.rtf_power(ps, pn, 2)), {rtol = 1e-8, atol = 1e-10})
  same(c(AF.apply_beamforming(w:cuda(), spec:cuda())), c(AF.apply_beamforming(w, spec)), f64)
end)
