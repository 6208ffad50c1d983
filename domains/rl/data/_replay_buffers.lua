-- torch.rl.data._replay_buffers -- ReplayBuffer and its TensorDict and
-- prioritized forms (TorchRL's names and defaults): a storage, a writer
-- and a sampler put together; add/extend write, sample reads. Positions
-- are 1-based. The parts do the work (_storages, _writers, _samplers).
local torch = require "torch"
local TensorDict = require("torch.rl.tensordict").TensorDict
local U = require "torch.rl.data._util"
local St = require "torch.rl.data._storages"
local W = require "torch.rl.data._writers"
local Sa = require "torch.rl.data._samplers"

local R = {}
local fmt = string.format

-- Entries of a ListStorage gathered into one batch: tensors and
-- TensorDicts stacked, anything else left as the list.
local function default_collate(items)
  local first = items[1]
  if torch.is_tensor(first) then return torch.stack(items, 1) end
  if U.is_td(first) then return TensorDict.stack(items, 1) end
  return items
end

local ReplayBuffer = U.class("ReplayBuffer")
R.ReplayBuffer = ReplayBuffer

local RB_OPTS = "storage sampler writer batch_size collate_fn transform"

-- ReplayBuffer([{storage=ListStorage(1000), sampler=RandomSampler(),
-- writer=RoundRobinWriter(), batch_size=, collate_fn=, transform=}])
function ReplayBuffer:__init(opts, extra_names, fname)
  fname = fname or "ReplayBuffer"
  local o = U.opts(fname, opts, RB_OPTS .. (extra_names or ""))
  self._name = fname
  self._storage = o.storage or St.ListStorage(1000)
  self._sampler = o.sampler or Sa.RandomSampler()
  self._writer = o.writer or W.RoundRobinWriter()
  self._writer:register_storage(self._storage)
  if o.batch_size ~= nil and (math.type(o.batch_size) ~= "integer" or o.batch_size < 1) then
    error(fmt("%s: batch_size must be a positive integer, got %s", fname, tostring(o.batch_size)), 3)
  end
  self._batch_size = o.batch_size
  self._collate_fn = o.collate_fn
  self._transform = o.transform
  return o
end

function ReplayBuffer:len() return self._storage:len() end
ReplayBuffer.__len = ReplayBuffer.len
function ReplayBuffer:__repr()
  return fmt("%s(\n    storage=%s,\n    sampler=%s,\n    writer=%s,\n    batch_size=%s)", self._name,
    tostring(self._storage), tostring(self._sampler), tostring(self._writer), tostring(self._batch_size))
end

-- add(data) -> the position written (a number)
function ReplayBuffer:add(data)
  local i = self._writer:add(data)
  self._sampler:add(i)
  return i
end

-- extend(data) -> int64 tensor of the positions written, one per row
function ReplayBuffer:extend(data)
  local index = self._writer:extend(data)
  self._sampler:extend(index)
  return index
end

-- The rows at index, collated (ListStorage) or as stored.
function ReplayBuffer:_get(index)
  local data = self._storage:get(index)
  if getmetatable(self._storage) == St.ListStorage then data = (self._collate_fn or default_collate)(data)
  elseif self._collate_fn then data = self._collate_fn(data) end
  return data
end

-- sample([batch_size][, {return_info=false}]) -> data[, info]: info holds
-- index (the 1-based positions) and the sampler's extras (_weight).
function ReplayBuffer:sample(batch_size, opts)
  if type(batch_size) == "table" then opts, batch_size = batch_size, batch_size.batch_size end
  local o = U.opts(self._name .. ".sample", opts, "batch_size return_info")
  batch_size = batch_size or self._batch_size
  if batch_size == nil then
    error(fmt("%s.sample: no batch_size: pass one, or give batch_size= to the buffer", self._name), 2)
  end
  if self._storage:len() == 0 then
    error(fmt("%s.sample: the buffer is empty; add or extend it before sampling", self._name), 2)
  end
  local index, info = self._sampler:sample(self._storage, batch_size)
  local data = self:_get(index)
  if self._transform then data = self._transform(data) end
  info.index = index
  data = self:_post_sample(data, info)
  if o.return_info then return data, info end
  return data
end

function ReplayBuffer:_post_sample(data, _) return data end

-- update_priority(index, priority): for prioritized samplers only
function ReplayBuffer:update_priority(index, priority)
  if not self._sampler.update_priority then
    error(fmt("%s.update_priority: the sampler %s has no priorities", self._name, getmetatable(self._sampler).__name), 2)
  end
  self._sampler:update_priority(index, priority)
end

-- empty(): forget every entry (the storage's memory stays allocated)
function ReplayBuffer:empty()
  self._storage:_empty()
  self._writer:_empty()
  self._sampler:_empty()
end

function ReplayBuffer:state_dict()
  return {storage = self._storage:state_dict(), writer = self._writer:state_dict(),
          sampler = self._sampler:state_dict()}
end

function ReplayBuffer:load_state_dict(sd)
  self._storage:load_state_dict(sd.storage or {})
  self._writer:load_state_dict(sd.writer or {})
  self._sampler:load_state_dict(sd.sampler or {})
end

-- dumps(path) / loads(path): the state dict through torch.save / torch.load
function ReplayBuffer:dumps(path) torch.save(self:state_dict(), path) end
function ReplayBuffer:loads(path) self:load_state_dict(torch.load(path)) end
ReplayBuffer.save, ReplayBuffer.load = ReplayBuffer.dumps, ReplayBuffer.loads

---------------------------------------------------------------------------
-- TensorDictReplayBuffer([{..., priority_key="td_error"}]): TensorDicts in,
-- TensorDicts out, the positions under "index" (and "_weight" when
-- prioritized)

local TDRB = U.class("TensorDictReplayBuffer", ReplayBuffer)
R.TensorDictReplayBuffer = TDRB

function TDRB:__init(opts, extra, fname)
  local o = ReplayBuffer.__init(self, opts, " priority_key" .. (extra or ""), fname or "TensorDictReplayBuffer")
  self.priority_key = o.priority_key or "td_error"
  return o
end

local function check_td(self, fname, data)
  if not U.is_td(data) then
    error(fmt("%s.%s: expected a TensorDict, got a %s", self._name, fname, torch.is_tensor(data) and "tensor" or type(data)), 3)
  end
end

function TDRB:add(data)
  check_td(self, "add", data)
  local i = ReplayBuffer.add(self, data)
  local p = self._sampler.update_priority and data:get(self.priority_key)
  if p ~= nil then self._sampler:update_priority(i, p) end
  return i
end

function TDRB:extend(data)
  check_td(self, "extend", data)
  local index = ReplayBuffer.extend(self, data)
  local p = self._sampler.update_priority and data:get(self.priority_key)
  if p ~= nil and index:numel() > 0 then
    if p:numel() > index:numel() then p = p:reshape({-1}):narrow(1, p:numel() - index:numel() + 1, index:numel()) end
    self._sampler:update_priority(index, p)
  end
  return index
end

function TDRB:_post_sample(data, info)
  data:set("index", info.index:to(data.device or "cpu"))
  for k, v in pairs(info) do
    if k ~= "index" and torch.is_tensor(v) then data:set(k, v) end
  end
  return data
end

-- update_tensordict_priority(td): priorities td[priority_key] at td.index
function TDRB:update_tensordict_priority(data)
  check_td(self, "update_tensordict_priority", data)
  local index, p = data:get("index"), data:get(self.priority_key)
  if index == nil or p == nil then
    error(fmt("%s.update_tensordict_priority: the TensorDict needs the keys 'index' and '%s'", self._name,
      self.priority_key), 2)
  end
  if p:dim() > 1 then p = p:reshape({p:size(1), -1}):amax(2) end
  self:update_priority(index, p)
end

---------------------------------------------------------------------------
-- PrioritizedReplayBuffer({alpha=, beta=, eps=1e-8, storage=, ...}) and
-- TensorDictPrioritizedReplayBuffer: a PrioritizedSampler over the
-- storage's max_size

local function prioritized(self, base, opts, fname)
  opts = opts or {}
  local o = U.opts(fname, opts, RB_OPTS .. " alpha beta eps priority_key")
  if o.alpha == nil or o.beta == nil then error(fname .. ": alpha and beta are required", 4) end
  local rest = {}
  for k, v in pairs(o) do if k ~= "alpha" and k ~= "beta" and k ~= "eps" then rest[k] = v end end
  rest.storage = rest.storage or St.ListStorage(1000)
  rest.sampler = Sa.PrioritizedSampler(rest.storage.max_size, o.alpha, o.beta, o.eps)
  if base == ReplayBuffer then rest.priority_key = nil end
  base.__init(self, rest, " priority_key", fname)
end

local PRB = U.class("PrioritizedReplayBuffer", ReplayBuffer)
R.PrioritizedReplayBuffer = PRB
function PRB:__init(opts) prioritized(self, ReplayBuffer, opts, "PrioritizedReplayBuffer") end

local TDPRB = U.class("TensorDictPrioritizedReplayBuffer", TDRB)
R.TensorDictPrioritizedReplayBuffer = TDPRB
function TDPRB:__init(opts) prioritized(self, TDRB, opts, "TensorDictPrioritizedReplayBuffer") end

return R
