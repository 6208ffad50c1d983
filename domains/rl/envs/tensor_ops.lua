-- torch.rl.envs.tensor_ops -- the classic-control envs as tensor ops only
-- (no host syncs), so they run on CUDA and inside torch.compile: per env
-- reset(u), step(state, action) and observe(state) on batches of float64
-- states [N, nstate], and batch_step, Gymnasium's TimeLimit and autoreset
-- modes written with torch.where. The same equations as the C envs
-- (cartpole.c, acrobot.c, ...); discrete actions are 1-based int64 [N],
-- continuous ones [N, 1].
local torch = require "torch"

local M = {}

local function col(s, k) return s:select(2, k) end
local function stack(cols) return torch.stack(cols, 2) end
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

  function cartpole.reset(u) return uniform(u, -0.05, 0.05) end

  function cartpole.step(s, a)
    local x, x_dot, theta, theta_dot = col(s, 1), col(s, 2), col(s, 3), col(s, 4)
    local force = a:eq(2):to(torch.float64) * (2 * FORCE_MAG) - FORCE_MAG
    local costheta, sintheta = theta:cos(), theta:sin()
    local temp = (force + POLEMASS_LENGTH * (theta_dot * theta_dot) * sintheta) / TOTAL_MASS
    local thetaacc = (GRAVITY * sintheta - costheta * temp) /
                     (LENGTH * (4.0 / 3.0 - MASSPOLE * (costheta * costheta) / TOTAL_MASS))
    local xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
    x = x + TAU * x_dot
    x_dot = x_dot + TAU * xacc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * thetaacc
    local terminated = x:lt(-X_THRESHOLD):logical_or(x:gt(X_THRESHOLD))
      :logical_or(theta:lt(-THETA_THRESHOLD)):logical_or(theta:gt(THETA_THRESHOLD))
    return stack{x, x_dot, theta, theta_dot}, torch.ones_like(x), terminated
  end

  function cartpole.observe(s) return s:to(torch.float32) end
end

-- ---- Acrobot-v1 ----
local acrobot = {name = "Acrobot-v1", nstate = 4, nobs = 6, n_actions = 3, max_episode_steps = 500}
M.acrobot = acrobot
do
  local DT, m1, m2, l1, lc1, lc2, I1, I2, g = 0.2, 1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.0, 9.8
  local MAX_VEL_1, MAX_VEL_2, PI = 4 * math.pi, 9 * math.pi, math.pi

  function acrobot.reset(u) return uniform(u, -0.1, 0.1):to(torch.float32):to(torch.float64) end

  local function dsdt(s, a)
    local theta1, theta2, dtheta1, dtheta2 = col(s, 1), col(s, 2), col(s, 3), col(s, 4)
    local c2, s2 = theta2:cos(), theta2:sin()
    local d1 = m1 * (lc1 * lc1) + m2 * ((l1 * l1) + (lc2 * lc2) + 2 * l1 * lc2 * c2) + I1 + I2
    local d2 = m2 * ((lc2 * lc2) + l1 * lc2 * c2) + I2
    local phi2 = m2 * lc2 * g * (theta1 + theta2 - PI / 2.0):cos()
    local phi1 = -m2 * l1 * lc2 * (dtheta2 * dtheta2) * s2 - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * s2 +
                 (m1 * lc1 + m2 * l1) * g * (theta1 - PI / 2):cos() + phi2
    local ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * (dtheta1 * dtheta1) * s2 - phi2) /
                     (m2 * (lc2 * lc2) + I2 - (d2 * d2) / d1)
    local ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
    return stack{dtheta1, dtheta2, ddtheta1, ddtheta2}
  end

  -- Gymnasium's wrap for |x| within three periods of [lo, hi]
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
    local k2 = dsdt(s + dt2 * k1, torque)
    local k3 = dsdt(s + dt2 * k2, torque)
    local k4 = dsdt(s + dt * k3, torque)
    local y = s + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    local ns = stack{wrap(col(y, 1), -PI, PI), wrap(col(y, 2), -PI, PI), clip(col(y, 3), -MAX_VEL_1, MAX_VEL_1),
                     clip(col(y, 4), -MAX_VEL_2, MAX_VEL_2)}
    local terminated = (-col(ns, 1):cos() - (col(ns, 2) + col(ns, 1)):cos()):gt(1.0)
    local reward = terminated:to(torch.float64) - 1.0
    return ns, reward, terminated
  end

  function acrobot.observe(s)
    local t1, t2 = col(s, 1), col(s, 2)
    return stack{t1:cos(), t1:sin(), t2:cos(), t2:sin(), col(s, 3), col(s, 4)}:to(torch.float32)
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
    local pos = uniform(col(u, 1), -0.6, -0.4)
    return stack{pos, torch.zeros_like(pos)}
  end
  mountain_car.reset, mountain_car_continuous.reset = reset, reset

  -- the shared end of both steps: position update, the wall, the goal
  local function move(position, velocity, goal)
    velocity = clip(velocity, -MAX_SPEED, MAX_SPEED)
    position = clip(position + velocity, MIN_POSITION, MAX_POSITION)
    velocity = torch.where(position:eq(MIN_POSITION):logical_and(velocity:lt(0)), torch.zeros_like(velocity), velocity)
    local terminated = position:ge(goal):logical_and(velocity:ge(0.0))
    return position, velocity, terminated
  end

  function mountain_car.step(s, a)
    local position, velocity = col(s, 1), col(s, 2)
    local terminated
    velocity = velocity + ((a:to(torch.float64) - 2) * 0.001 + (3 * position):cos() * (-0.0025))
    position, velocity, terminated = move(position, velocity, 0.5)
    return stack{position, velocity}, torch.full_like(position, -1.0), terminated
  end

  function mountain_car_continuous.step(s, a)
    local position, velocity = col(s, 1), col(s, 2)
    local act = a:select(2, 1):to(torch.float64)
    local force = clip(act, -1.0, 1.0)
    local terminated
    velocity = velocity + (force * 0.0015 - (3 * position):cos() * 0.0025)
    position, velocity, terminated = move(position, velocity, 0.45)
    local reward = terminated:to(torch.float64) * 100.0 - act * act * 0.1
    local ns = stack{position, velocity}:to(torch.float32):to(torch.float64)
    return ns, reward, terminated
  end

  local function observe(s) return s:to(torch.float32) end
  mountain_car.observe, mountain_car_continuous.observe = observe, observe
