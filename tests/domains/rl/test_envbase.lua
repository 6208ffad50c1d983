-- tests/domains/rl/test_envbase.lua -- torch.rl.envs at the TensorDict
-- level: GymEnv rollouts against the tensor-level C env stepped by hand,
-- break_when_any_done, step_and_maybe_reset's partial resets, SerialEnv
-- against the batched env, a GymLikeEnv written in Lua (closed-form
-- dynamics), seeding, specs, and bad input by its message.
cpu_only("GymEnv runs the C classic-control envs")
local E = torch.rl.envs
local TensorDict = torch.rl.TensorDict

-- a policy playing a fixed list of actions (tensors), one per call
local function scripted(actions)
  local t = 0
  return function(td)
    t = t + 1
    td:set("action", actions[t])
    return td
  end
end

local function cartpole_actions(n, T, seed)
  torch.manual_seed(seed)
  local acts = {}
  for t = 1, T do acts[t] = torch.randint(1, 3, {n}, {dtype = torch.int64}) end
  return acts
end

test("GymEnv rollout equals the C env stepped by hand (observations, rewards, terminated, truncated)", function()
  local n, T = 3, 30
  local acts = cartpole_actions(n, T, 11)
  local env = E.GymEnv("CartPole-v1", {num_envs = n, seed = 5})
  local r = env:rollout(T, scripted(acts), {break_when_any_done = false})
  check_shape(r.observation, {n, T, 4})
  check_shape(r.next.reward, {n, T, 1})
  -- by hand: the tensor-level env with autoreset off, resetting ended copies
  local raw = E.make("CartPole-v1", {num_envs = n, seed = 5, autoreset_mode = "disabled"})
  local obs = raw:reset{}
  for t = 1, T do
    check(torch.equal(r.observation:select(2, t), obs), "observation at step " .. t)
    check(torch.equal(r.action:select(2, t), acts[t]), "action at step " .. t)
    local o, rew, term, trunc = raw:step(acts[t])
    check(torch.equal(r.next.observation:select(2, t), o), "next observation at step " .. t)
    check(torch.equal(r.next.reward:select(2, t):squeeze(2), rew), "reward at step " .. t)
    check(torch.equal(r.next.terminated:select(2, t):squeeze(2), term), "terminated at step " .. t)
    check(torch.equal(r.next.truncated:select(2, t):squeeze(2), trunc), "truncated at step " .. t)
    check(torch.equal(r.next.done:select(2, t):squeeze(2), term:logical_or(trunc)), "done at step " .. t)
    local done = term:logical_or(trunc)
    obs = done:any():item() and raw:reset{reset_mask = done} or o
  end
  check(r.next.done:any():item(), "30 random CartPole steps end at least one episode (else the test is weak)")
end)

test("rollout with break_when_any_done stops at the first done step", function()
  local env = E.GymEnv("CartPole-v1", {seed = 3})
  local T = 200
  local acts = {}
  for t = 1, T do acts[t] = torch.tensor(1) end -- always push left: falls within ~10 steps
  local r = env:rollout(T, scripted(acts))
  local raw = E.make("CartPole-v1", {num_envs = 1, seed = 3, autoreset_mode = "disabled"})
  raw:reset{}
  local steps = 0
  repeat
    local _, _, term = raw:step(torch.tensor({1}))
    steps = steps + 1
  until term[1]:item()
  check_eq(r.batch_size[1], steps)
  check(r.next.terminated[steps][1]:item(), "the last step is terminated")
  check(not r.next.done:narrow(1, 1, steps - 1):any():item(), "no earlier step is done")
  check_shape(r.action, {steps})
end)

