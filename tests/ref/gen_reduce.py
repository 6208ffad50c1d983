#!/usr/bin/python3
"""gen_reduce.py -- reference values for tests/tensor/test_reduce.lua.

Computes reductions, scans, sorting and softmax with PyTorch on fixed
inputs and writes tests/ref/reduce.lua. Each case names a torch function,
its input, its Lua arguments (1-based dims, written as Lua source) and the
expected outputs (values, dtype, shape); PyTorch's 0-based dims and indices
are converted to 1-based here. Run: /usr/bin/python3 tests/ref/gen_reduce.py
"""
import math
import os

import torch
from reflib import lua

torch.manual_seed(0)
nan, inf = float("nan"), float("inf")
cases = []




def dtname(t):
    return str(t.dtype).replace("torch.", "")


def out(t, one_based=False):
    if one_based:
        t = t + 1
    vals = t.tolist() if t.dim() > 0 else [t.item()]
    return {"values": vals, "dtype": dtname(t), "shape": list(t.shape)}


inputs = {}  # Lua name -> (values, shape, dtype); equal inputs are stored once


def input_name(x):
    key = (dtname(x), tuple(x.shape), repr(x.tolist()))
    for name, v in inputs.items():
        if v[3] == key:
            return name
    name = "x%d" % (len(inputs) + 1)
    inputs[name] = (x.tolist() if x.dim() > 0 else [x.item()], list(x.shape), dtname(x), key)
    return name


def case(name, op, x, lua_args, fn, index_outputs=(), rtol=None, atol=None):
    """fn(x) -> tensor or tuple; outputs listed in index_outputs are 1-based."""
    r = fn(x)
    rs = list(r) if isinstance(r, (tuple, list)) else [r]
    outs = [out(t, i in index_outputs) for i, t in enumerate(rs)]
    c = {"name": name, "op": op, "input": input_name(x), "args": lua_args, "outputs": outs}
    if rtol is not None:
        c["rtol"] = rtol
    if atol is not None:
        c["atol"] = atol
    cases.append(c)


def r(*shape, dtype=torch.float32):
    return torch.randn(*shape).mul(100).round().div(100).to(dtype)


A = r(3, 4)
B = r(2, 3, 4)
C = r(40, 20)          # column layout when reducing dim 1
E = r(2, 3, 20)        # column layout with an outer kept dim
D = r(4, 5, dtype=torch.float64)
I = torch.randint(-5, 6, (3, 4))
I8 = torch.randint(-100, 100, (4, 5)).to(torch.int8)
BO = torch.tensor([[True, False, True], [True, True, True]])
N = torch.tensor([[1.0, nan, 3.0], [4.0, 5.0, 6.0], [nan, 2.0, nan]])
T = torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 1.0], [5.0, 0.0, 5.0]])
H = r(3, 5).half()
S0 = torch.tensor(2.5)

# ---- sum / mean / prod ----
case("sum of all elements", "sum", A, "{}", lambda x: x.sum())
case("sum over dim 1", "sum", A, "{1}", lambda x: x.sum(0))
case("sum over dim 2 keepdim", "sum", A, "{2, true}", lambda x: x.sum(1, keepdim=True))
case("sum over dim -1 by option", "sum", B, "{{dim = -1}}", lambda x: x.sum(-1))
case("sum over dims {1, 3}", "sum", B, "{{1, 3}}", lambda x: x.sum((0, 2)))
case("sum over dims {1, 3} keepdim option", "sum", B, "{{1, 3}, {keepdim = true}}", lambda x: x.sum((0, 2), keepdim=True))
case("sum over dim 2 of 3-d (middle)", "sum", B, "{2}", lambda x: x.sum(1))
case("sum over dim 1 of a tall matrix (columns)", "sum", C, "{1}", lambda x: x.sum(0))
case("sum over dim 2 with an outer kept dim (columns)", "sum", E, "{2}", lambda x: x.sum(1))
case("sum of int64 stays int64", "sum", I, "{2}", lambda x: x.sum(1))
case("sum of int8 gives int64", "sum", I8, "{}", lambda x: x.sum())
case("sum of bool counts trues", "sum", BO, "{1}", lambda x: x.sum(0))
case("sum with dtype=float64", "sum", A, "{2, {dtype = 'float64'}}", lambda x: x.sum(1, dtype=torch.float64))
case("sum of float64", "sum", D, "{1}", lambda x: x.sum(0))
case("sum of float16", "sum", H, "{2}", lambda x: x.sum(1), rtol=2e-3, atol=1e-2)
case("sum of a 0-dim tensor", "sum", S0, "{}", lambda x: x.sum())
case("sum with NaN is NaN", "sum", N, "{2}", lambda x: x.sum(1))
case("nansum skips NaN", "nansum", N, "{2}", lambda x: x.nansum(1))
case("mean of all", "mean", A, "{}", lambda x: x.mean())
case("mean over dims {2, 3} keepdim", "mean", B, "{{2, 3}, true}", lambda x: x.mean((1, 2), keepdim=True))
case("mean of int with dtype=float64", "mean", I, "{1, {dtype = 'float64'}}", lambda x: x.mean(0, dtype=torch.float64))
case("mean over columns", "mean", C, "{1}", lambda x: x.mean(0))
case("nanmean skips NaN", "nanmean", N, "{1}", lambda x: x.nanmean(0))
case("prod over dim 2", "prod", A, "{2}", lambda x: x.prod(1), rtol=1e-5)
case("prod of int64", "prod", I, "{1}", lambda x: x.prod(0))
case("prod of all", "prod", T, "{}", lambda x: x.prod())

