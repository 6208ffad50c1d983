"""bench/peers/complex.py -- PyTorch's side of bench/complex.lua: complex64
elementwise ops and reductions on an 8 x 201 x 1000 tensor."""
import torch
from benchlib import report, setup, timeit


def main():
    want = setup()
    torch.manual_seed(0)
    shape = (8, 201, 1000)
    z = torch.complex(torch.randn(shape), torch.randn(shape))
    w = torch.complex(torch.randn(shape), torch.randn(shape))
    r = torch.rand(shape) + 0.5
    n = z.numel()

    def row(name, fn, reps=5):
        if want(name):
            with torch.no_grad():
                t = timeit(fn, reps)
            report(name, t, n / t / 1e9, "Gelem/s")

    row("complex_mul", lambda: z * w)
    row("complex_abs", lambda: z.abs())
    row("complex_angle", lambda: z.angle())
    row("complex_exp", lambda: z.exp())
    row("complex_div_real", lambda: z / r)
    row("complex_polar", lambda: torch.polar(r, r))
    row("complex_sum_time", lambda: z.sum(2))
    if want("complex_abs_fwdbwd"):
        zg = z.clone().requires_grad_()
        t = timeit(lambda: torch.autograd.grad([zg.abs().sum()], [zg]), 3)
        report("complex_abs_fwdbwd", t, n / t / 1e9, "Gelem/s")


if __name__ == "__main__":
    main()
