-- torch.rl.objectives.a2c -- A2CLoss and ReinforceLoss: the
-- policy-gradient objective -mean(log pi(a|s) A) with a critic; A2C adds
-- the entropy bonus and weighs the critic by critic_coef, Reinforce
-- reports loss_actor and loss_value (TorchRL's names).
local C = require "torch.rl.objectives.common"
local PG = require "torch.rl.objectives._pg"

local M = {}
local PREFIX = C.PREFIX

local A2CLoss = PG.class("A2CLoss")
M.A2CLoss = A2CLoss

-- A2CLoss(actor_network, critic_network[, {entropy_bonus=true,
-- samples_mc_entropy=1, entropy_coef=0.01, critic_coef=1,
-- loss_critic_type="smooth_l1", normalize_advantage=false, gamma=}]).
function A2CLoss:__init(actor_network, critic_network, ...)
  local fname = PREFIX .. "A2CLoss"
  local o = PG.args(fname, {}, ...)
  PG.setup(self, fname, actor_network or o.actor, critic_network or o.critic, o)
  PG.set_key_options(self, o)
end

-- forward(td) -> TensorDict{loss_objective = -mean(log pi(a|s) A),
-- entropy, loss_entropy, loss_critic}.
function A2CLoss:forward(td)
  td = td:copy()
  local adv = PG.advantage(self, td)
  local lp, dist = PG.log_prob(self, td)
  lp = PG.like_adv(lp, adv)
  return PG.finish(self, {loss_objective = -(lp * adv:detach()):mean()}, td, dist)
end

local ReinforceLoss = PG.class("ReinforceLoss")
M.ReinforceLoss = ReinforceLoss

-- ReinforceLoss(actor_network, critic_network[, {delay_value=false,
-- loss_critic_type="smooth_l1", normalize_advantage=false, gamma=}]).
function ReinforceLoss:__init(actor_network, critic_network, ...)
  local fname = PREFIX .. "ReinforceLoss"
  local o = PG.args(fname, {"delay_value"}, ...)
  PG.setup(self, fname, actor_network or o.actor, critic_network or o.critic, o)
  self.entropy_bonus, self.critic_coef = false, 1.0
  PG.set_key_options(self, o)
end

-- forward(td) -> TensorDict{loss_actor = -mean(log pi(a|s) A),
-- loss_value = mean distance(value_target, V(s))}.
function ReinforceLoss:forward(td)
  td = td:copy()
  local adv = PG.advantage(self, td)
  local lp = PG.like_adv((PG.log_prob(self, td)), adv)
  local out = {loss_actor = -(lp * adv:detach()):mean()}
  if self._modules.map.critic_network then out.loss_value = PG.critic_loss(self, td):mean() end
  return C.out(out)
end

return M
