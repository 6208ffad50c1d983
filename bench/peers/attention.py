"""bench/peers/attention.py -- PyTorch's side of bench/attention.lua: the
math composition softmax(q k^T / sqrt(E)) v (PyTorch 1.13 has no public
F.scaled_dot_product_attention on the CPU), forward and forward + backward,
then one head at L=S=8192 when its L x S matrices fit, with peak RSS."""
import math
import resource
import time

import torch
from benchlib import report, setup, timeit


def attn(q, k, v):
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), -1) @ v


def main():
    want = setup()
    b, h, l, e = 4, 8, 512, 64
    flops = 4 * b * h * l * l * e
    q, k, v = torch.randn(b, h, l, e), torch.randn(b, h, l, e), torch.randn(b, h, l, e)
    if want("sdpa_512_fwd"):
        with torch.no_grad():
            t = timeit(lambda: attn(q, k, v), 5)
        report("sdpa_512_fwd", t, flops / t / 1e9, "GFLOP/s")
    if want("sdpa_512_fwdbwd"):
        q.requires_grad_(), k.requires_grad_(), v.requires_grad_()
        g = torch.randn(b, h, l, e)
        t = timeit(lambda: torch.autograd.grad([attn(q, k, v)], [q, k, v], [g]), 3)
        report("sdpa_512_fwdbwd", t, 3.5 * flops / t / 1e9, "GFLOP/s")
    if want("sdpa_8192_fwdbwd"):
        n = 8192
        # scores, softmax and their gradients: about 4 L x S float32 matrices (1 GB)
        q, k, v = (torch.randn(1, 1, n, e, requires_grad=True) for _ in range(3))
        t0 = time.perf_counter()
        y = attn(q, k, v)
        torch.autograd.grad([y.sum()], [q, k, v])
        t = time.perf_counter() - t0
        report("sdpa_8192_fwdbwd", t, 3.5 * 4 * n * n * e / t / 1e9, "GFLOP/s")
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"NOTE sdpa_8192 peer: peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
