-- torch.rl.envs.transforms -- TorchRL's env transforms and TransformedEnv.
-- A transform sees the root TensorDict and the reset / next one:
--   _reset(td, td_reset) -> td_reset   (td may carry the "_reset" mask)
--   _step(td, next_td)   -> next_td
--   inv(td) -> td                      (before the base env steps)
--   forward(td) -> td                  (on data outside an env)
-- and rewrites the env's specs. Per-copy state (step counts, sums, frame
-- stacks) lives in the TensorDicts; only VecNorm keeps running statistics.
local torch = require "torch"
local specs = require "torch.rl.envs.specs"
local common = require "torch.rl.envs.common"

local M = {}
local fmt = string.format
local class, with_batch, mask_like = common.class, common.with_batch, common.mask_like

-- a shallow copy of a Composite spec (so transforms add keys to their own)
local function copy_composite(sp)
  local t = {}
  for _, k in ipairs(sp:keys()) do t[k] = sp:get(k) end
  return specs.Composite(t, {shape = sp.shape, device = sp.device})
end

local function keys_opt(v, default)
  if v == nil then return default end
  if type(v) == "string" then return {v} end
  return v
end

---------------------------------------------------------------------------
-- Transform: the identity, and the base of the others

local Transform = class("Transform")
M.Transform = Transform

function Transform:__init(opts)
  opts = opts or {}
  self.in_keys = keys_opt(opts.in_keys, {})
  self.out_keys = keys_opt(opts.out_keys, self.in_keys)
end
function Transform:__repr() return getmetatable(self).__name .. "()" end
function Transform:_call(td) return td end
function Transform:forward(td) return self:_call(td) end
Transform.__call = function(self, td) return self:forward(td) end
function Transform:_reset(_, td_reset) return self:_call(td_reset) end
function Transform:_step(_, next_td) return self:_call(next_td) end
function Transform:inv(td) return td end
function Transform:transform_observation_spec(sp) return sp end
function Transform:transform_reward_spec(sp) return sp end
function Transform:transform_done_spec(sp) return sp end
function Transform:transform_action_spec(sp) return sp end
function Transform:set_container(env) self.parent = env end

-- the "_reset" mask of the root td (bool [*batch, 1]) or nil
local function reset_mask(td) return td and td:get("_reset") end

-- the batch size of a TensorDict as a table
local function bsize(td) return with_batch(td.batch_size) end

---------------------------------------------------------------------------
-- Compose

local Compose = Transform:extend("Compose")
M.Compose = Compose

-- Compose(t1, t2, ...): the transforms in order (inv in reverse order)
function Compose:__init(...)
  self.transforms = {...}
  for i, t in ipairs(self.transforms) do
    if type(t) ~= "table" or type(t._step) ~= "function" then
      error(fmt("Compose: argument %d is a %s, not a transform", i, type(t)), 3)
    end
  end
end
function Compose:__repr()
  local p = {}
  for i, t in ipairs(self.transforms) do p[i] = tostring(t) end
  return "Compose(" .. table.concat(p, ", ") .. ")"
end
function Compose:_call(td)
  for _, t in ipairs(self.transforms) do td = t:_call(td) end
  return td
end
function Compose:forward(td)
  for _, t in ipairs(self.transforms) do td = t:forward(td) end
  return td
end
function Compose:_reset(td, tr)
  for _, t in ipairs(self.transforms) do tr = t:_reset(td, tr) end
  return tr
end
function Compose:_step(td, nt)
  for _, t in ipairs(self.transforms) do nt = t:_step(td, nt) end
  return nt
end
function Compose:inv(td)
  for i = #self.transforms, 1, -1 do td = self.transforms[i]:inv(td) end
  return td
end
for _, name in ipairs({"observation", "reward", "done", "action"}) do
  local m = "transform_" .. name .. "_spec"
  Compose[m] = function(self, sp)
    for _, t in ipairs(self.transforms) do sp = t[m](t, sp) end
    return sp
  end
end
function Compose:set_container(env)
  self.parent = env
  for _, t in ipairs(self.transforms) do t:set_container(env) end
end

---------------------------------------------------------------------------
-- StepCounter

local StepCounter = Transform:extend("StepCounter")
M.StepCounter = StepCounter

