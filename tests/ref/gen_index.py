#!/usr/bin/python3
# gen_index.py -- PyTorch reference values for indexing and the index ops
# (tests/tensor/test_index.lua). Writes tests/ref/index.lua.
# Run: /usr/bin/python3 tests/ref/gen_index.py
# A case is {input = {op=, self=, args=, key=, value=, view=}, expected = {...}}.
# Tensors are {dtype=, shape=, data=} (data nested as tolist() gives it).
# Dims and index values are written 1-based (moontorch's convention): each
# PyTorch call below converts them back to 0-based next to the call.
import math
import os

import torch
from reflib import lua

cases = {}




def T(t):
    """A tensor as the Lua test rebuilds it."""
    return {"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape), "data": t.tolist()}


def one_based(idx):
    """0-based PyTorch indices -> moontorch's 1-based (negatives unchanged)."""
    return torch.where(idx >= 0, idx + 1, idx)


def add(name, inp, expected):
    assert name not in cases, name
    cases[name] = {"input": inp, "expected": expected}


def view_of(x, view):
    """The non-contiguous views the Lua test can build: x.T or every other column."""
    if view == "T":
        return x.T
    if view == "step2":
        return x[:, ::2]
    return x


def method(name, op, x, args, torch_args, view=None, **kw):
    """Records x:op(args...) whose PyTorch value is x.op(*torch_args)."""
    xv = view_of(x, view)
    r = getattr(xv, op)(*torch_args, **kw)
    inp = {"op": op, "self": T(x), "args": args}
    if view:
        inp["view"] = view
    add(name, inp, {"out": T(r)})


def inplace(name, op, x, args, torch_args, view=None, **kw):
    """Records x:op_(args...) and the resulting x (view: written through it)."""
    base = x.clone()
    xv = view_of(base, view)
    getattr(xv, op)(*torch_args, **kw)
    inp = {"op": op, "self": T(x), "args": args}
    if view:
        inp["view"] = view
    add(name, inp, {"self": T(base)})


torch.manual_seed(0)
f = torch.tensor([[1.5, -2.0, 3.25, 4.0], [5.0, float("nan"), -7.5, 8.0], [9.0, 10.0, float("inf"), -12.0]])
i64 = torch.arange(1, 13, dtype=torch.int64).reshape(3, 4)
x3 = torch.arange(60, dtype=torch.float64).reshape(3, 4, 5)

ALL_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.int32,
              torch.int64, torch.uint8, torch.bool]


def dn(dt):
    return str(dt).replace("torch.", "")


# ---- index_select ----
idx = torch.tensor([2, 0, 2])
method("index_select_dim1", "index_select", f, [1, T(one_based(idx))], [0, idx])
idx = torch.tensor([3, 0])
method("index_select_dim2", "index_select", f, [2, T(one_based(idx))], [1, idx])
method("index_select_dim_neg", "index_select", f, [-1, T(one_based(idx))], [-1, idx])
method("index_select_scalar_index", "index_select", f, [1, T(one_based(torch.tensor(1)))], [0, torch.tensor(1)])
method("index_select_empty_index", "index_select", f, [2, T(torch.tensor([], dtype=torch.int64))],
       [1, torch.tensor([], dtype=torch.int64)])
method("index_select_transposed", "index_select", f, [1, T(one_based(idx))], [0, idx], view="T")
method("index_select_strided", "index_select", i64, [2, T(torch.tensor([2, 1]))], [1, torch.tensor([1, 0])],
       view="step2")
method("index_select_3d", "index_select", x3, [2, T(one_based(torch.tensor([3, 3, 1])))], [1, torch.tensor([3, 3, 1])])
for dt in ALL_DTYPES:
    xd = torch.tensor([[1, 0, 3], [4, 5, 0]]).to(dt)
    method("index_select_" + dn(dt), "index_select", xd, [2, T(torch.tensor([3, 1, 3]))], [1, torch.tensor([2, 0, 2])])

