"""bench/peers/conv.py -- PyTorch's side of bench/conv.lua: the same
convolutions, timed the same way. Backward is aten's convolution_backward
computing grad input, grad weight and grad bias (what autograd runs).
Max pooling: F.max_pool2d with and without indices, and aten's
max_pool2d_with_indices_backward."""
import torch
import torch.nn.functional as F
from benchlib import report, setup, timeit


def main():
    want = setup()
    shapes = [("conv_fmnist1", 64, 1, 32, 28, 20), ("conv_fmnist2", 64, 32, 64, 14, 10),
              ("conv_resnet56", 32, 64, 64, 56, 2)]
    for name, n, c, k, hw, reps in shapes:
        x, w, b = torch.randn(n, c, hw, hw), torch.randn(k, c, 3, 3), torch.randn(k)
        flops = 2 * n * k * hw * hw * c * 9
        if want(name + "_fwd"):
            t = timeit(lambda: torch.conv2d(x, w, b, padding=1), reps)
            report(name + "_fwd", t, flops / t / 1e9, "GFLOP/s")
        if want(name + "_bwd"):
            g = torch.randn(n, k, hw, hw)
            bw = torch.ops.aten.convolution_backward
            t = timeit(lambda: bw(g, x, w, [k], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True]), reps)
            report(name + "_bwd", t, 2 * flops / t / 1e9, "GFLOP/s")
    pn, pc, phw = 64, 32, 28
    x = torch.randn(pn, pc, phw, phw)
    nin, nout = pn * pc * phw * phw, pn * pc * (phw // 2) ** 2
    if want("pool_fmnist_fwd"):
        t = timeit(lambda: F.max_pool2d(x, 2), 50)
        report("pool_fmnist_fwd", t, 4 * (nin + nout) / t / 1e9, "GB/s")
    if want("pool_fmnist_fwd_idx"):
        t = timeit(lambda: F.max_pool2d(x, 2, return_indices=True), 50)
        report("pool_fmnist_fwd_idx", t, (4 * nin + 12 * nout) / t / 1e9, "GB/s")
    if want("pool_fmnist_bwd"):
        _, idx = F.max_pool2d(x, 2, return_indices=True)
        g = torch.randn(pn, pc, phw // 2, phw // 2)
        bw = torch.ops.aten.max_pool2d_with_indices_backward
        t = timeit(lambda: bw(g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx), 50)
        report("pool_fmnist_bwd", t, (12 * nout + 4 * nin) / t / 1e9, "GB/s")


if __name__ == "__main__":
    with torch.no_grad():
        main()
