-- torch.rl.objectives.value -- value estimators; their functional forms
-- (GAE, TD(0), TD(1), TD(lambda)) are torch.rl.objectives.value.functional,
-- loaded on first use.
return require("torch")._package("torch.rl.objectives.value")
