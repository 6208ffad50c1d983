"""tests/ref/gen_elementwise.py -- reference values from PyTorch for the
elementwise ops (unary, binary, comparisons, clamp/where/lerp/nan_to_num),
type promotion and half-precision results. Writes tests/ref/elementwise.lua.
Run with Debian's python3-torch:  /usr/bin/python3 tests/ref/gen_elementwise.py"""
import math
import os

import torch
from reflib import lua

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "elementwise.lua")




DT = {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
      "bfloat16": torch.bfloat16, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
      "int64": torch.int64, "uint8": torch.uint8, "bool": torch.bool}
NAME = {v: k for k, v in DT.items()}

cases = {}

# unary float math on a range that is valid for each op
POS = [0.25, 0.5, 1.0, 1.5, 2.0, 3.75]
SYM = [-2.5, -1.0, -0.3, 0.0, 0.4, 1.7, 3.0]
UNIT = [-0.9, -0.5, 0.0, 0.3, 0.99]
unary = {
    "exp": SYM, "exp2": SYM, "expm1": SYM, "log": POS, "log2": POS, "log10": POS, "log1p": POS,
    "sqrt": POS, "rsqrt": POS, "sin": SYM, "cos": SYM, "tan": [-1.2, -0.5, 0.0, 0.7, 1.3],
    "asin": UNIT, "acos": UNIT, "atan": SYM, "sinh": SYM, "cosh": SYM, "tanh": SYM, "sigmoid": SYM,
    "relu": SYM, "erf": SYM, "erfc": SYM, "floor": SYM, "ceil": SYM, "round": [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6],
    "trunc": SYM, "frac": SYM, "reciprocal": POS, "abs": SYM, "neg": SYM, "sign": SYM, "square": SYM,
}
for op, xs in unary.items():
    for dt in ["float32", "float64"]:
        x = torch.tensor(xs, dtype=DT[dt])
        y = getattr(torch, op)(x)
        cases[f"u_{op}_{dt}"] = {"op": op, "x": xs, "dtype": dt, "expected": y.double().tolist(),
                                 "out_dtype": NAME[y.dtype]}
# activations (functional in PyTorch)
for dt in ["float32", "float64"]:
    x = torch.tensor(SYM, dtype=DT[dt])
    cases[f"u_gelu_{dt}"] = {"op": "gelu", "x": SYM, "dtype": dt,
                             "expected": torch.nn.functional.gelu(x).double().tolist(), "out_dtype": dt}
    cases[f"u_gelu_tanh_{dt}"] = {"op": "gelu_tanh", "x": SYM, "dtype": dt,
                                  "expected": torch.nn.functional.gelu(x, approximate="tanh").double().tolist(),
                                  "out_dtype": dt}
    cases[f"u_silu_{dt}"] = {"op": "silu", "x": SYM, "dtype": dt,
                             "expected": torch.nn.functional.silu(x).double().tolist(), "out_dtype": dt}
# integer inputs: float ops promote to the default dtype, others keep the dtype
INTS = [-7, -2, 0, 3, 9]
for op in ["exp", "sqrt", "sigmoid", "abs", "neg", "sign", "square", "relu", "floor"]:
    x = torch.tensor(INTS, dtype=torch.int32)
    y = getattr(torch, op)(x) if op != "sqrt" else torch.sqrt(x)
    cases[f"u_{op}_int32"] = {"op": op, "x": INTS, "dtype": "int32", "expected": y.double().tolist(),
                              "out_dtype": NAME[y.dtype]}
# predicates
SPECIAL = [1.0, float("nan"), float("inf"), -float("inf"), 0.0]
for op in ["isnan", "isinf", "isfinite", "logical_not"]:
    y = getattr(torch, op)(torch.tensor(SPECIAL))
    cases[f"p_{op}"] = {"op": op, "x": SPECIAL, "dtype": "float32", "expected": y.tolist(), "out_dtype": "bool"}

# binary ops with broadcasting: a is 2x3, b is 3
A = [[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]]
B = [2.0, -0.5, 1.25]
for op in ["add", "sub", "mul", "div", "floor_divide", "pow", "atan2", "hypot", "fmod", "remainder",
           "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor"]:
    for dt in ["float32", "float64"]:
        a, b = torch.tensor(A, dtype=DT[dt]), torch.tensor(B, dtype=DT[dt])
        if op == "pow":
            a = a.abs()
        y = getattr(torch, op)(a, b)
        cases[f"b_{op}_{dt}"] = {"op": op, "a": a.tolist(), "b": B, "dtype": dt, "expected": y.double().tolist()
                                 if y.dtype != torch.bool else y.tolist(), "out_dtype": NAME[y.dtype]}
