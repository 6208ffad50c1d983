-- torch.rl.data._samplers -- which stored entries a replay buffer returns:
-- RandomSampler, SamplerWithoutReplacement, PrioritizedSampler (sum and min
-- segment trees in C, l_segment_tree.c; TorchRL's priorities and importance
-- weights) and SliceSampler (contiguous slices of trajectories). A sampler
-- returns 1-based int64 positions and an info table; it never reads rows
-- except SliceSampler's trajectory markers.
local torch = require "torch"
local ST = require "torch.rl.data._segment_tree"
local U = require "torch.rl.data._util"

local S = {}
local fmt = string.format
local f64 = torch.float64

local function check_batch(fname, n)
  if math.type(n) ~= "integer" or n < 1 then
    error(fmt("%s: batch_size must be a positive integer, got %s", fname, tostring(n)), 4)
  end
end

local function check_nonempty(fname, len)
  if len == 0 then error(fmt("%s: the buffer is empty; add or extend it before sampling", fname), 4) end
end

-- The no-op hooks every sampler has.
local function base(name)
  local C = U.class(name)
  function C:add(_) end
  function C:extend(_) end
  function C:_empty() end
  function C:state_dict() return {} end
  function C:load_state_dict(_) end
  return C
end

---------------------------------------------------------------------------
-- RandomSampler(): uniform, with replacement

local RandomSampler = base("RandomSampler")
S.RandomSampler = RandomSampler
function RandomSampler:__init() end
function RandomSampler:sample(storage, batch_size)
  check_batch("RandomSampler", batch_size)
  local len = storage:len()
  check_nonempty("RandomSampler", len)
  return torch.randint(1, len + 1, {batch_size}), {}
end

---------------------------------------------------------------------------
-- SamplerWithoutReplacement([{drop_last=false, shuffle=true}]): every entry
-- once per epoch; ran_out is true after the epoch's last batch.

local SWR = base("SamplerWithoutReplacement")
S.SamplerWithoutReplacement = SWR

function SWR:__init(opts)
  local o = U.opts("SamplerWithoutReplacement", opts, "drop_last shuffle", {drop_last = false, shuffle = true})
  self.drop_last, self.shuffle = o.drop_last, o.shuffle
  self.ran_out = false
  self._perm, self._pos, self._n = nil, 1, 0
end

function SWR:sample(storage, batch_size)
  local fname = "SamplerWithoutReplacement"
  check_batch(fname, batch_size)
  local len = storage:len()
  check_nonempty(fname, len)
  if batch_size > len then
    error(fmt("%s: batch_size %d is larger than the %d entries in the buffer (sampling without replacement)",
      fname, batch_size, len), 3)
  end
  local left = self._n - self._pos + 1
  if not self._perm or self._n ~= len or left <= 0 or (self.drop_last and left < batch_size) then
    self._perm = self.shuffle and torch.randperm(len) or torch.arange(1, len + 1)
    self._pos, self._n = 1, len
    left = len
  end
  local take = math.min(batch_size, left)
  local index = self._perm:narrow(1, self._pos, take)
  self._pos = self._pos + take
  left = self._n - self._pos + 1
  self.ran_out = left <= 0 or (self.drop_last and left < batch_size)
  return index, {}
end

function SWR:_empty() self._perm, self._pos, self._n, self.ran_out = nil, 1, 0, false end
function SWR:state_dict() return {perm = self._perm or false, pos = self._pos, n = self._n} end
function SWR:load_state_dict(sd)
  self._perm, self._pos, self._n = sd.perm or nil, sd.pos or 1, sd.n or 0
end

---------------------------------------------------------------------------
-- PrioritizedSampler(max_capacity, alpha, beta[, eps=1e-8]): entry i is
-- drawn with probability p_i / sum(p), p_i = (priority_i + eps)^alpha;
-- new entries get (max priority so far + eps)^alpha (max priority starts
-- at 1); importance weights w_i = (p_i / min(p))^(-beta) (Schaul et al.,
-- 2016, normalized by the largest weight, as TorchRL computes them).

local PS = base("PrioritizedSampler")
S.PrioritizedSampler = PS

