-- tests/domains/rl/test_mujoco.lua -- torch.rl.envs.MujocoEnv through
-- Debian's libmujoco: batched copies against lone envs, seeding,
-- thread-count independence, closed-form physics (free fall and projectile
-- under RK4 and under MuJoCo's semi-implicit Euler, a frictionless
-- pendulum's energy and small-angle solution, a clamped motor), Gymnasium's
-- autoreset and truncation, and the errors of bad input. Models:
-- libmujoco-samples' humanoid and the small ones in tests/domains/rl/models/.
cpu_only("MuJoCo runs on the CPU")
local envs = torch.rl.envs
local HUMANOID = "/usr/share/mujoco/model/humanoid/humanoid.xml"
local MODELS = "tests/domains/rl/models/"
local f64 = torch.float64

local function humanoid(opts)
  opts = opts or {}
  opts.frame_skip = opts.frame_skip or 5
  opts.reset_noise_scale = opts.reset_noise_scale or 0.01
  return envs.MujocoEnv(HUMANOID, opts)
end

-- the same fixed random actions for every run: [T, N, nu] in [-0.4, 0.4]
local function action_seq(T, n, nu, seed)
  local g = torch.Generator():manual_seed(seed)
  return (torch.rand({T, n, nu}, {generator = g}) - 0.5) * 0.8
end

local function max_abs(a, b) return (a - b):abs():max():item() end

test("humanoid: model_info and specs", function()
  local env = humanoid({num_envs = 2})
  local i = env:model_info()
  check_eq(i.nq, 28); check_eq(i.nv, 27); check_eq(i.nu, 21)
  check(math.abs(i.timestep - 0.005) < 1e-15, "timestep 0.005")
  check(math.abs(i.dt - 0.025) < 1e-15, "dt = timestep * frame_skip")
  check_eq(i.bodies[1], "world"); check_eq(i.bodies[2], "torso")
  check_eq(#i.bodies, i.nbody)
  check_shape(env.observation_spec:zero(), {2, 55})
  check_shape(env.action_spec:rand(), {2, 21})
  -- humanoid.xml's motors default to ctrlrange="-1 1" ctrllimited="true"
  for k = 1, 21 do check_eq(i.ctrlrange[k], {-1, 1}) end
  check_eq(env.action_spec.low:min():item(), -1); check_eq(env.action_spec.high:max():item(), 1)
  check(env.action_spec:is_in(env.action_spec:rand()), "rand() lies in the action spec")
  check(not env.action_spec:is_in(torch.full({2, 21}, 1.5)), "1.5 lies outside [-1, 1]")
end)

test("reset: qpos0 and zero velocity without noise, bounded noise with it", function()
  local env = humanoid({num_envs = 3, reset_noise_scale = 0})
  local obs = env:reset{seed = 1}
  local q0 = torch.tensor(env:model_info().qpos0, {dtype = f64})
  for k = 1, 3 do
    check_eq(max_abs(obs[k][{{1, 28}}], q0), 0)
    check_eq(obs[k][{{29, 55}}]:abs():max():item(), 0)
  end
  local noisy = humanoid({num_envs = 64, reset_noise_scale = 0.1}):reset{seed = 5}
  -- qpos 4..7 is the free joint's quaternion, which mj_forward normalizes
  -- (as it does under Gymnasium's set_state)
  local dq = torch.cat({noisy[{{}, {1, 3}}] - q0[{{1, 3}}], noisy[{{}, {8, 28}}] - q0[{{8, 28}}]}, 2)
  check(dq:abs():max():item() <= 0.1, "qpos noise within [-0.1, 0.1]")
  check(max_abs(noisy[{{}, {4, 7}}]:pow(2):sum(2), torch.ones(64, {dtype = f64})) < 1e-12, "unit quaternions")
  check(noisy[{{}, {29, 55}}]:abs():max():item() <= 0.1, "qvel noise within [-0.1, 0.1]")
  check(dq:abs():max():item() > 0.09, "noise spans its range")
  -- uniform on [-a, a]: mean 0, variance a^2 / 3 (64 * 51 draws)
  local all = torch.cat({dq:flatten(), noisy[{{}, {29, 55}}]:flatten()})
  check(math.abs(all:mean():item()) < 0.005, "noise mean near 0")
  check(math.abs(all:var():item() - 0.01 / 3) < 0.0005, "noise variance near a^2/3")
end)

test("batched copies equal lone envs seeded seed + i - 1", function()
  local n, T = 4, 15
  local A = action_seq(T, n, 21, 11)
  local env = humanoid({num_envs = n})
  local obs = {env:reset{seed = 7}}
  for t = 1, T do obs[t + 1] = env:step(A[t]) end
  for k = 1, n do
    local one = humanoid({num_envs = 1})
    local o = one:reset{seed = 7 + k - 1}
    check_eq(max_abs(o[1], obs[1][k]), 0)
    for t = 1, T do
      o = one:step(A[t][{{k, k}}])
      check_eq(max_abs(o[1], obs[t + 1][k]), 0)
    end
  end
end)

test("same seed, same trajectory; another seed, another one; threads do not matter", function()
  local A = action_seq(10, 8, 21, 3)
  local function run(seed, threads)
    local old = torch.get_num_threads()
    torch.set_num_threads(threads)
    local env = humanoid({num_envs = 8})
    env:reset{seed = seed}
    local o
    for t = 1, 10 do o = env:step(A[t]) end
    torch.set_num_threads(old)
    return o
  end
  local a, b, c, d = run(42, 1), run(42, 1), run(43, 1), run(42, 2)
  check_eq(max_abs(a, b), 0)
  check(max_abs(a, c) > 1e-6, "a different seed gives a different trajectory")
  check_eq(max_abs(a, d), 0)
  -- the constructor's seed is the first reset's
  local e = humanoid({num_envs = 8, seed = 42})
  check_eq(max_abs(e:reset(), humanoid({num_envs = 8}):reset{seed = 42}), 0)
end)

test("float32 observations are the float64 ones rounded", function()
  local A = action_seq(5, 2, 21, 9)
  local e64, e32 = humanoid({num_envs = 2}), humanoid({num_envs = 2, dtype = torch.float32})
  e64:reset{seed = 1}; e32:reset{seed = 1}
  local o64, o32
  for t = 1, 5 do o64 = e64:step(A[t]); o32 = e32:step(A[t]:float()) end
  check(o32.dtype == torch.float32, "float32 dtype")
  check_eq(max_abs(o64:float(), o32), 0)
end)

-- z(t) = z0 + vz t - g t^2 / 2, x(t) = x0 + vx t: RK4 integrates
-- constant acceleration exactly
test("free fall and projectile motion (RK4) match the closed form", function()
  local g, dt = 9.81, 0.002
  local env = envs.MujocoEnv(MODELS .. "freefall.xml", {num_envs = 2, frame_skip = 10})
  env:reset{seed = 0}
  local qpos = torch.tensor({{0, 0, 10, 1, 0, 0, 0}, {1, -2, 3, 1, 0, 0, 0}}, {dtype = f64})
  local qvel = torch.tensor({{0, 0, 0, 0, 0, 0}, {2.5, 0.5, 7, 0, 0, 0}}, {dtype = f64})
  env:set_state(qpos, qvel)
  local noact = torch.zeros(2, 0)
  local o
  for step = 1, 50 do
    o = env:step(noact)
    local t = step * 10 * dt
    for k = 1, 2 do
      local x0, y0, z0 = qpos[k][1]:item(), qpos[k][2]:item(), qpos[k][3]:item()
      local vx, vy, vz = qvel[k][1]:item(), qvel[k][2]:item(), qvel[k][3]:item()
      local want = torch.tensor({x0 + vx * t, y0 + vy * t, z0 + vz * t - g * t * t / 2, 1, 0, 0, 0,
                                 vx, vy, vz - g * t, 0, 0, 0}, {dtype = f64})
      local err = max_abs(o[k], want)
      if err > 1e-10 then error(("env %d step %d: |obs - closed form| = %g"):format(k, step, err)) end
    end
  end
  check(math.abs(env:data("time")[1][1]:item() - 1.0) < 1e-12, "simulated 1 s")
end)

-- MuJoCo's Euler is semi-implicit (v += a dt, then q += v dt):
-- z_T = z0 - g dt^2 T (T + 1) / 2, v_T = -g dt T; the continuous solution
-- is within g dt t / 2 of it
test("free fall under semi-implicit Euler matches its closed form", function()
  local g, dt, T = 9.81, 0.002, 300
  local env = envs.MujocoEnv(MODELS .. "freefall_euler.xml")
  env:reset()
  local o
  for _ = 1, T do o = env:step(torch.zeros(1, 0)) end
  local z, v = o[1][3]:item(), o[1][10]:item()
  check(math.abs(z - (10 - g * dt * dt * T * (T + 1) / 2)) < 1e-10, ("z = %.15g"):format(z))
  check(math.abs(v - (-g * dt * T)) < 1e-10, ("vz = %.15g"):format(v))
  local t = T * dt
  check(math.abs(z - (10 - g * t * t / 2)) <= g * dt * t / 2 + 1e-9, "within O(dt) of the continuous solution")
end)

-- E = I w^2 / 2 - m g L cos(theta), I = m L^2 + 2/5 m r^2
test("passive pendulum: energy conserved, small swings follow theta0 cos(w t)", function()
  local m, g, L, r = 1, 9.81, 1, 0.05
  local I = m * L * L + 0.4 * m * r * r
  local function energy(th, w) return 0.5 * I * w * w - m * g * L * math.cos(th) end
  local env = envs.MujocoEnv(MODELS .. "pendulum.xml", {num_envs = 2, frame_skip = 4})
  env:reset()
  local o = env:set_state(torch.tensor({{1.2}, {0.01}}, {dtype = f64}), torch.zeros({2, 1}, {dtype = f64}))
  local e0 = energy(1.2, 0)
  local w0 = math.sqrt(m * g * L / I)
  local worst, worst_small = 0, 0
  for step = 1, 1000 do
    o = env:step(torch.zeros(2, 0))
    worst = math.max(worst, math.abs(energy(o[1][1]:item(), o[1][2]:item()) - e0))
    local t = step * 4 * 0.001
    worst_small = math.max(worst_small, math.abs(o[2][1]:item() - 0.01 * math.cos(w0 * t)))
  end
  check(worst < 1e-9 * math.abs(e0), ("energy drift %g over 4 s"):format(worst))
  -- the swing's nonlinearity shifts the phase by about w0 t theta0^2 / 16
  check(worst_small < 1e-6, ("small-angle deviation %g"):format(worst_small))
  -- it did swing: theta went through zero and back near -1.2
  check(math.abs(o[1][1]:item()) <= 1.2 + 1e-9, "amplitude bounded by theta0")
end)

test("actions drive ctrl; MuJoCo clamps them to ctrlrange (as under Gymnasium)", function()
  local env = envs.MujocoEnv(MODELS .. "slider.xml", {num_envs = 3})
  env:reset()
  local a = torch.tensor({{0.5}, {3.0}, {-7.0}})
  local o
  for _ = 1, 100 do o = env:step(a) end
  local t, mass = 1.0, 2
  for k, u in ipairs({0.5, 1.0, -1.0}) do
    check(math.abs(o[k][1]:item() - u * t * t / (2 * mass)) < 1e-10, "x = clamp(u) t^2 / 2m for env " .. k)
    check(math.abs(o[k][2]:item() - u * t / mass) < 1e-10, "v = clamp(u) t / m for env " .. k)
  end
  -- data.ctrl holds the action as given, as Gymnasium's do_simulation writes it
  check_eq(env:data("ctrl")[2][1]:item(), 3.0)
  check(not env.action_spec:is_in(a), "3.0 lies outside the spec")
  check_eq(env:model_info().ctrlrange[1], {-1, 1})
end)

test("truncation at max_episode_steps, then next-step autoreset", function()
  local env = humanoid({num_envs = 2, max_episode_steps = 3})
  env:reset{seed = 0}
  local A = action_seq(5, 2, 21, 1)
  local trunc, resets = {}, {}
  local obs4, r4, term4
  for t = 1, 5 do
    local o, r, te, tr, info = env:step(A[t])
    trunc[t], resets[t] = tr:tolist(), info.reset:tolist()
    check(not te:any():item(), "never terminated without done_fn")
    if t == 4 then obs4, r4, term4 = o, r, te end
  end
  check_eq(trunc, {{false, false}, {false, false}, {true, true}, {false, false}, {false, false}})
  check_eq(resets, {{false, false}, {false, false}, {false, false}, {true, true}, {false, false}})
  check_eq(r4:abs():sum():item(), 0)
  check(not term4:any():item(), "a reset step is not terminated")
  -- the reset is a fresh start: position near qpos0, velocity within the noise
  local q0 = torch.tensor(env:model_info().qpos0, {dtype = f64})
  check(max_abs(obs4[1][{{1, 28}}], q0) <= 0.02, "reset state near qpos0")
end)

test("reward_fn and done_fn; same-step autoreset returns final_obs", function()
  local function reward_fn(obs, act, nxt) return (nxt[{{}, 3}] - obs[{{}, 3}]) / 0.025 - act:pow(2):sum(2):double() end
  local function done_fn(nxt) return nxt[{{}, 3}]:lt(1.3) end
  local env = humanoid({num_envs = 4, reward_fn = reward_fn, done_fn = done_fn, autoreset_mode = "same_step"})
  local prev = env:reset{seed = 3}
  local zeros = torch.zeros(4, 21)
  local ended = false
  for _ = 1, 60 do
    local o, r, te, _, info = env:step(zeros)
    if te:any():item() then
      ended = true
      check(info.final_obs ~= nil, "final_obs given when an env ends")
      local k = te:nonzero()[1][1]:item()
      check(info.final_obs[k][3]:item() < 1.3, "final_obs is the terminal state")
      check(o[k][3]:item() > 1.3, "obs is the new episode's first")
      check(math.abs(r[k]:item() - (info.final_obs[k][3]:item() - prev[k][3]:item()) / 0.025) < 1e-9,
        "reward of the terminal step from final_obs")
      break
    end
    local want = (o[{{}, 3}] - prev[{{}, 3}]) / 0.025
    check(max_abs(r, want) < 1e-12, "reward_fn's value")
    prev = o
  end
  check(ended, "the humanoid falls below 1.3 within 60 steps with zero torque")
end)

test("bad input: clear errors naming MujocoEnv and the values", function()
  check_error(function() envs.MujocoEnv("/no/such/model.xml") end, "cannot open the model file '/no/such/model.xml'")
  local bad = os.tmpname()
  local f = io.open(bad, "w"); f:write("<mujoco><worldbody><body><geom type='nosuchshape'/></body></worldbody></mujoco>")
  f:close()
  local err = check_error(function() envs.MujocoEnv(bad) end, "cannot load the model '" .. bad .. "'")
  check(err:find("nosuchshape", 1, true) ~= nil, "MuJoCo's message kept: " .. err)
  os.remove(bad)
  check_error(function() envs.MujocoEnv(HUMANOID, {num_env = 2}) end, "unknown option 'num_env'")
  check_error(function() envs.MujocoEnv(HUMANOID, {num_envs = 0}) end, "num_envs must be an integer >= 1, got 0")
  check_error(function() envs.MujocoEnv(HUMANOID, {reset_noise_scale = -1}) end, "reset_noise_scale")
  check_error(function() envs.MujocoEnv(HUMANOID, {autoreset_mode = "sometimes"}) end, "autoreset_mode")
  local env = humanoid({num_envs = 2})
  check_error(function() env:step(torch.zeros(2, 21)) end, "call reset() before the first step")
  env:reset()
  check_error(function() env:step(torch.zeros(3, 21)) end, "actions must have shape [2, 21] (num_envs, nu), got [3, 21]")
  check_error(function() env:step(torch.zeros(21)) end, "got [21]")
  check_error(function() env:step({1, 2}) end, "actions must be a tensor")
  local a = torch.zeros(2, 21); a[2][5] = 0 / 0
  check_error(function() env:step(a) end, "action [2, 5] is")
  check_error(function() env:reset{seed = 1.5} end, "seed must be an integer")
  local e2 = humanoid({num_envs = 2, reward_fn = function() return torch.zeros(3) end})
  e2:reset()
  check_error(function() e2:step(torch.zeros(2, 21)) end, "reward_fn must return a tensor of shape [2]")
  -- the env stays usable after errors
  local o = env:step(torch.zeros(2, 21))
  check_shape(o, {2, 55})
end)

-- MuJoCo's fatal errors (mju_error) would exit the process by default
test("a MuJoCo error inside a step raises a Lua error, naming the env; the env goes on", function()
  local model = [[<mujoco model="tinystack"><size nstack="%d"/><worldbody>
    <body pos="0 0 1"><joint type="free"/><geom type="sphere" size="0.1"/></body>
    <body pos="0 0 2"><joint type="free"/><geom type="sphere" size="0.1"/></body>
    <geom type="plane" size="5 5 0.1"/></worldbody></mujoco>]]
  local path = os.tmpname()
  local function write(nstack) local f = io.open(path, "w"); f:write(model:format(nstack)); f:close() end
  -- the smallest stack MuJoCo loads the model with: contacts need more
  local lo, hi = 10, 1000000
  while hi - lo > 1 do
    local mid = (lo + hi) // 2
    write(mid)
    if pcall(envs.MujocoEnv, path) then hi = mid else lo = mid end
  end
  write(lo)
  check_error(function() envs.MujocoEnv(path) end, "Stack overflow")
  write(hi)
  local env = envs.MujocoEnv(path, {num_envs = 2})
  os.remove(path)
  env:reset()
  local err
  for _ = 1, 1000 do
    local ok, e = pcall(env.step, env, torch.zeros(2, 0))
    if not ok then err = e; break end
  end
  check(err ~= nil, "the spheres reach the floor and overflow the stack")
  check(err:find("MujocoEnv: step: env 1: MuJoCo error: Stack overflow", 1, true) ~= nil, err)
  local o, _, _, _, info = env:step(torch.zeros(2, 0))
  check_eq(info.reset:tolist(), {true, true})
  check_eq(o[1][3]:item(), 1)
end)
