-- torch.rl.objectives.ddpg -- DDPGLoss (Lillicrap et al. 2016): the actor
-- maximizes Q(s, mu(s)) with the critic frozen; the critic regresses on
-- r + gamma (1 - terminated) Q'(s', mu'(s')) from the target networks.
local torch = require "torch"
local U = require "torch.nn.util"
local C = require "torch.rl.objectives.common"
local OP = require "torch.rl.objectives._offpolicy"
local K = require "torch.rl.modules.keys"

local M = {}
local PREFIX = C.PREFIX

local DDPGLoss = OP.class("DDPGLoss")
M.DDPGLoss = DDPGLoss

-- DDPGLoss(actor_network, value_network[, {loss_function="l2",
-- delay_actor=false, delay_value=true, gamma=}]).
function DDPGLoss:__init(actor_network, value_network, ...)
  local fname = PREFIX .. "DDPGLoss"
  local o = U.args(fname, {"loss_function", "delay_actor", "delay_value", "gamma", "separate_losses", "reduction"},
                   {loss_function = "l2", delay_actor = false, delay_value = true}, ...)
  C.check_unsupported(fname, o)
  C.module_check(fname, "actor_network", actor_network)
  C.module_check(fname, "value_network", value_network)
  self.loss_function = C.check_loss_function(fname, "loss_function", o.loss_function)
  self:convert_to_functional(actor_network, "actor_network", o.delay_actor)
  self:convert_to_functional(value_network, "value_network", o.delay_value)
  OP.setup_common(self, o)
end

-- forward(td) -> TensorDict{loss_actor, loss_value, pred_value,
-- target_value, td_error}; writes td_error into td.
function DDPGLoss:forward(td)
  local fname = PREFIX .. "DDPGLoss"
  local sav = self.tensor_keys.state_action_value
  -- actor: -Q(s, mu(s)), gradients to the actor only
  local ta = td:copy():detach()
  self.actor_network(ta)
  local qa = C.frozen(self.value_network, function() return K.get(fname, self.value_network(ta), sav) end)
  local loss_actor = -qa:mean()
  -- critic
  local pred = K.get(fname, self.value_network(td:copy()), sav):squeeze(-1)
  local nv = torch.no_grad(function()
    local nxt = OP.next_td(self, td)
    self:_target("actor_network")(nxt)
    return K.get(fname, self:_target("value_network")(nxt), sav)
  end)
  local target = OP.target(self, td, nv)
  local td_error = (pred - target):pow(2):detach()
  td:set(self.tensor_keys.priority, td_error)
  return C.out({loss_actor = loss_actor, loss_value = C.distance_loss(pred, target, self.loss_function):mean(),
                pred_value = pred:detach():mean(), target_value = target:mean(), td_error = td_error:mean()})
end

return M