function PS:__init(max_capacity, alpha, beta, eps)
  local fname = "PrioritizedSampler"
  if type(max_capacity) == "table" then
    local o = U.opts(fname, max_capacity, "max_capacity alpha beta eps")
    max_capacity, alpha, beta, eps = o.max_capacity, o.alpha, o.beta, o.eps
  end
  if math.type(max_capacity) ~= "integer" or max_capacity < 1 then
    error(fmt("%s: max_capacity must be a positive integer, got %s", fname, tostring(max_capacity)), 3)
  end
  if type(alpha) ~= "number" or alpha < 0 then error(fmt("%s: alpha must be a number >= 0, got %s", fname, tostring(alpha)), 3) end
  if type(beta) ~= "number" or beta < 0 then error(fmt("%s: beta must be a number >= 0, got %s", fname, tostring(beta)), 3) end
  eps = eps or 1e-8
  if type(eps) ~= "number" or eps < 0 then error(fmt("%s: eps must be a number >= 0, got %s", fname, tostring(eps)), 3) end
  self.max_capacity, self.alpha, self.beta, self.eps = max_capacity, alpha, beta, eps
  self._sum = ST.new(max_capacity, false)
  self._min = ST.new(max_capacity, true)
  self._max_priority = 1.0
end

function PS:__repr()
  return fmt("PrioritizedSampler(max_capacity=%d, alpha=%g, beta=%g, eps=%g)", self.max_capacity, self.alpha,
    self.beta, self.eps)
end

function PS:default_priority() return (self._max_priority + self.eps) ^ self.alpha end

local function mark(self, index)
  if torch.is_tensor(index) then
    if index:numel() == 0 then return end
  else
    index = torch.tensor({index})
  end
  local p = torch.tensor({self:default_priority()}, {dtype = f64})
  self._sum:update(index, p)
  self._min:update(index, p)
end
function PS:add(index) mark(self, index) end
function PS:extend(index) mark(self, index) end

function PS:sample(storage, batch_size)
  local fname = "PrioritizedSampler"
  check_batch(fname, batch_size)
  local len = storage:len()
  check_nonempty(fname, len)
  local p_sum, p_min = self._sum:query(1, len), self._min:query(1, len)
  if not (p_sum > 0) or not (p_min > 0) then
    error(fmt("%s: the priorities of the %d stored entries sum to %g (min %g); they must be positive", fname, len,
      p_sum, p_min), 3)
  end
  local index = self._sum:scan_lower_bound(torch.rand(batch_size, {dtype = f64}), p_sum, len)
  return index, {_weight = self._sum:weights(index, p_min, self.beta)}
end

-- update_priority(index, priority): index a number, table or int64 tensor
-- of 1-based positions; priority a number or as many values. NaN or
-- negative priorities are errors.
function PS:update_priority(index, priority)
  local fname = "PrioritizedSampler.update_priority"
  index = U.index_tensor(fname, index)
  if type(priority) == "number" then
    priority = torch.tensor({priority}, {dtype = f64})
  elseif type(priority) == "table" and not torch.is_tensor(priority) then
    priority = torch.tensor(priority, {dtype = f64})
  elseif torch.is_tensor(priority) then
    priority = priority:detach():to(f64):cpu():contiguous():view(-1)
  else
    error(fmt("%s: priority must be a number or a tensor, got a %s", fname, type(priority)), 3)
  end
  local n, np = index:numel(), priority:numel()
  if np ~= n and np ~= 1 then
    error(fmt("%s: %d indices but %d priorities (expected as many, or one)", fname, n, np), 3)
  end
  if n == 0 then return end
  local lo, hi = index:min():item(), index:max():item()
  if lo < 1 or hi > self.max_capacity then
    error(fmt("%s: index %d is out of range 1..%d", fname, lo < 1 and lo or hi, self.max_capacity), 3)
  end
  local bad = priority:isnan():logical_or(priority:lt(0))
  if bad:any():item() then
    local k = bad:nonzero()[1][1]:item()
    local v = priority[k]:item()
    error(fmt("%s: priority %s at position %d; priorities must be non-negative numbers", fname,
      v ~= v and "nan" or tostring(v), k), 3)
  end
  if priority:isinf():any():item() then error(fmt("%s: priorities must be finite, got inf", fname), 3) end
  self._max_priority = math.max(self._max_priority, priority:max():item())
  local p = (priority + self.eps):pow(self.alpha)
  self._sum:update(index, p)
  self._min:update(index, p)
end

function PS:_empty()
  self._sum = ST.new(self.max_capacity, false)
  self._min = ST.new(self.max_capacity, true)
  self._max_priority = 1.0
end

function PS:state_dict()
  return {sum = self._sum:values(), min = self._min:values(), max_priority = self._max_priority}
end

function PS:load_state_dict(sd)
  self._sum:set_values(sd.sum:to(f64):contiguous())
  self._min:set_values(sd.min:to(f64):contiguous())
  self._max_priority = sd.max_priority or 1.0
