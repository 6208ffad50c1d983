"""bench/peers/rl_agents.py -- the PyTorch side of bench/rl_agents.lua: DQN
and PPO on CartPole-v1 written plainly in PyTorch, CleanRL-style (dqn.py,
ppo.py), with the same hyperparameters, networks and evaluation as
scripts/rl/cartpole_dqn.lua and cartpole_ppo.lua: every eval_every frames the
greedy policy plays 100 episodes and the run is solved when their mean
return reaches 475. The environment is Gymnasium's CartPole equations in
NumPy (rl_envs_ref.CartPole, with its reset distribution and 500-step
limit). Reports the seconds to solve and the frames as the extra column."""
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

from benchlib import report, setup
from rl_envs_ref import CartPole


class Env:
    """One CartPole with reset and TimeLimit(500)."""

    def __init__(self, rng):
        self.rng = rng

    def reset(self):
        self.env = CartPole(self.rng.uniform(-0.05, 0.05, size=4))
        self.t = 0
        return np.array(self.env.state, dtype=np.float32)

    def step(self, action):
        obs, r, term = self.env.step(action)
        self.t += 1
        return obs, r, term, self.t >= 500


def evaluate(policy, episodes, seed):
    rng = np.random.default_rng(seed)
    envs = [Env(rng) for _ in range(episodes)]
    obs = np.stack([e.reset() for e in envs])
    alive = np.ones(episodes, dtype=bool)
    total = np.zeros(episodes)
    while alive.any():
        with torch.no_grad():
            act = policy(torch.as_tensor(obs)).argmax(-1).numpy()
        for i, e in enumerate(envs):
            if alive[i]:
                o, r, term, trunc = e.step(int(act[i]))
                obs[i] = o
                total[i] += r
                alive[i] = not (term or trunc)
    return total.mean()


