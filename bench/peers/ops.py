"""bench/peers/ops.py -- PyTorch's side of bench/ops.lua: the same operations,
timed the same way (median of batches after a warm-up), same output lines."""
import torch
from benchlib import report, setup, timeit


def main():
    want = setup()
    if want("dispatch_add16"):
        a, b = torch.ones(16), torch.ones(16)
        report("dispatch_add16", timeit(lambda: a + b, 200000))
    N = 16 * 1024 * 1024
    if want("copy16M") or want("add16M") or want("sum16M"):
        a, b, c = torch.rand(N), torch.ones(N), torch.empty(N)
        if want("copy16M"):
            s = timeit(lambda: c.copy_(a), 10)
            report("copy16M", s, 2 * 4 * N / s / 1e9, "GB/s")
        if want("add16M"):
            s = timeit(lambda: a + b, 10)
            report("add16M", s, 3 * 4 * N / s / 1e9, "GB/s")
        if want("sum16M"):
            s = timeit(lambda: a.sum(), 10)
            report("sum16M", s, 4 * N / s / 1e9, "GB/s")
    if want("matmul2048"):
        a, b = torch.randn(2048, 2048), torch.ones(2048, 2048)
        s = timeit(lambda: a @ b, 3, 5)
        report("matmul2048", s, 2 * 2048 ** 3 / s / 1e9, "GFLOP/s")
    if want("softmax4096x1024"):
        x = torch.randn(4096, 1024)
        s = timeit(lambda: torch.softmax(x, 1), 10)
        report("softmax4096x1024", s, 2 * 4 * 4096 * 1024 / s / 1e9, "GB/s")


if __name__ == "__main__":
    main()
