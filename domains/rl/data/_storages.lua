-- torch.rl.data._storages -- where replay buffers keep their entries:
-- ListStorage (any Lua values, a list) and LazyTensorStorage (tensors or
-- TensorDicts in preallocated [max_size, ...] tensors on CPU or CUDA,
-- allocated on the first write from that batch's shapes). Rows are 1-based.
-- Storages neither choose positions (writers) nor draw them (samplers).
local torch = require "torch"
local TensorDict = require("torch.rl.tensordict").TensorDict
local U = require "torch.rl.data._util"

local S = {}

local function check_max_size(fname, n)
  if math.type(n) ~= "integer" or n < 1 then
    error(("%s: max_size must be a positive integer, got %s"):format(fname, tostring(n)), 3)
  end
  return n
end

---------------------------------------------------------------------------
-- ListStorage(max_size=1000): entries are any Lua values

local ListStorage = U.class("ListStorage")
S.ListStorage = ListStorage

function ListStorage:__init(max_size)
  if type(max_size) == "table" then max_size = U.opts("ListStorage", max_size, "max_size").max_size end
  self.max_size = check_max_size("ListStorage", max_size or 1000)
  self._items = {}
  self._len = 0
end

function ListStorage:len() return self._len end
function ListStorage:__repr() return ("ListStorage(max_size=%d, len=%d)"):format(self.max_size, self._len) end

-- set(index, data): index a number (one entry: data) or an int64 tensor of
-- rows (data a list, a tensor or a TensorDict with as many rows)
function ListStorage:set(index, data)
  if math.type(index) == "integer" then
    self._items[index] = data
    return
  end
  local n = index:numel()
  local ix = index:totable()
  for i = 1, n do
    self._items[ix[i]] = data[i] -- a list's entry, a tensor's or TensorDict's row
  end
end

-- get(index) -> a list of the entries at the int64 tensor index
function ListStorage:get(index)
  local out, ix = {}, index:totable()
  for i = 1, #ix do out[i] = self._items[ix[i]] end
  return out
end

function ListStorage:_empty()
  self._items, self._len = {}, 0
end

function ListStorage:state_dict() return {items = self._items, len = self._len} end
function ListStorage:load_state_dict(sd)
  self._items, self._len = sd.items or {}, sd.len or 0
end

---------------------------------------------------------------------------
-- LazyTensorStorage(max_size[, {device=}])

local LazyTensorStorage = U.class("LazyTensorStorage")
S.LazyTensorStorage = LazyTensorStorage

function LazyTensorStorage:__init(max_size, opts)
  if type(max_size) == "table" then opts, max_size = max_size, max_size.max_size end
  local o = U.opts("LazyTensorStorage", opts, "max_size device")
  self.max_size = check_max_size("LazyTensorStorage", max_size)
  self.device = o.device and tostring(o.device) or "cpu"
  self._data = nil
  self._len = 0
end

function LazyTensorStorage:len() return self._len end
function LazyTensorStorage:__repr()
  return ("LazyTensorStorage(max_size=%d, len=%d, device=%s)"):format(self.max_size, self._len, self.device)
end

-- The [max_size, row...] zeros for rows shaped like x (one row if single).
local function alloc_like(x, n, single, dev)
  local s = {n}
  for i = single and 1 or 2, x:dim() do s[#s + 1] = x:size(i) end
  return torch.zeros(s, {dtype = x.dtype, device = dev})
end

local function alloc(self, data, single)
  local n, dev = self.max_size, self.device
  if torch.is_tensor(data) then
    self._data = alloc_like(data, n, single, dev)
  elseif U.is_td(data) then
    local bs = {n}
    for i = single and 1 or 2, #data.batch_size do bs[#bs + 1] = data.batch_size[i] end
    local function build(td)
      local src = {}
      for _, k in ipairs(td:keys()) do
        local v = td:get(k)
        src[k] = U.is_td(v) and build(v) or alloc_like(v, n, single, dev)
      end
      return src
    end
    self._data = TensorDict(build(data), bs, {device = dev})
  else
    error(("LazyTensorStorage: can store tensors or TensorDicts, got a %s"):format(type(data)), 4)
  end
end

-- set(index, data): index a number (data one entry) or an int64 tensor of
-- rows (data a tensor or TensorDict with as many rows)
function LazyTensorStorage:set(index, data)
  local single = math.type(index) == "integer"
  if not self._data then alloc(self, data, single) end
  local d = self._data
  if torch.is_tensor(d) then
    if not torch.is_tensor(data) then
      error(("LazyTensorStorage: this storage holds tensors, got a %s"):format(U.is_td(data) and "TensorDict" or type(data)), 3)
    end
    if single then d[index] = data else d:index_copy_(1, index:to(d.device), data:to(d.device)) end
  else
    if not U.is_td(data) then error(("LazyTensorStorage: this storage holds TensorDicts, got a %s"):format(type(data)), 3) end
    if single then d:set_at(index, data) else d:set_at(index:to(self.device), data) end
  end
end

-- get(index) -> the rows at the int64 tensor index (a tensor or TensorDict)
function LazyTensorStorage:get(index)
  local d = self._data
  if not d then error("LazyTensorStorage: the storage is empty", 3) end
  if self.device ~= "cpu" then index = index:to(self.device) end
  if torch.is_tensor(d) then return d:index_select(1, index) end
  return d:index(index)
end

-- The stored rows 1..len (views): what SliceSampler reads.
function LazyTensorStorage:_content()
  local d = self._data
  if not d or self._len == 0 then error("LazyTensorStorage: the storage is empty", 3) end
  if torch.is_tensor(d) then return d:narrow(1, 1, self._len) end
  return d:index({1, self._len})
end

function LazyTensorStorage:_empty()
  self._len = 0
end

function LazyTensorStorage:state_dict() return {data = self._data or false, len = self._len} end
function LazyTensorStorage:load_state_dict(sd)
  self._data = sd.data or nil
  if self._data and self.device ~= "cpu" then self._data = self._data:to(self.device) end
  self._len = sd.len or 0
end

function ListStorage:_content()
  error("ListStorage: SliceSampler needs a LazyTensorStorage of TensorDicts", 3)
end

return S
