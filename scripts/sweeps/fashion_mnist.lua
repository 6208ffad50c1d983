-- scripts/sweeps/fashion_mnist.lua -- learning rate x batch size for the
-- CNN of scripts/train_fashion_mnist.lua, one epoch each:
--   moontorch sweep scripts/sweeps/fashion_mnist.lua --jobs 2
-- Results in runs/fashion_mnist/ (summary.md, summary.csv, summary.png).
return {
  name = "fashion_mnist",
  script = "../train_fashion_mnist.lua",
  base = {epochs = 1, model = "cnn", workers = 1},
  axes = {lr = {1e-3, 3e-3}, batch_size = {32, 64, 128}},
  metric = {name = "test_accuracy", mode = "max"},
  plot = {"train_loss", "test_accuracy"},
  jobs = 2,
}
