#!/usr/bin/python3
"""gen_uint16.py -- writes tests/ref/uint16.lua for tests/tensor/test_uint16.lua.
Debian's PyTorch (1.13) predates torch.uint16 (PyTorch 2.3), so the values
come from NumPy, whose uint16 arithmetic wraps modulo 2^16 exactly as
PyTorch's integer kernels do; conversions and reductions use NumPy with the
dtypes PyTorch picks (sum, prod, cumsum of integers -> int64). Integer
promotion pairs come from numpy.promote_types: PyTorch 2.x raises for uint16
with any non-float dtype (c10 promoteTypes), and moontorch completes the
table with NumPy's answers. Floats are left out here (PyTorch: the float)."""
import os

import numpy as np

from reflib import lua

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "uint16.lua")
u16 = np.uint16

a = np.array([0, 1, 2, 300, 1000, 32767, 32768, 40000, 65534, 65535], dtype=u16)
b = np.array([7, 65535, 3, 300, 9, 2, 32768, 30000, 5, 65535], dtype=u16)

ref = {"a": a, "b": b}

# binary ops, wrapping
with np.errstate(all="ignore"):
    ref["binary"] = {
        "add": a + b,
        "sub": a - b,
        "mul": a * b,
        "floor_divide": a // b,
        "remainder": a % b,
        "bitwise_and": a & b,
        "bitwise_or": a | b,
        "bitwise_xor": a ^ b,
        "maximum": np.maximum(a, b),
        "minimum": np.minimum(a, b),
    }
    ref["unary"] = {
        "neg": -a,
        "bitwise_not": ~a,
        "square": a * a,
        "abs": a,
    }
    ref["cmp"] = {
        "eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b,
    }
    ref["scalar"] = {"add7": a + u16(7), "sub7": a - u16(7), "mul3": a * u16(3), "rsub5": u16(5) - a}
    ref["true_divide"] = (a.astype(np.float32) / b.astype(np.float32)).astype(np.float64)
    ref["shift"] = {"left3": a << u16(3), "right3": a >> u16(3)}

# integer promotion of uint16 with each integer dtype and bool
names = {"int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64, "uint8": np.uint8,
         "bool": np.bool_, "uint16": np.uint16}
ref["promote"] = {n: str(np.promote_types(np.uint16, t)) for n, t in names.items()}
# a mixed add: uint16 + int16 -> int32 keeps the true sum
i16 = np.array([-5, 3, -32768, 32767, 0, -1, 1, 2, -3, 4], dtype=np.int16)
ref["i16"] = i16
ref["add_i16"] = a.astype(np.int32) + i16.astype(np.int32)
u8 = np.array([255, 1, 2, 3, 4, 5, 6, 7, 8, 200], dtype=np.uint8)
ref["u8"] = u8
with np.errstate(all="ignore"):
    ref["add_u8"] = a + u8.astype(u16)

# conversions from uint16 to each dtype (float16: IEEE round to nearest,
# so 65535 -> inf; integers wrap)
ref["to"] = {
    "int8": a.astype(np.int8), "int16": a.astype(np.int16), "int32": a.astype(np.int32),
    "int64": a.astype(np.int64), "uint8": a.astype(np.uint8), "bool": a.astype(np.bool_),
    "float32": a.astype(np.float32).astype(np.float64), "float64": a.astype(np.float64),
    "float16": a.astype(np.float16).astype(np.float64),
}
# conversions to uint16: integers wrap modulo 2^16, floats in range truncate
src_i64 = np.array([-1, 65536, 70000, -70000, 123, -32768, 65535], dtype=np.int64)
src_i8 = np.array([-128, -1, 0, 127], dtype=np.int8)
src_i16 = np.array([-32768, -1, 0, 32767], dtype=np.int16)
src_i32 = np.array([-2147483648, -1, 65536 * 3 + 17, 2147483647], dtype=np.int32)
src_f = np.array([0.0, 1.9, 3.5, 65535.0, 65534.99, 1000.25], dtype=np.float64)
ref["from"] = {
    "int64": {"src": src_i64, "out": src_i64.astype(u16)},
    "int8": {"src": src_i8, "out": src_i8.astype(u16)},
    "int16": {"src": src_i16, "out": src_i16.astype(u16)},
    "int32": {"src": src_i32, "out": src_i32.astype(u16)},
    "float64": {"src": src_f, "out": src_f.astype(u16)},
    "float32": {"src": src_f, "out": src_f.astype(np.float32).astype(u16)},
}

# reductions over a 2-D matrix
m = np.array([[65535, 1, 300, 7], [2, 65535, 0, 40000], [9, 8, 7, 6]], dtype=u16)
ref["m"] = m
ref["reduce"] = {
    "sum": int(m.sum(dtype=np.int64)),
    "sum1": m.sum(axis=0, dtype=np.int64),
    "sum2": m.sum(axis=1, dtype=np.int64),
    "prod2": m.astype(np.int64).prod(axis=1),
    "max": int(m.max()), "min": int(m.min()),
    "amax1": m.max(axis=0), "amin2": m.min(axis=1),
    "argmax2": m.argmax(axis=1) + 1, "argmin1": m.argmin(axis=0) + 1,
    "cumsum2": np.cumsum(m, axis=1, dtype=np.int64),
}
# a sum larger than 2^32 (so neither uint16 nor int32 holds it)
ref["big_sum"] = int(np.full(70000, 65535, dtype=np.int64).sum())

# sorting
s = np.array([40000, 3, 65535, 0, 3, 32768, 1, 65534], dtype=u16)
ref["s"] = s
order = np.argsort(s, kind="stable")
ref["sort"] = {"values": s[order], "indices": order + 1}
dorder = np.argsort(-s.astype(np.int64), kind="stable")
ref["sort_desc"] = {"values": s[dorder], "indices": dorder + 1}
ref["unique"] = np.unique(s)

# matrix product wraps modulo 2^16
p = np.array([[1, 2, 60000], [3, 40000, 5]], dtype=u16)
q = np.array([[7, 65535], [30000, 2], [3, 4]], dtype=u16)
with np.errstate(all="ignore"):
    ref["mm"] = {"p": p, "q": q, "pq": (p.astype(np.uint64) @ q.astype(np.uint64)).astype(u16)}

with open(OUT, "w") as f:
    f.write("-- generated by tests/ref/gen_uint16.py from NumPy " + np.__version__ + "; do not edit\n")
    f.write("return " + lua(ref, indent="") + "\n")
print("wrote", OUT)
