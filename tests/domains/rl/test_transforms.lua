-- tests/domains/rl/test_transforms.lua -- torch.rl.envs transforms on a
-- TransformedEnv: StepCounter truncation, RewardSum against the running sum
-- of the rewards, CatFrames against the raw observations, ObservationNorm,
-- RewardScaling and init_stats in closed form, VecNorm's running statistics
-- against numpy (/usr/bin/python3), DoubleToFloat, InitTracker, specs, and
-- bad input by its message.
cpu_only("GymEnv runs the C classic-control envs")
local E = torch.rl.envs
local HAVE_PY = io.open("/usr/bin/python3") ~= nil

-- a counter env: obs = steps since reset (float64), reward 1, never ends
local Counter = E.GymLikeEnv:extend("Counter")
function Counter:__init(n)
  E.GymLikeEnv.__init(self, {batch_size = {n}})
  self.observation_spec = E.Unbounded{shape = {n, 1}, dtype = torch.float64}
  self.action_spec = E.Categorical(2, {shape = {n}})
  self.c = torch.zeros(n, 1, {dtype = torch.float64})
end
function Counter:_reset(mask)
  if mask then self.c[mask] = 0 else self.c:zero_() end
  return self.c:clone()
end
function Counter:_step() self.c = self.c + 1; return self.c:clone(), 1, false end

test("StepCounter counts steps and truncates at max_steps, then the copy restarts", function()
  local env = E.TransformedEnv(E.GymEnv("Pendulum-v1", {num_envs = 2, seed = 1}), E.StepCounter(4))
  local r = env:rollout(10, nil, {break_when_any_done = false})
  check_close(r.step_count:select(1, 1):squeeze(2), {0, 1, 2, 3, 0, 1, 2, 3, 0, 1})
  check_close(r.next.step_count:select(1, 2):squeeze(2), {1, 2, 3, 4, 1, 2, 3, 4, 1, 2})
  local want = {false, false, false, true, false, false, false, true, false, false}
  check_close(r.next.truncated:select(1, 1):squeeze(2), want)
  check_close(r.next.done:select(1, 2):squeeze(2), want)
  check(not r.next.terminated:any():item(), "Pendulum never terminates")
  local r2 = env:rollout(10)
  check_eq(r2.batch_size, {2, 4})
end)

test("RewardSum holds the running sum of each episode's rewards", function()
  local env = E.TransformedEnv(E.GymEnv("CartPole-v1", {num_envs = 3, seed = 2}), E.RewardSum())
  local r = env:rollout(40, nil, {break_when_any_done = false})
  local rew, done, ep = r.next.reward:squeeze(3), r.next.done:squeeze(3), r.next.episode_reward:squeeze(3)
  for i = 1, 3 do
    local s = 0
    for t = 1, 40 do
      s = s + rew[i][t]:item()
      check_close(ep[i][t], s)
      if t < 40 then check_close(r.episode_reward[i][t + 1], done[i][t]:item() and 0 or s) end
      if done[i][t]:item() then s = 0 end
    end
  end
  check(done:any():item(), "an episode ended (the reset path is covered)")
end)

