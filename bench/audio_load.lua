-- bench/audio_load.lua -- torch.audio.load in seconds of audio per second
-- on one minute of 48 kHz stereo (a tone under noise): 16-bit WAV and
-- FLAC of the same samples into float32 [channels, time] (load's default),
-- and the WAV's raw int16 samples as [time, channels] (normalize=false,
-- channels_first=false: what scipy.io.wavfile.read gives), and the FLAC
-- streamed in one-second chunks (StreamReader). The files are written to
-- $TMPDIR/moontorch_bench_audio_load/ for the peer (bench/peers/
-- audio_load.py: the fastest Python reader present for each row).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local A = torch.audio
local only = arg and arg[1]
local function want(name) return not only or only == name end

local DIR = (os.getenv("TMPDIR") or "/tmp") .. "/moontorch_bench_audio_load/"
local SR, SECONDS = 48000, 60
os.execute("mkdir -p " .. DIR)

torch.manual_seed(0)
local t = torch.arange(SR * SECONDS):double() / SR
local x = torch.stack({(t * 2 * math.pi * 440):sin() * 0.4, (t * 2 * math.pi * 330):sin() * 0.3}):float()
x = (x + torch.randn(2, SR * SECONDS) * 0.05):clamp(-1, 1)
A.save(DIR .. "minute.wav", x, SR, {bits_per_sample = 16})
A.save(DIR .. "minute.flac", x, SR, {bits_per_sample = 16})
x = nil
collectgarbage()

local rows = {
  {"load_wav16_48k_stereo", function() return A.load(DIR .. "minute.wav") end},
  {"load_wav16_raw_int16", function() return A.load(DIR .. "minute.wav", {normalize = false, channels_first = false}) end},
  {"load_flac16_48k_stereo", function() return A.load(DIR .. "minute.flac") end},
  {"stream_flac16_1s_chunks", function()
    local r = A.StreamReader(DIR .. "minute.flac")
    r:add_basic_audio_stream{frames_per_chunk = SR}
    for _ in r:stream() do end
    r:close()
  end},
}
for _, r in ipairs(rows) do
  if want(r[1]) then
    local secs = B.time(function() local _ <close> = r[2]() end, 2, 5)
    B.report(r[1], secs, SECONDS / secs, "audio-s/s")
  end
end
