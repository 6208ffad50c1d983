-- bench/rl_mujoco.lua -- torch.rl.envs.MujocoEnv's stepping speed in
-- env-steps per second: libmujoco-samples' humanoid (frame_skip 5, as
-- Gymnasium's Humanoid), 64 copies stepped in one C call on 1 and on 2
-- threads, random actions in the action spec, episodes of 200 steps with
-- next-step autoreset (so falls, contacts and resets are all in the mix).
-- Its peer (bench/peers/rl_mujoco.py) steps the same copies of the same
-- library one after another from Python, as Gymnasium's SyncVectorEnv
-- does. A last row times the tendon arm (arm26: 2 joints, 6 muscles), a
-- model cheap enough that the cost around the physics shows.
-- RESULT rows: seconds per batched step, env-steps/s.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
if only == "all" then only = nil end

local MODELS = "/usr/share/mujoco/model/"
local N, STEPS = 64, 20
local ROWS = {{"humanoid", "humanoid/humanoid.xml", 1}, {"humanoid", "humanoid/humanoid.xml", 2},
              {"arm26", "tendon_arm/arm26.xml", 1}}

for _, row in ipairs(ROWS) do
  local model, file, threads = row[1], row[2], row[3]
  local XML = MODELS .. file
  local name = ("mujoco_%s_n%d_t%d"):format(model, N, threads)
  if not only or only == name then
    local old = torch.get_num_threads()
    torch.set_num_threads(threads)
    local env = torch.rl.envs.MujocoEnv(XML, {num_envs = N, frame_skip = 5, reset_noise_scale = 0.01,
                                              max_episode_steps = 200, dtype = torch.float32})
    env:reset{seed = 0}
    torch.manual_seed(0)
    local acts = {}
    for k = 1, 16 do acts[k] = env.action_spec:rand() end
    local k = 0
    local secs = B.time(function()
      for _ = 1, STEPS do
        k = k % 16 + 1
        env:step(acts[k])
      end
    end, 3, 5) / STEPS
    B.report(name, secs, N / secs, "env-steps/s")
    env:close()
    torch.set_num_threads(old)
  end
end
