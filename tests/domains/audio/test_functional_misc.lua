-- tests/domains/audio/test_functional_misc.lua -- torch.audio's effects,
-- level conversions, deltas, masks, convolutions, add_noise and their
-- transforms against torchaudio 0.13 (tests/ref/gen_audio_filters.py),
-- scipy's convolution and closed forms; the random masks by their
-- invariants.
local AF = torch.audio.functional
local T = torch.audio.transforms
local R = ref("audio_filters")
local f32 = {rtol = 1e-4, atol = 1e-5}
local f64 = {rtol = 1e-8, atol = 1e-10}

local function t(v, dt) return torch.tensor(v, {dtype = dt or torch.float32}) end
local X = t(R.x)
local SPEC = t(R.spec)

test("contrast, dcshift and gain match torchaudio", function()
  check_close(AF.contrast(X), t(R.contrast), f32)
  check_close(AF.contrast(X, 20.0), t(R.contrast_20), f32)
  check_close(AF.dcshift(X, 0.3), t(R.dcshift), f32)
  check_close(AF.dcshift(X, 0.5, 0.05), t(R.dcshift_lim_pos), f32)
  check_close(AF.dcshift(X, -0.4, {limiter_gain = 0.1}), t(R.dcshift_lim_neg), f32)
  check_close(AF.gain(X, 3.5), t(R.gain), f32)
  check(AF.gain(X, 0) == X, "gain 0 dB is the waveform itself")
  check_error(function() AF.contrast(X, 120) end, "0..100")
end)

test("overdrive matches torchaudio", function()
  check_close(AF.overdrive(X), t(R.overdrive), f32)
  check_close(AF.overdrive(X, 5.0, 60.0), t(R.overdrive_args), f32)
  check_close(AF.overdrive(X[1]:double(), {gain = 8.0, colour = 30.0}), t(R.overdrive_f64, torch.float64), f64)
end)

test("mu-law encoding and decoding match torchaudio", function()
  local codes = AF.mu_law_encoding(X:clamp(-1, 1), 256)
  check(codes.dtype == torch.int64, "int64 codes")
  check_eq(codes:tolist(), R.mu_enc)
  check_eq(AF.mu_law_encoding(X:clamp(-1, 1), 16):tolist(), R.mu_enc_16)
  check_close(AF.mu_law_decoding(torch.arange(0, 256), 256), t(R.mu_dec), f32)
  check_close(T.MuLawDecoding()(T.MuLawEncoding()(X:clamp(-1, 1))), AF.mu_law_decoding(t(R.mu_enc, torch.int64), 256), f32)
  check_error(function() AF.mu_law_encoding(X, 1) end, "quantization_channels")
end)

test("amplitude_to_DB, DB_to_amplitude and AmplitudeToDB match torchaudio", function()
  check_close(AF.amplitude_to_DB(SPEC, 10.0, 1e-10, 0.0), t(R.amp_db), f32)
  check_close(AF.amplitude_to_DB(SPEC, 20.0, 1e-10, math.log(2.0, 10), 30.0), t(R.amp_db_top), f32)
  check_close(AF.amplitude_to_DB(SPEC[1], 10.0, 1e-10, 0.0, {top_db = 5.0}), t(R.amp_db_top_3d), f32)
  check_close(AF.DB_to_amplitude(SPEC - 5, 2.0, 0.5), t(R.db_amp), f32)
  check_close(T.AmplitudeToDB("magnitude", 50.0)(SPEC), t(R.atodb_mag), f32)
  check_close(T.AmplitudeToDB()(SPEC), t(R.atodb_pow), f32)
  check_error(function() T.AmplitudeToDB("power", -1) end, "top_db")
  check_error(function() T.AmplitudeToDB("decibel") end, "stype")
end)

