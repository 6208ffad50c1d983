"""bench/peers/rl_envs_ref.py -- a plain Python/NumPy reference of
Gymnasium's classic-control environments (CartPole-v1, Acrobot-v1,
MountainCar-v0, MountainCarContinuous-v0, Pendulum-v1), written from the
published dynamics in Gymnasium's source (its equations, constants,
integrators, dtypes, termination and TimeLimit truncation), for the tests of
torch.rl.envs: given an initial state and an action sequence it gives the
observations, rewards, terminated and truncated of one episode.

Actions are Gymnasium's here (discrete: 0-based); the caller converts.
Sine and cosine are libm's (math.sin, math.cos) on float64 scalars: NumPy's
np.cos on float64 uses its own SIMD (SVML) code on AVX-512 machines, which
differs from libm by an ulp in about half the cases (--numpy-trig uses it).

Usage: rl_envs_ref.py [--numpy-trig] < episodes > results, one episode a line:
    <env id> <elapsed0> <state...> | <action...>
(continuous actions: one number each). Output: a Lua chunk returning a list
of {obs0 = {...} (the initial state's observation), obs = {{...}, ...}, reward = {...}, terminated = {...}, truncated = {...},
state = {...}} (the state after the last step), one per episode; an episode
stops at the first step that terminates or truncates."""
import math
import sys

import numpy as np

COS, SIN = math.cos, math.sin


class CartPole:
    max_episode_steps = 500
    gravity, masscart, masspole = 9.8, 1.0, 0.1
    total_mass = masspole + masscart
    length = 0.5
    polemass_length = masspole * length
    force_mag, tau = 10.0, 0.02
    theta_threshold_radians = 12 * 2 * math.pi / 360
    x_threshold = 2.4

    def __init__(self, state):
        self.state = np.array(state, dtype=np.float64)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force_mag if action == 1 else -self.force_mag
        costheta = COS(theta)
        sintheta = SIN(theta)
        temp = (force + self.polemass_length * np.square(theta_dot) * sintheta) / self.total_mass
        thetaacc = (self.gravity * sintheta - costheta * temp) / (
            self.length * (4.0 / 3.0 - self.masspole * np.square(costheta) / self.total_mass))
        xacc = temp - self.polemass_length * thetaacc * costheta / self.total_mass
        x = x + self.tau * x_dot  # euler
        x_dot = x_dot + self.tau * xacc
        theta = theta + self.tau * theta_dot
        theta_dot = theta_dot + self.tau * thetaacc
        self.state = np.array((x, x_dot, theta, theta_dot), dtype=np.float64)
        terminated = bool(x < -self.x_threshold or x > self.x_threshold
                          or theta < -self.theta_threshold_radians or theta > self.theta_threshold_radians)
        reward = 1.0
        return np.array(self.state, dtype=np.float32), reward, terminated


def wrap(x, m, M):
    diff = M - m
    while x > M:
        x = x - diff
    while x < m:
        x = x + diff
    return x


def bound(x, m, M):
    return min(max(x, m), M)


def rk4(derivs, y0, t):
    yout = np.zeros((len(t), len(y0)), np.float64)
    yout[0] = y0
    for i in np.arange(len(t) - 1):
        this = t[i]
        dt = t[i + 1] - this
        dt2 = dt / 2.0
        y0 = yout[i]
        k1 = np.asarray(derivs(y0))
        k2 = np.asarray(derivs(y0 + dt2 * k1))
        k3 = np.asarray(derivs(y0 + dt2 * k2))
        k4 = np.asarray(derivs(y0 + dt * k3))
        yout[i + 1] = y0 + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return yout[-1][:4]


