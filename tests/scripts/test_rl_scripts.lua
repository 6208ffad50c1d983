-- tests/scripts/test_rl_scripts.lua -- the RL scripts as a user runs them:
-- PPO solves CartPole-v1 (seed 1, one thread: a deterministic run) within
-- 102,400 frames; DQN and SAC train a short while, evaluate, checkpoint and
-- continue with --resume; bad options are errors that name them.
local exe = arg and arg[-1] or "build/moontorch"
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/scripts"
local dir = here .. "/../../scripts/rl/"

local function run(script, args)
  local p = io.popen(("%s %s%s %s 2>&1"):format(exe, dir, script, args))
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

local function tmp()
  local f = os.tmpname()
  os.remove(f)
  return f
end

test("cartpole_ppo.lua solves CartPole-v1 (mean greedy return >= 475 over 100 episodes) within 102,400 frames", function()
  local ck = tmp()
  local ok, out = run("cartpole_ppo.lua", "--seed 1 --total-frames 102400 --checkpoint " .. ck)
  check(ok, out)
  local frames, secs = out:match("result: solved at frame (%d+) in ([%d.]+) s")
  check(frames and tonumber(frames) <= 102400, out)
  local f = io.open(ck, "rb")
  check(f ~= nil, "a checkpoint was written")
  if f then f:close() end
  os.remove(ck)
end)

test("cartpole_dqn.lua trains, evaluates, checkpoints, and --resume continues from the checkpoint", function()
  local ck = tmp()
  local ok, out = run("cartpole_dqn.lua", "--total-frames 12000 --learning-starts 2000 --eval-every 5000 "
    .. "--eval-episodes 10 --no-stop --checkpoint " .. ck)
  check(ok, out)
  check(out:find("frame   10000  eval mean return", 1, true), out)
  ok, out = run("cartpole_dqn.lua", "--total-frames 16000 --learning-starts 2000 --eval-every 5000 "
    .. "--eval-episodes 10 --no-stop --resume --checkpoint " .. ck)
  check(ok, out)
  check(out:find("resumed from " .. ck .. " at frame 10000", 1, true), out)
  check(out:find("frame   15000  eval mean return", 1, true), out)
  os.remove(ck)
end)

test("pendulum_sac.lua trains, evaluates, checkpoints and resumes", function()
  local ck = tmp()
  local ok, out = run("pendulum_sac.lua", "--total-steps 700 --learning-starts 400 --batch-size 32 --eval-every 600 "
    .. "--eval-episodes 2 --no-stop --checkpoint " .. ck)
  check(ok, out)
  local ret = tonumber(out:match("step    600  eval mean return%s+([-%d.]+)"))
  check(ret and ret < 0 and ret > -2000, out) -- Pendulum's rewards are in [-16.3, 0] a step, 200 steps
  ok, out = run("pendulum_sac.lua", "--total-steps 800 --learning-starts 400 --batch-size 32 --eval-every 600 "
    .. "--eval-episodes 2 --no-stop --resume --checkpoint " .. ck)
  check(ok, out)
  check(out:find("resumed from " .. ck .. " at step 600", 1, true), out)
  os.remove(ck)
end)

test("--compile runs DQN's and PPO's updates as compiled graphs; SAC says it cannot yet", function()
  local ok, out = run("cartpole_dqn.lua", "--compile --total-frames 6000 --learning-starts 1000 --eval-every 5000 "
    .. "--eval-episodes 5 --no-stop --checkpoint " .. tmp())
  check(ok and out:find("frame    5000  eval mean return", 1, true), out)
  ok, out = run("cartpole_ppo.lua", "--compile --total-frames 4096 --eval-every 2048 --eval-episodes 5 --no-stop "
    .. "--checkpoint " .. tmp())
  check(ok and out:find("frame    2048  eval mean return", 1, true), out)
  ok, out = run("pendulum_sac.lua", "--compile")
  check(not ok and out:find("--compile is not supported by pendulum_sac.lua yet", 1, true), out)
end)

test("bad options are errors naming them", function()
  local ok, out = run("cartpole_dqn.lua", "--frames 10")
  check(not ok and out:find("--frames", 1, true), out)
  ok, out = run("cartpole_ppo.lua", "--num-envs x")
  check(not ok and out:find("num-envs", 1, true), out)
end)
