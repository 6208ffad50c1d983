-- torch.rl.envs.tensor_ops -- the classic-control envs as tensor ops only
-- (no host syncs), so they run on CUDA and inside torch.compile. A state is
-- a list of nstate float64 columns [N] (struct of arrays, as the C envs
-- keep it: the JIT compiles elementwise ops, not stack or select); per env:
-- reset(u) from uniform columns, step(s, a) -> s', reward, terminated, and
-- observe(s) -> float32 columns; batch_step adds Gymnasium's TimeLimit and
-- autoreset with torch.where. The equations are the C envs' (cartpole.c,
-- ...). Actions: discrete ones are 1-based int64 [N], continuous ones the
-- first entry of each action, [N].
local torch = require "torch"

local M = {}

local function clip(x, lo, hi) return x:clamp(lo, hi) end
-- lo + (hi - lo) * u, as np_random.uniform(lo, hi)
local function uniform(u, lo, hi) return u * (hi - lo) + lo end

-- ---- CartPole-v1 ----
local cartpole = {name = "CartPole-v1", nstate = 4, nobs = 4, n_actions = 2, max_episode_steps = 500}
M.cartpole = cartpole
do
  local GRAVITY, MASSCART, MASSPOLE, LENGTH, FORCE_MAG, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
  local TOTAL_MASS, POLEMASS_LENGTH = MASSPOLE + MASSCART, MASSPOLE * LENGTH
  local THETA_THRESHOLD, X_THRESHOLD = 12 * 2 * math.pi / 360, 2.4

  function cartpole.reset(u)
    return {uniform(u[1], -0.05, 0.05), uniform(u[2], -0.05, 0.05), uniform(u[3], -0.05, 0.05),
            uniform(u[4], -0.05, 0.05)}
  end

  function cartpole.step(s, a)
    local x, x_dot, theta, theta_dot = s[1], s[2], s[3], s[4]
    local force = a:eq(2):to(torch.float64) * (2 * FORCE_MAG) - FORCE_MAG
    local costheta, sintheta = theta:cos(), theta:sin()
    local temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS
    local thetaacc = (GRAVITY * sintheta - costheta * temp) /
                     (LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS))
    local xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    x = x + TAU * x_dot -- "euler"
    x_dot = x_dot + TAU * xacc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * thetaacc
    local terminated = x:lt(-X_THRESHOLD):logical_or(x:gt(X_THRESHOLD))
      :logical_or(theta:lt(-THETA_THRESHOLD)):logical_or(theta:gt(THETA_THRESHOLD))
    -- reward 1 everywhere, made from a bool column: the JIT replays a
    -- ones_like(x):to(float32) result as a 0-dim tensor (a JIT bug)
    return {x, x_dot, theta, theta_dot}, terminated:to(torch.float64) * 0 + 1, terminated
  end

  function cartpole.observe(s)
    return {s[1]:to(torch.float32), s[2]:to(torch.float32), s[3]:to(torch.float32), s[4]:to(torch.float32)}
  end
end

