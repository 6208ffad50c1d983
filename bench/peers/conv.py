"""bench/peers/conv.py -- PyTorch's side of bench/conv.lua: the same
convolutions, timed the same way. Backward is aten's convolution_backward
computing grad input, grad weight and grad bias (what autograd runs)."""
import torch
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


if __name__ == "__main__":
    with torch.no_grad():
        main()