# ---- var / std / norm / logsumexp ----
case("var of all (unbiased)", "var", A, "{}", lambda x: x.var())
case("var over dim 2", "var", A, "{2}", lambda x: x.var(1))
case("var biased positional", "var", A, "{2, false}", lambda x: x.var(1, unbiased=False))
case("var with correction=0 keepdim", "var", B, "{{1, 3}, {correction = 0, keepdim = true}}",
     lambda x: torch.var(x, (0, 2), correction=0, keepdim=True))
case("std over dim 1", "std", A, "{1}", lambda x: x.std(0))
case("std of float64 over dims", "std", D, "{{1, 2}}", lambda x: x.std((0, 1)))
case("std biased as first argument", "std", A, "{false}", lambda x: x.std(False))
case("var_mean over dim 2", "var_mean", A, "{2}", lambda x: torch.var_mean(x, 1))
case("std_mean over dim 1 keepdim", "std_mean", A, "{1, true, true}", lambda x: torch.std_mean(x, 0, True, True))
case("norm 2 of all", "norm", A, "{}", lambda x: x.norm())
case("norm fro over dim 2", "norm", A, "{'fro', 2}", lambda x: x.norm("fro", 1))
case("norm 1 over dim 1 keepdim", "norm", A, "{1, 1, true}", lambda x: x.norm(1, 0, True))
case("norm inf", "norm", A, "{math.huge}", lambda x: x.norm(inf))
case("norm -inf over dim 2", "norm", A, "{-math.huge, 2}", lambda x: x.norm(-inf, 1))
case("norm 0 counts non-zeros", "norm", T, "{0}", lambda x: x.norm(0))
case("norm 3 over dims", "norm", B, "{3, {1, 2}}", lambda x: x.norm(3, (0, 1)), rtol=1e-5)
case("logsumexp over dim 2", "logsumexp", A, "{2}", lambda x: x.logsumexp(1))
case("logsumexp of large values is finite", "logsumexp", A * 1000, "{1}", lambda x: x.logsumexp(0), rtol=1e-6)
case("logsumexp over dims keepdim", "logsumexp", B, "{{1, 3}, true}", lambda x: x.logsumexp((0, 2), keepdim=True))
case("logsumexp of int gives float", "logsumexp", I, "{2}", lambda x: x.logsumexp(1))
case("logsumexp with inf and -inf rows", "logsumexp",
     torch.tensor([[inf, 1.0], [-inf, -inf], [nan, 1.0]]), "{2}", lambda x: x.logsumexp(1))