test("step_and_maybe_reset resets only the copies that ended", function()
  local env = E.GymEnv("CartPole-v1", {num_envs = 2, seed = 9})
  local td = env:reset()
  local ended = false
  for _ = 1, 60 do
    td:set("action", torch.tensor({1, 2})) -- copy 1 pushes left, copy 2 alternates right: copy 1 ends first
    local cur, nxt = env:step_and_maybe_reset(td)
    local done = cur.next.done:squeeze(2)
    if done[1]:item() and not done[2]:item() then
      ended = true
      check(not torch.equal(nxt.observation[1], cur.next.observation[1]), "the ended copy has a fresh observation")
      check(nxt.observation[1]:abs():max():item() <= 0.05, "CartPole resets within +-0.05")
      check(torch.equal(nxt.observation[2], cur.next.observation[2]), "the other copy carries on")
      check(not nxt.done:any():item(), "nothing done after the reset")
      check(nxt:get("_reset") == nil and nxt:get("next") == nil and nxt:get("action") == nil, "step_mdp keys")
      break
    end
    td = nxt
  end
  check(ended, "copy 1 ended")
end)

test("SerialEnv of single envs equals the batched env with consecutive seeds", function()
  local n, T = 3, 25
  local acts = cartpole_actions(n, T, 4)
  local batched = E.GymEnv("CartPole-v1", {num_envs = n, seed = 20})
  local seeds = {20, 21, 22}
  local k = 0
  local serial = E.SerialEnv(n, function()
    k = k + 1
    return E.GymEnv("CartPole-v1", {seed = seeds[k]})
  end)
  check_eq(serial.batch_size, {n})
  local a = batched:rollout(T, scripted(acts), {break_when_any_done = false})
  local b = serial:rollout(T, scripted(acts), {break_when_any_done = false})
  check(torch.equal(a.observation, b.observation), "observations")
  check(torch.equal(a.next.observation, b.next.observation), "next observations")
  check(torch.equal(a.next.reward, b.next.reward) and torch.equal(a.next.done, b.next.done), "rewards and dones")
  check(a.next.done:any():item(), "some copy ended and was reset (partial resets covered)")
end)

-- the worked example of docs/rl.md: a point on a line moved by +-1 steps,
-- terminated at |x| >= 3, reward -|x|
local Walk = E.GymLikeEnv:extend("Walk")
function Walk:__init(n)
  E.GymLikeEnv.__init(self, {batch_size = {n}})
  self.observation_spec = E.Unbounded{shape = {n, 1}, dtype = torch.float32}
  self.action_spec = E.Categorical(2, {shape = {n}})
  self.x = torch.zeros(n, 1)
end
function Walk:_reset(mask)
  if mask then self.x[mask] = 0 else self.x:zero_() end
  return self.x:clone()
end
function Walk:_step(action)
  self.x = self.x + (action:to(torch.float32) * 2 - 3):unsqueeze(2) -- action 1: -1, action 2: +1
  return self.x:clone(), -self.x:abs(), self.x:abs():ge(3)
end

test("GymLikeEnv: a Lua env on tensors follows its closed form, with partial resets", function()
  local env = Walk(2)
  local acts = {}
  for t = 1, 8 do acts[t] = torch.tensor({2, t % 2 + 1}) end -- copy 1: +1 each step; copy 2: +1, -1, ...
  local r = env:rollout(8, scripted(acts), {break_when_any_done = false})
  -- copy 1: x = 1, 2, 3 (done) then reset to 0: 1, 2, 3 (done), 1, 2
  check_close(r.next.observation:select(1, 1):squeeze(2), {1, 2, 3, 1, 2, 3, 1, 2})
  check_close(r.observation:select(1, 1):squeeze(2), {0, 1, 2, 0, 1, 2, 0, 1})
  check_close(r.next.reward:select(1, 1):squeeze(2), {-1, -2, -3, -1, -2, -3, -1, -2})
  check_close(r.next.terminated:select(1, 1):squeeze(2), {false, false, true, false, false, true, false, false})
  -- copy 2 oscillates 0 -> -1? action t%2+1: t=1 -> 2 (+1), t=2 -> 1 (-1)
  check_close(r.next.observation:select(1, 2):squeeze(2), {1, 0, 1, 0, 1, 0, 1, 0})
  check(not r.next.truncated:any():item(), "truncated defaults to false")
  check_eq(tostring(env.reward_spec.dtype), "torch.float32")
end)

