-- torch.rl.envs.common -- EnvBase, TorchRL's environment at the TensorDict
-- level, and GymLikeEnv, the base for environments written on tensors.
-- reset(td?) -> td; step(td) writes td.next; rollout stacks steps along a
-- new last batch dim. Done keys are bool [*batch, 1], rewards [*batch, 1].
-- No dynamics here: subclasses implement _reset/_step.
local torch = require "torch"
local specs = require "torch.rl.envs.specs"
local TensorDict = require("torch.rl.tensordict").TensorDict

local M = {}
local fmt = string.format
local is_td = TensorDict.is_tensordict
local DONE_KEYS = {"done", "terminated", "truncated"}
M.DONE_KEYS = DONE_KEYS

local function shape_str(s)
  local p = {}
  for i = 1, #s do p[i] = tostring(s[i]) end
  return "[" .. table.concat(p, ", ") .. "]"
end
M.shape_str = shape_str

-- class(name, parent) -> a class table; Class(...) builds an instance and
-- calls its __init(...); Class:extend(name) derives a new class.
local function class(name, parent)
  local C = {__name = name, __parent = parent}
  C.__index = C
  C.__tostring = function(o) return o:__repr() end
  setmetatable(C, {__index = parent, __call = function(cls, ...)
    local o = setmetatable({}, cls)
    o:__init(...)
    return o
  end})
  C.extend = function(cls, sub)
    if type(sub) ~= "string" then error(fmt("%s:extend(name): name must be a string", name), 2) end
    return class(sub, cls)
  end
  return C
end
M.class = class

