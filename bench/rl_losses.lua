-- bench/rl_losses.lua -- one forward + backward of a torch.rl loss on a
-- minibatch, CleanRL's networks and batch sizes: DQN on CartPole (4 ->
-- 120 -> 84 -> 2, ReLU, batch 128, target network), ClipPPO on CartPole
-- (64x64 tanh actor and critic, minibatch 128, advantages given) and SAC on
-- Pendulum (256x256 ReLU actor and twin critics, batch 256, TanhNormal,
-- automatic alpha). The peer, bench/peers/rl_losses.py, writes the same
-- math in plain PyTorch (TorchRL is not installable here).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local nn = torch.nn
local M, O = torch.rl.modules, torch.rl.objectives
local TD = torch.rl.TensorDict

local function one_step(obs, n)
  return {observation = obs, reward = torch.randn(n, 1), terminated = torch.zeros(n, 1, {dtype = torch.bool}),
          done = torch.zeros(n, 1, {dtype = torch.bool})}
end

torch.manual_seed(0)
do -- DQN
  local n = 128
  local q = M.QValueActor(M.MLP{in_features = 4, out_features = 2, num_cells = {120, 84}, activation_class = nn.ReLU},
                          {action_space = "categorical"})
  local loss = O.DQNLoss(q)
  local td = TD({observation = torch.randn(n, 4), action = torch.randint(1, 3, {n}),
                 next = one_step(torch.randn(n, 4), n)}, {n})
  B.report("rl_dqn_loss_b128", B.time(function()
    local o = loss(td)
    o.loss:backward()
  end, 50))
end

do -- ClipPPO
  local n = 128
  local actor = M.ProbabilisticActor{module = M.TensorDictModule(M.MLP{in_features = 4, out_features = 2,
    num_cells = {64, 64}}, {"observation"}, {"logits"}), in_keys = {"logits"},
    distribution_class = torch.distributions.Categorical, return_log_prob = true}
  local critic = M.ValueOperator(M.MLP{in_features = 4, out_features = 1, num_cells = {64, 64}})
  local loss = O.ClipPPOLoss(actor, critic)
  local td = TD({observation = torch.randn(n, 4), action = torch.randint(1, 3, {n}),
                 action_log_prob = -torch.rand(n), advantage = torch.randn(n, 1), value_target = torch.randn(n, 1)}, {n})
  B.report("rl_ppo_loss_b128", B.time(function()
    local o = loss(td)
    ;(o.loss_objective + o.loss_entropy + o.loss_critic):backward()
  end, 50))
end

do -- SAC
  local n = 256
  local pnet = M.TensorDictModule(M.MLP{in_features = 3, out_features = 2, num_cells = {256, 256},
                                        activation_class = nn.ReLU}, {"observation"}, {"p"})
  local split = M.TensorDictModule(function(p)
    return p:narrow(-1, 1, 1), torch.nn.functional.softplus(p:narrow(-1, 2, 1)) + 1e-4
  end, {"p"}, {"loc", "scale"})
  local actor = M.ProbabilisticActor{module = M.TensorDictSequential(pnet, split), in_keys = {"loc", "scale"},
                                     distribution_class = M.TanhNormal}
  local q = M.ValueOperator(M.MLP{in_features = 4, out_features = 1, num_cells = {256, 256},
                                  activation_class = nn.ReLU}, {"observation", "action"})
  local loss = O.SACLoss(actor, q)
  local td = TD({observation = torch.randn(n, 3), action = torch.rand(n, 1) * 2 - 1,
                 next = one_step(torch.randn(n, 3), n)}, {n})
  B.report("rl_sac_loss_b256", B.time(function()
    local o = loss(td)
    ;(o.loss_actor + o.loss_qvalue + o.loss_alpha):backward()
  end, 20))
end