class Acrobot:
    max_episode_steps = 500
    dt = 0.2
    LINK_LENGTH_1 = LINK_LENGTH_2 = 1.0
    LINK_MASS_1 = LINK_MASS_2 = 1.0
    LINK_COM_POS_1 = LINK_COM_POS_2 = 0.5
    LINK_MOI = 1.0
    MAX_VEL_1 = 4 * math.pi
    MAX_VEL_2 = 9 * math.pi
    AVAIL_TORQUE = [-1.0, 0.0, +1]

    def __init__(self, state):
        # reset keeps np_random.uniform(...).astype(np.float32) (exact in
        # float64); the steps make float64 states
        self.state = np.array(state, dtype=np.float64)

    def _get_ob(self):
        s = self.state
        return np.array([COS(s[0]), SIN(s[0]), COS(s[1]), SIN(s[1]), s[2], s[3]], dtype=np.float32)

    def _terminal(self):
        s = self.state
        return bool(-COS(s[0]) - COS(s[1] + s[0]) > 1.0)

    def _dsdt(self, s_augmented):
        m1, m2 = self.LINK_MASS_1, self.LINK_MASS_2
        l1 = self.LINK_LENGTH_1
        lc1, lc2 = self.LINK_COM_POS_1, self.LINK_COM_POS_2
        I1 = I2 = self.LINK_MOI
        g = 9.8
        a = s_augmented[-1]
        s = s_augmented[:-1]
        theta1, theta2, dtheta1, dtheta2 = s[0], s[1], s[2], s[3]
        d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * COS(theta2)) + I1 + I2
        d2 = m2 * (lc2**2 + l1 * lc2 * COS(theta2)) + I2
        phi2 = m2 * lc2 * g * COS(theta1 + theta2 - math.pi / 2.0)
        phi1 = (-m2 * l1 * lc2 * dtheta2**2 * SIN(theta2) - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * SIN(theta2)
                + (m1 * lc1 + m2 * l1) * g * COS(theta1 - math.pi / 2) + phi2)
        # the "book" dynamics (Gymnasium's default)
        ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * dtheta1**2 * SIN(theta2) - phi2) / (
            m2 * lc2**2 + I2 - d2**2 / d1)
        ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
        return dtheta1, dtheta2, ddtheta1, ddtheta2, 0.0

    def step(self, a):
        s = self.state
        torque = self.AVAIL_TORQUE[a]
        s_augmented = np.append(s, torque)
        ns = rk4(self._dsdt, s_augmented, [0, self.dt])
        ns[0] = wrap(ns[0], -math.pi, math.pi)
        ns[1] = wrap(ns[1], -math.pi, math.pi)
        ns[2] = bound(ns[2], -self.MAX_VEL_1, self.MAX_VEL_1)
        ns[3] = bound(ns[3], -self.MAX_VEL_2, self.MAX_VEL_2)
        self.state = ns
        terminated = self._terminal()
        reward = -1.0 if not terminated else 0.0
        return self._get_ob(), reward, terminated


class MountainCar:
    max_episode_steps = 200
    min_position, max_position, max_speed = -1.2, 0.6, 0.07
    goal_position, goal_velocity = 0.5, 0
    force, gravity = 0.001, 0.0025

    def __init__(self, state):
        self.state = np.array(state, dtype=np.float64)

    def step(self, action):
        position, velocity = self.state
        velocity += (action - 1) * self.force + math.cos(3 * position) * (-self.gravity)
        velocity = np.clip(velocity, -self.max_speed, self.max_speed)
        position += velocity
        position = np.clip(position, self.min_position, self.max_position)
        if position == self.min_position and velocity < 0:
            velocity = 0
        terminated = bool(position >= self.goal_position and velocity >= self.goal_velocity)
        reward = -1.0
        self.state = (position, velocity)
        return np.array(self.state, dtype=np.float32), reward, terminated


class MountainCarContinuous:
    max_episode_steps = 999
    min_action, max_action = -1.0, 1.0
    min_position, max_position, max_speed = -1.2, 0.6, 0.07
    goal_position, goal_velocity = 0.45, 0
    power = 0.0015

    def __init__(self, state):
        # reset's state is float64 (np.array([uniform, 0])); steps keep float32
        self.state = np.array(state, dtype=np.float64)

    def step(self, action):
        action = np.array([action], dtype=np.float32)
        position = self.state[0]
        velocity = self.state[1]
        force = min(max(action[0], self.min_action), self.max_action)
        velocity += force * self.power - 0.0025 * math.cos(3 * position)
        if velocity > self.max_speed:
            velocity = self.max_speed
        if velocity < -self.max_speed:
            velocity = -self.max_speed
        position += velocity
        if position > self.max_position:
            position = self.max_position
        if position < self.min_position:
            position = self.min_position
        if position == self.min_position and velocity < 0:
            velocity = 0
        terminated = bool(position >= self.goal_position and velocity >= self.goal_velocity)
        reward = 0
        if terminated:
            reward = 100.0
        reward -= math.pow(action[0], 2) * 0.1
        self.state = np.array([position, velocity], dtype=np.float32)
        return self.state, reward, terminated


