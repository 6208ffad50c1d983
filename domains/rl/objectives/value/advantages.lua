-- torch.rl.objectives.value.advantages -- the value estimators as modules
-- over TensorDicts: TD0Estimator, TD1Estimator, TDLambdaEstimator and GAE.
-- Each reads reward, done and terminated from "next", the state values
-- (running value_network on the TensorDict and on its "next" when given),
-- and writes advantage and value_target. Time is the last batch dim.
-- The math is torch.rl.objectives.value.functional's.
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.nn.util"
local VF = require "torch.rl.objectives.value.functional"
local K = require "torch.rl.modules.keys"

local M = {}
local PREFIX = "torch.rl.objectives.value."

local Base = nn.Module:extend("ValueEstimatorBase")
Base.__prefix = PREFIX

local DEFAULT_KEYS = {advantage = "advantage", value_target = "value_target", value = "state_value",
                      reward = "reward", done = "done", terminated = "terminated"}

-- Base:_setup(fname, o): the common options (gamma, value_network,
-- differentiable, keys).
function Base:_setup(fname, o)
  if type(o.gamma) ~= "number" and not torch.is_tensor(o.gamma) then
    error(("%s: gamma must be a number or a tensor, got %s"):format(fname, type(o.gamma)), 3)
  end
  if o.shifted then error(fname .. ": shifted=true is not supported", 3) end
  self.gamma, self.differentiable = o.gamma, o.differentiable or false
  self.skip_existing = o.skip_existing or false
  if o.value_network ~= nil then
    if type(o.value_network) == "function" then rawset(self, "_value_fn", o.value_network)
    else self.value_network = o.value_network end
  end
  local keys = {}
  for k, v in pairs(DEFAULT_KEYS) do keys[k] = v end
  for _, n in ipairs{"advantage", "value_target", "value"} do
    if o[n .. "_key"] ~= nil then keys[n] = K.check(fname, n .. "_key", o[n .. "_key"]) end
  end
  self.tensor_keys = keys
end

-- set_keys{advantage=, value_target=, value=, reward=, done=, terminated=} -> self.
function Base:set_keys(keys)
  local fname = PREFIX .. self:_get_name() .. ".set_keys"
  for k, v in pairs(keys) do
    if DEFAULT_KEYS[k] == nil then error(("%s: unknown key name '%s'"):format(fname, tostring(k)), 2) end
    self.tensor_keys[k] = K.check(fname, k, v)
  end
  return self
end

