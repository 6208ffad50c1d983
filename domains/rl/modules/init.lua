-- torch.rl.modules -- TorchRL's policy building blocks: the distributions
-- (TanhNormal, IndependentNormal, OneHotCategorical, MaskedCategorical),
-- MLP, TensorDictModule / TensorDictSequential, Actor, ValueOperator,
-- ProbabilisticActor, QValueModule / QValueActor, EGreedyModule, and the
-- exploration type (set_exploration_type, ExplorationType).
local M = require("torch")._package("torch.rl.modules")
for _, sub in ipairs{"distributions", "models", "tensordict_module", "probabilistic", "actors", "exploration"} do
  for k, v in pairs(require("torch.rl.modules." .. sub)) do
    if k:sub(1, 1) ~= "_" then M[k] = v end
  end
end
return M
