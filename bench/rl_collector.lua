-- bench/rl_collector.lua -- the TensorDict-level overhead per env step:
-- GymEnv("CartPole-v1") rollouts (random actions, copies reset as they
-- end) with 1, 16 and 256 copies, the same under StepCounter + RewardSum,
-- and SyncDataCollector batches. Prints RESULT rows (seconds per step,
-- frames/s). No peer runs here (TorchRL is not installable): TorchRL's
-- ParallelEnv publishes about 1,000 frames/s. Run: build/moontorch
-- bench/rl_collector.lua [row]
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local E, C = torch.rl.envs, torch.rl.collectors
local only = arg and arg[1]
local function want(name) return not only or only == "all" or only == name end

local T = 500
for _, n in ipairs({1, 16, 256}) do
  local function make()
    return E.GymEnv("CartPole-v1", n > 1 and {num_envs = n, seed = 0} or {seed = 0})
  end
  local frames = T * n
  if want("rollout_" .. n) then
    local env = make()
    local secs = B.time(function() env:rollout(T, nil, {break_when_any_done = false}) end, 1, 5) / T
    B.report("rollout_" .. n, secs, n / secs, "frames/s")
  end
  if want("rollout_transformed_" .. n) then
    local env = E.TransformedEnv(make(), E.Compose(E.StepCounter(500), E.RewardSum()))
    local secs = B.time(function() env:rollout(T, nil, {break_when_any_done = false}) end, 1, 5) / T
    B.report("rollout_transformed_" .. n, secs, n / secs, "frames/s")
  end
  if want("collector_" .. n) then
    local c = C.SyncDataCollector(make(), nil, {frames_per_batch = frames})
    local secs = B.time(function() c:next_batch() end, 1, 5) / T
    B.report("collector_" .. n, secs, n / secs, "frames/s")
  end
end
