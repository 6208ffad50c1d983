-- torch.rl.envs._td_level -- the names torch.rl.envs gains from the
-- TensorDict-level files: EnvBase, GymLikeEnv, GymEnv, SerialEnv, the env
-- transforms and step_mdp / exploration helpers. Only gathers names.
local out = {}
local function add(mod, names)
  for name in names:gmatch("%S+") do
    if mod[name] == nil then error("torch.rl.envs: " .. name .. " is missing from its file") end
    out[name] = mod[name]
  end
end
add(require "torch.rl.envs.common", "EnvBase GymLikeEnv step_mdp exploration_type set_exploration_type ExplorationType")
add(require "torch.rl.envs.libs", "GymEnv SerialEnv")
add(require "torch.rl.envs.transforms", "Transform TransformedEnv Compose StepCounter RewardSum ObservationNorm " ..
  "VecNorm CatFrames DoubleToFloat InitTracker RewardScaling")
return out
