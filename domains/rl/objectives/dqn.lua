-- torch.rl.objectives.dqn -- DQNLoss (Mnih et al. 2015) with a delayed
-- target network and double DQN (van Hasselt et al. 2016): the distance
-- between Q(s, a) and r + gamma (1 - terminated) Q'(s', a*), a* the target
-- network's greedy action (the online network's for double DQN).
local torch = require "torch"
local U = require "torch.nn.util"
local F = require "torch.nn.functional"
local C = require "torch.rl.objectives.common"
local OP = require "torch.rl.objectives._offpolicy"
local K = require "torch.rl.modules.keys"

local M = {}
local PREFIX = C.PREFIX

local DQNLoss = OP.class("DQNLoss")
M.DQNLoss = DQNLoss

-- DQNLoss(value_network[, {loss_function="l2", delay_value=true,
-- double_dqn=false, action_space=, gamma=}]): value_network is a
-- QValueActor (writes action_value).
function DQNLoss:__init(value_network, ...)
  local fname = PREFIX .. "DQNLoss"
  local o = U.args(fname, {"loss_function", "delay_value", "double_dqn", "action_space", "gamma", "priority_key",
                           "reduction"}, {loss_function = "l2", delay_value = true, double_dqn = false}, ...)
  C.check_unsupported(fname, o)
  C.module_check(fname, "value_network", value_network)
  self.loss_function = C.check_loss_function(fname, "loss_function", o.loss_function)
  self.delay_value, self.double_dqn = o.delay_value, o.double_dqn
  if self.double_dqn and not self.delay_value then
    error(fname .. ": double_dqn needs a target network (delay_value=true)", 2)
  end
  self:convert_to_functional(value_network, "value_network", self.delay_value)
  local space = o.action_space or value_network.action_space
  self.action_space = require("torch.rl.modules.actors")._space_of(fname, space, value_network.spec)
  OP.setup_common(self, o)
  if o.priority_key then self.tensor_keys.priority = o.priority_key end
end

-- chosen(self, q, action) -> Q at the taken actions [*B] (1-based indices or one-hot).
local function chosen(self, q, action)
  if self.action_space == "categorical" then
    if action:dim() == q:dim() then action = action:squeeze(-1) end
    local n = q.shape[q:dim()]
    if not torch.compiler.is_compiling() and (action:min():item() < 1 or action:max():item() > n) then
      error(("%s: actions must be 1-based indices in 1..%d, got values from %d to %d"):format(PREFIX
            .. "DQNLoss", n, action:min():item(), action:max():item()), 3)
    end
    return q:gather(-1, action:to(torch.int64):unsqueeze(-1)):squeeze(-1)
  end
  return (q * action:to(q.dtype)):sum(-1)
end

-- forward(td) -> TensorDict{loss}; writes td_error = (Q - target)^2 into td.
function DQNLoss:forward(td)
  local fname = PREFIX .. "DQNLoss"
  local action = self:_get(td, "action")
  local w = self.value_network(td:copy())
  local q = K.get(fname, w, self.tensor_keys.action_value)
  local pred = chosen(self, q, action)
  local nv = torch.no_grad(function()
    local nxt = OP.next_td(self, td)
    local qt = K.get(fname, self:_target("value_network")(nxt:copy()), self.tensor_keys.action_value)
    if self.double_dqn then
      local qo = K.get(fname, self.value_network(nxt:copy()), self.tensor_keys.action_value)
      return qt:gather(-1, qo:argmax(-1, true))
    end
    return qt:amax(-1, true) -- (amax: the values alone, which torch.compile replays)
  end)
  local target = OP.target(self, td, nv)
  td:set(self.tensor_keys.priority, (pred - target):pow(2):detach())
  return C.out({loss = C.distance_loss(pred, target, self.loss_function):mean()})
end

return M