def dqn(seed, total_frames=500000, eval_every=10000):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    q = nn.Sequential(nn.Linear(4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 2))
    target = nn.Sequential(nn.Linear(4, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 2))
    target.load_state_dict(q.state_dict())
    opt = optim.Adam(q.parameters(), lr=2.5e-4)
    size, pos, full = 10000, 0, False
    b_obs, b_next = np.zeros((size, 4), np.float32), np.zeros((size, 4), np.float32)
    b_act, b_rew, b_term = np.zeros(size, np.int64), np.zeros(size, np.float32), np.zeros(size, np.float32)
    env = Env(rng)
    obs = env.reset()
    t0 = time.perf_counter()
    for frame in range(1, total_frames + 1):
        eps = max(0.05, 1 + (0.05 - 1) * frame / (0.5 * total_frames))
        if rng.random() < eps:
            a = int(rng.integers(2))
        else:
            with torch.no_grad():
                a = int(q(torch.as_tensor(obs).unsqueeze(0)).argmax(-1))
        nobs, r, term, trunc = env.step(a)
        b_obs[pos], b_act[pos], b_rew[pos], b_next[pos], b_term[pos] = obs, a, r, nobs, term
        pos = (pos + 1) % size
        full = full or pos == 0
        obs = env.reset() if (term or trunc) else nobs
        if frame > 10000 and frame % 10 == 0:
            idx = rng.integers(size if full else pos, size=128)
            o, nx = torch.as_tensor(b_obs[idx]), torch.as_tensor(b_next[idx])
            with torch.no_grad():
                y = torch.as_tensor(b_rew[idx]) + 0.99 * target(nx).max(-1).values * (1 - torch.as_tensor(b_term[idx]))
            pred = q(o).gather(1, torch.as_tensor(b_act[idx]).unsqueeze(1)).squeeze(1)
            loss = ((pred - y) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        if frame > 10000 and frame % 500 == 0:
            target.load_state_dict(q.state_dict())
        if frame > 10000 and frame % eval_every == 0:
            if evaluate(q, 100, seed * 1000 + frame) >= 475:
                return time.perf_counter() - t0, frame
    return time.perf_counter() - t0, total_frames


def layer(i, o, std):
    l = nn.Linear(i, o)
    nn.init.orthogonal_(l.weight, std)
    nn.init.constant_(l.bias, 0.0)
    return l


def ppo(seed, total_frames=500000, eval_every=20480, n=4, steps=128):
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    s2 = np.sqrt(2)
    actor = nn.Sequential(layer(4, 64, s2), nn.Tanh(), layer(64, 64, s2), nn.Tanh(), layer(64, 2, 0.01))
    critic = nn.Sequential(layer(4, 64, s2), nn.Tanh(), layer(64, 64, s2), nn.Tanh(), layer(64, 1, 1.0))
    params = list(actor.parameters()) + list(critic.parameters())
    opt = optim.Adam(params, lr=2.5e-4, eps=1e-5)
    envs = [Env(rng) for _ in range(n)]
    obs = np.stack([e.reset() for e in envs])
    iters = total_frames // (n * steps)
    t0 = time.perf_counter()
    next_eval = eval_every
    for it in range(1, iters + 1):
        opt.param_groups[0]["lr"] = 2.5e-4 * (1 - (it - 1) / iters)
        O = torch.zeros(steps, n, 4)
        A, LP, R, D, V = (torch.zeros(steps, n, dtype=torch.long), torch.zeros(steps, n), torch.zeros(steps, n),
                          torch.zeros(steps, n), torch.zeros(steps, n))
        NV = torch.zeros(steps, n)
        for t in range(steps):
            o = torch.as_tensor(obs)
            with torch.no_grad():
                dist = torch.distributions.Categorical(logits=actor(o))
                a = dist.sample()
                LP[t], V[t] = dist.log_prob(a), critic(o).squeeze(-1)
            O[t], A[t] = o, a
            last = np.empty_like(obs)
            for i, e in enumerate(envs):
                no, r, term, trunc = e.step(int(a[i]))
                R[t, i], D[t, i] = r, float(term or trunc)
                last[i] = no
                obs[i] = e.reset() if (term or trunc) else no
            with torch.no_grad():
                NV[t] = critic(torch.as_tensor(last)).squeeze(-1)
        adv = torch.zeros(steps, n)
        gae = torch.zeros(n)
        for t in reversed(range(steps)):
            delta = R[t] + 0.99 * NV[t] * (1 - D[t]) - V[t]
            gae = delta + 0.99 * 0.95 * (1 - D[t]) * gae
            adv[t] = gae
        ret = adv + V
        bO, bA, bLP, bAdv, bRet = O.reshape(-1, 4), A.reshape(-1), LP.reshape(-1), adv.reshape(-1), ret.reshape(-1)
        for _ in range(4):
            perm = torch.randperm(n * steps)
            for m in range(4):
                mb = perm[m * 128:(m + 1) * 128]
                dist = torch.distributions.Categorical(logits=actor(bO[mb]))
                ratio = (dist.log_prob(bA[mb]) - bLP[mb]).exp()
                a = bAdv[mb]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = -torch.min(ratio * a, ratio.clamp(0.8, 1.2) * a).mean()
                vloss = ((critic(bO[mb]).squeeze(-1) - bRet[mb]) ** 2).mean()
                loss = pg + 0.5 * vloss - 0.01 * dist.entropy().mean()
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, 0.5)
                opt.step()
        frame = it * n * steps
        if frame >= next_eval:
            next_eval += eval_every
            if evaluate(actor, 100, seed * 1000 + it) >= 475:
                return time.perf_counter() - t0, frame
    return time.perf_counter() - t0, iters * n * steps


def main():
    want = setup()
    seeds = [int(s) for s in (sys.argv[3].split(",") if len(sys.argv) > 3 else ["1", "2", "3"])]
    for name, fn in (("cartpole_dqn_solve", dqn), ("cartpole_ppo_solve", ppo)):
        compiled = name.replace("_solve", "_compiled_solve")  # our --compile rows, against the same eager peer
        if want(name) or want(compiled):
            runs = sorted(fn(s) for s in seeds)
            secs, frames = runs[(len(runs) - 1) // 2]
            for n in (name, compiled):
                if want(n):
                    report(n, secs, frames, "frames")


if __name__ == "__main__":
    main()
