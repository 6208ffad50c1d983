-- torch.rl.objectives.sac -- SACLoss (Haarnoja et al. 2018, the version
-- without a state-value network) and DiscreteSACLoss (Christodoulou
-- 2019): soft Q targets with twin target Q-networks, the actor loss
-- alpha log pi - min Q with the critics frozen, and automatic temperature
-- tuning, loss_alpha = -log alpha (log pi + target_entropy).
local torch = require "torch"
local U = require "torch.nn.util"
local C = require "torch.rl.objectives.common"
local OP = require "torch.rl.objectives._offpolicy"
local K = require "torch.rl.modules.keys"
local E = require "torch.rl.modules.exploration"

local M = {}
local PREFIX = C.PREFIX
local RANDOM = E.ExplorationType.RANDOM

-- alpha_setup(self, fname, o): log_alpha (a parameter unless fixed_alpha) and its bounds.
local function alpha_setup(self, fname, o)
  U.number(fname, "alpha_init", o.alpha_init)
  if o.alpha_init <= 0 then error(("%s: alpha_init must be positive, got %g"):format(fname, o.alpha_init), 3) end
  local la = torch.tensor(math.log(o.alpha_init))
  if o.fixed_alpha then self:register_buffer("log_alpha", la)
  else self.log_alpha = require("torch.nn").Parameter(la) end
  self.min_log_alpha = o.min_alpha and math.log(o.min_alpha) or nil
  self.max_log_alpha = o.max_alpha and math.log(o.max_alpha) or nil
  self.fixed_alpha = o.fixed_alpha or false
end

-- _alpha() -> exp(log_alpha) clamped to [min_alpha, max_alpha], without gradient.
local function alpha_of(self)
  local la = self.log_alpha:detach()
  if self.min_log_alpha or self.max_log_alpha then la = la:clamp(self.min_log_alpha, self.max_log_alpha) end
  return la:exp()
end

-- alpha_loss(self, log_prob) -> -log_alpha (log_prob + target_entropy), mean.
local function alpha_loss(self, log_prob)
  if self.fixed_alpha then return torch.zeros_like(log_prob):mean() end
  return (-self.log_alpha * (log_prob:detach() + self.target_entropy)):mean()
end

local SAC_NAMES = {"num_qvalue_nets", "loss_function", "alpha_init", "min_alpha", "max_alpha", "action_spec",
                   "fixed_alpha", "target_entropy", "delay_actor", "delay_qvalue", "delay_value", "gamma",
                   "priority_key", "separate_losses", "reduction", "value_network"}

local SACLoss = OP.class("SACLoss")
M.SACLoss = SACLoss

-- SACLoss(actor_network, qvalue_network[, {num_qvalue_nets=2,
-- loss_function="smooth_l1", alpha_init=1, min_alpha, max_alpha,
-- action_spec, fixed_alpha=false, target_entropy="auto" (-action dims),
-- delay_actor=false, delay_qvalue=true, gamma=}]).
function SACLoss:__init(actor_network, qvalue_network, ...)
  local fname = PREFIX .. "SACLoss"
  local o = U.args(fname, SAC_NAMES, {num_qvalue_nets = 2, loss_function = "smooth_l1", alpha_init = 1.0,
                                      target_entropy = "auto", delay_actor = false, delay_qvalue = true}, ...)
  if o.value_network ~= nil then error(fname .. ": the version with a value_network (SAC v1) is not supported", 2) end
  C.check_unsupported(fname, o)
  C.module_check(fname, "actor_network", actor_network)
  if type(actor_network.get_dist) ~= "function" then
    error(fname .. ": actor_network must be a ProbabilisticActor (it needs get_dist)", 2)
  end
  C.module_check(fname, "qvalue_network", qvalue_network)
  U.size(fname, "num_qvalue_nets", o.num_qvalue_nets, 1)
  self.loss_function = C.check_loss_function(fname, "loss_function", o.loss_function)
  self.num_qvalue_nets = o.num_qvalue_nets
  self:convert_to_functional(actor_network, "actor_network", o.delay_actor)
  self:convert_to_functional(OP.ensemble(qvalue_network, o.num_qvalue_nets), "qvalue_network", o.delay_qvalue)
  alpha_setup(self, fname, o)
  local te = o.target_entropy
  if te == "auto" then
    local spec = o.action_spec or rawget(actor_network, "spec")
    if type(spec) == "table" and type(spec.shape) == "table" and #spec.shape > 0 then
      local n = 1
      for _, s in ipairs(spec.shape) do n = n * s end
      te = -n
    else
      te = nil -- from the action's last dim at the first forward
    end
  elseif type(te) ~= "number" then
    error(fname .. ": target_entropy must be a number or \"auto\", got " .. tostring(te), 2)
  end
  self.target_entropy = te
  OP.setup_common(self, o)