-- ---- Acrobot-v1 ----
local acrobot = {name = "Acrobot-v1", nstate = 4, nobs = 6, n_actions = 3, max_episode_steps = 500}
M.acrobot = acrobot
do
  local DT, m1, m2, l1, lc1, lc2, I1, I2, g = 0.2, 1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 9.8
  local MAX_VEL_1, MAX_VEL_2, PI = 4 * math.pi, 9 * math.pi, math.pi

  -- float64 draws kept as float32, as Gymnasium's .astype(np.float32)
  function acrobot.reset(u)
    local s = {}
    for k = 1, 4 do s[k] = uniform(u[k], -0.1, 0.1):to(torch.float32):to(torch.float64) end
    return s
  end

  -- Gymnasium's _dsdt ("book" dynamics) under torque a
  local function dsdt(s, a)
    local theta1, theta2, dtheta1, dtheta2 = s[1], s[2], s[3], s[4]
    local c2, s2 = theta2:cos(), theta2:sin()
    local d1 = m1 * (lc1 * lc1) + m2 * ((l1 * l1) + (lc2 * lc2) + 2 * l1 * lc2 * c2) + I1 + I2
    local d2 = m2 * ((lc2 * lc2) + l1 * lc2 * c2) + I2
    local phi2 = m2 * lc2 * g * (theta1 + theta2 - PI / 2.0):cos()
    local phi1 = -m2 * l1 * lc2 * (dtheta2 * dtheta2) * s2 - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * s2 +
                 (m1 * lc1 + m2 * l1) * g * (theta1 - PI / 2):cos() + phi2
    local ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * (dtheta1 * dtheta1) * s2 - phi2) /
                     (m2 * (lc2 * lc2) + I2 - (d2 * d2) / d1)
    local ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return {dtheta1, dtheta2, ddtheta1, ddtheta2}
  end

  local function axpy(y, h, k) return {y[1] + h * k[1], y[2] + h * k[2], y[3] + h * k[3], y[4] + h * k[4]} end

  -- Gymnasium's wrap, for x within three periods of [lo, hi]
  local function wrap(x, lo, hi)
    local diff = hi - lo
    for _ = 1, 3 do x = torch.where(x:gt(hi), x - diff, x) end
    for _ = 1, 3 do x = torch.where(x:lt(lo), x + diff, x) end
    return x
  end

  function acrobot.step(s, a)
    local torque = a:to(torch.float64) - 2
    local dt = DT - 0.0
    local dt2 = dt / 2.0
    local k1 = dsdt(s, torque)
    local k2 = dsdt(axpy(s, dt2, k1), torque)
    local k3 = dsdt(axpy(s, dt2, k2), torque)
    local k4 = dsdt(axpy(s, dt, k3), torque)
    local y = {}
    for j = 1, 4 do y[j] = s[j] + dt / 6.0 * (k1[j] + 2 * k2[j] + 2 * k3[j] + k4[j]) end
    local ns = {wrap(y[1], -PI, PI), wrap(y[2], -PI, PI), clip(y[3], -MAX_VEL_1, MAX_VEL_1),
                clip(y[4], -MAX_VEL_2, MAX_VEL_2)}
    local terminated = (-ns[1]:cos() - (ns[2] + ns[1]):cos()):gt(1.0)
    return ns, terminated:to(torch.float64) - 1.0, terminated
  end

  function acrobot.observe(s)
    local f = torch.float32
    return {s[1]:cos():to(f), s[1]:sin():to(f), s[2]:cos():to(f), s[2]:sin():to(f), s[3]:to(f), s[4]:to(f)}
  end
end

-- ---- MountainCar-v0 and MountainCarContinuous-v0 ----
local mountain_car = {name = "MountainCar-v0", nstate = 2, nobs = 2, n_actions = 3, max_episode_steps = 200}
local mountain_car_continuous = {name = "MountainCarContinuous-v0", nstate = 2, nobs = 2, action_dim = 1,
                                 action_low = -1.0, action_high = 1.0, max_episode_steps = 999}
