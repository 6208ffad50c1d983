-- scripts/sweeps/cartpole_ppo.lua -- PPO on CartPole-v1 over five seeds and
-- two learning rates (scripts/rl/cartpole_ppo.lua): how reliably and how fast
-- it solves.
--   moontorch sweep scripts/sweeps/cartpole_ppo.lua --jobs 2
-- Results in runs/cartpole_ppo/ (summary.md, summary.csv, summary.png).
return {
  name = "cartpole_ppo",
  script = "../rl/cartpole_ppo.lua",
  base = {threads = 1},
  axes = {seed = {1, 2, 3, 4, 5}, lr = {2.5e-4, 1e-3}},
  metric = {name = "eval_return", mode = "max"},
  plot = {"episode_return", "eval_return"},
  jobs = 2,
}
