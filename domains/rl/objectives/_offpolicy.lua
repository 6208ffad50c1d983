-- torch.rl.objectives._offpolicy -- what the off-policy losses (DQN, DDPG,
-- TD3, SAC) share: the value target from next-state values through the
-- value estimator, running N Q-networks and stacking their outputs, and
-- Q-network ensembles (the first network is the one given; the others are
-- fresh copies re-initialized, as TorchRL's expanded parameters).
local torch = require "torch"
local nn = require "torch.nn"
local C = require "torch.rl.objectives.common"
local K = require "torch.rl.modules.keys"

local M = {}
local clone_module = require("torch.nn.transformer")._clone_module

M.KEYS = {action = "action", state_action_value = "state_action_value", action_value = "action_value",
          value = "state_value", reward = "reward", done = "done", terminated = "terminated",
          priority = "td_error", log_prob = "action_log_prob", sample_log_prob = "action_log_prob"}

-- ensemble(net, n) -> ModuleList{net, copies of net with reset parameters}.
function M.ensemble(net, n)
  local list = {net}
  for i = 2, n do
    local c = clone_module(net)
    c:apply(function(m) if rawget(getmetatable(m), "reset_parameters") or m.reset_parameters then
      if type(m.reset_parameters) == "function" then m:reset_parameters() end end end)
    list[i] = c
  end
  return nn.ModuleList(list)
end

-- run_all(nets, td, key) -> [N, *B, ...]: each network run on a shallow
-- copy of td, its output at key stacked along a new first dim.
function M.run_all(fname, nets, td, key)
  local outs = {}
  for i, net in ipairs(nets:children()) do
    local t = net(td:copy())
    outs[i] = K.get(fname, t, key)
  end
  return torch.stack(outs, 1)
end

-- target(self, td, next_value) -> the value target [*B] from next-state
-- values [*B, 1] (without gradients), through the loss's estimator.
function M.target(self, td, next_value)
  local e = self:_estimator()
  local t = td:copy()
  local nxt = t:get("next")
  if nxt == nil then
    error(C.PREFIX .. self:_get_name() .. ": the TensorDict has no 'next' (the transition's next step)", 3)
  end
  nxt:set(e.tensor_keys.value, next_value:detach())
  return e:value_estimate(t):squeeze(-1):detach()
end

-- sync_keys(self): the estimator reads the reward/done/terminated keys
-- of the loss and the next values the loss writes under value_key.
function M.sync_keys(self)
  local e = rawget(self, "_value_estimator")
  if not e then return end
  local k = self.tensor_keys
  e:set_keys({value = "_next_value", reward = k.reward, done = k.done, terminated = k.terminated})
end

-- estimator_network: none (the loss writes the next values).
function M.no_network() return false end

-- setup_common(self, o): gamma, key options, default TD(0) estimator.
function M.setup_common(self, o)
  rawset(self, "_gamma", o.gamma)
  self:_init_keys(M.KEYS)
  self.default_value_estimator = C.ValueEstimators.TD0
  self:make_value_estimator()
end

-- next_td(self, td) -> td's "next" sub-TensorDict (shallow copy), or an error.
function M.next_td(self, td)
  return K.get(C.PREFIX .. self:_get_name(), td, "next"):copy()
end

-- class(name) -> a new off-policy loss class (C.LossModule:extend) whose
-- value estimator reads the next values the loss writes (no network)
function M.class(name)
  local cls = C.LossModule:extend(name)
  cls.__prefix = C.PREFIX
  cls._estimator_network = M.no_network
  cls._sync_estimator_keys = M.sync_keys
  return cls
end

return M