end

-- forward(td) -> TensorDict{loss_actor, loss_qvalue, loss_alpha, alpha, entropy}.
function SACLoss:forward(td)
  local fname = PREFIX .. "SACLoss"
  local sav, akey = self.tensor_keys.state_action_value, self.tensor_keys.action
  local action = self:_get(td, "action")
  if self.target_entropy == nil then self.target_entropy = -action.shape[action:dim()] end
  local alpha = alpha_of(self)
  -- Q target: r + gamma (1 - terminated) (min_i Q'_i(s', a') - alpha log pi(a'|s')), a' ~ pi(s')
  local nv = torch.no_grad(function()
    return E.set_exploration_type(RANDOM, function()
      local nxt = OP.next_td(self, td)
      local dist = self:_target("actor_network"):get_dist(nxt)
      local a = dist:rsample()
      local lp = dist:log_prob(a)
      nxt:set(akey, a)
      local q = (OP.run_all(fname, self:_target("qvalue_network"), nxt, sav):min(1))
      if lp:dim() == q:dim() - 1 then lp = lp:unsqueeze(-1) end
      return q - alpha * lp
    end)
  end)
  local target = OP.target(self, td, nv)
  local t = td:copy()
  local pred = OP.run_all(fname, self.qvalue_network, t, sav):squeeze(-1)
  local loss_q = C.distance_loss(pred, target:expand_as(pred), self.loss_function):sum(1):mean()
  td:set(self.tensor_keys.priority, (pred - target):abs():detach():max(1))
  -- actor: alpha log pi(a~|s) - min_i Q_i(s, a~), a~ = rsample, critics frozen
  local ta = td:copy()
  local dist = E.set_exploration_type(RANDOM, function() return self.actor_network:get_dist(ta) end)
  local a = dist:rsample()
  local lp = dist:log_prob(a)
  ta:set(akey, a)
  local qmin = C.frozen(self.qvalue_network, function()
    return (OP.run_all(fname, self.qvalue_network, ta, sav):min(1)):squeeze(-1)
  end)
  local loss_actor = (alpha * lp - qmin):mean()
  return C.out({loss_actor = loss_actor, loss_qvalue = loss_q, loss_alpha = alpha_loss(self, lp), alpha = alpha,
                entropy = -lp:detach():mean()})
end

---------------------------------------------------------------- DiscreteSACLoss

local DiscreteSACLoss = OP.class("DiscreteSACLoss")
M.DiscreteSACLoss = DiscreteSACLoss

-- DiscreteSACLoss(actor_network, qvalue_network[, {action_space=,
-- num_actions=, num_qvalue_nets=2, loss_function="smooth_l1",
-- alpha_init=1, fixed_alpha=false, target_entropy_weight=0.98,
-- target_entropy="auto" (= weight * log(num_actions)), delay_qvalue=true,
-- gamma=}]): qvalue_network writes action_value [*B, num_actions].
function DiscreteSACLoss:__init(actor_network, qvalue_network, ...)
  local fname = PREFIX .. "DiscreteSACLoss"
  local o = U.args(fname, {"action_space", "num_actions", "num_qvalue_nets", "loss_function", "alpha_init",
                           "min_alpha", "max_alpha", "fixed_alpha", "target_entropy_weight", "target_entropy",
                           "delay_qvalue", "gamma", "priority_key", "separate_losses", "reduction"},
                   {num_qvalue_nets = 2, loss_function = "smooth_l1", alpha_init = 1.0, target_entropy_weight = 0.98,
                    target_entropy = "auto", delay_qvalue = true}, ...)
  C.check_unsupported(fname, o)
  C.module_check(fname, "actor_network", actor_network)
  if type(actor_network.get_dist) ~= "function" then
    error(fname .. ": actor_network must be a ProbabilisticActor (it needs get_dist)", 2)
  end
  C.module_check(fname, "qvalue_network", qvalue_network)
  U.size(fname, "num_qvalue_nets", o.num_qvalue_nets, 1)
  self.action_space = require("torch.rl.modules.actors")._space_of(fname, o.action_space, rawget(actor_network, "spec"))
  self.loss_function = C.check_loss_function(fname, "loss_function", o.loss_function)
  self:convert_to_functional(actor_network, "actor_network", false)
  self:convert_to_functional(OP.ensemble(qvalue_network, o.num_qvalue_nets), "qvalue_network", o.delay_qvalue)
  alpha_setup(self, fname, o)
  local te = o.target_entropy
  if te == "auto" then
    U.size(fname, "num_actions", o.num_actions, 1)
    te = -math.log(1.0 / o.num_actions) * o.target_entropy_weight
  elseif type(te) ~= "number" then
    error(fname .. ": target_entropy must be a number or \"auto\", got " .. tostring(te), 2)
  end
  self.target_entropy = te
  OP.setup_common(self, o)
end

-- probs_logp(dist) -> probs, log probs with 0 probabilities read as 1e-8.
local function probs_logp(dist)
  local p = dist.probs
  return p, torch.where(p:eq(0), torch.full_like(p, 1e-8), p):log()
end

-- forward(td) -> TensorDict{loss_actor, loss_qvalue, loss_alpha, alpha, entropy}.
function DiscreteSACLoss:forward(td)
  local fname = PREFIX .. "DiscreteSACLoss"
  local avk = self.tensor_keys.action_value
  local alpha = alpha_of(self)
  local nv = torch.no_grad(function()
    local nxt = OP.next_td(self, td)
    local p, lp = probs_logp(self.actor_network:get_dist(nxt))
    local q = (OP.run_all(fname, self:_target("qvalue_network"), nxt, avk):min(1))
    return (p * (q - alpha * lp)):sum(-1, true)
  end)
  local target = OP.target(self, td, nv)
  local action = self:_get(td, "action")
  local q = OP.run_all(fname, self.qvalue_network, td:copy(), avk)
  local pred
  if self.action_space == "categorical" then
    if action:dim() == q:dim() - 1 then action = action:squeeze(-1) end
    local idx = action:to(torch.int64):unsqueeze(-1):unsqueeze(1):expand({q.shape[1], table.unpack(action.shape),
                                                                          1})
    pred = q:gather(-1, idx):squeeze(-1)
  else
    pred = (q * action:to(q.dtype)):sum(-1)
  end
  local loss_q = C.distance_loss(pred, target:expand_as(pred), self.loss_function):sum(1):mean()
  td:set(self.tensor_keys.priority, (pred - target):abs():detach():max(1))
  local ta = td:copy()
  local p, lp = probs_logp(self.actor_network:get_dist(ta))
  local qmin = C.frozen(self.qvalue_network, function() return (OP.run_all(fname, self.qvalue_network, ta, avk):min(1)) end)
  local loss_actor = (p * (alpha * lp - qmin)):sum(-1):mean()
  local wlp = (p * lp):sum(-1):detach()
  return C.out({loss_actor = loss_actor, loss_qvalue = loss_q, loss_alpha = alpha_loss(self, wlp), alpha = alpha,
                entropy = -wlp:mean()})
end

return M
