-- torch.audio._stream_buffer -- one StreamReader output stream's buffer
-- of decoded frames, as torchaudio 0.13's: frames kept as chunks of
-- frames_per_chunk (the last one filling up), popped a chunk at a time;
-- over buffer_chunk_size chunks, the oldest chunks are dropped (only when
-- asked: push's trim). It reads nothing itself (_stream_reader.lua does).
local torch = require "torch"

local Buffer = {}
Buffer.__index = Buffer

-- new(n, chunks): n frames a chunk (false: a pop takes every frame
-- buffered), at most `chunks` chunks (false: no limit). The chunks are
-- q[head..tail], oldest first.
function Buffer.new(n, chunks)
  local self = setmetatable({n = n, max = n and chunks and n * chunks or false}, Buffer)
  self:clear()
  return self
end

function Buffer:clear()
  self.q, self.head, self.tail, self.frames = {}, 1, 0, 0
end

local function append(self, x)
  self.tail = self.tail + 1
  self.q[self.tail] = x
end

local function drop_oldest(self)
  local x = self.q[self.head]
  self.q[self.head], self.head = nil, self.head + 1
  self.frames = self.frames - x.shape[1]
  if self.head > self.tail then self:clear() end
  return x
end

-- push(x [frames, channels], trim): appends x, topping up the last chunk
-- first; with trim, drops the oldest whole chunks while more than max
-- frames are held (with a warning, once per buffer)
function Buffer:push(x, trim)
  local len = x.shape[1]
  if len == 0 then return end
  if not self.n then
    append(self, x)
    self.frames = self.frames + len
    return
  end
  local pos, q = 1, self.q
  local last = self.tail >= self.head and q[self.tail]
  if last and last.shape[1] < self.n then
    local take = math.min(self.n - last.shape[1], len)
    q[self.tail] = torch.cat({last, x:narrow(1, 1, take)}, 1)
    pos = pos + take
  end
  while pos <= len do
    local take = math.min(self.n, len - pos + 1)
    append(self, x:narrow(1, pos, take):contiguous())
    pos = pos + take
  end
  self.frames = self.frames + len
  if trim and self.max and self.frames > self.max then
    if not self.warned then
      warn("torch.audio.StreamReader: the buffered frames exceeded buffer_chunk_size chunks; the oldest "
        .. "chunks were dropped (pop chunks more often, or add the stream with a larger buffer_chunk_size)")
      self.warned = true
    end
    while self.frames > self.max do drop_oldest(self) end
  end
end

-- whether a chunk is ready: n frames held (every-frame buffers: any frame)
function Buffer:ready()
  if not self.n then return self.frames > 0 end
  return self.frames >= self.n
end

-- the oldest chunk (every frame for an every-frame buffer; the last chunk
-- may be short), or false when nothing is held
function Buffer:pop()
  if self.frames == 0 then return false end
  if self.n then return drop_oldest(self) end
  local x = self.q[self.head]
  if self.tail > self.head then x = torch.cat(table.move(self.q, self.head, self.tail, 1, {}), 1) end
  self:clear()
  return x
end

-- frames that fit before chunks are dropped (false: no limit)
function Buffer:room()
  return self.max and self.max - self.frames or false
end

return Buffer
