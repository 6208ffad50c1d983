"""tests/ref/gen_complex.py -- reference values from PyTorch for complex
tensors: printing, promotion, elementwise ops, reductions and gradients
(PyTorch's convention: the gradient of a real loss L with respect to z is
dL/dre + i dL/dim). Complex values are written as {re, im} pairs, the form
x:totable() gives. Writes tests/ref/complex.lua.
Run with Debian's python3-torch:  /usr/bin/python3 tests/ref/gen_complex.py"""
import os

import torch
from reflib import lua

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "complex.lua")
C = torch.complex128


def pairs(t):
    """complex -> nested {re, im} lists; real -> plain lists."""
    t = t.detach().resolve_conj().resolve_neg()
    return torch.view_as_real(t).tolist() if t.is_complex() else t.tolist()


def grid(n, m, a, b):
    """A deterministic n x m float64 grid (the Lua test builds the same)."""
    k = torch.arange(n * m, dtype=torch.float64).reshape(n, m)
    return torch.sin(k * a + b) * 2


Z = torch.complex(grid(3, 4, 0.7, 0.1), grid(3, 4, 1.3, 0.5))
W = torch.complex(grid(3, 4, 0.4, 1.1), grid(3, 4, 0.9, 0.2)) + 0.5
R = grid(3, 4, 0.3, 0.8)
cases = {"Z": pairs(Z), "W": pairs(W), "R": pairs(R)}

ops = {
    "add": lambda: Z + W, "sub": lambda: Z - W, "mul": lambda: Z * W, "div": lambda: Z / W,
    "add_real": lambda: Z + R, "mul_real": lambda: R * Z, "div_real": lambda: Z / R,
    "mul_num": lambda: Z * 2.5, "rsub_num": lambda: 2 - Z, "div_num": lambda: 1.5 / Z,
    "neg": lambda: -Z, "conj": lambda: Z.conj().resolve_conj(), "abs": lambda: Z.abs(),
    "angle": lambda: Z.angle(), "exp": lambda: Z.exp(), "log": lambda: Z.log(), "sqrt": lambda: Z.sqrt(),
    "rsqrt": lambda: Z.rsqrt(), "reciprocal": lambda: Z.reciprocal(), "square": lambda: Z.square(),
    "sgn": lambda: Z.sgn(), "pow_2": lambda: Z.pow(2), "pow_2_5": lambda: Z.pow(2.5),
    "pow_neg": lambda: Z.pow(-0.75), "pow_zw": lambda: Z.pow(W),
    "sum": lambda: Z.sum(), "sum_dim": lambda: Z.sum(1), "mean": lambda: Z.mean(),
    "mean_dim_keep": lambda: Z.mean(0, keepdim=True), "eq": lambda: Z.eq(Z * torch.tensor([1, 2, 1, 1])),
    "polar": lambda: torch.polar(R.abs(), R * 3), "complex": lambda: torch.complex(R, R * 2),
    "isfinite": lambda: torch.tensor([1 + 2j, complex(float("inf"), 0), complex(0, float("nan"))]).isfinite(),
    "angle_real": lambda: torch.tensor([-1.0, 0.0, 2.0, -0.0]).angle(),
}
cases["ops"] = {k: pairs(f()) for k, f in ops.items()}

names = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
         "complex64", "complex128"]
cases["promote"] = {a + "_" + b: str(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace("torch.", "")
                    for a in names for b in ["complex64", "complex128"]}
cases["result_type"] = {
    "f32_dim_c128_0dim": str((torch.ones(2) + torch.tensor(1j, dtype=C)).dtype).replace("torch.", ""),
    "i32_dim_c128_0dim": str((torch.ones(2, dtype=torch.int32) + torch.tensor(1j, dtype=C)).dtype).replace("torch.", ""),
    "c64_dim_f64_0dim": str((torch.ones(2, dtype=torch.complex64) + torch.tensor(1.0, dtype=torch.float64)).dtype).replace("torch.", ""),
    "c64_times_num": str((torch.ones(2, dtype=torch.complex64) * 2.5).dtype).replace("torch.", ""),
}

prints = {
    "mixed": torch.tensor([1 + 2j, -3.5 - 0.25j, 1e-5j], dtype=torch.complex64),
    "ints": torch.tensor([[1 + 2j, 3], [4, 5j]], dtype=C),
    "scalar": torch.tensor(1 + 2j, dtype=torch.complex64),
    "fixed": torch.tensor([0.5 - 1.25j, 2.125 + 0.75j], dtype=torch.complex64),
}
cases["print"] = {k: repr(v).replace("torch.", "").split("\n") for k, v in prints.items()}  # lines


def grad_of(fn, *inputs):
    """Gradients of L = sum(view_as_real(fn(...)) * weights) (or of a real result)."""
    xs = [x.clone().requires_grad_() for x in inputs]
    y = fn(*xs)
    yr = torch.view_as_real(y) if y.is_complex() else y
    wts = torch.sin(torch.arange(yr.numel(), dtype=torch.float64) * 0.37 + 0.2).reshape(yr.shape)
    (yr * wts).sum().backward()
    return [pairs(x.grad) for x in xs]


grads = {
    "mul": (lambda a, b: a * b, Z, W), "div": (lambda a, b: a / b, Z, W), "add": (lambda a, b: a + b, Z, W),
    "sub": (lambda a, b: a - b, Z, W), "mul_real": (lambda r, z: r * z, R, Z), "div_real": (lambda z, r: z / r, Z, R),
    "exp": (torch.exp, Z), "log": (torch.log, Z), "sqrt": (torch.sqrt, Z), "rsqrt": (torch.rsqrt, Z),
    "reciprocal": (torch.reciprocal, Z), "square": (torch.square, Z), "neg": (torch.neg, Z),
    "conj": (lambda z: z.conj().resolve_conj(), Z), "abs": (torch.abs, Z), "angle": (torch.angle, Z),
    "sgn": (torch.sgn, Z), "pow_2_5": (lambda z: z.pow(2.5), Z), "pow_zw": (lambda a, b: a.pow(b), Z, W),
    "real": (lambda z: z.real * 1, Z), "imag": (lambda z: z.imag * 1, Z),
    "view_as_real": (lambda z: torch.view_as_real(z) * 1, Z),
    "view_as_complex": (lambda r: torch.view_as_complex(r), torch.stack([R, R * 0.5], -1)),
    "complex": (torch.complex, R, R * 2), "polar": (torch.polar, R.abs() + 0.1, R * 3),
    "sum": (lambda z: z.sum(1), Z), "mean": (lambda z: z.mean(), Z), "abs_exp": (lambda z: (z * W).exp().abs(), Z),
}
cases["grad"] = {k: grad_of(v[0], *v[1:]) for k, v in grads.items()}

with open(OUT, "w") as f:
    f.write("-- generated by tests/ref/gen_complex.py from PyTorch " + torch.__version__ + "; do not edit\n")
    f.write("return {\n")
    for k, v in cases.items():
        f.write(f"  {k} = {lua(v)},\n")
    f.write("}\n")
print("wrote", OUT, len(cases), "cases")