test("CatFrames stacks the last N observations, padding with the reset one", function()
  local base = E.GymEnv("CartPole-v1", {num_envs = 2, seed = 3})
  local env = E.TransformedEnv(base, E.CatFrames(3, -1, {out_keys = {"stacked"}}))
  check_eq(env.observation_spec:get("stacked").shape, {2, 12})
  local r = env:rollout(12)
  local T = r.batch_size[2]
  local obs, nobs = r.observation, r.next.observation
  for t = 1, T do
    local hist = {}
    for k = t - 2, t do hist[#hist + 1] = obs:select(2, math.max(k, 1)) end
    check(torch.equal(r.stacked:select(2, t), torch.cat(hist, -1)), "stack at step " .. t)
    local want = torch.cat({obs:select(2, math.max(t - 1, 1)), obs:select(2, t), nobs:select(2, t)}, -1)
    check(torch.equal(r.next.stacked:select(2, t), want), "next stack at step " .. t)
  end
  local c = E.TransformedEnv(Counter(1), E.CatFrames(2, -1, {padding = "constant"}))
  local rc = c:rollout(3)
  check_close(rc.observation:squeeze(1), {{0, 0}, {0, 1}, {1, 2}})
  check_close(rc.next.observation:squeeze(1), {{0, 1}, {1, 2}, {2, 3}})
end)

test("ObservationNorm and RewardScaling are the affine maps; init_stats standardizes", function()
  local env = E.TransformedEnv(Counter(2), E.Compose(
    E.ObservationNorm{loc = 1, scale = 2, in_keys = {"observation"}, out_keys = {"a"}},
    E.ObservationNorm{loc = 1, scale = 2, standard_normal = true, out_keys = {"b"}},
    E.RewardScaling(0.5, 3)))
  local r = env:rollout(3)
  check_close(r.next.a:select(1, 1):squeeze(2), {1 * 2 + 1, 2 * 2 + 1, 3 * 2 + 1})
  check_close(r.next.b:select(1, 1):squeeze(2), {0, 0.5, 1})
  check_close(r.next.reward, torch.full({2, 3, 1}, 1 * 3 + 0.5))
  -- init_stats over 4 steps of 2 copies observing 0..3: mean 1.5, sample std sqrt(10/7)
  local n = E.ObservationNorm()
  local env2 = E.TransformedEnv(Counter(2), n)
  n:init_stats(4)
  check_close(n.scale, 1 / math.sqrt(10 / 7), {atol = 1e-12})
  check_close(n.loc, -1.5 / math.sqrt(10 / 7), {atol = 1e-12})
  local r2 = env2:rollout(4)
  check_close(r2.observation:mean():item(), 0, {atol = 1e-12})
  check_close(r2.observation:std():item(), 1, {atol = 1e-12})
end)

-- numpy: TorchRL's VecNorm update on the raw rows, returning normalized rows
local function numpy_vecnorm(batches, decay, eps)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  for _, b in ipairs(batches) do
    local rows = {}
    for i = 1, b:size(1) do
      local v = {}
      for j = 1, b:size(2) do v[j] = ("%.17g"):format(b[i][j]:item()) end
      rows[i] = table.concat(v, ",")
    end
    f:write(table.concat(rows, ";"), "\n")
  end
  f:close()
  local code = ([[
import numpy as np
s = q = None; c = 0.0; d = %s; eps = %s
for line in open("%s"):
    x = np.array([[float(v) for v in r.split(",")] for r in line.strip().split(";")])
    if s is None: s = np.zeros(x.shape[1]); q = np.zeros(x.shape[1])
    s = s * d + x.sum(0); q = q * d + (x ** 2).sum(0); c = c * d + x.shape[0]
    m = s / c; sd = np.maximum(np.sqrt(np.maximum(q / c - m ** 2, eps)), eps)
    print(";".join(",".join("%%.17g" %% v for v in row) for row in (x - m) / sd))
]]):format(tostring(decay), tostring(eps), path)
  local p = io.popen("/usr/bin/python3 -c '" .. code .. "' 2>&1")
  local out = {}
  for line in p:lines() do
    local rows = {}
    for r in line:gmatch("[^;]+") do
      local v = {}
      for x in r:gmatch("[^,]+") do v[#v + 1] = tonumber(x) end
      rows[#rows + 1] = v
    end
    out[#out + 1] = rows
  end
  p:close()
  os.remove(path)
  return out
end

test("VecNorm's running statistics match a numpy computation", function()
  if not HAVE_PY then return print("  (no /usr/bin/python3: numpy cross-check skipped)") end
  local T = 30
  local env = E.TransformedEnv(E.GymEnv("Pendulum-v1", {num_envs = 3, seed = 4}),
    E.VecNorm{decay = 0.95, eps = 1e-4, out_keys = {"normed"}})
  local r = env:rollout(T)
  local batches = {r.observation:select(2, 1):to(torch.float64)}
  for t = 1, T do batches[#batches + 1] = r.next.observation:select(2, t):to(torch.float64) end
  local want = numpy_vecnorm(batches, 0.95, 1e-4)
  check_eq(#want, T + 1)
  check_close(r.normed:select(2, 1), want[1], {atol = 1e-5})
  for t = 1, T do check_close(r.next.normed:select(2, t), want[t + 1], {atol = 1e-5}) end
  local vn = env.transform
  check_close(vn.stats.observation.count, (1 - 0.95 ^ (T + 1)) / (1 - 0.95) * 3, {atol = 1e-9})
end)

test("DoubleToFloat, InitTracker and the transformed specs", function()
  local env = E.TransformedEnv(Counter(2), E.Compose(E.DoubleToFloat(), E.InitTracker(), E.StepCounter()))
  local sp = env.observation_spec
  check_eq(sp:keys(), {"is_init", "observation", "step_count"})
  check_eq(tostring(sp:get("observation").dtype), "torch.float32")
  check_eq(tostring(env.base_env.observation_spec:get("observation").dtype), "torch.float64")
  local r = env:rollout(3)
  check_eq(tostring(r.observation.dtype), "torch.float32")
  check_eq(tostring(r.next.observation.dtype), "torch.float32")
  check_close(r.is_init:select(1, 1):squeeze(2), {true, false, false})
  check(not r.next.is_init:any():item(), "next is_init is false")
  -- a partial reset marks the reset copy only
  local td = env:reset()
  td:set("action", torch.tensor({1, 1}))
  local _, nxt = env:step_and_maybe_reset(td)
  nxt:set("_reset", torch.tensor({{true}, {false}}))
  local rr = env:reset(nxt)
  check_close(rr.is_init:squeeze(2), {true, false})
  check_close(rr.step_count:squeeze(2), {0, 1})
  check_close(rr.observation:squeeze(2), {0, 1})
end)

test("bad input: transforms name themselves and the values", function()
  check_error(function() E.StepCounter(0) end, "StepCounter: max_steps must be a positive integer or nil, got 0")
  check_error(function() E.CatFrames(3, 1) end, "CatFrames: dim must be a negative integer")
  check_error(function() E.CatFrames(0, -1) end, "CatFrames: N must be a positive integer, got 0")
  check_error(function() E.CatFrames(2, -1, {padding = "zeros"}) end, "zeros")
  check_error(function() E.VecNorm{decay = 2} end, "VecNorm: decay must be in (0, 1], got 2")
  check_error(function() E.RewardScaling(1) end, "RewardScaling: loc and scale are required")
  check_error(function() E.ObservationNorm():init_stats(3) end, "not in a TransformedEnv")
  local env = E.TransformedEnv(Counter(1), E.ObservationNorm())
  check_error(function() env:reset() end, "ObservationNorm: loc and scale are not set")
  check_error(function() E.TransformedEnv(5) end, "TransformedEnv: env must be an env")
  check_error(function() E.Compose(E.StepCounter(), 3) end, "Compose: argument 2 is a number")
  local sc = E.TransformedEnv(Counter(1), E.StepCounter(3))
  local td = sc:reset()
  td:del("step_count")
  td:set("action", torch.tensor({1}))
  check_error(function() sc:step(td) end, "StepCounter: the TensorDict has no 'step_count'")
end)
