-- torch.rl.data._storages -- where replay buffers keep their entries:
-- ListStorage (any Lua values, a list), LazyTensorStorage (tensors or
-- TensorDicts in preallocated [max_size, ...] tensors on CPU or CUDA,
-- allocated on the first write from that batch's shapes) and LazyMemmapStorage
-- (the same over files mapped into memory). Rows are 1-based.
-- Storages neither choose positions (writers) nor draw them (samplers).
local torch = require "torch"
local TensorDict = require("torch.rl.tensordict").TensorDict
local U = require "torch.rl.data._util"
local Rows = require "torch.rl.data._rows"
local gather, scatter, gather_all = Rows.gather, Rows.scatter, Rows.gather_all

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

-- The [max_size, row...] shape for rows shaped like x (one row if single).
local function full_shape(x, n, single)
  local s = {n}
  for i = single and 1 or 2, x:dim() do s[#s + 1] = x:size(i) end
  return s
end

-- A zeroed tensor of shape and dtype for the leaf `name` (a dotted key path).
function LazyTensorStorage:_alloc_tensor(_, shape, dtype)
  local t = torch.empty(shape, {dtype = dtype, device = self.device})
  if self.device == "cpu" then Rows.hugepages(t) end -- before the first touch: random rows then miss the TLB less
  return t:zero_()
end

local function alloc(self, data, single)
  local n = self.max_size
  self._leaves = nil
  if torch.is_tensor(data) then
    self._data = self:_alloc_tensor("data", full_shape(data, n, single), data.dtype)
  elseif U.is_td(data) then
    local bs = {n}
    for i = single and 1 or 2, #data.batch_size do bs[#bs + 1] = data.batch_size[i] end
    local function build(td, prefix)
      local src = {}
      for _, k in ipairs(td:keys()) do
        local v = td:get(k)
        local name = prefix and prefix .. "." .. k or k
        src[k] = U.is_td(v) and build(v, name) or self:_alloc_tensor(name, full_shape(v, n, single), v.dtype)
      end
      return src
    end
    self._data = TensorDict(build(data, nil), bs, {device = self.device})
  else
    error(("%s: can store tensors or TensorDicts, got a %s"):format(getmetatable(self).__name, type(data)), 4)
  end
end

-- x's rows at the int64 tensor index from src's rows (in C for contiguous
-- CPU tensors of one dtype, else index_copy_)
local function write_rows(x, index, src)
  if src.dtype ~= x.dtype then src = src:to(x.dtype) end
  if scatter(x, index, src) then return end
  local n = index:numel()
  if src:dim() == 0 or src:size(1) ~= n then
    error(("LazyTensorStorage: %d positions to write but the data has shape %s"):format(n, tostring(src.shape)), 5)
  end
  x:index_copy_(1, index:to(x.device), src:to(x.device))
end

local function read_rows(x, index)
  return gather(x, index) or x:index_select(1, index:to(x.device))
end

-- set(index, data): index a number (data one entry) or an int64 tensor of
-- rows (data a tensor or TensorDict with as many rows)
function LazyTensorStorage:set(index, data)
  local single = math.type(index) == "integer"
  if not self._data then alloc(self, data, single) end
  if self.device ~= "cpu" and (torch.is_tensor(data) or U.is_td(data)) then data = data:to(self.device) end
  local d = self._data
  if torch.is_tensor(d) then
    if not torch.is_tensor(data) then
      error(("LazyTensorStorage: this storage holds tensors, got a %s"):format(U.is_td(data) and "TensorDict" or type(data)), 3)
    end
    if single then d[index] = data else write_rows(d, index, data) end
  else
    if not U.is_td(data) then error(("LazyTensorStorage: this storage holds TensorDicts, got a %s"):format(type(data)), 3) end
    if single then
      d:set_at(index, data)
    else
      TensorDict._zip_leaves(d, data, function(mine, v) write_rows(mine, index, v) end, "LazyTensorStorage")
    end
  end
end

-- get(index) -> the rows at the int64 tensor index (a tensor or TensorDict)
function LazyTensorStorage:get(index)
  local d = self._data
  if not d then error("LazyTensorStorage: the storage is empty", 3) end
  if torch.is_tensor(d) then return read_rows(d, index) end
  local nb = {index:numel()}
  for i = 2, #d.batch_size do nb[i] = d.batch_size[i] end
  local leaves = self._leaves
  if not leaves then -- the leaves in _index_with's order, listed once
    leaves = {}
    local function walk(td)
      for _, k in ipairs(td._k) do
        local v = td._d[k]
        if U.is_td(v) then walk(v) else leaves[#leaves + 1] = v end
      end
    end
    walk(d)
    self._leaves = leaves
  end
  local got, j = gather_all(leaves, index), 0
  return TensorDict._index_with(d, function(v)
    j = j + 1
    return got[j] or read_rows(v, index)
  end, setmetatable(nb, getmetatable(d.batch_size)))
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

function LazyTensorStorage:state_dict() return {data = self._data or false, len = self._len, last = self._last or 0} end
-- load_state_dict(sd): the saved rows copied into tensors of this storage's
-- own kind (its device; files for LazyMemmapStorage)
function LazyTensorStorage:load_state_dict(sd)
  local src = sd.data or nil
  self._leaves, self._len = nil, sd.len or 0
  self._last = (sd.last or 0) > 0 and sd.last or nil
  if not src then self._data = nil; return end
  local rows = torch.is_tensor(src) and src:size(1) or src.batch_size[1]
  if rows ~= self.max_size then
    error(("%s.load_state_dict: the saved storage holds %d rows, this one max_size %d"):format(
      getmetatable(self).__name, rows, self.max_size), 3)
  end
  if torch.is_tensor(src) then
    self._data = self:_alloc_tensor("data", src.shape, src.dtype):copy_(src)
    return
  end
  local function build(td, prefix)
    local out = {}
    for _, k in ipairs(td:keys()) do
      local v = td:get(k)
      local name = prefix and prefix .. "." .. k or k
      out[k] = U.is_td(v) and build(v, name) or self:_alloc_tensor(name, v.shape, v.dtype):copy_(v)
    end
    return out
  end
  self._data = TensorDict(build(src, nil), src.batch_size, {device = self.device})
end

---------------------------------------------------------------------------
-- LazyMemmapStorage(max_size[, {scratch_dir=}]): a LazyTensorStorage whose
-- tensors are files mapped into memory: <scratch_dir>/<key>.memmap, or
-- unnamed temporary files when no scratch_dir is given

local LazyMemmapStorage = U.class("LazyMemmapStorage", LazyTensorStorage)
S.LazyMemmapStorage = LazyMemmapStorage

function LazyMemmapStorage:__init(max_size, opts)
  if type(max_size) == "table" then opts, max_size = max_size, max_size.max_size end
  local o = U.opts("LazyMemmapStorage", opts, "max_size scratch_dir device")
  if o.device and tostring(o.device) ~= "cpu" then
    error(("LazyMemmapStorage: files are mapped into CPU memory; device %s is not supported"):format(tostring(o.device)), 3)
  end
  LazyTensorStorage.__init(self, max_size)
  self.scratch_dir = o.scratch_dir
end

function LazyMemmapStorage:_alloc_tensor(name, shape, dtype)
  local M = require "torch.rl.data._memmap"
  if self.scratch_dir then return M.open(self.scratch_dir .. "/" .. name .. ".memmap", shape, dtype) end
  local path = os.tmpname()
  return M.open(path, shape, dtype, true)
end

function LazyMemmapStorage:__repr()
  return ("LazyMemmapStorage(max_size=%d, len=%d, scratch_dir=%s)"):format(self.max_size, self._len,
    tostring(self.scratch_dir))
end

function ListStorage:_content()
  error("ListStorage: SliceSampler needs a LazyTensorStorage of TensorDicts", 3)
end

return S