M.mountain_car, M.mountain_car_continuous = mountain_car, mountain_car_continuous
do
  local MIN_POSITION, MAX_POSITION, MAX_SPEED = -1.2, 0.6, 0.07

  local function reset(u)
    local pos = uniform(u[1], -0.6, -0.4)
    return {pos, pos * 0}
  end
  mountain_car.reset, mountain_car_continuous.reset = reset, reset

  -- the shared end of both steps: the speed limit, the wall, the goal
  local function move(position, velocity, goal)
    velocity = clip(velocity, -MAX_SPEED, MAX_SPEED)
    position = clip(position + velocity, MIN_POSITION, MAX_POSITION)
    velocity = torch.where(position:eq(MIN_POSITION):logical_and(velocity:lt(0)), 0.0, velocity)
    return position, velocity, position:ge(goal):logical_and(velocity:ge(0.0))
  end

  function mountain_car.step(s, a)
    local position, velocity = s[1], s[2]
    local terminated
    velocity = velocity + ((a:to(torch.float64) - 2) * 0.001 + (3 * position):cos() * (-0.0025))
    position, velocity, terminated = move(position, velocity, 0.5)
    return {position, velocity}, terminated:to(torch.float64) * 0 - 1, terminated -- -1 (see CartPole's reward)
  end

  -- float64 arithmetic on a float32 state (NumPy 1.x promotes its scalars)
  function mountain_car_continuous.step(s, a)
    local position, velocity = s[1], s[2]
    local act = a:to(torch.float64)
    local force = clip(act, -1.0, 1.0)
    local terminated
    velocity = velocity + (force * 0.0015 - (3 * position):cos() * 0.0025)
    position, velocity, terminated = move(position, velocity, 0.45)
    local reward = terminated:to(torch.float64) * 100.0 - act * act * 0.1
    local f32 = function(x) return x:to(torch.float32):to(torch.float64) end
    return {f32(position), f32(velocity)}, reward, terminated
  end

  local function observe(s) return {s[1]:to(torch.float32), s[2]:to(torch.float32)} end
  mountain_car.observe, mountain_car_continuous.observe = observe, observe
end

-- ---- Pendulum-v1 ----
local pendulum = {name = "Pendulum-v1", nstate = 2, nobs = 3, action_dim = 1, action_low = -2.0, action_high = 2.0,
                  max_episode_steps = 200}
M.pendulum = pendulum
do
  local MAX_SPEED, MAX_TORQUE, DT, G, MASS, L = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0

  function pendulum.reset(u) return {uniform(u[1], -math.pi, math.pi), uniform(u[2], -1.0, 1.0)} end

  function pendulum.step(s, a)
    local th, thdot = s[1], s[2]
    local u = clip(a:to(torch.float64), -MAX_TORQUE, MAX_TORQUE)
    local an = torch.remainder(th + math.pi, 2 * math.pi) - math.pi
    local costs = an * an + 0.1 * (thdot * thdot) + 0.001 * (u * u)
    local newthdot = thdot + (3 * G / (2 * L) * th:sin() + 3.0 / (MASS * (L * L)) * u) * DT
    newthdot = clip(newthdot, -MAX_SPEED, MAX_SPEED)
    local newth = th + newthdot * DT
    return {newth, newthdot}, -costs, th:ne(th) -- never terminates (false but for NaN)
  end

  function pendulum.observe(s)
    return {s[1]:cos():to(torch.float32), s[1]:sin():to(torch.float32), s[2]:to(torch.float32)}
  end
end

M.by_name = {}
for _, e in ipairs{cartpole, acrobot, mountain_car, mountain_car_continuous, pendulum} do M.by_name[e.name] = e end

-- The columns of a [N, k] tensor, and back.
function M.columns(t)
  local cols = {}
  for k = 1, t.shape[2] do cols[k] = t:select(2, k):contiguous() end
  return cols
end
function M.stack(cols) return torch.stack(cols, 2) end

-- One batched step of env (a table above) with Gymnasium's TimeLimit and
-- autoreset, as elementwise tensor ops: st = {state = columns, elapsed =
-- int64 [N], done = bool [N] (ended, not yet reset)}; action [N]; fresh =
-- the columns a reset would give this step (env.reset(u)); mode
-- "next_step", "same_step" or "disabled". Returns the next st and the
-- observation columns, reward (float32), terminated, truncated, and the
-- final observation columns (same_step; else nil).
function M.batch_step(env, st, action, fresh, mode)
  local ns, reward, terminated = env.step(st.state, action)
  local elapsed = st.elapsed + 1
  local truncated = elapsed:ge(env.max_episode_steps)
  local ended = terminated:logical_or(truncated)
  local out, final = {}, nil
  local function pick(mask, a, b)
    local r = {}
    for k = 1, #a do r[k] = torch.where(mask, a[k], b[k]) end
    return r
  end
  if mode == "next_step" then
    local was = st.done
    local keep = was:logical_not()
    out.state = pick(was, fresh, ns)
    out.elapsed = torch.where(was, 0, elapsed)
    reward = torch.where(was, 0.0, reward)
    terminated, truncated = terminated:logical_and(keep), truncated:logical_and(keep)
    out.done = ended:logical_and(keep)
  elseif mode == "same_step" then
    final = env.observe(ns)
    out.state = pick(ended, fresh, ns)
    out.elapsed = torch.where(ended, 0, elapsed)
    out.done = ended:logical_and(ended:logical_not())
  else
    out.state, out.elapsed, out.done = ns, elapsed, ended
  end
  return out, env.observe(out.state), reward:to(torch.float32), terminated, truncated, final
end

-- batch_step as one function of flat tensors, for torch.compile (whose
-- guards see tensors, not tables): f(elapsed, done, action, state...,
-- fresh...) -> elapsed, done, reward, terminated, truncated, state...,
-- obs...[, final obs...]. compiled_step(env, mode) compiles it as one graph.
function M.flat_step(env, mode)
  local ns = env.nstate
  return function(elapsed, done, action, ...)
    local args = {...}
    local st = {state = {table.unpack(args, 1, ns)}, elapsed = elapsed, done = done}
    local out, obs, r, term, trunc, final = M.batch_step(env, st, action, {table.unpack(args, ns + 1, 2 * ns)}, mode)
    local res = {out.elapsed, out.done, r, term, trunc}
    for k = 1, ns do res[#res + 1] = out.state[k] end
    for k = 1, #obs do res[#res + 1] = obs[k] end
    for k = 1, final and #final or 0 do res[#res + 1] = final[k] end
    return table.unpack(res)
  end
end

function M.compiled_step(env, mode) return torch.compile(M.flat_step(env, mode), {fullgraph = true}) end

return M