test("rollout: auto_reset=false continues from a given TensorDict; break_when_all_done waits for every copy", function()
  local env = Walk(2)
  local acts = {}
  for t = 1, 6 do acts[t] = torch.tensor({2, 2}) end
  local r1 = env:rollout(2, scripted(acts), {break_when_any_done = false})
  local last = r1:unbind(2)[2] -- the second step, with its "next"
  local cont = env:rollout(2, scripted(acts), {auto_reset = false, tensordict = env:step_mdp(last),
    break_when_any_done = false})
  -- copy 1 went 0 -> 1 -> 2; continuing: 2 -> 3 (done), then reset 0 -> 1
  check_close(cont.observation:select(1, 1):squeeze(2), {2, 0})
  check_close(cont.next.observation:select(1, 1):squeeze(2), {3, 1})
  check_error(function() env:rollout(2, nil, {auto_reset = false}) end, "auto_reset=false needs opts.tensordict")
  -- copy 1 ends every 3 steps, copy 2 never (it alternates): all_done never holds, any_done at step 3
  local alt = {}
  for t = 1, 9 do alt[t] = torch.tensor({2, t % 2 + 1}) end
  check_eq(Walk(2):rollout(9, scripted(alt)).batch_size, {2, 3})
  check_eq(Walk(2):rollout(9, scripted(alt), {break_when_all_done = true}).batch_size, {2, 9})
  local both = {}
  for t = 1, 9 do both[t] = torch.tensor({2, 1}) end -- both end at step 3
  check_eq(Walk(2):rollout(9, scripted(both), {break_when_all_done = true}).batch_size, {2, 3})
end)

test("SerialEnv set_seed seeds its envs in turn; TransformedEnv:append_transform extends the chain", function()
  local s = E.SerialEnv(2, function() return E.GymEnv("CartPole-v1", {num_envs = 2}) end)
  check_eq(s.batch_size, {2, 2})
  check_eq(s:set_seed(7), 11)
  local a = s:reset().observation
  local b = E.GymEnv("CartPole-v1", {num_envs = 4, seed = 7}):reset().observation
  check(torch.equal(a:reshape({4, 4}), b), "envs seeded 7, 8 and 9, 10 = one env of 4 copies seeded 7")
  local t = E.TransformedEnv(E.GymEnv("CartPole-v1", {seed = 1}), E.StepCounter())
  t:append_transform(E.RewardSum())
  check_eq(t.observation_spec:keys(), {"episode_reward", "observation", "step_count"})
  local r = t:rollout(3)
  check_close(r.next.episode_reward:squeeze(-1), {1, 2, 3})
end)

test("set_seed makes resets repeatable and returns the next seed", function()
  local env = E.GymEnv("Acrobot-v1", {num_envs = 2})
  check_eq(env:set_seed(42), 44)
  local a = env:reset().observation
  env:set_seed(42)
  local b = env:reset().observation
  check(torch.equal(a, b), "same seed, same reset")
  env:set_seed(43)
  check(not torch.equal(env:reset().observation, a), "another seed, another reset")
end)

test("specs: shapes with the batch size, random actions in the action spec, Composite forms", function()
  local env = E.GymEnv("Pendulum-v1", {num_envs = 4})
  check_eq(env.observation_spec:get("observation").shape, {4, 3})
  check_eq(env.action_spec.shape, {4, 1})
  check_eq(env.reward_spec.shape, {4, 1})
  check_eq(env.done_spec:keys(), {"done", "terminated", "truncated"})
  check_eq(env:full_action_spec():keys(), {"action"})
  check_eq(env:full_reward_spec():keys(), {"reward"})
  local one = env:action_spec_unbatched()
  check_eq(one.shape, {1})
  check_close(one.low, {-2})
  check_close(one.high, {2})
  check_eq(env:observation_spec_unbatched():get("observation").shape, {3})
  local td = env:rand_action(env:reset())
  check(env.action_spec:is_in(td.action), "random action in spec")
  check(td.action:abs():max():item() <= 2, "Pendulum torque within [-2, 2]")
  local one = E.GymEnv("CartPole-v1")
  check_eq(one.batch_size, {})
  check_eq(one.action_spec.shape, {})
  check_shape(one:reset().observation, {4})
  check_shape(one:rand_step().next.reward, {1})
end)

