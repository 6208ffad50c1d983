-- tests/fuzz/gen_audio_corpus.lua -- writes the seed corpus of fuzz_audio
-- (tests/fuzz/corpus_audio/) with torch.audio.save: a few hundred frames of
-- a two-tone signal in each format and WAV encoding torch.audio writes.
-- test_io.lua replays them and mutations of them.
-- Run: build/moontorch tests/fuzz/gen_audio_corpus.lua   (from the repository root)
local A = torch.audio
local dir = "tests/fuzz/corpus_audio/"

local function signal(c, n)
  local t = torch.arange(n):double()
  local rows = {}
  for k = 1, c do rows[k] = (t * (0.05 * k)):sin() * (0.6 / k) end
  return torch.stack(rows):float()
end

local S = {
  {"s16_mono.wav", 1, 200, {bits_per_sample = 16}},
  {"u8_stereo.wav", 2, 100, {encoding = "PCM_U"}},
  {"s24_stereo.wav", 2, 60, {bits_per_sample = 24}},
  {"f32_3ch.wav", 3, 50, {}},
  {"f64_mono.wav", 1, 40, {encoding = "PCM_F", bits_per_sample = 64}},
  {"ulaw_mono.wav", 1, 200, {encoding = "ULAW"}},
  {"alaw_stereo.wav", 2, 100, {encoding = "ALAW"}},
  {"s16_mono.flac", 1, 300, {bits_per_sample = 16}},
  {"s24_stereo.flac", 2, 200, {}},
  {"mono.ogg", 1, 300, {}},
  {"mono.mp3", 1, 1200, {}},
  {"mono.opus", 1, 960, {}},
}
for _, s in ipairs(S) do
  local rate = s[1]:match("opus") and 48000 or 8000
  A.save(dir .. s[1], signal(s[2], s[3]), rate, s[4])
end
print(("wrote %d files in %s"):format(#S, dir))
