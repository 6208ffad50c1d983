-- torch.rl.data._writers -- RoundRobinWriter: where the next entries go
-- (positions 1..max_size in turn, the oldest overwritten first). It keeps
-- the cursor and the storage's length; it never reads data.
local torch = require "torch"
local U = require "torch.rl.data._util"

local W = {}

local RoundRobinWriter = U.class("RoundRobinWriter")
W.RoundRobinWriter = RoundRobinWriter

function RoundRobinWriter:__init()
  self._cursor = 1
end

function RoundRobinWriter:register_storage(storage) self._storage = storage end

-- add(data) -> the position written (a number)
function RoundRobinWriter:add(data)
  local st = self._storage
  local i = self._cursor
  st:set(i, data)
  st._last = i -- the newest entry (SliceSampler splits trajectories after it)
  self._cursor = i % st.max_size + 1
  if st._len < st.max_size then st._len = st._len + 1 end
  return i
end

-- extend(data) -> int64 tensor of the positions written, one per row of
-- data; with more rows than max_size only the last max_size are kept.
function RoundRobinWriter:extend(data)
  local st = self._storage
  local n = U.rows("RoundRobinWriter.extend", data)
  local max = st.max_size
  if n == 0 then return torch.zeros(0, {dtype = torch.int64}) end
  local skip = 0
  if n > max then
    skip = n - max
    if torch.is_tensor(data) then data = data:narrow(1, skip + 1, max)
    elseif U.is_td(data) then data = data:index({skip + 1, n})
    else data = table.move(data, skip + 1, n, 1, {}) end
  end
  local index = (torch.arange(0, n - skip) + (self._cursor - 1 + skip)) % max + 1
  st:set(index, data)
  self._cursor = (self._cursor - 1 + n) % max + 1
  st._last = (self._cursor - 2) % max + 1
  st._len = math.min(st._len + n, max)
  return index
end

function RoundRobinWriter:_empty() self._cursor = 1 end
function RoundRobinWriter:state_dict() return {cursor = self._cursor} end
function RoundRobinWriter:load_state_dict(sd) self._cursor = sd.cursor or 1 end
function RoundRobinWriter:__repr() return ("RoundRobinWriter(cursor=%d)"):format(self._cursor) end

return W
