"""bench/peers/jit.py -- PyTorch's side of bench/jit.lua: the same graphs run
eagerly (PyTorch 1.13 has no torch.compile), timed the same way."""
import torch
import torch.nn.functional as F
from benchlib import report, setup, timeit


def main():
    want = setup()
    R, C = 4096, 1024
    N = R * C
    x, w, b = torch.randn(R, C), torch.randn(C), torch.randn(C)
    if want("jit_copy4M"):
        out = torch.empty(R, C)
        s = timeit(lambda: out.copy_(x), 20)
        report("jit_copy4M", s, 2 * 4 * N / s / 1e9, "GB/s")
    for name in ("jit_gelu4M", "jit_gelu4M_eager"):
        if want(name):
            s = timeit(lambda: F.gelu(x * w + b), 10)
            report(name, s, 2 * 4 * N / s / 1e9, "GB/s")
    if want("jit_copy16M") or want("jit_gelu16M"):
        x16, out16 = torch.randn(4 * R, C), torch.empty(4 * R, C)
        if want("jit_copy16M"):
            s = timeit(lambda: out16.copy_(x16), 5)
            report("jit_copy16M", s, 2 * 4 * 4 * N / s / 1e9, "GB/s")
        if want("jit_gelu16M"):
            s = timeit(lambda: F.gelu(x16 * w + b), 5)
            report("jit_gelu16M", s, 2 * 4 * 4 * N / s / 1e9, "GB/s")
    if want("jit_layer_norm4096x1024"):
        s = timeit(lambda: F.layer_norm(x, (C,), w, b), 20)
        report("jit_layer_norm4096x1024", s, 2 * 4 * N / s / 1e9, "GB/s")
    if want("jit_softmax4096x1024"):
        s = timeit(lambda: torch.softmax(x, 1), 20)
        report("jit_softmax4096x1024", s, 2 * 4 * N / s / 1e9, "GB/s")


if __name__ == "__main__":
    main()