def angle_normalize(x):
    return ((x + np.pi) % (2 * np.pi)) - np.pi


class Pendulum:
    max_episode_steps = 200
    max_speed, max_torque, dt = 8, 2.0, 0.05
    g, m, l = 10.0, 1.0, 1.0

    def __init__(self, state):
        self.state = np.array(state, dtype=np.float64)

    def _get_obs(self):
        theta, thetadot = self.state
        return np.array([COS(theta), SIN(theta), thetadot], dtype=np.float32)

    def step(self, u):
        u = np.array([u], dtype=np.float32)
        th, thdot = self.state
        g, m, l, dt = self.g, self.m, self.l, self.dt
        u = np.clip(u, -self.max_torque, self.max_torque)[0]
        costs = angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * (u**2)
        newthdot = thdot + (3 * g / (2 * l) * SIN(th) + 3.0 / (m * l**2) * u) * dt
        newthdot = np.clip(newthdot, -self.max_speed, self.max_speed)
        newth = th + newthdot * dt
        self.state = np.array([newth, newthdot])
        return self._get_obs(), -costs, False


ENVS = {"CartPole-v1": CartPole, "Acrobot-v1": Acrobot, "MountainCar-v0": MountainCar,
        "MountainCarContinuous-v0": MountainCarContinuous, "Pendulum-v1": Pendulum}


def observe(env):
    """The observation of env's current state (what reset returns)."""
    if isinstance(env, Acrobot):
        return env._get_ob()
    if isinstance(env, Pendulum):
        return env._get_obs()
    return np.array(env.state, dtype=np.float32)


def episode(env_id, state, actions, elapsed=0):
    """One episode from state under actions (Gymnasium's), with the
    TimeLimit counter starting at elapsed; stops at the first done step."""
    env = ENVS[env_id](state)
    out = {"obs0": [F32(v) for v in observe(env)], "obs": [], "reward": [], "terminated": [], "truncated": []}
    for a in actions:
        obs, reward, terminated = env.step(a)
        elapsed += 1
        truncated = elapsed >= env.max_episode_steps
        out["obs"].append([F32(v) for v in obs])
        out["reward"].append(float(reward))
        out["terminated"].append(terminated)
        out["truncated"].append(truncated)
        if terminated or truncated:
            break
    out["state"] = [float(v) for v in np.asarray(env.state, dtype=np.float64)]
    return out


class F32(float):
    """A float32 value: written with the 9 digits that identify it."""


def lua(v):
    if isinstance(v, F32):
        return "%.9g" % v
    if isinstance(v, str):
        return '"' + v + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("1/0" if v > 0 else "-1/0" if v < 0 else "0/0")
    if isinstance(v, int):
        return str(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {lua(x)}" for k, x in v.items()) + "}"
    return "{" + ", ".join(lua(x) for x in v) + "}"


def main():
    global COS, SIN
    if "--numpy-trig" in sys.argv:
        COS, SIN = np.cos, np.sin
    results = []
    for line in sys.stdin:
        if not line.strip():
            continue
        head, acts = line.split("|")
        fields = head.split()
        env_id, elapsed = fields[0], int(fields[1])
        state = [float(v) for v in fields[2:]]
        discrete = env_id not in ("MountainCarContinuous-v0", "Pendulum-v1")
        actions = [int(a) if discrete else float(a) for a in acts.split()]
        results.append(episode(env_id, state, actions, elapsed))
    sys.stdout.write("return " + lua(results) + "\n")


if __name__ == "__main__":
    main()