# ---- max / min / amax / amin / arg ----
case("max of all", "max", A, "{}", lambda x: x.max())
case("max over dim 2", "max", A, "{2}", lambda x: tuple(x.max(1)), index_outputs=(1,))
case("min over dim 1 keepdim", "min", A, "{1, true}", lambda x: tuple(x.min(0, keepdim=True)), index_outputs=(1,))
case("max picks the first of ties", "max", T, "{2}", lambda x: tuple(x.max(1)), index_outputs=(1,))
case("min picks the first of ties", "min", T, "{1}", lambda x: tuple(x.min(0)), index_outputs=(1,))
case("max propagates NaN with its index", "max", N, "{2}", lambda x: tuple(x.max(1)), index_outputs=(1,))
case("max of all with NaN", "max", N, "{}", lambda x: x.max())
case("max of int64 over dim 1", "max", I, "{1}", lambda x: tuple(x.max(0)), index_outputs=(1,))
case("max of middle dim (strided)", "max", B, "{2}", lambda x: tuple(x.max(1)), index_outputs=(1,))
case("amax over dims", "amax", B, "{{1, 3}}", lambda x: x.amax((0, 2)))
case("amax over columns", "amax", C, "{1}", lambda x: x.amax(0))
case("amin over columns", "amin", C, "{1}", lambda x: x.amin(0))
case("amin of int8", "amin", I8, "{2, true}", lambda x: x.amin(1, keepdim=True))
case("amax of bool", "amax", BO, "{2}", lambda x: x.amax(1))
case("amax propagates NaN", "amax", N, "{1}", lambda x: x.amax(0))
case("amin propagates NaN", "amin", N, "{2}", lambda x: x.amin(1))
case("argmax flat", "argmax", A, "{}", lambda x: x.argmax(), index_outputs=(0,))
case("argmax over dim 2", "argmax", A, "{2}", lambda x: x.argmax(1), index_outputs=(0,))
case("argmin over dim 1 keepdim", "argmin", A, "{1, true}", lambda x: x.argmin(0, keepdim=True), index_outputs=(0,))
case("argmax first of ties", "argmax", T, "{2}", lambda x: x.argmax(1), index_outputs=(0,))
case("argmax of 3-d flat", "argmax", B, "{}", lambda x: x.argmax(), index_outputs=(0,))
case("argmin of 3-d over dim 2", "argmin", B, "{2}", lambda x: x.argmin(1), index_outputs=(0,))
case("argmax picks the first NaN", "argmax", N, "{}", lambda x: x.argmax(), index_outputs=(0,))
case("argmax of int over columns", "argmax", I, "{1}", lambda x: x.argmax(0), index_outputs=(0,))
case("aminmax over dim 2", "aminmax", A, "{{dim = 2}}", lambda x: tuple(torch.aminmax(x, dim=1)))

# ---- all / any / count_nonzero ----
case("all of bool over dim 2", "all", BO, "{2}", lambda x: x.all(1))
case("any of float", "any", T, "{1}", lambda x: x.any(0))
case("all of all elements", "all", T, "{}", lambda x: x.all())
case("all of uint8 stays uint8", "all", torch.tensor([[1, 2], [0, 3]], dtype=torch.uint8), "{2}", lambda x: x.all(1))
case("count_nonzero over dim 1", "count_nonzero", T, "{1}", lambda x: torch.count_nonzero(x, 0))
case("count_nonzero of all", "count_nonzero", I, "{}", lambda x: torch.count_nonzero(x))

# ---- scans ----
case("cumsum over dim 2", "cumsum", A, "{2}", lambda x: x.cumsum(1))
case("cumsum over dim 1", "cumsum", B, "{1}", lambda x: x.cumsum(0))
case("cumsum of int8 gives int64", "cumsum", I8, "{2}", lambda x: x.cumsum(1))
case("cumsum of bool gives int64", "cumsum", BO, "{2}", lambda x: x.cumsum(1))
case("cumsum with dtype=float64", "cumsum", A, "{1, {dtype = 'float64'}}", lambda x: x.cumsum(0, dtype=torch.float64))
case("cumsum over a long row", "cumsum", C.reshape(-1), "{1}", lambda x: x.cumsum(0), rtol=1e-5, atol=1e-4)
case("cumprod over dim 2", "cumprod", A, "{2}", lambda x: x.cumprod(1), rtol=1e-5)
case("cumprod of int64", "cumprod", I, "{1}", lambda x: x.cumprod(0))
case("cummax over dim 2", "cummax", T, "{2}", lambda x: tuple(x.cummax(1)), index_outputs=(1,))
case("cummin over dim 1", "cummin", T, "{1}", lambda x: tuple(x.cummin(0)), index_outputs=(1,))
case("cummax with NaN", "cummax", torch.tensor([1.0, 3.0, 3.0, nan, 2.0, nan]), "{1}",
     lambda x: tuple(x.cummax(0)), index_outputs=(1,))