test("compute_deltas and ComputeDeltas match torchaudio", function()
  check_close(AF.compute_deltas(SPEC), t(R.deltas), f32)
  check_close(AF.compute_deltas(SPEC, 7), t(R.deltas_7), f32)
  check_close(AF.compute_deltas(SPEC, {win_length = 3, mode = "reflect"}), t(R.deltas_refl), f32)
  check_close(T.ComputeDeltas{win_length = 7}(SPEC), t(R.deltas_7), f32)
  check_error(function() AF.compute_deltas(SPEC, 2) end, "win_length")
end)

test("compute_deltas of a line is its slope (closed form)", function()
  local ramp = torch.arange(0, 20, {dtype = torch.float64}) * 0.5
  local d = AF.compute_deltas(ramp:reshape(1, 20))
  -- interior points: exactly the slope; replicate padding lowers the ends
  check_close(d[1]:narrow(1, 3, 16), torch.full({16}, 0.5, {dtype = torch.float64}), f64)
end)

test("Vol and Fade match torchaudio", function()
  check_close(T.Vol(2.5)(X), t(R.vol_amp), f32)
  check_close(T.Vol(-6.0, "db")(X), t(R.vol_db), f32)
  check_close(T.Vol(0.5, {gain_type = "power"})(X), t(R.vol_power), f32)
  for _, shape in ipairs({"linear", "exponential", "logarithmic", "quarter_sine", "half_sine"}) do
    check_close(T.Fade(40, 70, shape)(X), t(R["fade_" .. shape]), f32)
  end
  check_error(function() T.Vol(-1) end, "gain must be positive")
  check_error(function() T.Vol(1, "loud") end, "gain_type")
  check_error(function() T.Fade(200)(X) end, "exceed")
end)

test("convolve matches scipy in every mode, with broadcasting leading dims", function()
  local x, y = t(R.cx, torch.float64), t(R.cy, torch.float64)
  for _, mode in ipairs({"full", "valid", "same"}) do
    check_close(AF.convolve(x, y, mode), t(R["conv_" .. mode], torch.float64), f64)
    check_close(T.Convolve(mode)(x, y), t(R["conv_" .. mode], torch.float64), f64)
  end
  check_close(AF.convolve(y, x, {mode = "same"}), t(R.conv_same_short, torch.float64), f64)
  check_close(AF.convolve(x:float(), y:float()), t(R.conv_full), f32)
end)

test("convolve is differentiable (gradcheck, float64)", function()
  local x = torch.rand(2, 1, 9, {dtype = torch.float64}):requires_grad_(true)
  local y = torch.rand(1, 3, 4, {dtype = torch.float64}):requires_grad_(true)
  check(torch.autograd.gradcheck(function(a, b) return AF.convolve(a, b, "valid") end, {x, y}))
end)

test("convolve errors: ranks, leading dims, mode", function()
  local x = torch.rand(2, 3, 10)
  check_error(function() AF.convolve(x, torch.rand(3, 4)) end, "same number of dimensions")
  check_error(function() AF.convolve(x, torch.rand(4, 3, 4)) end, "not broadcastable")
  check_error(function() AF.convolve(x, torch.rand(2, 3, 4), "middle") end, "unknown mode middle")
end)

test("fftconvolve agrees with convolve, or says torch.fft is missing", function()
  local x, y = t(R.cx, torch.float64), t(R.cy, torch.float64)
  if torch.fft and torch.fft.rfft then
    for _, mode in ipairs({"full", "valid", "same"}) do
      check_close(AF.fftconvolve(x, y, mode), t(R["conv_" .. mode], torch.float64), {rtol = 1e-8, atol = 1e-9})
    end
  else
    check_error(function() AF.fftconvolve(x, y) end, "needs torch.fft")
  end
end)

