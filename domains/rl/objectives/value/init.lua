-- torch.rl.objectives.value -- value estimators: the modules GAE,
-- TD0Estimator, TD1Estimator and TDLambdaEstimator (advantages.lua) and
-- their functional forms (torch.rl.objectives.value.functional, loaded on
-- first use).
local M = require("torch")._package("torch.rl.objectives.value")
for k, v in pairs(require "torch.rl.objectives.value.advantages") do M[k] = v end
return M
