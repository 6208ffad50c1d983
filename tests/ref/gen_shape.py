#!/usr/bin/python3
# gen_shape.py -- PyTorch reference values for the shape and movement ops
# (tests/tensor/test_shape.lua). Writes tests/ref/shape.lua.
# Run: /usr/bin/python3 tests/ref/gen_shape.py
# Every case holds `input` (the base tensor, built in Lua with torch.tensor),
# `expected` and `shape` (the result), and `args` in moontorch's 1-based
# convention where the test reads them; PyTorch's 0-based dims and indices
# are converted here by hand, next to each call.
import math
import os

import torch
from reflib import lua

cases = {}




def case(name, base, result, args=None, **extra):
    c = {"input": base.tolist(), "expected": result.tolist(), "shape": list(result.shape),
         "dtype": str(result.dtype).replace("torch.", "")}
    if args is not None:
        c["args"] = args
    c.update(extra)
    assert name not in cases, name
    cases[name] = c


def pieces(name, base, results, args=None):
    cases[name] = {"input": base.tolist(), "expected": [r.tolist() for r in results],
                   "shapes": [list(r.shape) for r in results]}
    if args is not None:
        cases[name]["args"] = args


A = torch.arange(24).view(2, 3, 4)
M = torch.arange(12).view(3, 4)
M2 = torch.arange(6).view(2, 3)
V = torch.arange(5)

# views
case("view_4x6", A, A.view(4, 6))
case("view_infer", A, A.view(-1, 8))
case("reshape_transposed", M, M.t().reshape(12))           # M:t():reshape(12) copies
case("flatten_from2", A, A.flatten(1), args=[2])           # start_dim 1 -> 2
case("flatten_permuted", A, A.permute(2, 0, 1).flatten(0, 1), args=[1, 2])
case("unflatten_last", A, A.unflatten(2, (2, 2)), args=[3, [2, 2]])
case("unflatten_infer", M, M.unflatten(1, (-1, 1)), args=[2, [-1, 1]])
S = torch.arange(6).view(1, 3, 1, 2)
case("squeeze_all", S, S.squeeze())
case("squeeze_dim3", S, S.squeeze(2), args=[3])
case("squeeze_dim2_noop", S, S.squeeze(1), args=[2])
case("unsqueeze_first", M, M.unsqueeze(0), args=[1])
case("unsqueeze_neg1", M, M.unsqueeze(-1), args=[-1])
case("unsqueeze_middle", M, M.unsqueeze(1), args=[2])
case("permute_312", A, A.permute(2, 0, 1), args=[3, 1, 2])
case("transpose_13", A, A.transpose(0, 2), args=[1, 3])
case("t_matrix", M, M.t())
case("movedim_1to3", A, A.movedim(0, 2), args=[1, 3])
case("movedim_multi", A, A.movedim((0, 1), (2, 0)), args=[[1, 2], [3, 1]])
C = torch.arange(3).view(3, 1)
case("expand_cols", C, C.expand(3, 4), args=[3, 4])
case("expand_lead", C, C.expand(2, -1, 4), args=[2, -1, 4])
case("broadcast_to", C, torch.broadcast_to(C, (2, 3, 5)), args=[2, 3, 5])
case("repeat_more_dims", M2, M2.repeat(2, 1, 2), args=[2, 1, 2])
case("repeat_2x3", M2, M2.repeat(2, 3), args=[2, 3])
case("repeat_zero", M2, M2.repeat(0, 2), args=[0, 2])
case("repeat_1d", V, V.repeat(3), args=[3])
case("tile_fewer", M2, M2.tile(2), args=[2])
case("tile_transposed", M2, M2.t().tile(2, 2), args=[2, 2])
case("tile_1d_to_2d", V, V.tile(2, 2), args=[2, 2])
case("narrow_cols", M, M.narrow(1, 1, 2), args=[2, 2, 2])        # dim 1 -> 2, start 1 -> 2
case("narrow_neg_start", V, V.narrow(0, -2, 2), args=[1, -2, 2])
case("narrow_transposed", M, M.t().narrow(0, 2, 2), args=[1, 3, 2])
case("select_mid", A, A.select(1, 2), args=[2, 3])
case("select_last", A, A.select(-1, -1), args=[-1, -1])
case("unfold_1d", torch.arange(8), torch.arange(8).unfold(0, 3, 2), args=[1, 3, 2])
case("unfold_rows", M, M.unfold(1, 2, 1), args=[2, 2, 1])
case("diagonal_default", A, A.diagonal())
case("diagonal_off", A, A.diagonal(1, 1, 2), args=[1, 2, 3])
case("diagonal_neg", M, M.diagonal(-1), args=[-1])

# pieces (split, chunk, tensor_split, unbind)
pieces("chunk_5by3", V, V.chunk(3), args=[3])
pieces("chunk_6by4", torch.arange(6), torch.arange(6).chunk(4), args=[4])
pieces("chunk_cols", M, M.chunk(2, 1), args=[2, 2])
pieces("chunk_empty", torch.arange(0), torch.arange(0).chunk(3), args=[3])
pieces("split_2", V, V.split(2), args=[2])
pieces("split_sizes", torch.arange(10), torch.arange(10).split([3, 3, 4]), args=[[3, 3, 4]])
pieces("split_cols", M, M.split(3, 1), args=[3, 2])
pieces("tensor_split_sections", torch.arange(7), torch.arange(7).tensor_split(3), args=[3])
pieces("tensor_split_indices", torch.arange(8), torch.arange(8).tensor_split([1, 5]), args=[[2, 6]])
pieces("tensor_split_neg", torch.arange(8), torch.arange(8).tensor_split([-2]), args=[[-2]])
pieces("tensor_split_unsorted", torch.arange(8), torch.arange(8).tensor_split([5, 2]), args=[[6, 3]])
pieces("unbind_dim2", M, M.unbind(1), args=[2])