test("add_noise reaches the asked SNR (formula in float64)", function()
  local x, n, snr = t(R.cx, torch.float64), t(R.noise, torch.float64), t(R.snr, torch.float64)
  local lengths = t(R.lengths, torch.int64)
  check_close(AF.add_noise(x, n, snr), t(R.add_noise, torch.float64), f64)
  check_close(AF.add_noise(x, n, snr, lengths), t(R.add_noise_len, torch.float64), f64)
  check_close(T.AddNoise()(x, n, snr, lengths), t(R.add_noise_len, torch.float64), f64)
  local y = AF.add_noise(x, n, snr)
  local added = y - x
  local got = ((x * x):sum(-1) / (added * added):sum(-1)):log10() * 10
  check_close(got, snr, f64)
  check_error(function() AF.add_noise(x, n, snr:narrow(2, 1, 2):unsqueeze(1)) end, "leading dimensions")
  check_error(function() AF.add_noise(x, n:narrow(3, 1, 10), snr) end, "lengths of waveform and noise")
end)

-- The masked positions of a masked spectrogram (values equal to the fill).
local function masked_cols(y, fill) return y:eq(fill) end

test("mask_along_axis: one band of the last two axes, the same for every item", function()
  torch.manual_seed(3)
  local spec = torch.rand(2, 3, 16, 40) + 1
  for trial = 1, 20 do
    local y = AF.mask_along_axis(spec, 10, 0.0, 4)
    local m = masked_cols(y, 0)
    local cols = m:any(3) -- [2, 3, 40]: masked time columns
    local width = cols[1][1]:sum():item()
    check(width < 10, "width below mask_param")
    check(m:sum():item() == width * 16 * 6, "whole columns, the same in every item")
    -- contiguous band
    if width > 0 then
      local idx = cols[1][1]:nonzero()
      check(idx[-1][1]:item() - idx[1][1]:item() + 1 == width, "one contiguous band")
    end
  end
  local yf = AF.mask_along_axis(spec, 8, -1.0, 3, {p = 0.25}) -- at most 4 rows of 16
  check(masked_cols(yf, -1.0):any(4)[1][1]:sum():item() <= 4, "p caps the width")
  check_error(function() AF.mask_along_axis(spec, 5, 0, 2) end, "axis 3 or 4")
  check_error(function() AF.mask_along_axis(spec, 5, 0, 4, 1.5) end, "p must be in [0, 1]")
end)

test("mask_along_axis_iid: a band per item", function()
  torch.manual_seed(4)
  local spec = torch.rand(8, 2, 10, 50) + 1
  local y = AF.mask_along_axis_iid(spec, 30, 0.0, 4)
  local cols = masked_cols(y, 0):any(3) -- [8, 2, 50]
  local widths = cols:sum(3)
  check(widths:max():item() < 30, "each width below mask_param")
  check(not widths:eq(widths[1][1]):all():item(), "widths differ between items (iid)")
  check_close(y:eq(0):sum(3), cols:long() * 10, {atol = 0}) -- whole columns
  check_error(function() AF.mask_along_axis_iid(torch.rand(10, 50), 5, 0, 2) end, "at least 3")
end)

test("FrequencyMasking, TimeMasking and SpecAugment mask bands of the right axes", function()
  torch.manual_seed(5)
  local spec = torch.rand(4, 12, 60) + 1
  local yf = T.FrequencyMasking(6)(spec)
  check(masked_cols(yf, 0):any(3):sum():item() <= 5 * 4, "frequency rows")
  check(masked_cols(yf, 0):sum():item() % 60 == 0, "whole rows")
  local yt = T.TimeMasking(20, true)(spec, 7.0)
  check(masked_cols(yt, 7.0):sum():item() % 12 == 0, "whole time columns")
  local sa = T.SpecAugment(2, 10, 2, 3, {zero_masking = true})
  local ys = sa(spec)
  check_shape(ys, {4, 12, 60})
  local unmasked = ys:ne(0)
  check_close(ys[unmasked], spec[unmasked], {atol = 0})
  local mean = spec:mean():item()
  local ym = T.SpecAugment(3, 30, 0, 0)(spec) -- filled with the mean
  local changed = ym:ne(spec)
  check_close(ym[changed], torch.full({changed:sum():item()}, mean), {atol = 1e-6})
end)
