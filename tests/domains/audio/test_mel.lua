-- tests/domains/audio/test_mel.lua -- torch.audio's mel filter banks, DCT
-- matrix, Hz <-> mel conversions, MelScale and InverseMelScale against
-- torchaudio 0.13 (tests/ref/audio_spectral.lua, from
-- tests/ref/gen_audio_spectral.py; InverseMelScale as torchaudio 2.x
-- computes it, through torch 1.13's lstsq), closed forms and finite
-- differences.
local R = ref("audio_spectral")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/audio"
package.path = here .. "/?.lua;" .. package.path
local G = require "spectral_inputs"
local AF, T = torch.audio.functional, torch.audio.transforms
local f32, f64 = torch.float32, torch.float64

test("melscale_fbanks matches torchaudio (htk/slaney scales, slaney norm), float64 and float32", function()
  for _, c in ipairs(R.melscale_fbanks) do
    local a = c.args
    local want = G.expected(c)
    local got = G.with_default(f64, function()
      return AF.melscale_fbanks(a[1], a[2], a[3], a[4], a[5], {norm = c.norm, mel_scale = c.mel_scale})
    end)
    check(got.dtype == f64, "default dtype float64 gives float64")
    check_close(got, want, {rtol = 1e-8, atol = 1e-12})
    local got32 = AF.melscale_fbanks(a[1], a[2], a[3], a[4], a[5], c.norm, c.mel_scale)
    check(got32.dtype == f32, "float32 by default")
    check_close(got32, want:float(), {rtol = 1e-4, atol = 1e-7})
  end
end)

test("linear_fbanks and create_dct match torchaudio", function()
  for _, c in ipairs(R.linear_fbanks) do
    local got = G.with_default(f64, function() return AF.linear_fbanks(table.unpack(c.args)) end)
    check_close(got, G.expected(c), {rtol = 1e-8, atol = 1e-12})
  end
  for _, c in ipairs(R.create_dct) do
    local got = G.with_default(f64, function() return AF.create_dct(c.args[1], c.args[2], c.norm) end)
    check_shape(got, c.y_shape)
    check_close(got, G.expected(c), {rtol = 1e-8, atol = 1e-12})
  end
end)

test("create_dct 'ortho' has orthonormal columns (closed form)", function()
  local d = G.with_default(f64, function() return AF.create_dct(32, 32, "ortho") end)
  check_close(d:t():matmul(d), torch.eye(32, {dtype = f64}), {atol = 1e-12})
end)

test("hz_to_mel matches torchaudio; mel_to_hz inverts it on numbers and tensors", function()
  for _, c in ipairs(R.hz_to_mel) do
    check_close(AF.hz_to_mel(c.hz, c.mel_scale), c.mel, {rtol = 1e-12, atol = 1e-12})
    check_close(AF.mel_to_hz(c.mel, c.mel_scale), c.hz, {rtol = 1e-12, atol = 1e-9})
    local t = torch.tensor({c.hz, c.hz * 2}, {dtype = f64})
    check_close(AF.mel_to_hz(AF.hz_to_mel(t, c.mel_scale), c.mel_scale), t, {rtol = 1e-12, atol = 1e-9})
  end
  check_close(AF.hz_to_mel(700), 2595 * math.log(2, 10))
end)

test("MelScale matches torchaudio on random spectrograms", function()
  for _, c in ipairs(R.MelScale) do
    local x = G.input(c.x)
    local m = G.with_default(x.dtype, function() return T.MelScale(c.opts) end)
    local y = m(x)
    check_shape(y, c.y_shape)
    check_close(y, G.expected(c, x.dtype), G.tol(x.dtype))
  end
end)

test("MelScale is differentiable (gradcheck, float64) and batched over leading dims", function()
  local m = G.with_default(f64, function() return T.MelScale{n_mels = 6, n_stft = 17, sample_rate = 8000} end)
  local x = torch.rand(2, 17, 3, {dtype = f64, requires_grad = true})
  check(torch.autograd.gradcheck(function(s) return m(s) end, {x}))
  local b = torch.rand(2, 3, 17, 4, {dtype = f64})
  check_close(m(b)[{2, 3}], m(b[{2, 3}]), {rtol = 1e-12})
end)

test("InverseMelScale matches torchaudio 2.x's least-squares solution", function()
  for _, c in ipairs(R.InverseMelScale) do
    local x = G.input(c.x)
    local m = G.with_default(x.dtype, function() return T.InverseMelScale(c.n_stft, c.opts) end)
    local y = m(x)
    check_shape(y, c.y_shape)
    check_close(y, G.expected(c, x.dtype), x.dtype == f64 and {rtol = 1e-7, atol = 1e-9} or {rtol = 1e-4, atol = 1e-5})
  end
end)

-- torchaudio 2.x's own values, when the lead has run gen_audio_spectral_2x.py
local ok2x, R2 = pcall(ref, "audio_spectral_2x")
if ok2x and R2 then
  test("InverseMelScale matches torchaudio 2.x (drivers gels, gelsd; slaney banks)", function()
    for _, c in ipairs(R2.InverseMelScale) do
      local x = G.input(c.x)
      local m = G.with_default(x.dtype, function() return T.InverseMelScale(c.n_stft, c.opts) end)
      check_close(m(x), G.expected(c, x.dtype), x.dtype == f64 and {rtol = 1e-7, atol = 1e-9}
        or {rtol = 1e-4, atol = 1e-5})
    end
  end)
end

test("InverseMelScale inverts MelScale where the spectrogram is recoverable (pseudo-inverse closed form)", function()
  local fb = G.with_default(f64, function() return AF.melscale_fbanks(20, 0, 4000, 12, 8000) end)
  local inv = G.with_default(f64, function() return T.InverseMelScale(20, {n_mels = 12, sample_rate = 8000}) end)
  local mel = torch.rand(3, 12, 5, {dtype = f64})
  local want = torch.relu(torch.linalg.pinv(fb:t()):matmul(mel))
  check_close(inv(mel), want, {rtol = 1e-8, atol = 1e-10})
end)

test("bad arguments raise errors naming the call and the values", function()
  check_error(function() AF.melscale_fbanks(201, 0, 8000, 40, 16000, {norm = "l2"}) end, 'norm must be false or "slaney"')
  check_error(function() AF.melscale_fbanks(201, 0, 8000, 40, 16000, {mel_scale = "bark"}) end, "mel_scale")
  check_error(function() AF.melscale_fbanks(0, 0, 8000, 40, 16000) end, "n_freqs")
  check_error(function() AF.create_dct(13, 40, "l1") end, 'norm must be "ortho" or false')
  check_error(function() T.MelScale{n_mels = 8, f_min = 9000} end, "f_min <= f_max")
  check_error(function() T.MelScale{n_mel = 8} end, "n_mels")
  check_error(function() T.MelScale{n_stft = 33}(torch.rand(2, 30, 4)) end, "expected a spectrogram [..., 33, time]")
  check_error(function() T.InverseMelScale(33, {n_mels = 8})(torch.rand(9, 4)) end, "8 mel bins")
  check_error(function() T.InverseMelScale(33, {driver = "magma"}) end, "driver")
end)