case("cummin of int over dim 2", "cummin", I, "{2}", lambda x: tuple(x.cummin(1)), index_outputs=(1,))

# ---- sorting ----
case("sort ascending", "sort", A, "{}", lambda x: tuple(x.sort()), index_outputs=(1,))
case("sort descending over dim 1", "sort", A, "{1, true}", lambda x: tuple(x.sort(0, True)), index_outputs=(1,))
case("sort stable with ties", "sort", I, "{2, {stable = true}}", lambda x: tuple(x.sort(dim=1, stable=True)), index_outputs=(1,))
case("sort stable descending with ties", "sort", I, "{2, {descending = true, stable = true}}",
     lambda x: tuple(x.sort(dim=1, descending=True, stable=True)), index_outputs=(1,))
case("sort puts NaN last", "sort", N, "{2}", lambda x: tuple(x.sort(dim=1, stable=True)), index_outputs=(1,))
case("sort descending puts NaN first", "sort", N, "{2, true}", lambda x: tuple(x.sort(dim=1, descending=True, stable=True)),
     index_outputs=(1,))
case("sort a long row", "sort", C.reshape(-1), "{}", lambda x: tuple(x.sort(dim=-1, stable=True)), index_outputs=(1,))
case("sort over the middle dim", "sort", B, "{2}", lambda x: tuple(x.sort(1)), index_outputs=(1,))
case("sort of float64", "sort", D, "{1}", lambda x: tuple(x.sort(0)), index_outputs=(1,))
case("argsort descending", "argsort", A, "{2, true}", lambda x: x.argsort(1, True), index_outputs=(0,))
case("topk of each row", "topk", A, "{2}", lambda x: tuple(x.topk(2)), index_outputs=(1,))
case("topk smallest over dim 1", "topk", A, "{2, 1, false}", lambda x: tuple(x.topk(2, 0, False)), index_outputs=(1,))
case("topk with options", "topk", B, "{3, {dim = 3, largest = true}}", lambda x: tuple(x.topk(3, dim=2)), index_outputs=(1,))
case("topk ranks NaN largest", "topk", torch.tensor([1.0, nan, 3.0]), "{2}", lambda x: tuple(x.topk(2)), index_outputs=(1,))
CN = C.clone()
CN[5, 3] = nan
CN[17, 8] = nan
case("topk 3 of 40 per column (heap)", "topk", C, "{3, 1}", lambda x: tuple(x.topk(3, 0)), index_outputs=(1,))
case("topk 3 smallest of 40 (heap)", "topk", C, "{3, 1, false}", lambda x: tuple(x.topk(3, 0, False)),
     index_outputs=(1,))
case("topk ranks NaN largest (heap)", "topk", CN, "{{k = 3, dim = 1}}", lambda x: tuple(x.topk(3, 0)), index_outputs=(1,))
case("kthvalue of each row", "kthvalue", A, "{2}", lambda x: tuple(x.kthvalue(2)), index_outputs=(1,))
case("kthvalue over dim 1 keepdim", "kthvalue", A, "{3, 1, true}", lambda x: tuple(x.kthvalue(3, 0, True)), index_outputs=(1,))
case("median of all (lower)", "median", A, "{}", lambda x: x.median())
case("median over dim 2", "median", A, "{2}", lambda x: tuple(x.median(1)), index_outputs=(1,))
case("median over dim 1 keepdim", "median", D, "{1, true}", lambda x: tuple(x.median(0, True)), index_outputs=(1,))
case("median with NaN gives the first NaN", "median", N, "{2}", lambda x: tuple(x.median(1)), index_outputs=(1,))
case("median of all with NaN", "median", N, "{}", lambda x: x.median())
case("nanmedian ignores NaN", "nanmedian", torch.tensor([[1.0, nan, 3.0, 2.0], [nan, 7.0, nan, nan], [4.0, 5.0, nan, 6.0]]),
     "{2}", lambda x: tuple(x.nanmedian(1)), index_outputs=(1,))