test("exploration_type (torch.rl.modules' global) is set for a function and restored", function()
  check(E.exploration_type() == nil, "no type set by default: each module's default")
  check(E.set_exploration_type == torch.rl.modules.set_exploration_type, "one global, shared with the modules")
  local seen = E.set_exploration_type(E.ExplorationType.DETERMINISTIC, function() return E.exploration_type() end)
  check_eq(seen, "deterministic")
  check(E.exploration_type() == nil, "restored")
  check_error(function() E.set_exploration_type("greedy") end, "unknown exploration type greedy")
  pcall(E.set_exploration_type, "mode", function() error("boom") end)
  check(E.exploration_type() == nil, "restored after an error")
end)

test("bad input: clear errors naming the env and the values", function()
  local env = E.GymEnv("CartPole-v1", {num_envs = 2, seed = 1})
  check_error(function() env:step(TensorDict({action = torch.tensor({1, 1})}, {2})) end, "step before reset")
  local td = env:reset()
  check_error(function() env:step(td) end, "GymEnv.step: the TensorDict has no 'action' entry")
  td:set("action", torch.tensor({1, 3}))
  check_error(function() env:step(td) end, "outside the action spec (1 to 2")
  td:set("action", torch.tensor({1, 1, 1}):narrow(1, 1, 2):reshape(2, 1))
  check_error(function() env:step(td) end, "actions must have shape [2]")
  check_error(function() env:step(TensorDict({action = torch.ones(3, {dtype = torch.int64})}, {3})) end,
    "batch size [3] but the env's batch size is [2]")
  check_error(function() env:step({action = 1}) end, "expected a TensorDict")
  check_error(function() env:rollout(0) end, "max_steps must be a positive integer, got 0")
  check_error(function() env:rollout(3, 5) end, "policy must be callable")
  check_error(function() env:rollout(3, nil, {breakwhen = true}) end, "breakwhen")
  -- stepping a done copy without a reset
  local t = env:reset()
  local done
  repeat
    t:set("action", torch.tensor({1, 1}))
    env:step(t)
    done = t.next.done:any():item()
    t = env:step_mdp(t)
  until done
  t:set("action", torch.tensor({1, 1}))
  check_error(function() env:step(t) end, "copies are done: reset them")
  check_error(function() E.GymEnv("Nope-v0") end, "unknown environment 'Nope-v0'")
  check_error(function() E.SerialEnv(0, function() end) end, "num_workers must be a positive integer, got 0")
  check_error(function() E.SerialEnv(2, function() return 5 end) end, "create_env_fn returned a number")
  local w = Walk(2)
  w:reset()
  check_error(function() w:step(TensorDict({action = torch.tensor({1, 5})}, {2})) end,
    "Walk.step: an action is outside the action spec")
  local Bad = E.GymLikeEnv:extend("Bad")
  function Bad:__init()
    E.GymLikeEnv.__init(self, {batch_size = {2}})
    self.observation_spec = E.Unbounded{shape = {2, 3}}
    self.action_spec = E.Categorical(2, {shape = {2}})
  end
  function Bad:_reset() return torch.zeros(2, 4) end
  check_error(function() Bad():reset() end,
    "Bad._reset: observation 'observation' must have shape [2, 3], got [2, 4]")
  local Lazy = E.GymLikeEnv:extend("Lazy")
  function Lazy:__init()
    E.GymLikeEnv.__init(self, {batch_size = {1}})
    self.observation_spec = E.Unbounded{shape = {1, 1}}
    self.action_spec = E.Categorical(2, {shape = {1}})
  end
  check_error(function() Lazy():reset() end, "Lazy: _reset is not implemented")
end)

test("a long rollout stacks 600 steps (more TensorDicts than the C stack's default room)", function()
  local env = E.GymEnv("Pendulum-v1", {num_envs = 2, seed = 1})
  local r = env:rollout(600, nil, {break_when_any_done = false})
  check_eq(r.batch_size, {2, 600})
  -- Pendulum truncates at 200 steps: steps 200, 400 and 600 end each copy
  local trunc = r.next.truncated:select(1, 1):squeeze(2)
  check_eq(trunc:sum():item(), 3)
  check(trunc[200]:item() and trunc[400]:item() and trunc[600]:item(), "TimeLimit truncation every 200 steps")
end)