-- StepCounter([max_steps[, {step_count_key="step_count", truncated_key=
-- "truncated", update_done=true}]]): "step_count" int64 [*batch, 1] counts
-- steps since each copy's reset; at max_steps the step is truncated.
function StepCounter:__init(max_steps, opts)
  if max_steps ~= nil and (math.type(max_steps) ~= "integer" or max_steps < 1) then
    error(fmt("StepCounter: max_steps must be a positive integer or nil, got %s", tostring(max_steps)), 3)
  end
  opts = torch._check_options("StepCounter", opts or {}, "step_count_key truncated_key update_done")
  self.max_steps = max_steps
  self.step_count_key = opts.step_count_key or "step_count"
  self.truncated_key = opts.truncated_key or "truncated"
  self.update_done = opts.update_done ~= false
end
function StepCounter:__repr() return fmt("StepCounter(max_steps=%s)", tostring(self.max_steps)) end

function StepCounter:_reset(td, tr)
  local mask, key = reset_mask(td), self.step_count_key
  local zero = torch.zeros(with_batch(bsize(tr), 1), {dtype = torch.int64, device = tr.device})
  local old = td and td:get(key)
  tr:set(key, (mask and old) and torch.where(mask, zero, old) or zero)
  return tr
end

function StepCounter:_step(td, nt)
  local key = self.step_count_key
  local old = td:get(key)
  if old == nil then
    error(fmt("StepCounter: the TensorDict has no '%s' (reset the env through the TransformedEnv)", key), 3)
  end
  local sc = old + 1
  nt:set(key, sc)
  if self.max_steps then
    local hit = sc:ge(self.max_steps)
    local tk = self.truncated_key
    local trunc = nt:get(tk)
    nt:set(tk, trunc and trunc:logical_or(hit) or hit)
    if self.update_done then nt:set("done", nt:get("done"):logical_or(hit)) end
  end
  return nt
end

function StepCounter:transform_observation_spec(sp)
  sp = copy_composite(sp)
  local shape = with_batch(sp.shape, 1)
  sp:set(self.step_count_key, self.max_steps and
    specs.Bounded{low = 0, high = self.max_steps, shape = shape, dtype = torch.int64, device = sp.device} or
    specs.Unbounded{shape = shape, dtype = torch.int64, device = sp.device})
  return sp
end

---------------------------------------------------------------------------
-- RewardSum

local RewardSum = Transform:extend("RewardSum")
M.RewardSum = RewardSum

-- RewardSum([{in_keys={"reward"}, out_keys={"episode_reward"}}]): the sum
-- of the rewards since each copy's reset.
function RewardSum:__init(opts)
  opts = torch._check_options("RewardSum", opts or {}, "in_keys out_keys")
  self.in_keys = keys_opt(opts.in_keys, {"reward"})
  self.out_keys = keys_opt(opts.out_keys, {"episode_reward"})
  if #self.in_keys ~= #self.out_keys then error("RewardSum: in_keys and out_keys must have the same length", 3) end
end

function RewardSum:_reset(td, tr)
  local mask = reset_mask(td)
  for _, out in ipairs(self.out_keys) do
    local zero = torch.zeros(with_batch(bsize(tr), 1), {dtype = torch.float32, device = tr.device})
    local old = td and td:get(out)
    tr:set(out, (mask and old) and torch.where(mask, zero:to(old.dtype), old) or zero)
  end
  return tr
end

function RewardSum:_step(td, nt)
  for i, k in ipairs(self.in_keys) do
    local out = self.out_keys[i]
    local r = nt:get(k)
    if r == nil then error(fmt("RewardSum: the next TensorDict has no '%s'", k), 3) end
    local old = td:get(out)
    if old == nil then
      error(fmt("RewardSum: the TensorDict has no '%s' (reset the env through the TransformedEnv)", out), 3)
    end
    nt:set(out, old + r)
  end
  return nt
end

function RewardSum:transform_observation_spec(sp)
  sp = copy_composite(sp)
  for _, out in ipairs(self.out_keys) do
    sp:set(out, specs.Unbounded{shape = with_batch(sp.shape, 1), dtype = torch.float32, device = sp.device})
  end
  return sp
end

---------------------------------------------------------------------------
-- ObservationNorm and RewardScaling: affine maps

local ObservationNorm = Transform:extend("ObservationNorm")
M.ObservationNorm = ObservationNorm

