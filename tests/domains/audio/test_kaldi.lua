-- tests/domains/audio/test_kaldi.lua -- torch.audio.compliance.kaldi
-- (spectrogram, fbank, mfcc) against torchaudio 0.13's compliance.kaldi
-- (tests/ref/audio_spectral.lua from tests/ref/gen_audio_spectral.py) on
-- random signals and espeak-ng speech, Kaldi's closed forms, bad input.
local R = ref("audio_spectral")
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/audio"
package.path = here .. "/?.lua;" .. package.path
local G = require "spectral_inputs"
local K = torch.audio.compliance.kaldi
local f32, f64 = torch.float32, torch.float64

-- the case's options in Lua's spelling (channel 1-based)
local function lua_opts(c)
  local o = {}
  for k, v in pairs(c.opts) do o[k] = v end
  if o.channel then o.channel = o.channel + 1 end
  return o
end

local function input(c)
  if c.input == "speech" then
    local dt = torch[c.dtype]
    return (G.speech(R, c.n, f64) * 32768):to(dt):unsqueeze(1), dt
  end
  local x = G.input(c.x)
  return x, x.dtype
end

for _, fn in ipairs{"fbank", "mfcc", "spectrogram"} do
  test("kaldi." .. fn .. " matches torchaudio on random signals and speech (its options)", function()
    local n = 0
    for _, c in ipairs(R.kaldi) do
      if c.fn == fn then
        local x, dt = input(c)
        local y = K[fn](x, lua_opts(c))
        check_shape(y, c.y_shape)
        check(y.dtype == dt, "keeps the input's dtype")
        -- log values: float32 error is relative to the spectrum's scale, not the log's
        check_close(y, G.expected(c, dt), dt == f32 and {rtol = 1e-4, atol = 2e-4} or {rtol = 1e-8, atol = 1e-8})
        n = n + 1
      end
    end
    check(n >= 3, "cases ran")
  end)
end

test("kaldi.fbank: a pure tone puts its energy in the mel bin around its frequency", function()
  local sr, f0 = 16000, 1000
  local t = torch.arange(8000, {dtype = f64}) / sr
  local x = (t * (2 * math.pi * f0)):sin():unsqueeze(1) * 1000
  local y = K.fbank(x, {num_mel_bins = 40, dither = 0})
  local _, idx = y:mean(1):max(1)
  local bin = idx:item() -- 1-based
  -- the bin whose center is nearest 1 kHz on Kaldi's mel scale
  local ml, mh = K.mel_scale(20), K.mel_scale(8000)
  local delta = (mh - ml) / 41
  local best, bestd = nil, math.huge
  for b = 1, 40 do
    local d = math.abs(K.inverse_mel_scale(ml + b * delta) - f0)
    if d < bestd then best, bestd = b, d end
  end
  check(math.abs(bin - best) <= 1, ("peak bin %d, expected near %d"):format(bin, best))
end)

test("kaldi: frame counts follow snip_edges (closed form)", function()
  local x = torch.randn(1, 16000, {dtype = f64})
  check(K.fbank(x):size(1) == 1 + (16000 - 400) // 160)
  check(K.fbank(x, {snip_edges = false}):size(1) == (16000 + 80) // 160)
  check(K.spectrogram(x):size(2) == 257)
  check(K.mfcc(x, {num_ceps = 20, num_mel_bins = 23}):size(2) == 20)
  check(K.fbank(x, {min_duration = 2.0}):numel() == 0, "shorter than min_duration: empty")
end)

test("kaldi: bad input raises errors naming the call and the values", function()
  check_error(function() K.fbank(torch.randn(100)) end, "kaldi.fbank: expected a waveform [channels, time]")
  check_error(function() K.fbank(torch.randn(1, 100)) end, "window size 400")
  check_error(function() K.fbank(torch.randn(2, 1000), {channel = 3}) end, "channel 3")
  check_error(function() K.fbank(torch.randn(1, 1000), {window_type = "kaiser"}) end, "window_type")
  check_error(function() K.fbank(torch.randn(1, 1000), {frame_len = 20}) end, "frame_length")
  check_error(function() K.fbank(torch.randn(1, 1000), {round_to_power_of_two = false, frame_length = 25.0625})
  end, "must be even")
  check_error(function() K.mfcc(torch.randn(1, 1000), {num_ceps = 30}) end, "num_ceps")
  check_error(function() K.fbank(torch.randn(1, 1000), {low_freq = 9000}) end, "low_freq")
  check_error(function() K.spectrogram(torch.randn(1, 1000), {preemphasis_coefficient = 2}) end, "preemphasis")
end)
