#!/usr/bin/python3
"""gen_pool.py -- PyTorch reference values for tests/tensor/test_pool.lua.

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_pool.py   # writes tests/ref/pool.lua

Inputs come from gen() (as in gen_conv.py; the Lua test repeats it). Each
case holds the forward result (and 1-based indices for max pools) and the
autograd gradient of the input for the upstream gradient gen(out shape, 99)."""
import math
import os

import torch
import torch.nn.functional as F
from reflib import lua


def gen(shape, seed, dtype=torch.float64, mods=None):
    """mods (repeated by test_pool.lua's gen): "floor" rounds down to few
    integer values (ties in most windows); "nan" also puts a NaN at every
    flat position k with k % 7 == 3 and -inf where k % 11 == 5; "nans" puts a
    NaN where k % 3 == 0 (on 8 columns, some 2x2 windows hold two NaNs in
    different rows and columns)."""
    n = 1
    for s in shape:
        n *= s
    vals = [((37 * k + 11 * seed) % 101 - 50) / 32 for k in range(n)]
    if mods in ("floor", "nan"):
        vals = [float(math.floor(v)) for v in vals]
    if mods == "nan":
        vals = [math.nan if k % 7 == 3 else -math.inf if k % 11 == 5 else v for k, v in enumerate(vals)]
    if mods == "nans":
        vals = [math.nan if k % 3 == 0 else v for k, v in enumerate(vals)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)


cases = {}


def case(name, kind, x, view=None, mods=None, **opts):
    xt = gen(*x, mods=mods)
    if view == "transpose":
        xt = xt.transpose(-1, -2)
    xt.requires_grad_()
    fn = getattr(F, kind)
    if kind.startswith("max_pool") or kind.startswith("adaptive_max"):
        y, idx = fn(xt, return_indices=True, **opts)
    else:
        y, idx = fn(xt, **opts), None
    g = gen(tuple(y.shape), 99)
    y.backward(g)
    c = {"kind": kind, "x": list(x[0]) + [x[1]], "y_shape": list(y.shape), "y": y.detach().flatten(),
         "gx": xt.grad.flatten()}
    if view:
        c["view"] = view
    if mods:
        c["mods"] = mods
    if idx is not None:
        c["idx"] = (idx + 1).flatten()
    for k, v in opts.items():
        c[k] = list(v) if isinstance(v, tuple) else v
    cases[name] = c


case("max2d_basic", "max_pool2d", ((2, 3, 6, 7), 1), kernel_size=2)
case("max2d_stride_pad", "max_pool2d", ((2, 2, 7, 8), 2), kernel_size=3, stride=2, padding=1)
case("max2d_dilation_ceil", "max_pool2d", ((1, 2, 9, 10), 3), kernel_size=(3, 2), stride=(2, 3), dilation=(2, 1),
     ceil_mode=True)
