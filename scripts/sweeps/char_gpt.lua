-- scripts/sweeps/char_gpt.lua -- a random search over the learning rate and
-- dropout of scripts/train_char_gpt.lua (a small model, 300 steps each),
-- sorted by the best validation loss:
--   moontorch sweep scripts/sweeps/char_gpt.lua --jobs 2
return {
  name = "char_gpt",
  script = "../train_char_gpt.lua",
  base = {steps = 300, eval_every = 50, layers = 2, embed = 64, heads = 4, block_size = 64},
  search = "random",
  samples = 6,
  seed = 1,
  axes = {lr = {log_uniform = {3e-4, 3e-3}}, dropout = {0, 0.1}},
  metric = {name = "val_loss", mode = "min", use = "best"},
  plot = {"val_loss", "train_loss"},
  jobs = 2,
}
