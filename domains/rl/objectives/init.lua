-- torch.rl.objectives -- TorchRL's losses and value estimators. A package
-- whose submodules load on first use (torch.rl.objectives.value, ...);
-- the losses' helpers add their names here.
return require("torch")._package("torch.rl.objectives")