case("max2d_overlap", "max_pool2d", ((1, 1, 6, 6), 4), kernel_size=3, stride=1)
case("max2d_noncontig", "max_pool2d", ((2, 2, 8, 6), 5), view="transpose", kernel_size=2, stride=(2, 1))
case("max2d_unbatched", "max_pool2d", ((3, 5, 5), 6), kernel_size=2, ceil_mode=True)
# stride == kernel, no padding: the engine's tiled fast path (odd sizes drop the last rows/columns)
case("max2d_tiled_odd", "max_pool2d", ((2, 3, 9, 11), 40), kernel_size=2)
case("max2d_tiled_3x3", "max_pool2d", ((2, 2, 10, 11), 41), kernel_size=3, stride=3)
case("max2d_tiled_rect", "max_pool2d", ((1, 3, 9, 13), 42), kernel_size=(3, 4))
case("max2d_tiled_kw5", "max_pool2d", ((1, 2, 5, 16), 43), kernel_size=(1, 5))
case("max2d_tiled_ties", "max_pool2d", ((2, 2, 8, 10), 44), mods="floor", kernel_size=2)
case("max2d_tiled_ties3", "max_pool2d", ((2, 2, 9, 10), 45), mods="floor", kernel_size=3)
case("max2d_tiled_nan", "max_pool2d", ((2, 2, 7, 9), 46), mods="nan", kernel_size=2)
case("max2d_tiled_nan3", "max_pool2d", ((1, 3, 9, 8), 47), mods="nan", kernel_size=(3, 2))
case("max2d_tiled_nans", "max_pool2d", ((1, 2, 6, 8), 49), mods="nans", kernel_size=2)
case("max2d_tiled_wide", "max_pool2d", ((1, 2, 3, 2051), 48), mods="floor", kernel_size=(1, 3))
# the general path on the same kinds of data
case("max2d_general_ties", "max_pool2d", ((2, 2, 8, 10), 44), mods="floor", kernel_size=2, stride=1)
case("max2d_general_nan", "max_pool2d", ((2, 2, 7, 9), 46), mods="nan", kernel_size=3, stride=2, padding=1)
case("max1d", "max_pool1d", ((2, 3, 11), 7), kernel_size=3, stride=2, padding=1, dilation=2)
case("max3d", "max_pool3d", ((1, 2, 4, 5, 4), 30), kernel_size=2, stride=(1, 2, 2), padding=1)
case("avg2d_basic", "avg_pool2d", ((2, 3, 6, 7), 8), kernel_size=2)
case("avg2d_pad_include", "avg_pool2d", ((2, 2, 7, 7), 9), kernel_size=3, stride=2, padding=1)
case("avg2d_pad_exclude", "avg_pool2d", ((2, 2, 7, 7), 10), kernel_size=3, stride=2, padding=1,
     count_include_pad=False)
case("avg2d_ceil", "avg_pool2d", ((1, 2, 8, 9), 11), kernel_size=(3, 2), stride=2, padding=1, ceil_mode=True)
case("avg2d_ceil_exclude", "avg_pool2d", ((1, 2, 8, 9), 12), kernel_size=3, stride=2, padding=1, ceil_mode=True,
     count_include_pad=False)
case("avg2d_divisor", "avg_pool2d", ((2, 2, 6, 6), 13), kernel_size=3, stride=2, padding=1, divisor_override=5)
case("avg2d_noncontig", "avg_pool2d", ((2, 2, 8, 6), 14), view="transpose", kernel_size=(2, 3))
case("avg1d", "avg_pool1d", ((2, 3, 11), 15), kernel_size=3, stride=2, padding=1, ceil_mode=True)
case("avg3d", "avg_pool3d", ((1, 2, 4, 5, 4), 31), kernel_size=2, stride=(1, 2, 2), padding=1, count_include_pad=False)
case("adaptive_avg2d", "adaptive_avg_pool2d", ((2, 3, 7, 9), 16), output_size=(3, 4))
case("adaptive_avg2d_up", "adaptive_avg_pool2d", ((1, 2, 3, 5), 17), output_size=(5, 7))
case("adaptive_avg2d_global", "adaptive_avg_pool2d", ((2, 4, 5, 6), 18), output_size=1)
case("adaptive_avg1d", "adaptive_avg_pool1d", ((2, 3, 10), 19), output_size=4)
case("adaptive_max2d", "adaptive_max_pool2d", ((2, 3, 7, 9), 20), output_size=(3, 4))
case("adaptive_max1d", "adaptive_max_pool1d", ((2, 3, 10), 21), output_size=3)

# NaN wins a max window (the last NaN of the window); -inf windows pick their first position
x = torch.tensor([[[[1.0, float("nan"), 3.0, float("-inf")], [float("nan"), 0.0, float("-inf"), float("-inf")]]]])
y, idx = F.max_pool2d(x, 2, return_indices=True)
cases["nan"] = {"y": y.flatten(), "idx": (idx + 1).flatten()}

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pool.lua")
with open(out, "w") as f:
    f.write("-- tests/ref/pool.lua -- generated by tests/ref/gen_pool.py (PyTorch %s); do not edit.\n" % torch.__version__)
    f.write("return " + lua(cases, indent="") + "\n")
