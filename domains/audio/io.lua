-- torch.audio.io -- sound files as tensors, after torchaudio's load, save
-- and info (the libsndfile backend: WAV, FLAC, Ogg Vorbis, Opus, MP3 and
-- the other formats libsndfile reads). A source is a path, or the file's
-- bytes: a string holding a zero byte (every sound file header has one)
-- or wrapped by io.bytes(s). The file work is C (domains/audio/l_io.c over
-- sound.c and sound_write.c); torch.audio.io.StreamReader reads in chunks.
local torch = require "torch"
local C = require "torch.audio._io"
local M = {}

local Bytes = {__name = "torch.audio.io.bytes"}
Bytes.__index = Bytes

-- bytes(s): marks the string s as a sound file's contents, not a path
function M.bytes(s)
  if type(s) ~= "string" then error("torch.audio.io.bytes: expected a string, got a " .. type(s), 2) end
  return setmetatable({data = s}, Bytes)
end

-- source(fname, src) -> the path or bytes, whether bytes, a label for messages
local function source(fname, src)
  if getmetatable(src) == Bytes then return src.data, true, "<bytes>" end
  if type(src) ~= "string" then
    error(("%s: expected a path or a sound file's bytes (a string), got a %s"):format(fname, type(src)), 4)
  end
  if src:find("\0", 1, true) then return src, true, "<bytes>" end
  return src, false, "'" .. src .. "'"
end

-- open(fname, src) -> an open sound (domains/audio/l_io.c), its label;
-- raises naming fname and the file. Used by load, info and StreamReader.
function M._open(fname, src)
  local s, is_bytes, label = source(fname, src)
  if not is_bytes then
    local f, err = io.open(s, "rb")
    if not f then error(("%s: cannot open %s (%s)"):format(fname, label, err:match(": ([^:]*)$") or err), 3) end
    f:close()
  end
  local h, why = C.open(s, is_bytes)
  if not h then error(("%s: %s: %s"):format(fname, label, why), 3) end
  return h, label
end

local function check_int(fname, name, v, min)
  if math.type(v) ~= "integer" or v < min then
    error(("%s: %s must be an integer >= %d, got %s"):format(fname, name, min, tostring(v)), 3)
  end
  return v
end

-- metadata as torchaudio's AudioMetaData
local function metadata(h)
  local i = h:info()
  return {sample_rate = i.sample_rate, num_frames = i.num_frames, num_channels = i.num_channels,
          bits_per_sample = i.bits_per_sample, encoding = i.encoding}
end

function M.info(src, opts)
  torch._check_options("torch.audio.info", opts or {}, "format backend buffer_size")
  local h = M._open("torch.audio.info", src)
  local m = metadata(h)
  h:close()
  return m
end

function M.load(src, opts)
  local fname = "torch.audio.load"
  opts = torch._check_options(fname, opts or {}, "frame_offset num_frames normalize channels_first format backend buffer_size")
  local offset = check_int(fname, "frame_offset", opts.frame_offset or 0, 0)
  local n = opts.num_frames or -1
  if math.type(n) ~= "integer" or n < -1 then
    error(("%s: num_frames must be -1 (all) or a count >= 0, got %s"):format(fname, tostring(n)), 2)
  end
  local h, label = M._open(fname, src)
  local info = h:info()
  if offset > info.num_frames then
    h:close()
    error(("%s: %s: frame_offset %d is past the end (the file has %d frames)"):format(fname, label, offset,
      info.num_frames), 2)
  end
  local left = info.num_frames - offset
  if n < 0 or n > left then n = left end
  local dtype = opts.normalize == false and info.raw_dtype or "float32"
  local ok, x = pcall(function()
    h:seek(offset)
    return h:read(n, dtype, opts.channels_first ~= false)
  end)
  h:close()
  if not ok then error(("%s: %s: %s"):format(fname, label, tostring(x)), 2) end
  return x, info.sample_rate
end

-- torchaudio's compression for format fmt as libsndfile's level in [0, 1]
-- (nil: the default): FLAC levels 0..8, Vorbis quality -1..10 (higher is
-- better), Opus and MP3 libsndfile's own level 0..1 (higher is smaller)
local function level(fmt, c)
  if c == nil then return nil end
  if type(c) ~= "number" then error("torch.audio.save: compression must be a number, got a " .. type(c), 3) end
  local lo, hi, map
  if fmt == "flac" then lo, hi, map = 0, 8, function(v) return v / 8 end
  elseif fmt == "ogg" or fmt == "vorbis" then lo, hi, map = -1, 10, function(v) return 1 - (v + 1) / 11 end
  elseif fmt == "opus" or fmt == "mp3" then lo, hi, map = 0, 1, function(v) return v end
  else error(("torch.audio.save: format %s takes no compression (got %s)"):format(fmt, tostring(c)), 3) end
  if c < lo or c > hi then
    error(("torch.audio.save: compression for %s must be in [%g, %g], got %g"):format(fmt, lo, hi, c), 3)
  end
  return map(c)
end

local SAVE_DTYPES = {float32 = true, float64 = true, int32 = true, int16 = true, uint8 = true}

function M.save(path, x, sample_rate, opts)
  local fname = "torch.audio.save"
  opts = torch._check_options(fname, opts or {},
    "channels_first format encoding bits_per_sample compression buffer_size backend")
  if type(path) ~= "string" then error(fname .. ": path must be a string, got a " .. type(path), 2) end
  if not torch.is_tensor(x) then error(fname .. ": the waveform must be a tensor, got a " .. type(x), 2) end
  if math.type(sample_rate) ~= "integer" or sample_rate <= 0 then
    error(("%s: sample_rate must be an integer > 0, got %s"):format(fname, tostring(sample_rate)), 2)
  end
  local first = opts.channels_first ~= false
  if x:dim() == 1 then x = x:unsqueeze(first and 1 or 2)
  elseif x:dim() ~= 2 then
    error(("%s: the waveform must be 1-D [time] or 2-D [%s], got %d-D"):format(fname,
      first and "channel, time" or "time, channel", x:dim()), 2)
  end
  local dt = tostring(x.dtype):gsub("^torch%.", "")
  if dt == "float16" or dt == "bfloat16" then x, dt = x:float(), "float32"
  elseif not SAVE_DTYPES[dt] then
    error(("%s: cannot save %s samples (float32, float64, int32, int16 or uint8)"):format(fname, dt), 2)
  end
  x = x:cpu():contiguous()
  local fmt = opts.format or path:match("%.([%w]+)$")
  if not fmt then error(("%s: '%s' has no extension: give format="):format(fname, path), 2) end
  fmt = fmt:lower()
  if fmt == "oga" then fmt = "ogg" end
  local bits = opts.bits_per_sample
  if bits ~= nil and math.type(bits) ~= "integer" then
    error(fname .. ": bits_per_sample must be an integer, got " .. tostring(bits), 2)
  end
  if opts.encoding ~= nil and type(opts.encoding) ~= "string" then
    error(fname .. ": encoding must be a string, got a " .. type(opts.encoding), 2)
  end
  local ok, why = C.save(path, x, sample_rate, fmt, opts.encoding, bits, level(fmt, opts.compression), first)
  if not ok then error(("%s: '%s': %s"):format(fname, path, why), 2) end
end

M.StreamReader = require "torch.audio._stream_reader"

return M
