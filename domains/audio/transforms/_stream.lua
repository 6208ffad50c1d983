-- torch.audio.transforms._stream -- the state that lets Spectrogram and
-- MelSpectrogram take a signal in chunks: samples not yet in a complete
-- frame wait in a buffer; with pad > 0 or center = true the start padding
-- is made from the first samples and the end padding, at flush(), from the
-- last ones. Frames come out exactly as the whole signal would give them.
-- pad_mode "circular" needs the signal's far end at its start: refused.
local torch = require "torch"
local NF = require "torch.nn.functional"

local Stream = {}
Stream.__index = Stream

-- new(fname, o) -> a stream for the spectrogram options o (n_fft,
-- hop_length, pad, center, pad_mode)
function Stream.new(fname, o)
  if o.center and o.pad_mode == "circular" then
    error(fname .. ": streaming needs the signal's end at its start with center=true and " ..
      'pad_mode="circular"; use another pad_mode or process the whole signal', 3)
  end
  local s = setmetatable({fname = fname, n_fft = o.n_fft, hop = o.hop_length, pad = o.pad or 0,
    center = o.center, mode = o.pad_mode, p = o.center and o.n_fft // 2 or 0}, Stream)
  s:reset()
  return s
end

function Stream:reset()
  self.buf, self.hist, self.started, self.lead = nil, nil, false, nil
end

-- the samples [..., p] that the whole signal's start padding puts before x
-- (x: at least p + 1 samples for "reflect")
function Stream:_left(x)
  local p = self.p
  local head = x:narrow(-1, 1, math.min(x:size(-1), p + 1))
  local padded = NF.pad(head:unsqueeze(-2), {p, 0}, self.mode):squeeze(-2)
  return padded:narrow(-1, 1, p)
end

-- the samples after the signal's end (hist: its last samples)
function Stream:_right()
  local p, h = self.p, self.hist
  local padded = NF.pad(h:unsqueeze(-2), {0, p}, self.mode):squeeze(-2)
  return padded:narrow(-1, h:size(-1) + 1, p)
end

local function cat(a, b)
  if a == nil then return b end
  if b == nil then return a end
  return torch.cat({a, b}, -1)
end

local function zeros_like_end(x, n)
  local shape = x:size()
  shape[#shape] = n
  return torch.zeros(shape, {dtype = x.dtype, device = x.device})
end

-- keep_hist(x): remember the last p + 1 samples of the (zero-padded)
-- signal, which the end padding reflects
function Stream:_keep_hist(x)
  local keep = self.p + 1
  local h = cat(self.hist, x)
  if h:size(-1) > keep then h = h:narrow(-1, h:size(-1) - keep + 1, keep):contiguous() end
  self.hist = h
end

-- start(): puts the start padding (pad zeros, then center padding of the
-- zero-padded signal) before the buffer once it holds enough samples
function Stream:_start()
  local front = self.buf
  if self.pad > 0 then front = cat(zeros_like_end(front, self.pad), front) end
  local need = (self.center and self.mode == "reflect") and self.p + 1 or 1
  if front:size(-1) < need then return end
  if self.center and self.p > 0 then front = cat(self:_left(front), front) end
  self.buf, self.started = front, true
end

-- push(chunk): the chunk into the buffer (and the history)
function Stream:_push(chunk)
  if self.hist == nil and self.pad > 0 then self:_keep_hist(zeros_like_end(chunk, self.pad)) end
  self:_keep_hist(chunk)
  self.buf = cat(self.buf, chunk)
  if not self.started then self:_start() end
end

-- take() -> the samples of the complete frames in the buffer (nil if none);
-- the buffer keeps what the next frames start with
function Stream:_take()
  local b = self.buf
  if not self.started or b:size(-1) < self.n_fft then return nil end
  local k = (b:size(-1) - self.n_fft) // self.hop + 1
  local used = (k - 1) * self.hop + self.n_fft
  local rest = b:size(-1) - k * self.hop
  self.buf = rest > 0 and b:narrow(-1, k * self.hop + 1, rest):contiguous() or b:narrow(-1, 1, 0)
  return b:narrow(-1, 1, used)
end

-- process(chunk [..., time]) -> samples to frame, or nil
function Stream:process(chunk)
  if not torch.is_tensor(chunk) or chunk:dim() < 1 then
    error(("%s: expected a chunk [..., time], got %s"):format(self.fname, type(chunk)), 3)
  end
  local lead = chunk:size()
  lead[#lead] = nil
  local key = table.concat(lead, "x")
  if self.lead and self.lead ~= key then
    error(("%s: the chunk's leading shape %s differs from the stream's %s; call reset() to start a new signal")
      :format(self.fname, key == "" and "()" or key, self.lead == "" and "()" or self.lead), 3)
  end
  self.lead = key
  if chunk:size(-1) == 0 then return nil end
  self:_push(chunk)
  return self:_take()
end

-- flush() -> the samples of the last frames (end padding added), or nil;
-- the stream is reset
function Stream:flush()
  if self.buf == nil then self:reset(); return nil end
  if self.pad > 0 then
    local z = zeros_like_end(self.buf, self.pad)
    self.buf = cat(self.buf, z)
    self:_keep_hist(z)
  end
  if not self.started then
    local n = self.buf:size(-1)
    self.buf = self.pad > 0 and self.buf:narrow(-1, 1, n - self.pad) or self.buf
    self:_start()
    if not self.started then
      self:reset()
      error(("%s: reflect padding of %d needs a signal longer than that, got %d samples"):format(self.fname,
        self.p, n), 3)
    end
    if self.pad > 0 then self.buf = cat(self.buf, zeros_like_end(self.buf, self.pad)) end
  end
  if self.center and self.p > 0 then self.buf = cat(self.buf, self:_right()) end
  local out = self:_take()
  self:reset()
  return out
end

return Stream
