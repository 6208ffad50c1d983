-- torch.audio.io.StreamReader (torch.audio.StreamReader) -- torchaudio's StreamReader over a sound
-- file or its bytes: add_basic_audio_stream, then stream() yields chunks
-- of frames_per_chunk frames ([frames, channels]; the last one may be
-- shorter), read straight from the file, so memory stays bounded however
-- long it is. One source stream (the audio); several output streams may
-- read it, each at its own chunk size and sample format. The lower level
-- of torchaudio's (process_packet, fill_buffer, is_buffer_ready,
-- pop_chunks) goes through each output stream's buffer (_stream_buffer.lua).
local torch = require "torch"
local Buffer = require "torch.audio._stream_buffer"

-- torch.audio.io's opener (loaded on use: io.lua loads this file)
local function open(...) return require("torch.audio.io")._open(...) end

local R = {}
R.__index = R
R.__name = "torch.audio.io.StreamReader"

-- torchaudio's (FFmpeg's) sample formats -> the dtype of the chunks
local FORMATS = {u8 = "uint8", u8p = "uint8", s16 = "int16", s16p = "int16", s32 = "int32", s32p = "int32",
                 flt = "float32", fltp = "float32", dbl = "float64", dblp = "float64"}

-- FFmpeg's codec and sample format names for torch.audio.info's encodings
local CODECS = {
  PCM_S = function(b) return "pcm_s" .. b .. "le", b == 16 and "s16" or b == 8 and "u8" or "s32" end,
  PCM_U = function() return "pcm_u8", "u8" end,
  PCM_F = function(b) return "pcm_f" .. b .. "le", b == 64 and "dbl" or "flt" end,
  ULAW = function() return "pcm_mulaw", "s16" end,
  ALAW = function() return "pcm_alaw", "s16" end,
  FLAC = function(b) return "flac", b <= 16 and "s16" or "s32" end,
  VORBIS = function() return "vorbis", "fltp" end,
  OPUS = function() return "opus", "flt" end,
  MP3 = function() return "mp3", "fltp" end,
}

