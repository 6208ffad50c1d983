-- torch.rl.objectives.td3 -- TD3Loss (Fujimoto et al. 2018): twin
-- Q-networks, the target of the smaller target Q at the target actor's
-- action plus clipped Gaussian noise (target policy smoothing), and an
-- actor loss -Q_1(s, mu(s)) with the critics frozen.
local torch = require "torch"
local U = require "torch.nn.util"
local C = require "torch.rl.objectives.common"
local OP = require "torch.rl.objectives._offpolicy"
local K = require "torch.rl.modules.keys"

local M = {}
local PREFIX = C.PREFIX

local TD3Loss = OP.class("TD3Loss")
M.TD3Loss = TD3Loss

-- bounds(fname, o) -> low, high of the action from action_spec
-- (low/high fields) or bounds={low, high}.
local function bounds(fname, o)
  if o.bounds ~= nil then
    if type(o.bounds) ~= "table" or o.bounds[1] == nil or o.bounds[2] == nil then
      error(fname .. ": bounds must be {low, high}", 3)
    end
    return o.bounds[1], o.bounds[2]
  end
  local s = o.action_spec
  if type(s) == "table" then
    local lo, hi = s.low, s.high
    if lo == nil and type(s.space) == "table" then lo, hi = s.space.low, s.space.high end
    if lo ~= nil and hi ~= nil then return lo, hi end
  end
  error(fname .. ": TD3 clamps the smoothed target action: pass action_spec (a Bounded spec) or bounds={low, high}", 3)
end

-- TD3Loss(actor_network, qvalue_network[, {action_spec= | bounds=,
-- num_qvalue_nets=2, policy_noise=0.2, noise_clip=0.5,
-- loss_function="smooth_l1", delay_actor=true, delay_qvalue=true, gamma=}]).
function TD3Loss:__init(actor_network, qvalue_network, ...)
  local fname = PREFIX .. "TD3Loss"
  local o = U.args(fname, {"action_spec", "bounds", "num_qvalue_nets", "policy_noise", "noise_clip", "loss_function",
                           "delay_actor", "delay_qvalue", "gamma", "priority_key", "separate_losses", "reduction"},
                   {num_qvalue_nets = 2, policy_noise = 0.2, noise_clip = 0.5, loss_function = "smooth_l1",
                    delay_actor = true, delay_qvalue = true}, ...)
  C.check_unsupported(fname, o)
  C.module_check(fname, "actor_network", actor_network)
  C.module_check(fname, "qvalue_network", qvalue_network)
  U.size(fname, "num_qvalue_nets", o.num_qvalue_nets, 1)
  self.low, self.high = bounds(fname, o)
  self.policy_noise, self.noise_clip = U.number(fname, "policy_noise", o.policy_noise),
                                       U.number(fname, "noise_clip", o.noise_clip)
  self.loss_function = C.check_loss_function(fname, "loss_function", o.loss_function)
  self.num_qvalue_nets = o.num_qvalue_nets
  self:convert_to_functional(actor_network, "actor_network", o.delay_actor)
  self:convert_to_functional(OP.ensemble(qvalue_network, o.num_qvalue_nets), "qvalue_network", o.delay_qvalue)
  OP.setup_common(self, o)
end

-- _policy_noise(action) -> N(0, policy_noise^2) noise of the action's
-- shape (before clipping to +-noise_clip).
function TD3Loss:_policy_noise(action)
  return torch.randn_like(action) * self.policy_noise
end

local function clamp_to(x, lo, hi)
  if torch.is_tensor(lo) or torch.is_tensor(hi) then
    return torch.minimum(torch.maximum(x, torch.as_tensor(lo):to(x.dtype)), torch.as_tensor(hi):to(x.dtype))
  end
  return x:clamp(lo, hi)
end

-- forward(td) -> TensorDict{loss_actor, loss_qvalue, pred_value,
-- state_action_value_actor, next_state_value, target_value}.
function TD3Loss:forward(td)
  local fname = PREFIX .. "TD3Loss"
  local sav, akey = self.tensor_keys.state_action_value, self.tensor_keys.action
  -- actor: -Q_1(s, mu(s)), critics frozen
  local ta = td:copy():detach()
  self.actor_network(ta)
  local qa = C.frozen(self.qvalue_network, function()
    return OP.run_all(fname, self.qvalue_network, ta, sav):squeeze(-1)
  end)
  local loss_actor = -qa[1]:mean()
  -- critics
  local action = self:_get(td, "action")
  local nv = torch.no_grad(function()
    local nxt = OP.next_td(self, td)
    self:_target("actor_network")(nxt)
    local a = K.get(fname, nxt, akey)
    local noise = self:_policy_noise(a):clamp(-self.noise_clip, self.noise_clip)
    nxt:set(akey, clamp_to(a + noise, self.low, self.high))
    return (OP.run_all(fname, self:_target("qvalue_network"), nxt, sav):min(1))
  end)
  local target = OP.target(self, td, nv)
  local t = td:copy()
  t:set(akey, action)
  local pred = OP.run_all(fname, self.qvalue_network, t, sav):squeeze(-1)
  local loss_q = C.distance_loss(pred, target:expand_as(pred), self.loss_function):sum(1):mean()
  td:set(self.tensor_keys.priority, (pred - target):pow(2):detach():max(1))
  return C.out({loss_actor = loss_actor, loss_qvalue = loss_q, pred_value = pred:detach():mean(),
                state_action_value_actor = qa:detach():mean(), next_state_value = nv:mean(),
                target_value = target:mean()})
end

return M