-- values(td) -> V(s), V(s') of shape [*B, T, 1]: from the value network
-- (without gradients unless differentiable) or read from td and td.next.
function Base:_values(fname, td, need_current)
  local vk = self.tensor_keys.value
  local nxt = K.get(fname, td, "next")
  local run = rawget(self, "_value_fn") or self._modules.map.value_network
  if run and not (self.skip_existing and td:get(vk) ~= nil) then
    local function go()
      if need_current then run(td) end
      run(nxt)
    end
    if self.differentiable then go() else torch.no_grad(go) end
  end
  local v = need_current and K.get(fname, td, vk) or nil
  return v, K.get(fname, nxt, vk)
end

-- rdt(fname, td) -> reward, done, terminated from td.next (terminated
-- defaults to done).
function Base:_rdt(fname, td)
  local nxt = K.get(fname, td, "next")
  local r = K.get(fname, nxt, self.tensor_keys.reward)
  local d = K.get(fname, nxt, self.tensor_keys.done)
  local t = nxt:get(self.tensor_keys.terminated) or d
  return r, d, t
end

-- as_steps(fname, x, like) -> x shaped [*B, T, 1] like the reward
-- (a value of shape [*B, T] gets its trailing 1).
local function as_steps(fname, what, x, like)
  if x:dim() == like:dim() - 1 then x = x:unsqueeze(-1) end
  if U.shape_str(x) ~= U.shape_str(like) then
    error(("%s: %s has shape %s but the reward has %s"):format(fname, what, U.shape_str(x), U.shape_str(like)), 3)
  end
  return x
end

-- forward(td) -> td with advantage and value_target written.
function Base:forward(td)
  local fname = PREFIX .. self:_get_name()
  local adv, target = self:_estimate(fname, td)
  td:set(self.tensor_keys.advantage, adv)
  td:set(self.tensor_keys.value_target, target)
  return td
end

-- value_estimate(td) -> the value target only (no advantage, so no V(s)
-- is needed for the TD estimators).
function Base:value_estimate(td)
  local fname = PREFIX .. self:_get_name() .. ".value_estimate"
  local r, d, t = self:_rdt(fname, td)
  local _, nv = self:_values(fname, td, false)
  nv = as_steps(fname, "the next state value", nv, r)
  return self:_target(r, d:to(torch.bool), t:to(torch.bool), nv:to(r.dtype))
end

function Base:_estimate(fname, td)
  local r, d, t = self:_rdt(fname, td)
  local v, nv = self:_values(fname, td, true)
  v, nv = as_steps(fname, "the state value", v, r), as_steps(fname, "the next state value", nv, r)
  local target = self:_target(r, d:to(torch.bool), t:to(torch.bool), nv)
  return (target - v):detach(), target
end

function Base:extra_repr()
  return ("gamma=%s%s"):format(tostring(self.gamma), self.lmbda and (", lmbda=" .. tostring(self.lmbda)) or "")
end

local function estimator(name, names, target)
  local C = Base:extend(name)
  C.__prefix = PREFIX
  function C:__init(...)
    local fname = PREFIX .. name
    local o = U.args(fname, names, nil, ...)
    self:_setup(fname, o)
    if o.lmbda ~= nil then self.lmbda = o.lmbda end
    if (name == "GAE" or name == "TDLambdaEstimator") and type(o.lmbda) ~= "number" and not torch.is_tensor(o.lmbda) then
      error(("%s: lmbda must be a number or a tensor, got %s"):format(fname, type(o.lmbda)), 2)
    end
    if o.average_rewards then error(fname .. ": average_rewards=true is not supported", 2) end
    self.average_gae = o.average_gae or false
  end
  C._target = target
  M[name] = C
  return C
end

local COMMON = {"value_network", "shifted", "average_rewards", "differentiable", "skip_existing", "advantage_key",
                "value_target_key", "value_key"}
local function with(...) local t = {...}; for _, n in ipairs(COMMON) do t[#t + 1] = n end return t end

-- TD0Estimator{gamma=, value_network=, ...}: target r + gamma (1 - terminated) V(s').
estimator("TD0Estimator", with("gamma"), function(self, r, _, t, nv)
  return VF.td0_return_estimate(self.gamma, nv, r, t)
end)

-- TD1Estimator{gamma=, ...}: the discounted return, bootstrapped at the end.
estimator("TD1Estimator", with("gamma"), function(self, r, d, t, nv)
  return VF.vec_td1_return_estimate(self.gamma, nv, r, d, {terminated = t})
end)

-- TDLambdaEstimator{gamma=, lmbda=, ...}: the lambda-return.
estimator("TDLambdaEstimator", with("gamma", "lmbda"), function(self, r, d, t, nv)
  return VF.vec_td_lambda_return_estimate(self.gamma, self.lmbda, nv, r, d, {terminated = t})
end)

-- GAE{gamma=, lmbda=, average_gae=false, ...}: generalized advantage
-- estimation; value_target = advantage + V(s).
local GAE = estimator("GAE", with("gamma", "lmbda", "average_gae"), nil)
function GAE:_estimate(fname, td)
  local r, d, t = self:_rdt(fname, td)
  local v, nv = self:_values(fname, td, true)
  v, nv = as_steps(fname, "the state value", v, r), as_steps(fname, "the next state value", nv, r)
  local adv, target = VF.vec_generalized_advantage_estimate(self.gamma, self.lmbda, v, nv, r, d:to(torch.bool),
                                                            {terminated = t:to(torch.bool)})
  if self.average_gae then
    adv = (adv - adv:mean()) / adv:std():clamp(1e-4, math.huge)
  end
  return adv, target
end

function GAE:value_estimate(td)
  local _, target = self:_estimate(PREFIX .. "GAE.value_estimate", td)
  return target
end

return M