-- the source frames of one packet, process_packet's unit of reading: what
-- an FFmpeg packet holds (torchaudio 0.13 reads through FFmpeg), so that
-- buffers fill, and drop their oldest chunks, as torchaudio's do. PCM
-- (WAV, AIFF...): 4096 bytes of whole frames (FFmpeg's raw PCM demuxers);
-- the compressed codecs: their usual frame (FLAC's block, MP3's frame,
-- Vorbis's long block, Opus's 20 ms), which vary in files that chose others.
local PACKET = {FLAC = 4096, MP3 = 1152, VORBIS = 1024, OPUS = 960}
local function packet_frames(info)
  if PACKET[info.encoding] then return PACKET[info.encoding] end
  local bytes = math.max((info.bits_per_sample + 7) // 8, 1) -- mu-law and A-law: 8 bits
  return math.max(4096 // (bytes * math.max(info.num_channels, 1)), 1)
end

local function new(src, opts)
  local fname = "torch.audio.StreamReader"
  torch._check_options(fname, opts or {}, "format option buffer_size")
  local h = open(fname, src) -- checks the source now, as torchaudio does
  local self = setmetatable({src = src, info = h:info(), outs = {}, fname = fname}, R)
  h:close()
  self.num_src_streams, self.num_out_streams = 1, 0
  self.packet = packet_frames(self.info)
  self.default_audio_stream, self.default_video_stream = 1, false
  return self
end

-- get_src_stream_info(i) -> torchaudio's SourceAudioStream fields (i = 1:
-- the only stream)
function R:get_src_stream_info(i)
  if i ~= 1 then error(("%s.get_src_stream_info: stream %s does not exist (the source has 1 stream)"):format(
    self.fname, tostring(i)), 2) end
  local m = self.info
  local codec, fmt = (CODECS[m.encoding] or function() return "unknown", "flt" end)(m.bits_per_sample)
  local pcm = codec:match("^pcm_") ~= nil
  return {media_type = "audio", codec = codec, codec_long_name = m.encoding, format = fmt,
          bit_rate = pcm and m.sample_rate * m.num_channels * m.bits_per_sample or 0, num_frames = m.num_frames,
          bits_per_sample = m.bits_per_sample, metadata = {}, sample_rate = m.sample_rate,
          num_channels = m.num_channels}
end

-- add_basic_audio_stream{frames_per_chunk=, buffer_chunk_size=3,
-- stream_index=1, format="fltp", sample_rate=false}
function R:add_basic_audio_stream(opts)
  local fname = self.fname .. ".add_basic_audio_stream"
  if math.type(opts) == "integer" then opts = {frames_per_chunk = opts} end
  opts = torch._check_options(fname, opts or {},
    "frames_per_chunk buffer_chunk_size stream_index decoder decoder_option format sample_rate num_channels")
  local n = opts.frames_per_chunk
  if math.type(n) ~= "integer" or (n < 1 and n ~= -1) then
    error(("%s: frames_per_chunk must be an integer >= 1 (or -1: whole file), got %s"):format(fname, tostring(n)), 2)
  end
  local b = opts.buffer_chunk_size or 3
  if math.type(b) ~= "integer" or (b < 1 and b ~= -1) then
    error(("%s: buffer_chunk_size must be an integer >= 1 (or -1), got %s"):format(fname, tostring(b)), 2)
  end
  if (opts.stream_index or 1) ~= 1 then
    error(("%s: stream_index %s does not exist (the source has 1 audio stream)"):format(fname,
      tostring(opts.stream_index)), 2)
  end
  local dtype = FORMATS[opts.format or "fltp"]
  if not dtype then error(("%s: unknown format '%s' (u8, s16, s32, flt, dbl, or their planar forms)"):format(
    fname, tostring(opts.format)), 2) end
  local rate = opts.sample_rate or false
  if rate and rate ~= self.info.sample_rate then
    local F = torch.audio.functional
    if type(F.resample) ~= "function" then
      error(fname .. ": sample_rate= (resampling in the reader) is not supported yet", 2)
    end
    if math.type(rate) ~= "integer" or rate <= 0 then
      error(("%s: sample_rate must be an integer > 0, got %s"):format(fname, tostring(rate)), 2)
    end
  else
    rate = false
  end
  local h = open(self.fname, self.src)
  local all = n == -1
  self.outs[#self.outs + 1] = {
    h = h, n = all and math.max(self.info.num_frames, 1) or n, dtype = dtype, rate = rate,
    format = opts.format or "fltp", buf = Buffer.new(not all and n, b ~= -1 and b),
    resampler = rate and torch.audio.functional.Resampler(self.info.sample_rate, rate) or nil, eof = false}
  self.num_out_streams = #self.outs
end
R.add_audio_stream = R.add_basic_audio_stream

function R:get_out_stream_info(i)
  local o = self.outs[i]
  if not o then error(("%s.get_out_stream_info: no output stream %s"):format(self.fname, tostring(i)), 2) end
  return {source_index = 1, media_type = "audio", format = o.format, sample_rate = o.rate or self.info.sample_rate,
          num_channels = self.info.num_channels, frames_per_chunk = o.n}
end

function R:remove_stream(i)
  local o = self.outs[i]
  if not o then error(("%s.remove_stream: no output stream %s"):format(self.fname, tostring(i)), 2) end
  o.h:close()
  table.remove(self.outs, i)
  self.num_out_streams = #self.outs
end

-- seek(timestamp) -- every output stream continues from timestamp seconds
-- (mode is accepted for torchaudio's sake: every mode is exact here)
function R:seek(t, mode)
  if type(t) ~= "number" or t < 0 or t ~= t then
    error(("%s.seek: timestamp must be a number of seconds >= 0, got %s"):format(self.fname, tostring(t)), 2)
  end
  if mode ~= nil and mode ~= "precise" and mode ~= "key" and mode ~= "any" then
    error(("%s.seek: unknown mode '%s' (expected 'precise', 'key' or 'any')"):format(self.fname, tostring(mode)), 2)
  end
  local frame = math.min(math.floor(t * self.info.sample_rate + 0.5), self.info.num_frames)
  for _, o in ipairs(self.outs) do
    local ok, err = pcall(o.h.seek, o.h, frame)
    if not ok then error(("%s.seek: %s"):format(self.fname, tostring(err)), 2) end
    o.buf:clear()
    o.eof, o.fed = false, false
    if o.resampler then o.resampler:reset() end
  end
end

-- reads up to `frames` source frames into output stream o's buffer
-- (resampled when o asks for another rate; trim: drop the oldest chunks
-- over its size). At the source's end, flushes o's resampler and marks o
-- at its end. Returns whether the source still had frames.
local function feed(self, fname, o, frames, trim)
  if o.eof then return false end
  local ok, x = pcall(o.h.read, o.h, math.max(frames, 1), o.dtype, false)
  if not ok then error(fname .. ": " .. tostring(x), 3) end
  local got = x.shape[1] > 0
  if o.resampler then
    if got then
      x, o.fed = o.resampler:process(x:t():float()):t():contiguous(), true
    elseif o.fed then
      x, o.fed = o.resampler:flush():t():contiguous(), false
    end
  end
  o.eof = not got
  o.buf:push(x, trim)
  return got
end

local function check_outs(self, what)
  if #self.outs == 0 then
    error(("%s.%s: add an output stream first (add_basic_audio_stream)"):format(self.fname, what), 3)
  end
end

-- process_packet([timeout, backoff]) -> 0, or 1 at the source's end:
-- decodes one packet of the source into every output stream's buffer
-- (timeout and backoff are accepted for torchaudio's sake: a file is never
-- temporarily unavailable). At the end, the resampling streams flush.
-- Over buffer_chunk_size chunks, a buffer drops its oldest ones.
function R:process_packet(timeout, backoff)
  check_outs(self, "process_packet")
  local any = false
  for _, o in ipairs(self.outs) do
    if feed(self, self.fname .. ".process_packet", o, self.packet, true) then any = true end
  end
  return any and 0 or 1
end

-- process_all_packets(): process_packet until the source's end
function R:process_all_packets()
  while self:process_packet() == 0 do end
end

-- is_buffer_ready() -> whether every output stream holds a whole chunk
-- (frames_per_chunk = -1: any frame)
function R:is_buffer_ready()
  for _, o in ipairs(self.outs) do
    if not o.buf:ready() then return false end
  end
  return true
end

-- fill_buffer([timeout, backoff]) -> 0 once every output stream holds a
-- chunk, 1 if the source ended first (torchaudio 0.13's _fill_buffer,
-- public in 2.x)
function R:fill_buffer(timeout, backoff)
  check_outs(self, "fill_buffer")
  while not self:is_buffer_ready() do
    local code = self:process_packet(timeout, backoff)
    if code ~= 0 then return code end
  end
  return 0
end
R._fill_buffer = R.fill_buffer

-- pop_chunks() -> one chunk per output stream ([frames, channels]; false
-- for a stream whose buffer is empty); a chunk has frames_per_chunk
-- frames, fewer only at the end (-1: every frame buffered)
function R:pop_chunks()
  local chunks = {}
  for k, o in ipairs(self.outs) do chunks[k] = o.buf:pop() end
  return table.unpack(chunks, 1, #self.outs)
end

-- output stream o's next chunk for stream(): reads exactly the frames
-- missing from its buffer (no packets, so nothing is ever dropped), or
-- false at its end
local function next_chunk(self, o)
  local want = o.buf.n or math.huge -- frames_per_chunk -1: the whole file
  while not o.eof and o.buf.frames < want do
    local need
    if not o.buf.n then
      need = o.buf.frames == 0 and o.n or 65536
    else
      need = want - o.buf.frames
      if o.rate then need = math.ceil(need * self.info.sample_rate / o.rate) end
    end
    feed(self, self.fname .. ".stream", o, need, false)
  end
  return o.buf:pop()
end

-- stream() -> an iterator: each step yields one chunk per output stream
-- ([frames, channels]; false for a stream already at its end), until every
-- stream is at its end. Chunks already buffered (process_packet) come first.
function R:stream(timeout, backoff)
  check_outs(self, "stream")
  return function()
    local chunks, any = {}, false
    for k, o in ipairs(self.outs) do
      chunks[k] = next_chunk(self, o)
      any = any or chunks[k] ~= false
    end
    if not any then return nil end
    return table.unpack(chunks, 1, #self.outs)
  end
end

function R:close()
  for _, o in ipairs(self.outs) do o.h:close() end
  self.outs, self.num_out_streams = {}, 0
end

-- StreamReader(src[, {format=, option=, buffer_size=}]) makes a reader
return setmetatable(R, {__call = function(_, src, opts) return new(src, opts) end})