IA = [[7, -7, 9], [-9, 12, 5]]
IB = [2, 3, -4]
for op in ["add", "sub", "mul", "floor_divide", "fmod", "remainder", "maximum", "minimum", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "div", "pow"]:
    a, b = torch.tensor(IA, dtype=torch.int64), torch.tensor(IB, dtype=torch.int64)
    if op == "pow":
        b = b.abs()
    if op in ("bitwise_left_shift", "bitwise_right_shift"):
        b = b.abs()
    y = getattr(torch, op)(a, b)
    cases[f"b_{op}_int64"] = {"op": op, "a": IA, "b": b.tolist(), "dtype": "int64", "expected": y.tolist(),
                              "out_dtype": NAME[y.dtype]}

# promotion: dtype of (tensor of dtype d1) op (tensor of dtype d2), and with Lua scalars
prom = []
for d1 in DT:
    for d2 in DT:
        r = torch.result_type(torch.zeros(2, dtype=DT[d1]), torch.zeros(2, dtype=DT[d2]))
        prom.append([d1, d2, NAME[r]])
cases["promotion_tensors"] = {"rows": prom}
scal = []
for d1 in DT:
    for kind, v in [("int", 2), ("float", 2.5), ("bool", True)]:
        r = torch.result_type(torch.zeros(2, dtype=DT[d1]), v)
        scal.append([d1, kind, NAME[r]])
    r0 = torch.result_type(torch.zeros(2, dtype=DT[d1]), torch.tensor(1.0, dtype=torch.float64))
    scal.append([d1, "zerodim_float64", NAME[r0]])
cases["promotion_scalars"] = {"rows": scal}

# extra-argument ops
X = [-3.0, -0.5, 0.0, 0.75, 2.5, 9.0]
cases["clamp"] = {"x": X, "min": -1.0, "max": 2.0, "expected": torch.clamp(torch.tensor(X), -1.0, 2.0).tolist()}
cases["clamp_min"] = {"x": X, "min": 0.5, "expected": torch.clamp(torch.tensor(X), min=0.5).tolist()}
cond = [True, False, True, False, False, True]
cases["where"] = {"cond": cond, "a": X, "b": 7.0,
                  "expected": torch.where(torch.tensor(cond), torch.tensor(X), 7.0).tolist()}
cases["lerp"] = {"a": X, "b": [1.0] * 6, "w": 0.3,
                 "expected": torch.lerp(torch.tensor(X), torch.ones(6), 0.3).tolist()}
N = [float("nan"), float("inf"), -float("inf"), 1.5]
cases["nan_to_num"] = {"x": N, "expected": torch.nan_to_num(torch.tensor(N)).double().tolist()}
cases["nan_to_num_args"] = {"x": N, "nan": 0.5, "posinf": 9.0, "neginf": -9.0,
                            "expected": torch.nan_to_num(torch.tensor(N), 0.5, 9.0, -9.0).tolist()}
cases["leaky_relu"] = {"x": X, "slope": 0.2,
                       "expected": torch.nn.functional.leaky_relu(torch.tensor(X), 0.2).tolist()}
# half precision: results rounded to the half type
H = [0.1, 1.0 / 3.0, 2.7182818, 100.125, -65.3]
for dt in ["float16", "bfloat16"]:
    x = torch.tensor(H, dtype=DT[dt])
    cases[f"half_{dt}"] = {"x": H, "dtype": dt, "stored": x.double().tolist(),
                           "exp": torch.exp(x[:3].float()).to(DT[dt]).double().tolist(),
                           "mul": (x * 1.5).double().tolist(), "add": (x + x).double().tolist()}
# int overflow wraps
cases["int32_wrap"] = {"a": [2147483647], "b": [1], "expected": (torch.tensor([2147483647], dtype=torch.int32) +
                                                                 torch.tensor([1], dtype=torch.int32)).tolist()}

with open(OUT, "w") as f:
    f.write("-- generated by tests/ref/gen_elementwise.py from PyTorch " + torch.__version__ + "; do not edit\n")
    f.write("return {\n")
    for k, v in cases.items():
        f.write(f"  {k} = {lua(v)},\n")
    f.write("}\n")
print("wrote", OUT, len(cases), "cases")