local function as_tensor(v, what, fname)
  if v == nil then return nil end
  if type(v) == "number" then return torch.tensor(v) end
  if torch.is_tensor(v) then return v end
  error(fmt("%s: %s must be a number or a tensor, got a %s", fname, what, type(v)), 4)
end

-- ObservationNorm([{loc=, scale=, in_keys={"observation"}, out_keys=,
-- standard_normal=false, eps=1e-6}]): obs * scale + loc, or
-- (obs - loc) / scale with standard_normal. loc and scale may be set by
-- init_stats.
function ObservationNorm:__init(opts)
  local fname = "ObservationNorm"
  opts = torch._check_options(fname, opts or {}, "loc scale in_keys out_keys standard_normal eps")
  self.loc, self.scale = as_tensor(opts.loc, "loc", fname), as_tensor(opts.scale, "scale", fname)
  self.in_keys = keys_opt(opts.in_keys, {"observation"})
  self.out_keys = keys_opt(opts.out_keys, self.in_keys)
  self.standard_normal = opts.standard_normal == true
  self.eps = opts.eps or 1e-6
end
function ObservationNorm:__repr()
  return fmt("ObservationNorm(standard_normal=%s, initialized=%s)", tostring(self.standard_normal),
    tostring(self.loc ~= nil))
end

function ObservationNorm:_call(td)
  if self.loc == nil or self.scale == nil then
    error("ObservationNorm: loc and scale are not set: give them or call init_stats(num_iter) first", 3)
  end
  for i, k in ipairs(self.in_keys) do
    local x = td:get(k)
    if x ~= nil then
      local loc, scale = self.loc:to(x.dtype):to(x.device), self.scale:to(x.dtype):to(x.device)
      td:set(self.out_keys[i], self.standard_normal and (x - loc) / scale or x * scale + loc)
    end
  end
  return td
end

-- init_stats(num_iter[, {key=}]): loc and scale from num_iter random steps
-- of the parent env (its base env, without this transform), so that the
-- output is standard normal; statistics over every batch dim.
function ObservationNorm:init_stats(num_iter, opts)
  if math.type(num_iter) ~= "integer" or num_iter < 1 then
    error(fmt("ObservationNorm.init_stats: num_iter must be a positive integer, got %s", tostring(num_iter)), 2)
  end
  opts = torch._check_options("ObservationNorm.init_stats", opts or {}, "key")
  local env = self.parent and self.parent.base_env
  if env == nil then error("ObservationNorm.init_stats: the transform is not in a TransformedEnv", 2) end
  local key = opts.key or self.in_keys[1]
  local data = env:rollout(num_iter, nil, {break_when_any_done = false}):get(key)
  local nb = #env.batch_size + 1
  local flat = data:reshape(with_batch({-1}, table.unpack(data.shape, nb + 1))):to(torch.float64)
  local mean = flat:mean(1)
  local std = flat:std(1, {correction = 1}):clamp{min = self.eps}
  if self.standard_normal then
    self.loc, self.scale = mean, std
  else
    self.loc, self.scale = -mean / std, 1 / std
  end
  return self
end

function ObservationNorm:transform_observation_spec(sp)
  sp = copy_composite(sp)
  for i, k in ipairs(self.in_keys) do
    local s = sp:get(k)
    if s then sp:set(self.out_keys[i], specs.Unbounded{shape = s.shape, dtype = s.dtype, device = s.device}) end
  end
  return sp
end

local RewardScaling = Transform:extend("RewardScaling")
M.RewardScaling = RewardScaling

-- RewardScaling(loc, scale[, {in_keys={"reward"}, standard_normal=false}]):
-- reward * scale + loc, or (reward - loc) / scale with standard_normal.
function RewardScaling:__init(loc, scale, opts)
  local fname = "RewardScaling"
  if loc == nil or scale == nil then error("RewardScaling: loc and scale are required", 3) end
  opts = torch._check_options(fname, opts or {}, "in_keys out_keys standard_normal")
  self.loc, self.scale = as_tensor(loc, "loc", fname), as_tensor(scale, "scale", fname)
  self.in_keys = keys_opt(opts.in_keys, {"reward"})
  self.out_keys = keys_opt(opts.out_keys, self.in_keys)
  self.standard_normal = opts.standard_normal == true
