"""bench/peers/gpt.py -- PyTorch's side of bench/gpt.lua: one training step
of bench/peers/train_char_gpt.py's default GPT (attention as the math
composition: PyTorch 1.13 has no SDPA), tokens per second."""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from benchlib import report, setup, timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_char_gpt import GPT  # noqa: E402


def main():
    want = setup()
    if want("train_gpt"):
        torch.manual_seed(0)
        bs, T, V = 32, 128, 114
        m = GPT(V, T, 4, 4, 128)
        opt = torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
        x = torch.randint(0, V, (bs, T))
        y = torch.randint(0, V, (bs, T))

        def step():
            loss = F.cross_entropy(m(x).view(-1, V), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            opt.step()

        s = timeit(step, 3, 5)
        report("train_gpt", s, bs * T / s, "tokens/s")


if __name__ == "__main__":
    main()