# ---- gather ----
gi = torch.tensor([[0, 0], [1, 0], [3, 2]])
method("gather_dim2", "gather", f, [2, T(one_based(gi))], [1, gi])
gi = torch.tensor([[2, 0, 1, 1], [0, 0, 0, 2]])
method("gather_dim1", "gather", f, [1, T(one_based(gi))], [0, gi])
gi = torch.tensor([[[4, 0], [1, 1]], [[0, 0], [3, 2]]])
method("gather_3d_smaller_index", "gather", x3, [3, T(one_based(gi))], [2, gi])
gi = torch.tensor([[1, 0, 2], [2, 2, 0]])
method("gather_transposed", "gather", f, [2, T(one_based(gi))], [1, gi], view="T")
for dt in ALL_DTYPES:
    xd = torch.tensor([[1, 0, 3], [4, 5, 0]]).to(dt)
    gi = torch.tensor([[2, 2, 0, 1], [1, 0, 0, 2]])
    method("gather_" + dn(dt), "gather", xd, [2, T(one_based(gi))], [1, gi])

# ---- take ----
ti = torch.tensor([[0, 11], [-1, 5]])
method("take_2d_index", "take", f, [T(one_based(ti))], [ti])
ti = torch.tensor([0, 1, 2, -3])
method("take_transposed", "take", f, [T(one_based(ti))], [ti], view="T")

# ---- scatter family ----
z = torch.zeros(3, 5)
si = torch.tensor([[0, 1, 2, 0, 0], [2, 0, 0, 1, 2]])
src = torch.arange(1, 11, dtype=torch.float32).reshape(2, 5)
method("scatter_src_dim1", "scatter", z, [1, T(one_based(si)), T(src)], [0, si, src])
si2 = torch.tensor([[4, 0], [1, 1], [3, 3]])
src2 = torch.arange(1, 10, dtype=torch.float32).reshape(3, 3)
method("scatter_src_dim2_small_index", "scatter", z, [2, T(one_based(si2)), T(src2)], [1, si2, src2])
method("scatter_value", "scatter", z, [2, T(one_based(si2)), 2.5], [1, si2, 2.5])
method("scatter_reduce_add", "scatter", torch.ones(3, 5), [1, T(one_based(si)), T(src), {"reduce": "add"}],
       [0, si, src], reduce="add")
method("scatter_reduce_multiply", "scatter", torch.full((3, 5), 2.0), [1, T(one_based(si)), T(src),
                                                                       {"reduce": "multiply"}],
       [0, si, src], reduce="multiply")
method("scatter_add_duplicates", "scatter_add", z, [1, T(one_based(si)), T(src)], [0, si, src])
inplace("scatter__inplace", "scatter_", z, [2, T(one_based(si2)), T(src2)], [1, si2, src2])
inplace("scatter_add__transposed", "scatter_add_", torch.zeros(5, 3), [2, T(one_based(si2)), T(src2)],
        [1, si2, src2], view="T")
for dt in ALL_DTYPES:
    xd = torch.tensor([[1, 0, 3], [4, 5, 0]]).to(dt)
    sd = torch.tensor([[1, 1, 1], [2, 0, 1]]).to(dt)
    sdi = torch.tensor([[0, 0, 2], [1, 1, 1]])
    method("scatter_add_" + dn(dt), "scatter_add", xd, [2, T(one_based(sdi)), T(sd)], [1, sdi, sd])
    sdi2 = torch.tensor([[2, 0], [1, 0]])
    method("scatter_" + dn(dt), "scatter", xd, [2, T(one_based(sdi2)), T(sd)], [1, sdi2, sd])

# ---- index_add / index_copy / index_fill ----
ia = torch.tensor([0, 2, 0])
isrc = torch.arange(1, 13, dtype=torch.float32).reshape(3, 4)
method("index_add_dim1", "index_add", torch.ones(3, 4), [1, T(one_based(ia)), T(isrc)], [0, ia, isrc])
method("index_add_alpha", "index_add", torch.ones(3, 4), [1, T(one_based(ia)), T(isrc), {"alpha": 2.5}],
       [0, ia, isrc], alpha=2.5)