end

-- ---- Pendulum-v1 ----
local pendulum = {name = "Pendulum-v1", nstate = 2, nobs = 3, action_dim = 1, action_low = -2.0, action_high = 2.0,
                  max_episode_steps = 200}
M.pendulum = pendulum
do
  local MAX_SPEED, MAX_TORQUE, DT, G, MASS, L = 8.0, 2.0, 0.05, 10.0, 1.0, 1.0

  function pendulum.reset(u) return stack{uniform(col(u, 1), -math.pi, math.pi), uniform(col(u, 2), -1.0, 1.0)} end

  function pendulum.step(s, a)
    local th, thdot = col(s, 1), col(s, 2)
    local u = clip(a:select(2, 1):to(torch.float64), -MAX_TORQUE, MAX_TORQUE)
    local an = torch.remainder(th + math.pi, 2 * math.pi) - math.pi
    local costs = an * an + 0.1 * (thdot * thdot) + 0.001 * (u * u)
    local newthdot = thdot + (3 * G / (2 * L) * th:sin() + 3.0 / (MASS * (L * L)) * u) * DT
    newthdot = clip(newthdot, -MAX_SPEED, MAX_SPEED)
    local newth = th + newthdot * DT
    return stack{newth, newthdot}, -costs, torch.zeros_like(th):to(torch.bool)
  end

  function pendulum.observe(s)
    local th = col(s, 1)
    return stack{th:cos(), th:sin(), col(s, 2)}:to(torch.float32)
  end
end

M.by_name = {}
for _, e in ipairs{cartpole, acrobot, mountain_car, mountain_car_continuous, pendulum} do M.by_name[e.name] = e end

-- One batched step of env (a table above) with Gymnasium's TimeLimit and
-- autoreset, as pure tensor ops: state [N, nstate] float64, elapsed int64
-- [N], done bool [N] (ended and not yet reset), action, and fresh [N,
-- nstate], the states a reset would give this step (env.reset(u)).
-- Returns the next {state, elapsed, done} and obs, reward (float32),
-- terminated, truncated, final_obs (same_step; else nil).
function M.batch_step(env, st, action, fresh, mode)
  local ns, reward, terminated = env.step(st.state, action)
  local elapsed = st.elapsed + 1
  local truncated = elapsed:ge(env.max_episode_steps)
  local ended = terminated:logical_or(truncated)
  local zero_i = torch.zeros_like(elapsed)
  local out = {}
  if mode == "next_step" then
    local was = st.done
    local keep = was:logical_not()
    out.state = torch.where(was:unsqueeze(2), fresh, ns)
    out.elapsed = torch.where(was, zero_i, elapsed)
    reward = torch.where(was, torch.zeros_like(reward), reward)
    terminated, truncated = terminated:logical_and(keep), truncated:logical_and(keep)
    out.done = ended:logical_and(keep)
  elseif mode == "same_step" then
    out.final_obs = env.observe(ns)
    out.state = torch.where(ended:unsqueeze(2), fresh, ns)
    out.elapsed = torch.where(ended, zero_i, elapsed)
    out.done = torch.zeros_like(ended)
  else
    out.state, out.elapsed, out.done = ns, elapsed, ended
  end
  return out, env.observe(out.state), reward:to(torch.float32), terminated, truncated, out.final_obs
end

return M
