"""bench/peers/rl_envs.py -- PyTorch's side of bench/rl_envs.lua: batched
CartPole-v1 (N = 4096 copies, random actions, same-step autoreset) written
as PyTorch tensor ops, CleanRL-style vectorized (torch only, no gymnasium):
the same float64 state and Gymnasium equations, float32 observations,
terminated and truncated (500 steps) apart. Reports env-steps per second."""
import math

import torch
from benchlib import cuda_time_ms, report, setup, timeit

N = 4096
G, MC, MP, L, F, TAU = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
TM, PML = MP + MC, MP * L
THETA_T, X_T = 12 * 2 * math.pi / 360, 2.4


class CartPole:
    """N CartPole-v1 copies stepped together; actions are Gymnasium's 0/1."""

    def __init__(self, n, device):
        self.n, self.dev = n, device
        self.state = torch.rand(n, 4, dtype=torch.float64, device=device) * 0.1 - 0.05
        self.steps = torch.zeros(n, dtype=torch.int64, device=device)

    def step(self, action):
        x, x_dot, th, th_dot = self.state.unbind(1)
        force = torch.where(action == 1, F, -F)
        c, s = torch.cos(th), torch.sin(th)
        temp = (force + PML * th_dot * th_dot * s) / TM
        thacc = (G * s - c * temp) / (L * (4.0 / 3.0 - MP * c * c / TM))
        xacc = temp - PML * thacc * c / TM
        state = torch.stack((x + TAU * x_dot, x_dot + TAU * xacc, th + TAU * th_dot, th_dot + TAU * thacc), 1)
        self.steps += 1
        x, th = state[:, 0], state[:, 2]
        terminated = (x < -X_T) | (x > X_T) | (th < -THETA_T) | (th > THETA_T)
        truncated = self.steps >= 500
        reward = torch.ones(self.n, device=self.dev)
        done = terminated | truncated
        fresh = torch.rand(self.n, 4, dtype=torch.float64, device=self.dev) * 0.1 - 0.05
        self.state = torch.where(done[:, None], fresh, state)
        self.steps = torch.where(done, 0, self.steps)
        return self.state.float(), reward, terminated, truncated


def main():
    want = setup()
    for dev in ("cpu", "cuda"):
        if dev == "cuda" and not torch.cuda.is_available():
            continue
        for suffix in ("", "_out"):  # the peer allocates either way
            name = ("cartpole_4096" if dev == "cpu" else "cartpole_cuda_4096") + suffix
            if not want(name):
                continue
            torch.manual_seed(0)
            env = CartPole(N, dev)
            actions = torch.empty(N, dtype=torch.int64, device=dev)

            def fn():
                env.step(actions.random_(0, 2))
            secs = cuda_time_ms(fn, 20, 50) / 1e3 if dev == "cuda" else timeit(fn, 50)
            report(name, secs, N / secs, "steps/s")


if __name__ == "__main__":
    main()