ia2 = torch.tensor([3, 1])
isrc2 = torch.arange(1, 7, dtype=torch.int64).reshape(3, 2)
method("index_add_int_dim2", "index_add", i64, [2, T(one_based(ia2)), T(isrc2), {"alpha": 3}], [1, ia2, isrc2],
       alpha=3)
inplace("index_add__inplace", "index_add_", torch.ones(3, 4), [1, T(one_based(ia)), T(isrc)], [0, ia, isrc])
ic = torch.tensor([2, 0])
icsrc = torch.tensor([[10.0, 20.0, 30.0, 40.0], [50.0, 60.0, 70.0, 80.0]])
method("index_copy_dim1", "index_copy", f, [1, T(one_based(ic)), T(icsrc)], [0, ic, icsrc])
inplace("index_copy__transposed", "index_copy_", torch.zeros(4, 3), [1, T(one_based(ic)), T(icsrc)],
        [0, ic, icsrc], view="T")
ifl = torch.tensor([-1, 0])
method("index_fill_negative", "index_fill", f, [2, T(one_based(ifl)), -1.0], [1, ifl, -1.0])
inplace("index_fill__int", "index_fill_", i64, [1, T(one_based(torch.tensor([1]))), 0], [0, torch.tensor([1]), 0])

# ---- masks ----
mask = torch.tensor([[True, False, True, False], [False, False, True, True], [True, True, True, True]])
method("masked_fill_full_mask", "masked_fill", f, [T(mask), 0.5], [mask, 0.5])
row = torch.tensor([True, False, False, True])
method("masked_fill_broadcast_row", "masked_fill", i64, [T(row), -7], [row, -7])
col = torch.tensor([[True], [False], [True]])
method("masked_fill_broadcast_grows", "masked_fill", torch.tensor([1.0, 2.0]), [T(col), 9.0], [col, 9.0])
inplace("masked_fill__transposed", "masked_fill_", f.T.contiguous(), [T(mask), 0.0], [mask, 0.0], view="T")
method("masked_select_full", "masked_select", f, [T(mask)], [mask])
method("masked_select_broadcast", "masked_select", i64, [T(row)], [row])
method("masked_select_none", "masked_select", i64, [T(torch.zeros(3, 4, dtype=torch.bool))],
       [torch.zeros(3, 4, dtype=torch.bool)])
ms = torch.arange(100, 112, dtype=torch.float32)
method("masked_scatter_full", "masked_scatter", f, [T(mask), T(ms)], [mask, ms])
inplace("masked_scatter__broadcast", "masked_scatter_", i64, [T(row), T(torch.arange(-1, -9, -1))],
        [row, torch.arange(-1, -9, -1)])

# ---- nonzero / argwhere ----
nz = torch.tensor([[0.0, -0.0, float("nan")], [1.0, 0.0, -2.0]])


def nonzero_case(name, x, **kw):
    r = x.nonzero()
    add(name, {"op": "nonzero", "self": T(x), "args": []}, {"out": T(one_based(r))})


nonzero_case("nonzero_float_nan_negzero", nz)
nonzero_case("nonzero_3d_int", (x3.long() % 7 == 0).long())
nonzero_case("nonzero_none", torch.zeros(2, 3))
nonzero_case("nonzero_1d_bool", torch.tensor([False, True, True, False, True]))
nonzero_case("nonzero_0dim", torch.tensor(3.0))
tup = (x3 % 11 == 0).nonzero(as_tuple=True)
add("nonzero_as_tuple", {"op": "nonzero", "self": T(x3 % 11 == 0), "args": [{"as_tuple": True}]},
    {"outs": [T(one_based(t)) for t in tup]})
add("argwhere_2d", {"op": "argwhere", "self": T(nz), "args": []}, {"out": T(one_based(torch.argwhere(nz)))})