-- The batch size shape followed by extra dims.
local function with_batch(bs, ...)
  local s = {}
  for i = 1, #bs do s[i] = bs[i] end
  for _, v in ipairs({...}) do s[#s + 1] = v end
  return s
end
M.with_batch = with_batch

-- mask_like(mask, x, nb): a bool mask [*batch, 1] (or [*batch]) viewed to
-- broadcast over x, whose first nb dims are the batch dims.
function M.mask_like(mask, x, nb)
  local s = {}
  for i = 1, nb do s[i] = mask:size(i) end
  for _ = nb + 1, x:dim() do s[#s + 1] = 1 end
  return mask:reshape(s)
end

-- step_mdp(td[, {exclude_reward=true, exclude_action=true}]) -> the root
-- TensorDict of the next step: td.next's keys over td's, without "next",
-- the action and (by default) the reward. Leaves are shared.
function M.step_mdp(td, opts)
  opts = opts or {}
  local nxt = td:get("next")
  if not is_td(nxt) then error("step_mdp: the TensorDict has no 'next' entry (call env:step(td) first)", 2) end
  local drop_r, drop_a = opts.exclude_reward ~= false, opts.exclude_action ~= false
  local out = TensorDict._new({}, {}, td.batch_size, td.device)
  for _, k in ipairs(td._k) do
    if k ~= "next" and not (drop_a and k == "action") and not (drop_r and k == "reward") and k ~= "_reset" then
      out:set(k, td._d[k])
    end
  end
  for _, k in ipairs(nxt._k) do
    if not (drop_r and k == "reward") then out:set(k, nxt._d[k]) end
  end
  return out
end

-- ---- exploration type: torch.rl.modules' one global, which policies read
-- (TorchRL has set_exploration_type in torchrl.envs.utils as well) ----
local X = require "torch.rl.modules.exploration"
M.ExplorationType = X.ExplorationType
M.exploration_type = X.exploration_type
M.set_exploration_type = X.set_exploration_type

---------------------------------------------------------------------------
-- EnvBase

local EnvBase = class("EnvBase")
M.EnvBase = EnvBase

-- EnvBase.__init(self, {batch_size=, device=}): subclasses call it, then set
-- observation_spec (a Composite), action_spec, reward_spec and done_spec.
function EnvBase:__init(opts)
  opts = torch._check_options(self.__name .. "", opts or {}, "batch_size device")
  self.batch_size = with_batch(opts.batch_size or {})
  self.device = tostring(opts.device or "cpu")
  self._validate_actions = true
end

function EnvBase:__repr()
  return fmt("%s(batch_size=%s, device=%s)", getmetatable(self).__name, shape_str(self.batch_size), self.device)
end

-- The default reward and done specs for the batch size: reward float32
-- [*batch, 1], done keys bool [*batch, 1].
function EnvBase:_default_specs()
  local bs, dev = self.batch_size, self.device
  self.reward_spec = self.reward_spec or specs.Unbounded{shape = with_batch(bs, 1), dtype = torch.float32, device = dev}
  if not self.done_spec then
    local d = {}
    for _, k in ipairs(DONE_KEYS) do
      d[k] = specs.Unbounded{shape = with_batch(bs, 1), dtype = torch.bool, device = dev}
    end
    self.done_spec = specs.Composite(d, {shape = with_batch(bs), device = dev})
  end
end

-- the full_* specs (TorchRL's Composite forms) from the leaf specs
function EnvBase:full_observation_spec() return self.observation_spec end
function EnvBase:full_action_spec()
  return specs.Composite({action = self.action_spec}, {shape = with_batch(self.batch_size), device = self.device})
end
function EnvBase:full_reward_spec()
  return specs.Composite({reward = self.reward_spec}, {shape = with_batch(self.batch_size), device = self.device})
end
function EnvBase:full_done_spec() return self.done_spec end
-- unbatch(spec, nb) -> spec without its first nb (batch) dims
local function unbatch(sp, nb, dev)
  return specs.respec(sp, function(shape)
    local out = {}
    for i = nb + 1, #shape do out[#out + 1] = shape[i] end
    return out
  end, function(t)
    for _ = 1, nb do t = t[1] end
    return t
  end, dev)
end
M.unbatch_spec = unbatch

-- the specs of one copy (TorchRL's *_spec_unbatched): what modules that
-- draw per batch element (EGreedyModule) take
function EnvBase:action_spec_unbatched() return unbatch(self.action_spec, #self.batch_size, self.device) end
function EnvBase:observation_spec_unbatched()
  return unbatch(self:_finish_specs().observation_spec, #self.batch_size, self.device)
end

function EnvBase:observation_keys() return self:_finish_specs().observation_spec:keys() end

-- _finish_specs() -> self, with every spec set (wrappers call it first)
function EnvBase:_finish_specs()
  self:_default_specs()
  return self
end

function EnvBase:_name() return getmetatable(self).__name end

-- A fresh TensorDict of the env's batch size.
function EnvBase:_td(src) return TensorDict(src or {}, self.batch_size) end

-- Checks that td is a TensorDict of the env's batch size.
function EnvBase:_check_td(fname, td)
  if not is_td(td) then error(fmt("%s.%s: expected a TensorDict, got a %s", self:_name(), fname, type(td)), 3) end
  local bs, tb = self.batch_size, td.batch_size
  local ok = #tb == #bs
  for i = 1, #bs do ok = ok and tb[i] == bs[i] end
  if not ok then
    error(fmt("%s.%s: the TensorDict has batch size %s but the env's batch size is %s", self:_name(), fname,
      shape_str(tb), shape_str(bs)), 3)
  end
end

-- The "_reset" mask of td (bool [*batch, 1]) or nil for a full reset.
function EnvBase:_reset_mask(td)
  local m = td and td:get("_reset")
  if m == nil then return nil end
  local want = with_batch(self.batch_size, 1)
  if not torch.is_tensor(m) or m.dtype ~= torch.bool or m:numel() ~= m:new_zeros(want):numel() then
    error(fmt("%s.reset: '_reset' must be a bool tensor of shape %s", self:_name(), shape_str(want)), 3)
  end
  return m:reshape(want)
end

-- reset([td]) -> TensorDict with the observation keys and done,
-- terminated, truncated (false). td may carry "_reset", a bool [*batch, 1]
-- mask of the copies to reset (a partial reset); the others keep their
-- values.
function EnvBase:reset(td)
  if td ~= nil then self:_check_td("reset", td) end
  local mask = self:_reset_mask(td)
  if mask ~= nil and self._done == nil and not mask:all():item() then
    error(fmt("%s.reset: the first reset must reset every copy ('_reset' all true)", self:_name()), 2)
  end
  local out = self:_td_reset(td)
  local prev = self._done
  local shape = with_batch(self.batch_size, 1)
  local keep = (mask and prev) and prev:logical_and(mask:logical_not()) or torch.zeros(shape, {dtype = torch.bool})
  for _, k in ipairs(DONE_KEYS) do
    if out:get(k) == nil then out:set(k, keep:to(self.device)) end
  end
  self._done = out:get("done"):reshape(shape):cpu()
  self._any_done = mask ~= nil and self._done:any():item()
  return out
end

-- step(td) -> td, with td.next holding the observation keys, reward and
-- done keys after the action td.action. Stepping a copy that is done
-- without resetting it is an error.
function EnvBase:step(td)
  self:_check_td("step", td)
  if self._done == nil then error(fmt("%s.step: step before reset: call env:reset() first", self:_name()), 2) end
  if self._any_done then
    error(fmt("%s.step: %d of the %d copies are done: reset them (env:reset(td) with a '_reset' mask, or " ..
      "step_and_maybe_reset) before stepping again", self:_name(), self._done:sum():item(), self._done:numel()), 2)
  end
  local a = td:get("action")
  if a == nil then error(fmt("%s.step: the TensorDict has no 'action' entry", self:_name()), 2) end
  if self._validate_actions then self:_check_action(a) end
  local nxt = self:_td_step(td)
  local term, trunc = nxt:get("terminated"), nxt:get("truncated")
  if nxt:get("done") == nil then
    nxt:set("done", term:logical_or(trunc))
  end
  self._done = nxt:get("done"):reshape(with_batch(self.batch_size, 1)):cpu()
  self._any_done = self._done:any():item() -- one read back per step
  td:set("next", nxt)
  return td
end

-- Errors unless a fits the action spec (shape and domain).
function EnvBase:_check_action(a)
  local sp = self.action_spec
  local ok = torch.is_tensor(a) and a:dim() == #sp.shape
  for i = 1, #sp.shape do ok = ok and a:size(i) == sp.shape[i] end
  if not ok then
    error(fmt("%s.step: the action must have shape %s, got %s", self:_name(), shape_str(sp.shape),
      torch.is_tensor(a) and shape_str(a.shape) or type(a)), 3)
  end
  if not sp:is_in(a) then
    error(fmt("%s.step: an action is outside the action spec %s", self:_name(), tostring(sp)), 3)
  end
end

-- rand_action([td]) -> td with "action" drawn from the action spec
function EnvBase:rand_action(td)
  td = td or self:_td()
  td:set("action", self.action_spec:rand())
  return td
end

-- rand_step([td]) -> a step with a random action
function EnvBase:rand_step(td)
  return self:step(self:rand_action(td or self:reset()))
end

-- step_mdp(td) -> the next root TensorDict (see M.step_mdp)
function EnvBase:step_mdp(td) return M.step_mdp(td) end

-- step_and_maybe_reset(td) -> td (stepped, with "next"), td_ (the root of
-- the next step: copies that ended are reset, the others carry on).
function EnvBase:step_and_maybe_reset(td)
  td = self:step(td)
  local td_ = M.step_mdp(td)
  local done = td:get({"next", "done"})
  if self._any_done then
    td_:set("_reset", done:reshape(with_batch(self.batch_size, 1)))
    local r = self:reset(td_)
    td_:del("_reset")
    td_:update(r)
  end
  return td, td_
end
EnvBase.step_mv = EnvBase.step_and_maybe_reset

local ROLLOUT = "auto_reset break_when_any_done break_when_all_done tensordict return_contiguous"

-- rollout(max_steps[, policy[, opts]]) -> TensorDict [*batch, T]: steps
-- with policy(td) (nil: random actions from the action spec).
-- opts: auto_reset (true), break_when_any_done (true), break_when_all_done,
-- tensordict (the start when auto_reset is false). When not breaking,
-- copies that end are reset (step_and_maybe_reset).
function EnvBase:rollout(max_steps, policy, opts)
  local fname = self:_name() .. ".rollout"
  if math.type(max_steps) ~= "integer" or max_steps < 1 then
    error(fmt("%s: max_steps must be a positive integer, got %s", fname, tostring(max_steps)), 2)
  end
  if policy ~= nil and type(policy) ~= "function" and not (getmetatable(policy) or {}).__call then
    error(fmt("%s: policy must be callable (td -> td) or nil, got a %s", fname, type(policy)), 2)
  end
  opts = torch._check_options(fname, opts or {}, ROLLOUT)
  local any_done = opts.break_when_any_done ~= false
  local all_done = opts.break_when_all_done == true
  if all_done then any_done = false end
  local td
  if opts.auto_reset == false then
    td = opts.tensordict
    if td == nil then error(fname .. ": auto_reset=false needs opts.tensordict (the start of the rollout)", 2) end
  else
    td = self:reset(opts.tensordict)
  end
  local steps = {}
  for _ = 1, max_steps do
    if policy then td = policy(td) or td else self:rand_action(td) end
    if any_done then
      td = self:step(td)
      steps[#steps + 1] = td
      if self._any_done then break end
      td = M.step_mdp(td)
    else
      local cur, nxt = self:step_and_maybe_reset(td)
      steps[#steps + 1] = cur
      if all_done and cur:get({"next", "done"}):all():item() then break end
      td = nxt
    end
  end
  return TensorDict.stack(steps, #self.batch_size + 1)
end

-- set_seed(seed) -> the next seed: copies draw from seed, seed + 1, ...
-- from their next reset on.
function EnvBase:set_seed(seed)
  if math.type(seed) ~= "integer" then
    error(fmt("%s.set_seed: seed must be an integer, got %s", self:_name(), tostring(seed)), 2)
  end
  self:_set_seed(seed)
  local n = 1
  for _, v in ipairs(self.batch_size) do n = n * v end
  return seed + n
end
function EnvBase:_set_seed(seed) self._seed = seed end

function EnvBase:close() end

-- TorchRL's hooks: _reset(td) -> td and _step(td) -> the next td
function EnvBase:_td_reset(td) return self:_reset(td) end
function EnvBase:_td_step(td) return self:_step(td) end
function EnvBase:_reset()
  error(self:_name() .. ": _reset is not implemented (define " .. self:_name() .. ":_reset(td) -> td)", 3)
end
function EnvBase:_step()
  error(self:_name() .. ": _step is not implemented (define " .. self:_name() .. ":_step(td) -> next td)", 3)
end

---------------------------------------------------------------------------
-- GymLikeEnv: environments written on tensors

local GymLikeEnv = EnvBase:extend("GymLikeEnv")
M.GymLikeEnv = GymLikeEnv

-- GymLikeEnv.__init(self, {batch_size=, device=}); then set
-- observation_spec (a Composite, or a leaf spec: key "observation") and
-- action_spec; reward and done specs default to [*batch, 1].
-- Subclasses implement
--   _reset(mask) -> obs   (mask: bool [*batch] or nil for all; obs a tensor
--                          or a table key -> tensor; rows outside the mask
--                          are ignored)
--   _step(action) -> obs, reward, terminated[, truncated]  (tensors [*batch]
--                          or [*batch, 1], or numbers/booleans)
function GymLikeEnv:__init(opts) EnvBase.__init(self, opts) end
function GymLikeEnv:_finish_specs()
  self:_obs_composite()
  return self
end

-- The observation spec as a Composite (a leaf spec names "observation").
function GymLikeEnv:_obs_composite()
  local sp = self.observation_spec
  if sp == nil then error(self:_name() .. ": set self.observation_spec in __init", 3) end
  if getmetatable(sp) ~= specs.Composite then
    sp = specs.Composite({observation = sp}, {shape = with_batch(self.batch_size), device = self.device})
    self.observation_spec = sp
  end
  if self.action_spec == nil then error(self:_name() .. ": set self.action_spec in __init", 3) end
  self:_default_specs()
  return sp
end

-- obs (a tensor or table) -> {key = tensor}, shapes checked against the spec
function GymLikeEnv:_obs_table(obs, what)
  local sp = self:_obs_composite()
  local t = torch.is_tensor(obs) and {observation = obs} or obs
  if type(t) ~= "table" then
    error(fmt("%s.%s must return a tensor or a table of tensors, got a %s", self:_name(), what, type(obs)), 3)
  end
  for _, k in ipairs(sp:keys()) do
    local v, s = t[k], sp:get(k)
    local ok = torch.is_tensor(v) and v:dim() == #s.shape
    for i = 1, #s.shape do ok = ok and v:size(i) == s.shape[i] end
    if not ok then
      error(fmt("%s.%s: observation '%s' must have shape %s, got %s", self:_name(), what, k, shape_str(s.shape),
        torch.is_tensor(v) and shape_str(v.shape) or type(v)), 3)
    end
  end
  return t
end

function GymLikeEnv:_td_reset(td)
  local mask = self:_reset_mask(td)
  local m = mask and mask:reshape(with_batch(self.batch_size))
  local obs = self:_obs_table(self:_reset(m), "_reset")
  local nb = #self.batch_size
  if m and self._last then
    for k, v in pairs(obs) do
      local old = self._last[k]
      if old then obs[k] = torch.where(M.mask_like(m, v, nb), v, old) end
    end
  end
  self._last = obs
  return TensorDict(obs, self.batch_size)
end

-- x (reward or flag) as [*batch, 1] of dtype
function GymLikeEnv:_col(x, dtype, what)
  local shape = with_batch(self.batch_size, 1)
  if x == nil then return torch.zeros(shape, {dtype = dtype, device = self.device}) end
  if type(x) == "number" or type(x) == "boolean" then
    return torch.full(shape, x, {dtype = dtype, device = self.device})
  end
  local n = 1
  for _, v in ipairs(self.batch_size) do n = n * v end
  if not torch.is_tensor(x) or x:numel() ~= n then
    error(fmt("%s._step: %s must have %d entries (batch size %s), got %s", self:_name(), what, n,
      shape_str(self.batch_size), torch.is_tensor(x) and shape_str(x.shape) or type(x)), 3)
  end
  return x:reshape(shape):to(dtype)
end

function GymLikeEnv:_td_step(td)
  local obs, r, term, trunc = self:_step(td:get("action"))
  obs = self:_obs_table(obs, "_step")
  self._last = obs
  local out = TensorDict(obs, self.batch_size)
  out:set("reward", self:_col(r, self.reward_spec.dtype, "reward"))
  out:set("terminated", self:_col(term, torch.bool, "terminated"))
  out:set("truncated", self:_col(trunc, torch.bool, "truncated"))
  return out
end

function GymLikeEnv:_reset()
  error(self:_name() .. ": _reset is not implemented (define " .. self:_name() .. ":_reset(mask) -> obs)", 3)
end
function GymLikeEnv:_step()
  error(self:_name() .. ": _step is not implemented (define " .. self:_name() ..
    ":_step(action) -> obs, reward, terminated, truncated)", 3)
end

return M
