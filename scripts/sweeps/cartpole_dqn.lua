-- scripts/sweeps/cartpole_dqn.lua -- DQN on CartPole-v1 over five seeds
-- (scripts/rl/cartpole_dqn.lua): frames and seconds to solve per seed.
--   moontorch sweep scripts/sweeps/cartpole_dqn.lua --jobs 2
-- Results in runs/cartpole_dqn/ (summary.md, summary.csv, summary.png).
return {
  name = "cartpole_dqn",
  script = "../rl/cartpole_dqn.lua",
  base = {threads = 1},
  axes = {seed = {1, 2, 3, 4, 5}},
  metric = {name = "eval_return", mode = "max"},
  plot = {"episode_return", "eval_return"},
  jobs = 2,
}