# cat and friends
B33 = torch.arange(9).view(3, 3)
case("cat_rows", M2, torch.cat([M2, B33]), other=B33.tolist(), args=[1])
B22 = torch.arange(4).view(2, 2) + 100
case("cat_cols", M2, torch.cat([M2, B22], 1), other=B22.tolist(), args=[2])
C3 = torch.arange(3).view(3, 1) - 5
case("cat_transposed", M2, torch.cat([M2.t(), C3], -1), other=C3.tolist(), args=[-1])
H = torch.tensor([[1.5, 2.0, 3.0]], dtype=torch.float16)
case("cat_promote", M2, torch.cat([M2.int(), H]), other=H.tolist(), args=[1])
case("cat_legacy_empty", M2, torch.cat([M2, torch.zeros(0, dtype=torch.int64), M2]), args=[1])
case("cat_three_1d", V, torch.cat([V, V * 2, V[:2]]))
W = V * 10
case("stack_first", V, torch.stack([V, W]), other=W.tolist(), args=[1])
case("stack_second", V, torch.stack([V, W], 1), other=W.tolist(), args=[2])
case("stack_last_2d", M2, torch.stack([M2, M2 + 1], -1), args=[-1])
case("stack_transposed", M2, torch.stack([M2.t(), M2.t() * 3], 1), args=[2])
case("hstack_1d", V, torch.hstack([V, W]), other=W.tolist())
case("hstack_2d", M2, torch.hstack([M2, B22]), other=B22.tolist())
case("vstack_1d", V, torch.vstack([V, W]), other=W.tolist())
case("dstack_2d", M2, torch.dstack([M2, M2 * 2]))

# flip, roll, rot90
case("flip_13", A, A.flip(0, 2), args=[1, 3])
case("flip_transposed", M, M.t().flip(0), args=[1])
case("flip_neg", A, A.flip(-1), args=[-1])
F = torch.tensor([[1.5, float("nan")], [float("inf"), -2.0]])
case("flip_float", F, F.flip(0, 1), args=[1, 2])
case("fliplr", M, torch.fliplr(M))
case("flipud", M, torch.flipud(M))
case("roll_flat", M, M.roll(1), args=[1])
case("roll_dim1", M, M.roll(1, 0), args=[1, 1])
case("roll_two_dims", M, M.roll((1, -1), (0, 1)), args=[[1, -1], [1, 2]])
case("roll_transposed", M, M.t().roll(2, 1), args=[2, 2])
case("roll_big_shift", M, M.roll(-7, 1), args=[-7, 2])
case("roll_same_dim_twice", M, M.roll((1, 1), (0, 0)), args=[[1, 1], [1, 1]])
case("rot90_k1", M, M.rot90(), args=[1])
case("rot90_k2", M, M.rot90(2), args=[2])
case("rot90_kneg1", M, M.rot90(-1), args=[-1])
case("rot90_k1_dims", A, A.rot90(1, (2, 0)), args=[1, [3, 1]])

# triangles and diagonals
case("tril", M, M.tril(), args=[0])
case("tril_1", M, M.tril(1), args=[1])
case("tril_neg1", M, M.tril(-1), args=[-1])
case("triu", M, M.triu(), args=[0])
case("triu_2", M, M.triu(2), args=[2])
case("triu_neg2", M, M.triu(-2), args=[-2])
case("tril_batched", A, A.tril(), args=[0])
case("triu_transposed", M, M.t().triu(1), args=[1])
case("tril_big", M, M.tril(10), args=[10])
case("triu_big_neg", M, M.triu(-10), args=[-10])
case("diag_vec", V, V.diag(), args=[0])
case("diag_vec_1", V, V.diag(1), args=[1])
case("diag_vec_neg2", V, V.diag(-2), args=[-2])
case("diag_mat", M, M.diag(), args=[0])
case("diag_mat_1", M, M.diag(1), args=[1])
case("diag_mat_neg1", M, M.diag(-1), args=[-1])
case("diag_mat_transposed", M, M.t().diag(1), args=[1])
case("diag_embed", M2, M2.diag_embed())
case("diag_embed_off", M2, M2.diag_embed(1, 0, 2), args=[1, 1, 3])

# grids and broadcasting
g1, g2 = torch.arange(2), torch.arange(3) + 10
gi = torch.meshgrid(g1, g2, indexing="ij")
gx = torch.meshgrid(g1, g2, indexing="xy")
cases["meshgrid"] = {"x": g1.tolist(), "y": g2.tolist(), "ij": [g.tolist() for g in gi],
                     "xy": [g.tolist() for g in gx]}
b1, b2 = torch.broadcast_tensors(torch.arange(3).view(3, 1), torch.arange(4))
cases["broadcast_tensors"] = {"expected": [b1.tolist(), b2.tolist()], "shape": list(b1.shape)}
cases["atleast"] = {"d1": list(torch.atleast_1d(torch.tensor(5)).shape),
                    "d2": [list(torch.atleast_2d(x).shape) for x in (torch.tensor(5), V)],
                    "d3": [list(torch.atleast_3d(x).shape) for x in (torch.tensor(5), V, M)]}

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shape.lua")
with open(path, "w") as f:
    f.write("-- tests/ref/shape.lua -- generated by tests/ref/gen_shape.py with PyTorch %s; do not edit.\n"
            % torch.__version__)
    f.write("return {\n")
    for name in sorted(cases):
        f.write("  %s = %s,\n" % (name, lua(cases[name])))
    f.write("}\n")
print("wrote", path, len(cases), "cases")
