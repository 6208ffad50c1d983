-- torch.rl.objectives -- TorchRL's losses: DQNLoss, ClipPPOLoss,
-- KLPENPPOLoss, A2CLoss, ReinforceLoss, DDPGLoss, TD3Loss, SACLoss,
-- DiscreteSACLoss; LossModule, ValueEstimators, distance_loss; target
-- updaters SoftUpdate and HardUpdate. torch.rl.objectives.value holds the
-- value estimators (loaded on first use).
local M = require("torch")._package("torch.rl.objectives")
for _, sub in ipairs{"common", "dqn", "ppo", "a2c", "ddpg", "td3", "sac", "utils"} do
  for k, v in pairs(require("torch.rl.objectives." .. sub)) do
    if k:sub(1, 1) ~= "_" and k ~= "PREFIX" and k ~= "out" and k ~= "frozen" and k ~= "module_check"
       and k ~= "check_loss_function" then M[k] = v end
  end
end
return M
