-- torch.rl.modules -- TorchRL's policy building blocks. Submodules load on
-- first use. Minimal for now: the distributions of
-- torch.rl.modules.distributions (TanhNormal, IndependentNormal,
-- OneHotCategorical, MaskedCategorical) are fields; the networks and
-- actors (MLP, ProbabilisticActor, ...) add theirs here.
local M = require("torch")._package("torch.rl.modules")
for k, v in pairs(require "torch.rl.modules.distributions") do M[k] = v end
return M