# ---- put ----
pi = torch.tensor([0, -1, 5])
pv = torch.tensor([10.0, 20.0, 30.0])
method("put_plain", "put", f, [T(one_based(pi)), T(pv)], [pi, pv])
pi = torch.tensor([0, -1, 5, 0])
pv = torch.tensor([10.0, 20.0, 30.0, 40.0])
method("put_accumulate", "put", torch.ones(3, 4), [T(one_based(pi)), T(pv), True], [pi, pv, True])
inplace("put__transposed", "put_", torch.zeros(4, 3), [T(one_based(pi)), T(pv), True], [pi, pv, True], view="T")


# ---- x[key] and x[key] = v ----
# A key entry is an integer (1-based), {range = {a, b[, step]}} (inclusive, 1-based), "...", or a tensor (int64
# indices 1-based, or bool). to_py turns one into PyTorch's index.
def to_py(e):
    if isinstance(e, int):
        return e - 1 if e > 0 else e
    if isinstance(e, str):
        return Ellipsis
    if isinstance(e, dict):
        r = e["range"]
        a = r[0] if len(r) > 0 else 1
        b = r[1] if len(r) > 1 else -1
        step = r[2] if len(r) > 2 else 1
        start = a - 1 if a >= 1 else a
        stop = b if b >= 1 else (None if b == -1 else b + 1)
        return slice(start, stop, step)
    if e.dtype == torch.bool:
        return e
    return torch.where(e > 0, e - 1, e)


def key_desc(e):
    if isinstance(e, torch.Tensor):
        return T(e)
    return e


def getitem(name, x, key, view=None):
    xv = view_of(x, view)
    if isinstance(key, list):
        r = xv[tuple(to_py(e) for e in key)]
        desc = {"list": [key_desc(e) for e in key]}
    else:
        r = xv[to_py(key)]
        desc = {"single": key_desc(key)}
    # basic indexing (no tensor in the key) returns a view
    inp = {"op": "getitem", "self": T(x), "key": desc,
           "is_view": not any(isinstance(e, torch.Tensor) for e in (key if isinstance(key, list) else [key]))}
    if view:
        inp["view"] = view
    add(name, inp, {"out": T(r)})


def setitem(name, x, key, value, view=None):
    base = x.clone()
    xv = view_of(base, view)
    v = value
    if isinstance(key, list):
        xv[tuple(to_py(e) for e in key)] = v
        desc = {"list": [key_desc(e) for e in key]}
    else:
        xv[to_py(key)] = v
        desc = {"single": key_desc(key)}
    inp = {"op": "setitem", "self": T(x), "key": desc, "value": T(value) if isinstance(value, torch.Tensor) else value}
    if view:
        inp["view"] = view
    add(name, inp, {"self": T(base)})


L = torch.tensor  # shorthand for index tensors
getitem("get_int", f, 2)
getitem("get_int_negative", f, -1)
getitem("get_int_1d_gives_0dim", torch.tensor([4.0, 5.0, 6.0]), 3)
getitem("get_pair", x3, [2, 3])
getitem("get_int_range", f, [2, {"range": [2, 3]}])
getitem("get_range_open_end", x3, [{"range": [2]}])
getitem("get_range_whole", x3, [{"range": []}, 2])
getitem("get_range_step", x3, [{"range": [1, -1, 2]}, {"range": [1, 5, 3]}, {"range": [2, -2, 2]}])
getitem("get_range_negative", x3, [{"range": []}, {"range": [-3, -2]}])
getitem("get_range_clamped", x3, [{"range": [-100, 100]}, {"range": [3, 100]}])
getitem("get_range_empty", x3, [{"range": [3, 2]}])
getitem("get_range_past_end", x3, [{"range": [5]}])
getitem("get_empty_key", x3, [])
getitem("get_ellipsis", x3, ["...", 2])
getitem("get_ellipsis_middle", x3, [1, "...", {"range": [2, 3]}])
getitem("get_on_transposed", f, [{"range": [2, 3]}, 2], view="T")
getitem("get_index_tensor", f, L([3, 1, 3]))
getitem("get_index_tensor_2d", f, L([[1, 2], [3, -1]]))
getitem("get_index_tensor_0dim", x3, L(2))
getitem("get_index_tensor_second_dim", x3, [{"range": []}, L([4, 1])])
getitem("get_two_index_tensors", x3, [L([1, 3]), L([4, 1])])
getitem("get_broadcast_index_tensors", x3, [L([[1], [3]]), {"range": []}, L([5, 1, 2])])
getitem("get_int_then_tensor", x3, [2, {"range": []}, L([1, 5])])
getitem("get_tensor_range_tensor_adjacent", x3, [{"range": [1, 2]}, L([1, 4]), L([2, 5])])
getitem("get_mask_full", f, f > 2)
getitem("get_mask_leading", x3, L([[True, False, False, True], [False, True, False, False],
                                   [False, False, False, True]]))