case("nanmedian of all", "nanmedian", N, "{}", lambda x: x.nanmedian())
case("mode picks the smallest most frequent, last index", "mode",
     torch.tensor([[1, 2, 2, 3, 3, 1], [5, 2, 2, 3, 3, 0]]), "{}", lambda x: tuple(x.mode()), index_outputs=(1,))
case("mode over dim 1", "mode", I, "{1}", lambda x: tuple(x.mode(0)), index_outputs=(1,))
case("unique sorted values", "unique", torch.tensor([3, 1, 3, 2, 1, 5]), "{}", lambda x: x.unique())
case("unique with inverse and counts", "unique", I, "{true, true, true}",
     lambda x: x.unique(return_inverse=True, return_counts=True), index_outputs=(1,))
case("unique of floats with counts", "unique", T, "{{return_counts = true}}", lambda x: x.unique(return_counts=True))
case("unique rows (dim 1)", "unique", torch.tensor([[1, 2], [1, 2], [0, 5], [3, 1], [0, 5]]),
     "{{dim = 1, return_inverse = true, return_counts = true}}",
     lambda x: torch.unique(x, dim=0, return_inverse=True, return_counts=True), index_outputs=(1,))
case("unique columns (dim 2)", "unique", torch.tensor([[3, 1, 3], [2, 2, 2]]),
     "{{dim = 2, return_inverse = true}}", lambda x: torch.unique(x, dim=1, return_inverse=True), index_outputs=(1,))

# ---- softmax ----
case("softmax over the last dim", "softmax", A, "{-1}", lambda x: x.softmax(-1))
case("softmax over dim 1", "softmax", B, "{1}", lambda x: x.softmax(0))
case("softmax over the middle dim", "softmax", E, "{2}", lambda x: x.softmax(1))
case("softmax of large values is stable", "softmax", A * 1000, "{2}", lambda x: x.softmax(1))
case("softmax of a long row", "softmax", C.reshape(1, -1) / 10, "{2}", lambda x: x.softmax(1), atol=1e-7)
case("softmax with dtype=float64", "softmax", A, "{2, 'float64'}", lambda x: x.softmax(1, dtype=torch.float64))
case("softmax of float64 rows", "softmax", D, "{2}", lambda x: x.softmax(1))
case("softmax of float16", "softmax", H, "{2}", lambda x: x.float().softmax(1).half(), rtol=2e-3, atol=1e-3)
case("softmax with -inf entries", "softmax", torch.tensor([[0.0, -inf, 1.0], [-inf, 2.0, -inf]]), "{2}",
     lambda x: x.softmax(1))
case("log_softmax over the last dim", "log_softmax", A, "{2}", lambda x: x.log_softmax(1))
case("log_softmax over dim 1", "log_softmax", B, "{{dim = 1}}", lambda x: x.log_softmax(0))
case("log_softmax of a 19-wide row (vector tail)", "log_softmax", r(2, 19), "{2}", lambda x: x.log_softmax(1))
case("log_softmax of large values", "log_softmax", A * 1000, "{2}", lambda x: x.log_softmax(1), rtol=1e-6)

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "reduce.lua"), "w") as f:
    f.write("-- generated by tests/ref/gen_reduce.py from PyTorch %s; do not edit\n" % torch.__version__)
    f.write("-- inputs: values, shape, dtype; cases: op, input name, Lua args (1-based), outputs\n")
    f.write("return {\n  inputs = {\n")
    for name, (vals, shape, dt, _) in inputs.items():
        f.write("    %s = {values = %s, shape = %s, dtype = %s},\n" % (name, lua(vals, dt != "float64"), lua(shape), lua(dt)))
    f.write("  },\n  cases = {\n")
    for c in cases:
        f.write("    {name = %s, op = %s, input = %s, args = %s,\n     outputs = {%s}%s},\n" % (
            lua(c["name"]), lua(c["op"]), lua(c["input"]), c["args"],
            ", ".join("{values = %s, dtype = %s, shape = %s}" % (lua(o["values"], o["dtype"] != "float64"), lua(o["dtype"]), lua(o["shape"]))
                      for o in c["outputs"]),
            "".join(", %s = %s" % (k, lua(c[k])) for k in ("rtol", "atol") if k in c)))
    f.write("  },\n}\n")
print("wrote %d cases" % len(cases))
