-- torch.utils.data -- Dataset, TensorDataset, Subset, random_split,
-- default_collate, get_worker_info and DataLoader (batching, shuffling with
-- torch's RNG, drop_last, collate_fn, and num_workers > 0: batches of
-- tensor-backed datasets are assembled by background threads, those of
-- any other dataset by worker processes (_processes.lua), while the loop
-- runs).
local torch = require "torch"
local U = require "torch.nn.util"
local data = {}

-- Class(...) is a public entry point (U.public): an error raised inside
-- the library names the class at the caller's line.
local function class_name(c) return rawget(c, "__name") or getmetatable(c).__name end
local construct = U.public(function(cls, ...)
  local o = setmetatable({}, cls)
  if o.__init then o:__init(...) end
  return o
end, class_name)

-- a class: a table whose instances get it as metatable; Class(...) makes one
local function class(name, parent)
  local c = {__name = name}
  c.__index = c
  setmetatable(c, {__index = parent, __call = construct})
  c.extend = function(self, sub) return class(sub, self) end
  return c
end

---------------------------------------------------------------- datasets

-- Dataset: subclasses define __len() and __getitem(i) (1-based); #ds and
-- ds:get(i) call them. A dataset may also define get_batch(indices) (an
-- int64 tensor) returning the collated batch at once, and tensors() (the
-- tensors behind it, indexed by their first dim) for loading in threads.
data.Dataset = class("Dataset")
local Dataset = data.Dataset
function Dataset:__len() error(self.__name .. ": __len is not defined", 2) end
function Dataset:__getitem() error(self.__name .. ": __getitem is not defined", 2) end
function Dataset:len() return self:__len() end
function Dataset:get(i) return self:__getitem(i) end