getitem("get_mask_1d", x3, L([True, False, True]))
getitem("get_mask_in_table", x3, [{"range": []}, L([True, False, True, True])])
getitem("get_mask_0dim", f, [L(True)])
getitem("get_int64_key_on_view", i64, L([2, 1]), view="T")

setitem("set_int_number", f, 2, 0.0)
setitem("set_int_range_tensor", i64, [2, {"range": [2, 4]}], L([7, 8, 9]))
setitem("set_range_broadcast_row", x3, [{"range": []}, {"range": [1, 2]}], torch.arange(5.0))
setitem("set_element", i64, [3, -1], 100)
setitem("set_mask_number", f, f.isnan(), -1.0)
setitem("set_mask_leading_number", x3, L([True, False, True]), 7.0)
setitem("set_mask_tensor_values", i64, i64 % 3 == 0, L([-1, -2, -3, -4]))
setitem("set_mask_leading_tensor_rows", x3[0], L([False, True, False, True]),
        torch.arange(10.0, dtype=torch.float64).reshape(2, 5))
setitem("set_index_tensor_number", f, L([3, 1]), 0.0)
setitem("set_index_tensor_broadcast", x3, [{"range": []}, L([1, 4])], torch.arange(5.0, dtype=torch.float64))
setitem("set_two_index_tensors", i64, [L([1, 2, 3]), L([4, 3, 2])], L([-1, -2, -3]))
setitem("set_on_transposed", f, [{"range": [1, 2]}, 1], 42.0, view="T")
setitem("set_float_into_int", i64, [1], 2.9)
setitem("set_tensor_other_dtype", i64, [{"range": [1, 2]}], torch.tensor([[0.5, 1.5, 2.5, 3.5]], dtype=torch.float64))

# index_put_ with accumulate adds duplicates
base = torch.zeros(3, 4)
ip = (L([0, 0, 2, 0]), L([1, 1, 3, 1]))
base.index_put_(ip, torch.tensor([1.0, 2.0, 3.0, 4.0]), accumulate=True)
add("index_put_accumulate", {"op": "index_put_", "self": T(torch.zeros(3, 4)),
                             "args": [[T(one_based(ip[0])), T(one_based(ip[1]))], T(torch.tensor([1.0, 2.0, 3.0, 4.0])),
                                      True]},
    {"self": T(base)})
base = torch.zeros(3, 4)
base.index_put_(ip, torch.tensor(5.0))
add("index_put_plain", {"op": "index_put_", "self": T(torch.zeros(3, 4)),
                        "args": [[T(one_based(ip[0])), T(one_based(ip[1]))], T(torch.tensor(5.0))]},
    {"self": T(base)})

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "index.lua"), "w") as fh:
    fh.write("-- generated by tests/ref/gen_index.py from PyTorch %s; do not edit\n" % torch.__version__)
    fh.write("return {\n")
    for name in sorted(cases):
        fh.write("  %s = %s,\n" % (name, lua(cases[name])))
    fh.write("}\n")
print("wrote %d cases" % len(cases))
