"""bench/peers/rl_replay.py -- the peer of bench/rl_replay.lua: the same
prioritized replay in plain PyTorch + numpy (no TorchRL: it is not
installable here): sum and min segment trees in numpy arrays (power-of-two
heap layout), the batched prefix-sum search descending all 256 queries
together level by level (vectorized), TorchRL's weights (p_i / p_min)^-beta,
and the sampled rows gathered from a dict of [N, ...] tensors."""
import numpy as np
import torch
from benchlib import report, setup, timeit


class SegmentTrees:
    def __init__(self, cap):
        self.cap = cap
        self.size = 1 << (cap - 1).bit_length()
        self.sum = np.zeros(2 * self.size)
        self.min = np.full(2 * self.size, np.inf)

    def set_all(self, p):
        n = len(p)
        self.sum[self.size:self.size + n] = p
        self.min[self.size:self.size + n] = p
        lo = self.size
        while lo > 1:  # rebuild level by level
            hi, lo = lo, lo // 2
            self.sum[lo:hi] = self.sum[2 * lo:2 * hi:2] + self.sum[2 * lo + 1:2 * hi:2]
            self.min[lo:hi] = np.minimum(self.min[2 * lo:2 * hi:2], self.min[2 * lo + 1:2 * hi:2])

    def scan(self, mass):
        node = np.ones(len(mass), dtype=np.int64)
        r = mass.copy()
        level = self.size
        while level > 1:
            left = 2 * node
            ls = self.sum[left]
            right = r >= ls
            r -= np.where(right, ls, 0.0)
            node = left + right
            level >>= 1
        return np.minimum(node - self.size, self.cap - 1)


def make(n):
    torch.manual_seed(0)
    data = {"obs": torch.randn(n, 4), "action": torch.randint(0, 2, (n,)), "reward": torch.ones(n, 1),
            "next_obs": torch.randn(n, 4), "next_done": torch.zeros(n, 1, dtype=torch.bool)}
    trees = SegmentTrees(n)
    alpha = 0.6
    trees.set_all(((torch.rand(n, dtype=torch.float64) * 10 + 1e-8) ** alpha).numpy())
    return data, trees


def sampler(trees, n, beta=0.4):
    p_sum = trees.sum[1]
    p_min = trees.min[1]
    mass = torch.rand(256, dtype=torch.float64).numpy() * p_sum
    idx = trees.scan(mass)
    w = torch.from_numpy(np.power(trees.sum[trees.size + idx] / p_min, -beta)).float()
    return torch.from_numpy(idx), w


def sample(data, trees, n):
    idx, w = sampler(trees, n)
    out = {k: v.index_select(0, idx) for k, v in data.items()}
    out["index"] = idx
    out["_weight"] = w
    return out


def main():
    setup()
    for name, n in (("1m", 1000000), ("10k", 10000)):
        data, trees = make(n)
        t = timeit(lambda: sample(data, trees, n), 200)
        report("rl_prb_sample256_" + name, t)
        ts = timeit(lambda: sampler(trees, n), 200)
        report("rl_prb_sampler256_" + name, ts)


if __name__ == "__main__":
    main()