end
function RewardScaling:__repr()
  return fmt("RewardScaling(loc=%g, scale=%g)", self.loc:item(), self.scale:item())
end
RewardScaling._call = ObservationNorm._call
function RewardScaling:_reset(_, tr) return tr end
function RewardScaling:transform_reward_spec(sp)
  return specs.Unbounded{shape = sp.shape, dtype = sp.dtype, device = sp.device}
end

---------------------------------------------------------------------------
-- VecNorm: running mean and variance

local VecNorm = Transform:extend("VecNorm")
M.VecNorm = VecNorm

-- VecNorm([{in_keys={"observation"}, decay=0.9999, eps=1e-4}]): normalizes
-- with running statistics (TorchRL's): per key, sum, ssq and count decay by
-- `decay` and gain each new batch (sum and count over the batch dims);
-- mean = sum / count, std = sqrt(max(ssq / count - mean^2, eps)); out =
-- (x - mean) / max(std, eps). Resets add the reset copies only. freeze()
-- stops the updates.
function VecNorm:__init(opts)
  opts = torch._check_options("VecNorm", opts or {}, "in_keys out_keys decay eps")
  self.in_keys = keys_opt(opts.in_keys, {"observation"})
  self.out_keys = keys_opt(opts.out_keys, self.in_keys)
  self.decay, self.eps = opts.decay or 0.9999, opts.eps or 1e-4
  if type(self.decay) ~= "number" or self.decay <= 0 or self.decay > 1 then
    error(fmt("VecNorm: decay must be in (0, 1], got %s", tostring(self.decay)), 3)
  end
  self.stats, self.frozen = {}, false
end
function VecNorm:__repr() return fmt("VecNorm(decay=%g, eps=%g)", self.decay, self.eps) end
function VecNorm:freeze() self.frozen = true; return self end
function VecNorm:unfreeze() self.frozen = false; return self end

-- x [*batch, ...] (rows where mask holds, if any) -> the running stats of key
function VecNorm:_update(key, x, nb, mask)
  local st = self.stats[key]
  local feat = {}
  for i = nb + 1, x:dim() do feat[#feat + 1] = x:size(i) end
  local flat = x:reshape(with_batch({-1}, table.unpack(feat))):to(torch.float64)
  if mask then flat = flat[mask:reshape({-1})] end
  if st == nil then
    st = {sum = torch.zeros(feat, {dtype = torch.float64}), ssq = torch.zeros(feat, {dtype = torch.float64}),
          count = 0}
    self.stats[key] = st
  end
  if not self.frozen and flat:size(1) > 0 then
    local d = self.decay
    st.sum = st.sum * d + flat:sum(1)
    st.ssq = st.ssq * d + flat:pow(2):sum(1)
    st.count = st.count * d + flat:size(1)
  end
  return st
end

function VecNorm:_norm(td, nb, mask)
  for i, k in ipairs(self.in_keys) do
    local x = td:get(k)
    if x ~= nil then
      local st = self:_update(k, x, nb, mask)
      if st.count == 0 then error(fmt("VecNorm: no statistics for '%s' yet (frozen before any data)", k), 4) end
      local mean = st.sum / st.count
      local std = (st.ssq / st.count - mean:pow(2)):clamp{min = self.eps}:sqrt():clamp{min = self.eps}
      td:set(self.out_keys[i], ((x:to(torch.float64) - mean) / std):to(x.dtype))
    end
  end
  return td
end

function VecNorm:_call(td) return self:_norm(td, #td.batch_size, nil) end
function VecNorm:_reset(td, tr) return self:_norm(tr, #tr.batch_size, reset_mask(td)) end
function VecNorm:_step(_, nt) return self:_norm(nt, #nt.batch_size, nil) end
VecNorm.transform_observation_spec = ObservationNorm.transform_observation_spec

---------------------------------------------------------------------------
-- CatFrames

local CatFrames = Transform:extend("CatFrames")
M.CatFrames = CatFrames

-- CatFrames(N, dim[, {in_keys={"observation"}, out_keys=, padding="same"}]):
-- the last N observations concatenated along dim (negative, counted from
-- the observation's last dim), oldest first. After a reset the frames are
-- the reset observation repeated ("same") or zeros then it ("constant").
function CatFrames:__init(n, dim, opts)
  if math.type(n) ~= "integer" or n < 1 then
    error(fmt("CatFrames: N must be a positive integer, got %s", tostring(n)), 3)
  end
  if math.type(dim) ~= "integer" or dim >= 0 then
    error(fmt("CatFrames: dim must be a negative integer (counted from the last dim), got %s", tostring(dim)), 3)
  end
  opts = torch._check_options("CatFrames", opts or {}, "in_keys out_keys padding")
  self.N, self.dim = n, dim
  self.in_keys = keys_opt(opts.in_keys, {"observation"})
  self.out_keys = keys_opt(opts.out_keys, self.in_keys)
  self.padding = torch._check_choice("CatFrames", "padding", opts.padding or "same", "same constant")
end
function CatFrames:__repr() return fmt("CatFrames(N=%d, dim=%d, padding=%s)", self.N, self.dim, self.padding) end

function CatFrames:_fresh(x)
  if self.padding == "same" then
    local reps = {}
    for i = 1, x:dim() do reps[i] = 1 end
    reps[x:dim() + self.dim + 1] = self.N
    return x:tile(reps)
  end
  local parts = {}
  for i = 1, self.N - 1 do parts[i] = torch.zeros_like(x) end
  parts[self.N] = x
  return torch.cat(parts, self.dim)
end

function CatFrames:_reset(td, tr)
  local mask = reset_mask(td)
  for i, k in ipairs(self.in_keys) do
    local x = tr:get(k)
    local out = self.out_keys[i]
    local fresh = self:_fresh(x)
    local old = td and td:get(out)
    if mask and old and old:dim() == fresh:dim() then
      fresh = torch.where(mask_like(mask, fresh, #tr.batch_size), fresh, old)
    end
    tr:set(out, fresh)
  end
  return tr
end

function CatFrames:_step(td, nt)
  for i, k in ipairs(self.in_keys) do
    local x = nt:get(k)
    local out = self.out_keys[i]
    local old = td:get(out)
    if old == nil then
      error(fmt("CatFrames: the TensorDict has no '%s' (reset the env through the TransformedEnv)", out), 3)
    end
    local d = old:dim() + self.dim + 1
    local w = x:size(d)
    nt:set(out, torch.cat({old:narrow(d, w + 1, old:size(d) - w), x}, self.dim))
  end
  return nt
end

function CatFrames:transform_observation_spec(sp)
  sp = copy_composite(sp)
  for i, k in ipairs(self.in_keys) do
    local s = sp:get(k)
    if s then
      local shape = with_batch(s.shape)
      local d = #shape + self.dim + 1
      shape[d] = shape[d] * self.N
      local new
      if getmetatable(s) == specs.Bounded then
        local reps = {}
        for j = 1, #shape do reps[j] = 1 end
        reps[d] = self.N
        new = specs.Bounded{low = s.low:tile(reps), high = s.high:tile(reps), shape = shape, dtype = s.dtype,
                            device = s.device}
      else
        new = specs.Unbounded{shape = shape, dtype = s.dtype, device = s.device}
      end
      sp:set(self.out_keys[i], new)
    end
  end
  return sp
end

---------------------------------------------------------------------------
-- DoubleToFloat and InitTracker

local DoubleToFloat = Transform:extend("DoubleToFloat")
M.DoubleToFloat = DoubleToFloat

-- DoubleToFloat([{in_keys=, in_keys_inv=}]): float64 entries of in_keys
-- (default: every float64 leaf) become float32; in_keys_inv (e.g.
-- {"action"}) go back to float64 before the base env steps.
function DoubleToFloat:__init(opts)
  opts = torch._check_options("DoubleToFloat", opts or {}, "in_keys in_keys_inv")
  self.in_keys = keys_opt(opts.in_keys, nil)
  self.in_keys_inv = keys_opt(opts.in_keys_inv, {})
end
function DoubleToFloat:_call(td)
  local ks = self.in_keys or td:keys()
  for _, k in ipairs(ks) do
    local x = td:get(k)
    if torch.is_tensor(x) and x.dtype == torch.float64 then td:set(k, x:to(torch.float32)) end
  end
  return td
end
function DoubleToFloat:inv(td)
  for _, k in ipairs(self.in_keys_inv) do
    local x = td:get(k)
    if torch.is_tensor(x) and x.dtype == torch.float32 then td:set(k, x:to(torch.float64)) end
  end
  return td
end
local function to_float_spec(s)
  if s.dtype ~= torch.float64 then return s end
  if getmetatable(s) == specs.Bounded then
    return specs.Bounded{low = s.low, high = s.high, shape = s.shape, dtype = torch.float32, device = s.device}
  end
  return specs.Unbounded{shape = s.shape, dtype = torch.float32, device = s.device}
end
function DoubleToFloat:transform_observation_spec(sp)
  sp = copy_composite(sp)
  for _, k in ipairs(self.in_keys or sp:keys()) do
    if sp:get(k) then sp:set(k, to_float_spec(sp:get(k))) end
  end
  return sp
end
function DoubleToFloat:transform_reward_spec(sp)
  if self.in_keys == nil then return to_float_spec(sp) end
  return sp
end

local InitTracker = Transform:extend("InitTracker")
M.InitTracker = InitTracker

-- InitTracker([{init_key="is_init"}]): bool [*batch, 1], true on the
-- observation a copy's reset returned, false after its steps.
function InitTracker:__init(opts)
  opts = torch._check_options("InitTracker", opts or {}, "init_key")
  self.init_key = opts.init_key or "is_init"
end
function InitTracker:_reset(td, tr)
  local mask = reset_mask(td)
  local shape = with_batch(bsize(tr), 1)
  tr:set(self.init_key, mask and mask:clone() or torch.ones(shape, {dtype = torch.bool, device = tr.device}))
  return tr
end
function InitTracker:_step(_, nt)
  nt:set(self.init_key, torch.zeros(with_batch(bsize(nt), 1), {dtype = torch.bool, device = nt.device}))
  return nt
end
function InitTracker:transform_observation_spec(sp)
  sp = copy_composite(sp)
  sp:set(self.init_key, specs.Unbounded{shape = with_batch(sp.shape, 1), dtype = torch.bool, device = sp.device})
  return sp
end

---------------------------------------------------------------------------
-- TransformedEnv

local TransformedEnv = common.EnvBase:extend("TransformedEnv")
M.TransformedEnv = TransformedEnv

-- TransformedEnv(env, transform): env with transform applied to its
-- resets and steps; the specs are the transformed ones.
function TransformedEnv:__init(env, transform)
  if type(env) ~= "table" or type(env.step) ~= "function" or env.batch_size == nil then
    error(fmt("TransformedEnv: env must be an env (EnvBase), got a %s", type(env)), 3)
  end
  transform = transform or Transform()
  if type(transform) ~= "table" or type(transform._step) ~= "function" then
    error(fmt("TransformedEnv: transform must be a transform, got a %s", type(transform)), 3)
  end
  common.EnvBase.__init(self, {batch_size = env.batch_size, device = env.device})
  env:_finish_specs()
  self.base_env, self.transform = env, transform
  transform:set_container(self)
  self._validate_actions = false -- the base env checks its actions
  self:_refresh_specs()
end

function TransformedEnv:_refresh_specs()
  local t, env = self.transform, self.base_env
  self.observation_spec = t:transform_observation_spec(env.observation_spec)
  self.reward_spec = t:transform_reward_spec(env.reward_spec)
  self.done_spec = t:transform_done_spec(env.done_spec)
  self.action_spec = t:transform_action_spec(env.action_spec)
end

-- append_transform(t): adds t after the current transform(s)
function TransformedEnv:append_transform(t)
  if getmetatable(self.transform) == Compose then
    table.insert(self.transform.transforms, t)
  else
    self.transform = Compose(self.transform, t)
  end
  self.transform:set_container(self)
  self:_refresh_specs()
  return self
end

function TransformedEnv:__repr()
  return fmt("TransformedEnv(env=%s, transform=%s)", tostring(self.base_env), tostring(self.transform))
end

function TransformedEnv:_reset(td)
  return self.transform:_reset(td, self.base_env:reset(td))
end

function TransformedEnv:_step(td)
  local inner = self.transform:inv(td:copy())
  local nt = self.base_env:step(inner):get("next")
  return self.transform:_step(td, nt)
end

function TransformedEnv:_set_seed(seed) self.base_env:set_seed(seed) end
function TransformedEnv:close() self.base_env:close() end

return M