-- TensorDataset(t1, t2, ...): sample i is {t1[i], t2[i], ...}.
data.TensorDataset = Dataset:extend("TensorDataset")
local TensorDataset = data.TensorDataset
function TensorDataset:__init(...)
  self._t = {...}
  if #self._t == 0 then error("TensorDataset: needs at least one tensor", 2) end
  local n = #self._t[1]
  for k, t in ipairs(self._t) do
    if not torch.is_tensor(t) then error(("TensorDataset: argument %d is not a tensor"):format(k), 2) end
    if t:dim() == 0 or #t ~= n then
      error(("TensorDataset: tensor %d has %s samples, tensor 1 has %d"):format(k, t:dim() == 0 and "no" or #t, n), 2)
    end
  end
end
function TensorDataset:__len() return #self._t[1] end
function TensorDataset:__getitem(i)
  local s = {}
  for k, t in ipairs(self._t) do s[k] = t[i] end
  return s
end
function TensorDataset:get_batch(idx)
  local b = {}
  -- the sampler's indices are on the host; a dataset on a GPU gathers there
  for k, t in ipairs(self._t) do b[k] = t:index_select(1, idx:to(t.device)) end
  return b
end
function TensorDataset:tensors() return self._t end

-- Subset(dataset, indices): the samples of dataset at indices (a list or
-- an int64 tensor, 1-based).
data.Subset = Dataset:extend("Subset")
local Subset = data.Subset
function Subset:__init(ds, indices)
  self.dataset = ds
  self.indices = torch.is_tensor(indices) and indices:long():cpu()
    or torch.tensor(indices, {dtype = torch.int64, device = "cpu"})
end
function Subset:__len() return self.indices:numel() end
function Subset:__getitem(i) return self.dataset:get(self.indices[i]:item()) end
function Subset:get_batch(idx)
  if not self.dataset.get_batch then return nil end
  return self.dataset:get_batch(self.indices:index_select(1, idx))
end

-- random_split(dataset, lengths[, generator]) -> list of Subsets
function data.random_split(ds, lengths, gen)
  local n, total = #ds, 0
  for _, l in ipairs(lengths) do total = total + l end
  if total ~= n then error(("random_split: lengths sum to %d, the dataset has %d samples"):format(total, n), 2) end
  local perm = torch.randperm(n, {generator = gen, device = "cpu"}) -- indices live on the host
  local out, start = {}, 1
  for k, l in ipairs(lengths) do
    out[k] = Subset(ds, perm:narrow(1, start, l))
    start = start + l
  end
  return out
end

---------------------------------------------------------------- collation

-- default_collate(samples): tensors are stacked, numbers become a tensor
-- (int64 for integers, the default float otherwise), booleans a bool
-- tensor, strings stay a list, and tables are collated field by field.
function data.default_collate(samples)
  local first = samples[1]
  if torch.is_tensor(first) then return torch.stack(samples) end
  local ty = type(first)
  if ty == "number" then
    local all_int = true
    for _, v in ipairs(samples) do if math.type(v) ~= "integer" then all_int = false end end
    return torch.tensor(samples, all_int and {dtype = torch.int64} or nil)
  elseif ty == "boolean" then
    return torch.tensor(samples)
  elseif ty == "string" then
    return samples
  elseif ty == "table" then
    local out = {}
    for k in pairs(first) do
      local col = {}
      for i, s in ipairs(samples) do
        if s[k] == nil then error(("default_collate: sample %d has no field %s"):format(i, tostring(k)), 2) end
        col[i] = s[k]
      end
      out[k] = data.default_collate(col)
    end
    return out
  end
  error("default_collate: cannot collate values of type " .. ty, 2)
end

---------------------------------------------------------------- DataLoader

data.DataLoader = class("DataLoader")
local DataLoader = data.DataLoader

-- DataLoader{dataset, batch_size=1, shuffle=false, drop_last=false,
-- num_workers=0, collate_fn=, generator=, pin_memory=false,
-- worker_init_fn=, prefetch_factor=2, persistent_workers=false, timeout=0}
-- or DataLoader(dataset, opts). pin_memory: batches' CPU tensors come in
-- page-locked memory, so x:to('cuda', {non_blocking=true}) copies them
-- asynchronously (without a CUDA GPU it is ignored, with a note, as in
-- PyTorch). The worker options are PyTorch's (worker ids are 1-based).
local LOADER_OPTS = "dataset batch_size shuffle drop_last num_workers collate_fn generator pin_memory " ..
  "worker_init_fn prefetch_factor persistent_workers timeout"

function DataLoader:__init(a, b)
  if type(a) ~= "table" or (b ~= nil and type(b) ~= "table") then
    error(("DataLoader: expected DataLoader(dataset[, {batch_size=, ...}]) or DataLoader{dataset, batch_size=, ...}, "
           .. "got a %s%s"):format(type(a), b ~= nil and " and a " .. type(b) or ""), 2)
  end
  local o = b or a
  U.check("DataLoader", o, LOADER_OPTS)
  local ds = b and a or (a.dataset or a[1])
  if type(ds) ~= "table" then
    error("DataLoader: expected a dataset (a table with __len and __getitem, e.g. a TensorDataset), got "
          .. type(ds), 2)
  end
  if b == nil and #a > 1 then
    error("DataLoader: give the options by name after the dataset: DataLoader{dataset, batch_size=4}", 2)
  end
  self.dataset = ds
  self.batch_size = o.batch_size or 1
  self.shuffle = o.shuffle or false
  self.drop_last = o.drop_last or false
  self.num_workers = o.num_workers or 0
  self.collate_fn = o.collate_fn
  self.generator = o.generator
  self.pin_memory = o.pin_memory or false
  if type(self.pin_memory) ~= "boolean" then
    error("DataLoader: pin_memory must be true or false, got " .. tostring(self.pin_memory), 2)
  end
  if self.pin_memory and not torch.cuda.is_available() then
    io.stderr:write("note: DataLoader: pin_memory=true but no CUDA GPU is available; batches stay in pageable memory\n")
    self.pin_memory = false
  end
  if math.type(self.batch_size) ~= "integer" or self.batch_size < 1 then
    error("DataLoader: batch_size must be a positive integer, got " .. tostring(self.batch_size), 2)
  end
  if math.type(self.num_workers) ~= "integer" or self.num_workers < 0 then
    error("DataLoader: num_workers must be a non-negative integer, got " .. tostring(self.num_workers), 2)
  end
  self:_worker_options(o)
end

-- worker_init_fn, prefetch_factor, persistent_workers, timeout: PyTorch's
-- checks (the last three only mean something with num_workers > 0)
function DataLoader:_worker_options(o)
  local nw = self.num_workers
  local init = o.worker_init_fn
  if init ~= nil and type(init) ~= "function" and not (getmetatable(init) or {}).__call then
    error("DataLoader: worker_init_fn must be a function, got a " .. type(o.worker_init_fn), 3)
  end
  if o.prefetch_factor ~= nil and nw == 0 then
    error("DataLoader: prefetch_factor needs num_workers > 0 (it counts batches loaded ahead per worker)", 3)
  end
  if o.persistent_workers and nw == 0 then error("DataLoader: persistent_workers needs num_workers > 0", 3) end
  local pf, timeout = o.prefetch_factor or 2, o.timeout or 0
  if math.type(pf) ~= "integer" or pf < 1 then
    error("DataLoader: prefetch_factor must be a positive integer, got " .. tostring(pf), 3)
  end
  if type(timeout) ~= "number" or timeout < 0 then
    error("DataLoader: timeout must be a non-negative number of seconds, got " .. tostring(timeout), 3)
  end
  self.worker_init_fn, self.prefetch_factor, self.timeout = o.worker_init_fn, pf, timeout
  self.persistent_workers = o.persistent_workers or false
end

function DataLoader:__len()
  local n = #self.dataset
  if self.drop_last then return n // self.batch_size end
  return (n + self.batch_size - 1) // self.batch_size
end

-- the sample order of one epoch: an int64 tensor of 1-based indices
function DataLoader:_order()
  local n = #self.dataset
  -- indices live on the host, as PyTorch's samplers yield Python ints
  if self.shuffle then return torch.randperm(n, {generator = self.generator, device = "cpu"}) end
  return torch.arange(1, n + 1, {device = "cpu"})
end

local batch_indices = require("torch.utils.data._processes").batch_indices

function DataLoader:_fetch(idx)
  local ds = self.dataset
  if not self.collate_fn and ds.get_batch then
    local b = ds:get_batch(idx)
    if b then return b end
  end
  local samples = {}
  for j = 1, idx:numel() do samples[j] = ds:get(idx[j]:item()) end
  return (self.collate_fn or data.default_collate)(samples)
end

-- b with its CPU tensors (in tables too) in page-locked memory
local function pinned(b)
  if torch.is_tensor(b) then return (b.device.type == "cpu" and not b:is_pinned()) and b:pin_memory() or b end
  if type(b) ~= "table" then return b end
  local out = {}
  for k, v in pairs(b) do out[k] = pinned(v) end
  return out
end

-- iter() -> an iterator over this epoch's batches: for batch in loader:iter() do
-- (the iterator is a public entry point too: the loop's line is named)
function DataLoader:iter()
  local it = self:_iter_batches()
  if not self.pin_memory then return U.public(it, "DataLoader") end
  return U.public(function()
    local b = it()
    if b ~= nil then return pinned(b) end
  end, "DataLoader")
end

function DataLoader:_iter_batches()
  local order, k = self:_order(), 0
  local ds = self.dataset
  if self.num_workers > 0 and not self.collate_fn and ds.tensors then
    local pf = require("torch.utils.data._prefetch").prefetcher(ds:tensors(), self.num_workers)
    local post = ds.transform_batch
    return self:_iter_workers(order, pf, function(b) return post and post(ds, b) or b end)
  end
  -- any other dataset: worker processes make whole batches
  if self.num_workers > 0 then return require("torch.utils.data._processes").iter(self, order, #self) end
  return function()
    k = k + 1
    local idx = batch_indices(self, order, k)
    if idx then return self:_fetch(idx) end
  end
end

-- Background assembly by pf (put(ticket, indices), take(ticket), close()),
-- up to 2 * num_workers batches in flight; finish(taken) gives the batch.
function DataLoader:_iter_workers(order, pf, finish)
  local ahead, next_put, k = 2 * self.num_workers, 1, 0
  local function put_more()
    while next_put <= k + ahead do
      local idx = batch_indices(self, order, next_put)
      if not idx then break end
      pf:put(next_put, idx:contiguous())
      next_put = next_put + 1
    end
  end
  return function()
    k = k + 1
    put_more()
    if k >= next_put then
      pf:close()
      return nil
    end
    return finish(pf:take(k))
  end
end

-- for i, batch in ipairs(loader): index 1 starts a new epoch
function DataLoader:__index(k)
  if math.type(k) ~= "integer" then return DataLoader[k] end
  if k == 1 or not rawget(self, "_epoch") then rawset(self, "_epoch", self:iter()) end
  return rawget(self, "_epoch")()
end

-- get_worker_info() -> {id=, num_workers=, seed=, dataset=} inside a
-- DataLoader worker process (id 1..num_workers), nil elsewhere
function data.get_worker_info() return require("torch.utils.data._processes").info end

-- the functions and the methods users call are public entry points as well
data.random_split = U.public(data.random_split, "random_split")
data.default_collate = U.public(data.default_collate, "default_collate")
DataLoader.iter = U.public(DataLoader.iter, "DataLoader")

return data
