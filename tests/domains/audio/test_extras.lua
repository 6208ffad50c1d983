-- tests/domains/audio/test_extras.lua -- detect_pitch_frequency, loudness,
-- sliding_window_cmn, dither, flanger, phaser, vad, edit_distance,
-- spectral_centroid and the Loudness, SlidingWindowCmn and Vad transforms
-- against torchaudio 0.13 (2.x's vad) from tests/ref/gen_audio_extras.py
-- (lcg signals and espeak-ng speech); dither's random densities by their
-- invariants; gradients by gradcheck; bad input by its message.
local R = ref("audio_extras")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/audio"
package.path = here .. "/?.lua;" .. package.path
local G = require "spectral_inputs"
local AF, T = torch.audio.functional, torch.audio.transforms
local f32, f64 = torch.float32, torch.float64
local tol32, tol64 = {rtol = 1e-4, atol = 1e-5}, {rtol = 1e-8, atol = 1e-10}

-- rand(shape, seed[, dtype, scale]): the generator's lcg signal
local function rand(shape, seed, dtype, scale)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local t = torch.tensor(G.lcg(n, seed), {dtype = f64}) * (scale or 1.0)
  return t:reshape(shape):to(dtype or f32)
end

local function speech(dtype, n)
  local t = torch.tensor(R.speech.int16, {dtype = f64}) / 32768
  if n then t = t:narrow(1, 1, n) end
  return t:to(dtype or f32)
end

local function ref_t(name, like, dtype)
  return torch.tensor(R[name], {dtype = dtype or like.dtype}):reshape(like:size())
end

local function close(y, name, dtype)
  dtype = dtype or y.dtype
  check_close(y, ref_t(name, y, dtype), dtype == f64 and tol64 or tol32)
end

---------------------------------------------------------------------------
test("detect_pitch_frequency matches torchaudio (tones, speech, options, batch)", function()
  local t = torch.arange(0, 8000, {dtype = f64}) / 8000
  local tone = torch.sin(t * (2 * math.pi * 220)) * 0.5 + torch.sin(t * (2 * math.pi * 440)) * 0.3
  local tones = torch.stack({tone, tone * 0.5 + rand({8000}, 2, f64, 0.05)}):to(f32)
  local y = AF.detect_pitch_frequency(tones, 8000)
  check(y.dtype == f32, "float32 frequencies")
  close(y, "pitch_tones")
  check_close(y[1]:narrow(1, 40, 20), torch.full({20}, 8000 / 36), {rtol = 1e-6}) -- 220 Hz: a lag of 36 samples
  close(AF.detect_pitch_frequency(speech(), 22050), "pitch_speech")
  local yo = AF.detect_pitch_frequency(speech(f64), 22050, 0.02, 5, 100, 1000)
  check_close(yo, ref_t("pitch_speech_opts", yo, f32), tol32)
  local yr = AF.detect_pitch_frequency(rand({2, 3, 1200}, 3), 16000, {win_length = 3})
  check_shape(yr, {2, 3, 7}) -- 8 frames of 160 samples, one lost to the median window
  close(yr, "pitch_rand")
end)

test("detect_pitch_frequency errors name the function and the values", function()
  local x = torch.rand(400)
  check_error(function() AF.detect_pitch_frequency(x, 8000) end, "fewer than win_length 30")
  check_error(function() AF.detect_pitch_frequency(x, 8000, {freq_high = 100}) end, "freq_high 100 must be above")
  check_error(function() AF.detect_pitch_frequency(torch.ones(10, {dtype = torch.int64}), 8000) end,
    "detect_pitch_frequency: waveform must be a floating-point tensor")
  check_error(function() AF.detect_pitch_frequency(x, 8000, {frame_time = 0}) end, "must be positive")
end)

---------------------------------------------------------------------------
test("loudness matches torchaudio (stereo batch, speech, 5 channels, gated blocks)", function()
  close(AF.loudness(rand({2, 2, 16000}, 4, f32, 0.3), 16000), "loud_rand")
  close(AF.loudness(speech():reshape(1, -1), 22050), "loud_speech")
  close(AF.loudness(rand({5, 12000}, 5, f64, 0.2), 16000), "loud_5ch_f64")
  local quiet = rand({1, 2, 16000}, 6, f32, 0.3)
  local scale = torch.cat({torch.full({8000}, 1e-4), torch.ones(8000)})
  close(AF.loudness(quiet * scale, 16000), "loud_gated")
  close(T.Loudness(16000)(rand({2, 2, 16000}, 4, f32, 0.3)), "loud_rand")
end)

test("loudness: a 1 kHz sine at -20 dBFS reads about -23 LKFS (BS.1770's calibration)", function()
  local t = torch.arange(0, 48000, {dtype = f64}) / 48000
  local sine = torch.sin(t * (2 * math.pi * 997)):reshape(1, -1) * 0.1
  check(math.abs(AF.loudness(sine, 48000):item() + 23.01) < 0.1, "-23.01 LKFS")
end)

test("loudness errors", function()
  check_error(function() AF.loudness(torch.rand(6, 16000), 16000) end, "at most 5 channels are supported, got 6")
  check_error(function() AF.loudness(torch.rand(16000), 16000) end, "[..., channels, time]")
  check_error(function() AF.loudness(torch.rand(1, 1000), 16000) end, "fewer than one 400 ms block")
  check_error(function() T.Loudness(-1) end, "sample_rate must be positive")
end)

test("loudness is differentiable (gradcheck, float64)", function()
  local x = rand({1, 2, 800}, 15, f64, 0.3):requires_grad_(true)
  check(torch.autograd.gradcheck(function(w) return AF.loudness(w, 2000) end, {x}))
end)

---------------------------------------------------------------------------
test("sliding_window_cmn matches torchaudio (windows, center, norm_vars, 2-d)", function()
  local spec = rand({2, 50, 7}, 7, f32, 3.0) + 2.0
  local spec64 = rand({2, 50, 7}, 7, f64, 3.0) + 2.0
  close(AF.sliding_window_cmn(spec), "cmn_default")
  close(AF.sliding_window_cmn(spec, 10, 5), "cmn_small")
  close(AF.sliding_window_cmn(spec, 9, 5, true), "cmn_center")
  close(AF.sliding_window_cmn(spec64, {cmn_window = 12, min_cmn_window = 4, norm_vars = true}), "cmn_vars")
  close(AF.sliding_window_cmn(spec64, 8, 100, true, true), "cmn_center_vars")
  close(AF.sliding_window_cmn(spec[1], 20, 30), "cmn_2d")
  close(T.SlidingWindowCmn{cmn_window = 9, min_cmn_window = 5, center = true}(spec), "cmn_center")
end)

test("sliding_window_cmn of a long signal: the mean over the window (closed form)", function()
  local x = rand({1, 3000, 3}, 16, f32, 1.0) + 100
  local y = AF.sliding_window_cmn(x, 600, 100)
  -- frame 2000 (1-based 2001): window frames 1400..2000 (0-based), 601 frames
  local want = x[1][2001] - x[1]:narrow(1, 1401, 601):double():mean(1):float()
  check_close(y[1][2001], want, {atol = 1e-4})
  check_error(function() AF.sliding_window_cmn(torch.rand(10)) end, "[..., time, freq]")
  check_error(function() AF.sliding_window_cmn(torch.rand(10, 3), 0) end, "cmn_window must be a positive integer")
end)

test("sliding_window_cmn is differentiable (gradcheck, float64)", function()
  local x = rand({2, 12, 3}, 17, f64):requires_grad_(true)
  check(torch.autograd.gradcheck(function(s) return AF.sliding_window_cmn(s, 5, 3, false, true) end, {x}))
end)

---------------------------------------------------------------------------
test("dither TPDF matches torchaudio (with and without noise shaping)", function()
  local dx = rand({2, 3, 100}, 8, f32, 0.9)
  close(AF.dither(dx), "dither_tpdf")
  close(AF.dither(dx, "TPDF", true), "dither_tpdf_shaped")
  close(AF.dither(dx:double(), {density_function = "TPDF"}), "dither_tpdf_f64")
end)

-- The offset each row was dithered by: y = round(x (2^15 - 2) + offset) / 2^15
-- with one offset for the whole call; checks it and returns it.
local function offset_of(x, y, candidates)
  local up = 2 ^ 15 - 2
  for _, c in ipairs(candidates) do
    local want = torch.round(x:double() * up + c) / 2 ^ 15
    if (want - y:double()):abs():max():item() == 0 then return c end
  end
  return nil
end

test("dither RPDF and GPDF: one offset drawn from the waveform's samples", function()
  torch.manual_seed(11)
  local x = rand({3, 40}, 18, f32, 0.9)
  local vals = x:narrow(1, 1, 2):narrow(2, 1, 39):reshape(-1):double():tolist() -- torchaudio's draw range
  local cand = {}
  for i, v in ipairs(vals) do cand[i] = v - 0.5 end
  for _ = 1, 5 do
    check(offset_of(x, AF.dither(x, "RPDF"), cand) ~= nil, "RPDF: a sample less 0.5")
  end
  -- GPDF: a sum of seven samples, within the range seven samples can reach
  local y = AF.dither(x, "GPDF")
  local up = 2 ^ 15 - 2
  local off = (y:double() * 2 ^ 15 - x:double() * up)
  check(off:max():item() - off:min():item() <= 1.0 + 1e-9, "one offset for every sample")
  check(off:abs():max():item() <= 7 * 0.9 + 0.5, "within seven samples' reach")
  local shaped = AF.dither(x, "RPDF", true)
  local raw = shaped:narrow(2, 1, 1) -- the first sample has no previous error
  check(offset_of(x:narrow(2, 1, 1), raw, cand) ~= nil, "noise shaping leaves the first sample")
  check_error(function() AF.dither(x, "UPDF") end, "density_function")
end)

---------------------------------------------------------------------------
test("flanger matches torchaudio (default, feedback, quadratic, wide, 4 channels)", function()
  local fx = rand({2, 2, 600}, 9, f32, 0.8)
  close(AF.flanger(fx, 8000), "flanger_default")
  close(AF.flanger(fx, 8000, {delay = 1.0, regen = 30.0}), "flanger_fb")
  close(AF.flanger(fx, 8000, {regen = -50.0, modulation = "triangular", interpolation = "quadratic"}),
    "flanger_fb_quad")
  close(AF.flanger(fx, 8000, 2.0, 5.0, 0.0, 40.0, 2.0, 60.0, "sinusoidal", "quadratic"), "flanger_wide")
  close(AF.flanger(rand({4, 400}, 10, f64, 0.8), 8000, {regen = 20.0, phase = 10.0}), "flanger_4ch_f64")
end)

test("flanger errors and gradients", function()
  check_error(function() AF.flanger(torch.rand(5, 100), 8000) end, "at most 4 channels are allowed, got 5")
  check_error(function() AF.flanger(torch.rand(100), 8000) end, "[..., channel, time]")
  check_error(function() AF.flanger(torch.rand(1, 100), 8000, {delay = 40}) end, "delay must be in 0..30, got 40")
  check_error(function() AF.flanger(torch.rand(1, 100), 8000, {modulation = "square"}) end, "modulation")
  local x = rand({1, 2, 60}, 19, f64, 0.3):requires_grad_(true)
  check(torch.autograd.gradcheck(function(w) return AF.flanger(w, 8000, {regen = 40.0}) end, {x}))
end)

---------------------------------------------------------------------------
test("phaser matches torchaudio (default, triangular, speech, float64)", function()
  local px = rand({2, 1000}, 11, f32, 0.8)
  close(AF.phaser(px, 8000), "phaser_default")
  close(AF.phaser(px, 8000, 0.6, 0.9, 5.0, 0.9, 2.0, false), "phaser_tri")
  close(AF.phaser(speech(f32, 11025), 22050), "phaser_speech")
  close(AF.phaser(px:double(), 8000, {decay = 0.7, delay_ms = 1.0}), "phaser_f64")
end)

test("phaser errors and gradients", function()
  check_error(function() AF.phaser(torch.rand(100), 8000, {decay = 1.5}) end, "decay must be in 0..0.99, got 1.5")
  check_error(function() AF.phaser(torch.rand(100), 100, {delay_ms = 1}) end, "under one sample")
  local x = rand({2, 50}, 20, f64, 0.3):requires_grad_(true)
  check(torch.autograd.gradcheck(function(w) return AF.phaser(w, 8000, {delay_ms = 0.5, decay = 0.8}) end, {x}))
end)

---------------------------------------------------------------------------
local function vad_input()
  return torch.cat({rand({13230}, 12, f32, 0.002), speech()})
end

local function check_vad(y, x, want)
  check_eq(y:size(-1), want.length)
  if want.length > 0 then check_close(y, x:narrow(-1, want.start + 1, want.length), {atol = 0}) end
end

test("vad matches torchaudio 2.x (speech after noise, options, 2 channels, no speech)", function()
  local vs = vad_input()
  check_vad(AF.vad(vs, 22050), vs, R.vad_speech)
  check_vad(AF.vad(vs, 22050, {trigger_level = 5.0, pre_trigger_time = 0.1, search_time = 0.5, allowed_gap = 0.1,
    boot_time = 0.2}), vs, R.vad_speech_opts)
  local ch2 = torch.cat({rand({13230}, 12, f32, 0.002), rand({13230}, 12, f32, 0.002), speech()})
  local two = torch.stack({vs * 0.5, ch2:narrow(1, 1, vs:size(1))})
  check_vad(AF.vad(two, 22050), two, R.vad_2ch)
  local noise = rand({8000}, 13, f32, 0.01)
  check_vad(AF.vad(noise, 16000), noise, R.vad_noise)
  check_vad(T.Vad(22050)(vs), vs, R.vad_speech)
  check_vad(T.Vad(22050, 5.0, {pre_trigger_time = 0.1, search_time = 0.5, allowed_gap = 0.1, boot_time = 0.2})(vs),
    vs, R.vad_speech_opts)
end)

test("vad errors", function()
  check_error(function() AF.vad(torch.rand(100), 16000, {hp_lifter_freq = 4000}) end, "lifter band")
  check_error(function() AF.vad(torch.rand(100), 16000, {search_time = 0}) end, "search_time must be positive")
  check_error(function() AF.vad(torch.rand(100), -1) end, "sample_rate must be positive")
end)

---------------------------------------------------------------------------
test("edit_distance matches torchaudio (characters and words)", function()
  for _, c in ipairs(R.edit_strings) do check_eq(AF.edit_distance(c[1], c[2]), c[3]) end
  local w = R.edit_words
  check_eq(AF.edit_distance(w[1], w[2]), w[3])
  check_eq(AF.edit_distance(torch.tensor({1, 2, 3}), torch.tensor({1, 3})), 1)
  check_error(function() AF.edit_distance(3, "a") end, "seq1 must be a string, a list or a 1-d tensor")
end)

test("spectral_centroid (functional, float32, a Hamming window) matches torchaudio", function()
  local y = AF.spectral_centroid(rand({2, 3000}, 14), 16000, 0, torch.hamming_window(256), 256, 128, 256)
  close(y, "centroid")
end)

---------------------------------------------------------------------------
-- beamforming: complex128 inputs as the generator makes them

local function crand(shape, seed) return torch.complex(rand(shape, seed, f64), rand(shape, seed + 1, f64)) end

local function cref(name, like)
  local v = R[name]
  local dt = like.dtype == torch.complex64 and f32 or f64
  return torch.complex(torch.tensor(v.re, {dtype = dt}), torch.tensor(v.im, {dtype = dt})):reshape(like:size())
end

local function cclose(y, name)
  local tol = y.dtype == torch.complex64 and tol32 or tol64
  check_close(torch.view_as_real(y), torch.view_as_real(cref(name, y)), tol)
end

local function beam_inputs()
  local spec = crand({2, 3, 5, 40}, 30)
  local mask = rand({2, 5, 40}, 32, f64):abs()
  local noise = rand({2, 5, 40}, 33, f64):abs()
  local psd_s = AF.psd(spec, mask)
  local eye = torch.complex(torch.eye(3, {dtype = f64}) * 0.1, torch.zeros(3, 3, {dtype = f64}))
  local psd_n = AF.psd(spec, noise) + eye
  return spec, mask, psd_s, psd_n, rand({2, 3}, 34, f64):abs()
end

test("psd matches torchaudio (mask normalized or not, no mask)", function()
  local spec, mask, psd_s, psd_n = beam_inputs()
  check_shape(psd_s, {2, 5, 3, 3})
  cclose(psd_s, "bf_psd")
  cclose(psd_n, "bf_psd_n")
  cclose(AF.psd(spec), "bf_psd_nomask")
  cclose(AF.psd(spec, mask, false), "bf_psd_unnorm")
  check_error(function() AF.psd(spec, mask:narrow(3, 1, 10)) end, "mask must be [..., freq, time]")
  check_error(function() AF.psd(spec.real) end, "specgram must be a complex tensor")
end)

test("mvdr_weights_souden, rtf_power, mvdr_weights_rtf match torchaudio (channel index 1-based here)", function()
  local _, _, psd_s, psd_n, refw = beam_inputs()
  cclose(AF.mvdr_weights_souden(psd_s, psd_n, 2), "bf_souden")
  cclose(AF.mvdr_weights_souden(psd_s, psd_n, refw, {diagonal_loading = false}), "bf_souden_tensor")
  local rtf = AF.rtf_power(psd_s, psd_n, 1)
  cclose(rtf, "bf_rtf_power")
  cclose(AF.rtf_power(psd_s, psd_n, 3, 1), "bf_rtf_power_1")
  cclose(AF.rtf_power(psd_s, psd_n, refw, {n_iter = 5, diagonal_loading = false}), "bf_rtf_power_5")
  cclose(AF.mvdr_weights_rtf(rtf, psd_n), "bf_mvdr_rtf")
  cclose(AF.mvdr_weights_rtf(rtf, psd_n, 2), "bf_mvdr_rtf_ref")
  cclose(AF.mvdr_weights_rtf(rtf, psd_n, {reference_channel = refw}), "bf_mvdr_rtf_tensor")
  check_error(function() AF.mvdr_weights_souden(psd_s, psd_n, 4) end, "reference_channel 4 is out of range 1..3")
  check_error(function() AF.mvdr_weights_souden(psd_s, psd_n:narrow(-3, 1, 2), 1) end, "one shape")
  check_error(function() AF.rtf_power(psd_s, psd_n, 1, 0) end, "n_iter must be a positive integer")
end)

test("rtf_evd: torchaudio's top eigenvector up to a unit phase", function()
  local _, _, psd_s = beam_inputs()
  local v = AF.rtf_evd(psd_s)
  local want = cref("bf_rtf_evd", v)
  local inner = (want:conj() * v):sum(-1):abs()
  check_close(inner, torch.ones(2, 5, {dtype = f64}), tol64)
  -- and an eigenvector: psd_s v = lambda v with lambda real
  local pv = (psd_s * v:unsqueeze(-2)):sum(-1)
  local lambda = (v:conj() * pv):sum(-1)
  check_close(torch.view_as_real(pv), torch.view_as_real(v * lambda:unsqueeze(-1)), {rtol = 1e-8, atol = 1e-9})
end)

test("apply_beamforming matches torchaudio (complex128, complex64)", function()
  local spec, _, psd_s, psd_n = beam_inputs()
  local w = AF.mvdr_weights_souden(psd_s, psd_n, 2)
  cclose(AF.apply_beamforming(w, spec), "bf_apply")
  cclose(AF.apply_beamforming(w:to(torch.complex64), spec:to(torch.complex64)), "bf_apply_f32")
  check_error(function() AF.apply_beamforming(w:narrow(-2, 1, 4), spec) end, "does not fit specgram")
end)

test("beamforming is differentiable (gradcheck through solve, float64)", function()
  local _, _, psd_s, psd_n = beam_inputs()
  local re = psd_s.real:narrow(1, 1, 1):narrow(2, 1, 2):contiguous():requires_grad_(true)
  local im = psd_s.imag:narrow(1, 1, 1):narrow(2, 1, 2):contiguous()
  local n = psd_n:narrow(1, 1, 1):narrow(2, 1, 2)
  check(torch.autograd.gradcheck(function(r)
    return torch.view_as_real(AF.mvdr_weights_souden(torch.complex(r, im), n, 1))
  end, {re}))
end)

test("PSD, SoudenMVDR and RTFMVDR transforms give the functions' torchaudio values", function()
  local spec, mask, psd_s, psd_n, refw = beam_inputs()
  cclose(T.PSD()(spec, mask), "bf_psd")
  cclose(T.PSD{multi_mask = true}(spec, mask:unsqueeze(-3):expand(2, 3, 5, 40)), "bf_psd")
  cclose(T.PSD()(spec), "bf_psd_nomask")
  cclose(T.SoudenMVDR()(spec, psd_s, psd_n, 2), "bf_apply")
  local rtf = AF.rtf_power(psd_s, psd_n, 1)
  local w = AF.mvdr_weights_rtf(rtf, psd_n, refw)
  check_close(torch.view_as_real(T.RTFMVDR()(spec, rtf, psd_n, refw)),
    torch.view_as_real(AF.apply_beamforming(cref("bf_mvdr_rtf_tensor", w), spec)), tol64)
end)
