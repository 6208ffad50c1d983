-- torch.rl.objectives -- TorchRL's losses: DQNLoss, ClipPPOLoss,
-- KLPENPPOLoss, A2CLoss, ReinforceLoss, DDPGLoss, TD3Loss, SACLoss,
-- DiscreteSACLoss; LossModule, ValueEstimators, distance_loss; target
-- updaters SoftUpdate and HardUpdate. torch.rl.objectives.value holds the
-- value estimators (loaded on first use).
local M = require("torch")._package("torch.rl.objectives")
-- common.lua's helpers for the loss files, not public names
local INTERNAL = {PREFIX = true, out = true, frozen = true, module_check = true, check_loss_function = true,
                  check_unsupported = true}
for _, sub in ipairs{"common", "dqn", "ppo", "a2c", "ddpg", "td3", "sac", "utils"} do
  for k, v in pairs(require("torch.rl.objectives." .. sub)) do
    if k:sub(1, 1) ~= "_" and not INTERNAL[k] then M[k] = v end
  end
end
return M
