-- torch.rl.objectives._pg -- what the policy-gradient losses (ClipPPO,
-- KLPENPPO, A2C, Reinforce) share: option parsing, the advantage (read
-- from the TensorDict or computed by the value estimator with the critic
-- frozen), the entropy bonus, the critic loss.
local torch = require "torch"
local U = require "torch.nn.util"
local C = require "torch.rl.objectives.common"
local K = require "torch.rl.modules.keys"

local M = {}

M.KEYS = {advantage = "advantage", value_target = "value_target", value = "state_value",
          sample_log_prob = "action_log_prob", action = "action", reward = "reward", done = "done",
          terminated = "terminated"}

-- setup(self, fname, actor, critic, o): registers the networks and the
-- common options (entropy_coef / entropy_coeff, critic_coef /
-- critic_coeff, loss_critic_type, normalize_advantage, gamma).
function M.setup(self, fname, actor, critic, o)
  C.module_check(fname, "actor_network", actor)
  if type(actor.get_dist) ~= "function" then
    error(fname .. ": actor_network must be a ProbabilisticActor (it needs get_dist)", 3)
  end
  self:convert_to_functional(actor, "actor_network", false)
  if critic ~= nil then
    C.module_check(fname, "critic_network", critic)
    self:convert_to_functional(critic, "critic_network", o.delay_value or false)
  end
  self.entropy_bonus = o.entropy_bonus ~= false
  self.samples_mc_entropy = o.samples_mc_entropy or 1
  self.entropy_coef = o.entropy_coef or o.entropy_coeff or 0.01
  self.critic_coef = o.critic_coef or o.critic_coeff
  if self.critic_coef == nil then self.critic_coef = 1.0 end
  self.loss_critic_type = C.check_loss_function(fname, "loss_critic_type", o.loss_critic_type or "smooth_l1")
  self.normalize_advantage = o.normalize_advantage or false
  rawset(self, "_gamma", o.gamma)
  self:_init_keys(M.KEYS)
  self.default_value_estimator = C.ValueEstimators.GAE
end

-- the estimator runs the critic (frozen, without gradients).
function M.estimator_network(self) return self._modules.map.critic_network end

function M.sync_keys(self)
  local e = rawget(self, "_value_estimator")
  if not e then return end
  local k = self.tensor_keys
  e:set_keys({advantage = k.advantage, value_target = k.value_target, value = k.value, reward = k.reward,
              done = k.done, terminated = k.terminated})
end

-- advantage(self, td) -> the advantage [*B, 1] (normalized when asked),
-- computing it (and value_target) into td when absent.
function M.advantage(self, td)
  local adv = td:get(self.tensor_keys.advantage)
  if adv == nil then
    if not self._modules.map.critic_network then
      error(C.PREFIX .. self:_get_name() .. ": the TensorDict has no '" .. K.str(self.tensor_keys.advantage)
            .. "' and the loss has no critic to compute it", 3)
    end
    self:_estimator()(td)
    adv = td:get(self.tensor_keys.advantage)
  end
  if self.normalize_advantage and adv:numel() > 1 then
    adv = (adv - adv:mean()) / adv:std():clamp(1e-6, math.huge)
  end
  return adv
end

-- log_prob(self, td) -> log pi(action | s) [*B] of the current actor, and the distribution.
function M.log_prob(self, td)
  local action = self:_get(td, "action")
  local dist = self.actor_network:get_dist(td)
  return dist:log_prob(action), dist
end

-- entropy(self, dist) -> its entropy, or a Monte-Carlo estimate
-- -mean log p(x), x ~ dist (samples_mc_entropy draws) when no closed form.
function M.entropy(self, dist)
  local ok, e = pcall(function() return dist:entropy() end)
  if ok then return e end
  local x = dist:rsample({self.samples_mc_entropy})
  return -dist:log_prob(x):mean(1)
end

-- critic_loss(self, td) -> critic_coef * distance(value_target, V(s)) [*B, 1].
function M.critic_loss(self, td)
  local target = self:_get(td, "value_target")
  self.critic_network(td)
  local v = self:_get(td, "value")
  return C.distance_loss(target, v, self.loss_critic_type) * self.critic_coef
end

-- finish(self, out, td, dist): adds the entropy and critic terms.
function M.finish(self, out, td, dist)
  if self.entropy_bonus then
    local e = M.entropy(self, dist)
    out.entropy = e:detach():mean()
    out.loss_entropy = -(e:mean() * self.entropy_coef)
  end
  if self.critic_coef ~= false and self._modules.map.critic_network then
    out.loss_critic = M.critic_loss(self, td):mean()
  end
  return C.out(out)
end

-- unsqueeze_like(x, adv): x [*B] -> [*B, 1] when adv has one more dim.
function M.like_adv(x, adv)
  if x:dim() == adv:dim() - 1 then return x:unsqueeze(-1) end
  return x
end

M.NAMES = {"entropy_bonus", "samples_mc_entropy", "entropy_coef", "entropy_coeff", "critic_coef", "critic_coeff",
           "loss_critic_type", "normalize_advantage", "gamma", "separate_losses", "reduction", "clip_value",
           "functional", "actor", "critic", "advantage_key", "value_target_key", "value_key"}

-- args(fname, extra, ...) -> options of the common names plus extra.
function M.args(fname, extra, ...)
  local names = {}
  for _, n in ipairs(extra) do names[#names + 1] = n end
  for _, n in ipairs(M.NAMES) do names[#names + 1] = n end
  local o = U.args(fname, names, nil, ...)
  C.check_unsupported(fname, o)
  if o.clip_value ~= nil and o.clip_value ~= false then error(fname .. ": clip_value is not supported", 3) end
  return o
end

-- set_key_options(self, o): the *_key options, then the default value
-- estimator (loss.value_estimator exists from the start, as TorchRL's
-- property).
function M.set_key_options(self, o)
  local keys = {}
  for _, n in ipairs{"advantage", "value_target", "value"} do
    if o[n .. "_key"] ~= nil then keys[n] = o[n .. "_key"] end
  end
  if next(keys) then self:set_keys(keys) end
  if self._modules.map.critic_network then self:make_value_estimator() end
end

-- class(name) -> a new policy-gradient loss class (C.LossModule:extend)
-- whose value estimator runs the loss's critic
function M.class(name)
  local cls = C.LossModule:extend(name)
  cls.__prefix = C.PREFIX
  cls._estimator_network = M.estimator_network
  cls._sync_estimator_keys = M.sync_keys
  return cls
end

return M
