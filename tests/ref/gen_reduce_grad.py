#!/usr/bin/python3
"""gen_reduce_grad.py -- reference gradients for tests/graph/test_reduce_grad.lua.

Gradients of reductions, scans and sorting ops where finite differences
are weak or undefined: ties (split evenly, or routed to the index PyTorch
picks), norms at zero, products and cumulative products with zeros, NaNs.
Each case gives the input (float64), the expression in Lua (x is the input,
dims 1-based) and in Python, and PyTorch's gradient of the differentiable
results, seeded with grad_outputs (k * (1, 2, 3, ...)) for result k;
`second` adds the gradient of <first gradient, v> with v = (1, 2, ...) / 10.
Writes tests/ref/reduce_grad.lua. Run from outside the build dir:
  cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_reduce_grad.py
"""
import math
import os

import torch
from reflib import lua

nan, inf = float("nan"), float("inf")
cases = []


def seed(t, k):
    return (torch.arange(t.numel(), dtype=t.dtype) + 1).reshape(t.shape) * k


def case(name, x, lua_expr, fn, second=False):
    x = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    r = fn(x)
    rs = list(r) if isinstance(r, (tuple, list)) else [r]
    outs = [t for t in rs if t.is_floating_point() and t.requires_grad]
    gouts = [seed(t, k + 1) for k, t in enumerate(outs)]
    (g,) = torch.autograd.grad(outs, x, gouts, create_graph=second, allow_unused=True)
    if g is None:  # norm(0): PyTorch leaves the gradient undefined, i.e. zero
        g = torch.zeros_like(x)
    c = {"name": name, "x": x.detach().tolist(), "shape": list(x.shape), "expr": lua_expr,
         "grad": g.detach().reshape(-1).tolist()}
    if second:
        v = seed(g, 0.1)
        (g2,) = torch.autograd.grad(g, x, v, allow_unused=True)
        c["grad2"] = (g2 if g2 is not None else torch.zeros_like(x)).reshape(-1).tolist()
    cases.append(c)


# ---- ties: split evenly (all-element forms, amax/amin) ----
case("max of all elements splits ties evenly", [[1, 3], [3, 2]], "x:max()", lambda x: x.max())
case("min of all elements splits ties evenly", [[2, 1, 1], [4, 1, 5]], "x:min()", lambda x: x.min())
case("max of all elements with NaNs goes to the NaNs", [1, nan, 3, nan], "x:max()", lambda x: x.max())
case("amax along a dim splits ties evenly", [[1, 3, 3], [2, 2, 0]], "x:amax(2)", lambda x: x.amax(1))
case("amax over dims {1, 3} keepdim splits ties", [[[1, 4], [4, 0]], [[4, 2], [3, 4]]], "x:amax({1, 3}, true)",
     lambda x: x.amax((0, 2), keepdim=True))
case("amin of all elements splits ties evenly", [[0, 5, 0], [0, 1, 2]], "x:amin()", lambda x: x.amin())
# PyTorch 1.13 has no derivative for aminmax: amin and amax give its gradient
case("aminmax splits ties for both results", [[1, 7, 1], [7, 3, 2]], "x:aminmax()", lambda x: (x.amin(), x.amax()))
case("aminmax along a dim keepdim", [[1, 7, 1], [7, 3, 7]], "x:aminmax({dim = 2, keepdim = true})",
     lambda x: (x.amin(1, keepdim=True), x.amax(1, keepdim=True)))
case("median of all elements splits ties evenly", [1, 2, 2, 3, 5], "x:median()", lambda x: x.median())
case("nanmedian of all elements ignores NaN, splits ties", [nan, 2, 1, 2, nan, 4], "x:nanmedian()",
     lambda x: x.nanmedian())

# ---- ties: the gradient goes to the index PyTorch returns ----
case("max along a dim with ties", [[1, 3, 3], [2, 2, 0]], "x:max(2)", lambda x: x.max(1))
case("min along dim 1 keepdim with ties", [[1, 3, 0], [1, 2, 0]], "x:min(1, true)", lambda x: x.min(0, keepdim=True))
case("median along a dim with ties", [[1, 2, 2, 3], [5, 5, 5, 1]], "x:median(2)", lambda x: x.median(1))
# (which of tied values kthvalue returns is not specified: see test_reduce_grad.lua)
case("kthvalue along dim 1 keepdim", [[3, 1], [1, 4], [2, 0]], "x:kthvalue(2, 1, true)",
     lambda x: x.kthvalue(2, 0, keepdim=True))
case("mode with repeated values", [[1, 2, 2, 3, 3, 1], [5, 2, 2, 3, 3, 0]], "x:mode()", lambda x: x.mode())
case("sort with ties (stable)", [3, 1, 3, 2], "x:sort({stable = true})", lambda x: x.sort(stable=True))
case("sort descending along dim 1", [[3, 1], [1, 4], [2, 4]], "x:sort(1, true)", lambda x: x.sort(0, descending=True))
case("topk of the smallest", [[4, 1, 3, 2], [0, 9, 8, 7]], "x:topk(2, 2, false)",
     lambda x: x.topk(2, 1, largest=False))