end

---------------------------------------------------------------------------
-- SliceSampler({num_slices= | slice_len=, end_key={"next","done"},
-- traj_key=, strict_length=true}): batch_size / num_slices consecutive
-- steps from each of num_slices trajectories drawn uniformly (with
-- replacement) among those long enough. Trajectories are runs of equal
-- traj_key values, or end where end_key is true (and at the last entry).

local SS = base("SliceSampler")
S.SliceSampler = SS

function SS:__init(opts)
  local fname = "SliceSampler"
  local o = U.opts(fname, opts, "num_slices slice_len end_key traj_key strict_length", {strict_length = true})
  if (o.num_slices == nil) == (o.slice_len == nil) then
    error(fname .. ": give exactly one of num_slices and slice_len", 3)
  end
  for _, k in ipairs({"num_slices", "slice_len"}) do
    if o[k] ~= nil and (math.type(o[k]) ~= "integer" or o[k] < 1) then
      error(fmt("%s: %s must be a positive integer, got %s", fname, k, tostring(o[k])), 3)
    end
  end
  self.num_slices, self.slice_len, self.strict_length = o.num_slices, o.slice_len, o.strict_length
  self.traj_key = o.traj_key
  self.end_key = o.end_key or (o.traj_key == nil and {"next", "done"} or nil)
end

-- starts, lengths (int64 tensors) of the trajectories among rows 1..len
local function trajectories(self, data, len, last)
  local fname = "SliceSampler"
  local key = self.traj_key or self.end_key
  local v = data:get(key)
  if v == nil then
    error(fmt("%s: the stored TensorDicts have no key '%s'", fname, type(key) == "table" and table.concat(key, ".") or key), 4)
  end
  v = v:reshape({len, -1}):select(2, 1)
  local ends
  if self.traj_key then
    ends = v:narrow(1, 1, len - 1):ne(v:narrow(1, 2, len - 1)):nonzero():view(-1)
  else
    ends = v:bool():nonzero():view(-1)
    if ends:numel() > 0 and ends[-1]:item() == len then ends = ends:narrow(1, 1, ends:numel() - 1) end
  end
  -- a full buffer is a ring: the newest entry (before the writer's cursor)
  -- and the oldest one after it belong to different times
  if last and last < len then ends = torch.cat({ends, torch.tensor({last})}):unique() end
  ends = torch.cat({ends, torch.tensor({len})})
  local starts = torch.cat({torch.tensor({1}), ends:narrow(1, 1, ends:numel() - 1) + 1})
  return starts, ends - starts + 1
end

function SS:sample(storage, batch_size)
  local fname = "SliceSampler"
  check_batch(fname, batch_size)
  local len = storage:len()
  check_nonempty(fname, len)
  local ns, sl = self.num_slices, self.slice_len
  local div = ns or sl
  if batch_size % div ~= 0 then
    error(fmt("%s: batch_size %d is not a multiple of %s %d", fname, batch_size, ns and "num_slices" or "slice_len", div), 3)
  end
  if ns then sl = batch_size // ns else ns = batch_size // sl end
  local content = storage:_content()
  local starts, lens = trajectories(self, content, len, storage._len == storage.max_size and storage._last or nil)
  local ok = self.strict_length and lens:ge(sl):nonzero():view(-1) or torch.arange(1, lens:numel() + 1)
  if ok:numel() == 0 then
    error(fmt("%s: no stored trajectory has %d steps (the longest has %d); lower slice_len or pass strict_length=false",
      fname, sl, lens:max():item()), 3)
  end
  local pick = ok:index_select(1, torch.randint(1, ok:numel() + 1, {ns}))
  local s, l = starts:index_select(1, pick), lens:index_select(1, pick)
  local take = l:clamp(1, sl)
  local off = (torch.rand(ns, {dtype = f64}) * (l - take + 1):double()):floor():long()
  local first = s + off
  if self.strict_length then
    return (first:unsqueeze(2) + torch.arange(0, sl):unsqueeze(1)):view(-1), {}
  end
  local parts, ft, tt = {}, first:totable(), take:totable()
  for i = 1, ns do parts[i] = torch.arange(ft[i], ft[i] + tt[i]) end
  return torch.cat(parts), {}
end

function SS:__repr()
  return fmt("SliceSampler(num_slices=%s, slice_len=%s, strict_length=%s)", tostring(self.num_slices),
    tostring(self.slice_len), tostring(self.strict_length))
end

return S