case("cummax with ties adds up at the latest index", [1, 3, 3, 2, 4, 4], "x:cummax(1)", lambda x: x.cummax(0))
case("cummin with ties", [[3, 1, 1, 2], [0, 0, 5, -1]], "x:cummin(2)", lambda x: x.cummin(1))

# ---- norms at zero and at ties ----
case("2-norm of zeros has gradient 0", [0, 0, 0], "x:norm()", lambda x: x.norm())
case("2-norm along a dim with a zero row", [[0, 0], [3, 4]], "x:norm(2, 2)", lambda x: x.norm(2, 1))
case("1-norm at zero elements uses sign 0", [0, -2, 3], "x:norm(1)", lambda x: x.norm(1))
case("inf-norm splits ties of |x| with signs", [-3, 1, 3], "x:norm(math.huge)", lambda x: x.norm(inf))
case("-inf-norm splits ties", [[-1, 2, 1], [0, 4, 0]], "x:norm(-math.huge, 2)", lambda x: x.norm(-inf, 1))
case("3-norm of zeros has gradient 0", [0, 0], "x:norm(3)", lambda x: x.norm(3))
case("1.5-norm of zeros has gradient 0", [[0, 0], [1, -2]], "x:norm(1.5, 2)", lambda x: x.norm(1.5, 1))
case("0.5-norm with a zero element", [0, 1, 4], "x:norm(0.5)", lambda x: x.norm(0.5))
case("0-norm has gradient 0", [0, 1, -4], "x:norm(0)", lambda x: x.norm(0))
case("2-norm, second order", [1, -2, 2], "x:norm()", lambda x: x.norm(), second=True)

# ---- products with zeros ----
case("prod with one zero", [2, 0, 3, 4], "x:prod()", lambda x: x.prod(), second=True)
case("prod with two zeros", [2, 0, 3, 0], "x:prod()", lambda x: x.prod())
case("prod with three zeros along a dim", [[0, 2, 0, 0], [0, 2, 0, 1]], "x:prod(2)", lambda x: x.prod(1), second=True)
case("prod along a dim with zeros", [[2, 0, 3], [1, 2, 3], [0, 0, 1]], "x:prod(2)", lambda x: x.prod(1), second=True)
case("prod along dim 1 keepdim with a zero", [[2, 0, 3], [1, 2, 3]], "x:prod(1, true)",
     lambda x: x.prod(0, keepdim=True), second=True)
case("prod without zeros, second order", [2, -1, 3, 0.5], "x:prod()", lambda x: x.prod(), second=True)
case("cumprod with zeros", [2, 0, 3, 0, 5], "x:cumprod(1)", lambda x: x.cumprod(0), second=True)
case("cumprod along dim 2 with zeros", [[1, 2, 0, 4], [0, 3, 2, 1], [2, 2, 2, 2]], "x:cumprod(2)",
     lambda x: x.cumprod(1), second=True)
case("cumprod without zeros, second order", [2, -1, 3, 0.5], "x:cumprod(1)", lambda x: x.cumprod(0), second=True)
case("cumsum gives the reversed cumulative sum", [[1, 2, 3], [4, 5, 6]], "x:cumsum(2)", lambda x: x.cumsum(1))

# ---- variance, std, NaNs, infinities ----
case("std of a constant has gradient 0", [2, 2, 2], "x:std()", lambda x: x.std())
case("std_mean, both results", [[1, 2, 4], [0, 3, 3]], "x:std_mean(2)", lambda x: torch.std_mean(x, 1))
case("var_mean with correction 0, both results", [[1, 2], [4, 0]], "x:var_mean(1, {correction = 0})",
     lambda x: torch.var_mean(x, 0, correction=0))
case("var with correction 2, second order", [1, 2, 4, 7], "x:var({correction = 2})",
     lambda x: x.var((0,), correction=2), second=True)
case("logsumexp with -inf entries", [[-inf, 0, 1], [2, -inf, -inf]], "x:logsumexp(2)", lambda x: x.logsumexp(1))
case("nansum skips NaN", [[1, nan, 3], [nan, nan, 2]], "x:nansum(2)", lambda x: x.nansum(1))
case("nanmean skips NaN", [[1, nan, 3], [nan, 4, 2]], "x:nanmean()", lambda x: x.nanmean())

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "reduce_grad.lua"), "w") as f:
    f.write("-- generated by tests/ref/gen_reduce_grad.py from PyTorch %s; do not edit\n" % torch.__version__)
    f.write("-- input x (float64), Lua expression, flat gradient for grad_outputs k * (1, 2, ...);\n")
    f.write("-- grad2: gradient of <grad, v>, v = (1, 2, ...) / 10\n")
    f.write("return {\n")
    for c in cases:
        f.write("  " + lua(c, indent="  ") + ",\n")
    f.write("}\n")
print("wrote %d cases" % len(cases))
