#!/usr/bin/python3
"""gen_linalg.py -- PyTorch reference values for tests/tensor/test_linalg.lua.

Run with the system Python that has torch (1.13):
    /usr/bin/python3 tests/ref/gen_linalg.py      # writes tests/ref/linalg.lua

Inputs are either stored in the reference file (rounded random values) or
made by gen(), a formula the Lua test repeats exactly: values k/8 with
|k| <= 8, exact in every float dtype, so products of them are exact too."""
import math
import os

import torch
from reflib import lua

torch.manual_seed(1234)


def gen(shape, seed, dtype=torch.float64):
    """Element k (row-major flat index) = ((7k + 5 seed) % 17 - 8) / 8."""
    n = 1
    for s in shape:
        n *= s
    vals = [((7 * k + 5 * seed) % 17 - 8) / 8 for k in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)


def rnd(*shape):
    """Random values rounded to 3 decimals (so the Lua literal is the same double)."""
    return torch.randn(*shape, dtype=torch.float64).mul(1000).round().div(1000)





cases = {}


def case(name, input, expected):
    cases[name] = {"input": input, "expected": expected}


def summary(t):
    """Row sums, column sums and the first row of a (batch of) matrices."""
    t = t.double()
    return {"row_sums": t.sum(-1).flatten(), "col_sums": t.sum(-2).flatten(), "first_row": t.reshape(-1, t.shape[-1])[0]}


# ---- products ----
f32, f64 = torch.float32, torch.float64
case("mm_small", {"a": [3, 4, 1], "b": [4, 5, 2]}, gen((3, 4), 1, f32) @ gen((4, 5), 2, f32))
case("mm_large_f32", {"a": [100, 120, 3], "b": [120, 90, 4]}, summary(gen((100, 120), 3, f32) @ gen((120, 90), 4, f32)))
case("mm_large_f64", {"a": [130, 110, 5], "b": [110, 70, 6]}, summary(gen((130, 110), 5) @ gen((110, 70), 6)))
case("mm_transposed", {"a": [4, 3, 7], "b": [6, 4, 8]}, gen((4, 3), 7, f32).t() @ gen((6, 4), 8, f32).t())
case("mm_transposed_large", {"a": [200, 150, 9], "b": [120, 200, 10]},
     summary(gen((200, 150), 9, f32).t() @ gen((120, 200), 10, f32).t()))
case("mm_gemv_shapes", {"a": [1, 300, 11], "b": [300, 257, 12]}, gen((1, 300), 11, f32) @ gen((300, 257), 12, f32))
case("matmul_broadcast", {"a": [2, 1, 3, 4, 13], "b": [5, 4, 2, 14]}, gen((2, 1, 3, 4), 13) @ gen((5, 4, 2), 14))
case("matmul_1d_3d", {"a": [4, 15], "b": [2, 4, 3, 16]}, gen((4,), 15) @ gen((2, 4, 3), 16))
case("matmul_3d_1d", {"a": [2, 3, 4, 17], "b": [4, 18]}, gen((2, 3, 4), 17) @ gen((4,), 18))
case("matmul_1d_1d", {"a": [5, 19], "b": [5, 20]}, gen((5,), 19) @ gen((5,), 20))
case("matmul_fold", {"a": [2, 3, 4, 21], "b": [4, 5, 22]}, gen((2, 3, 4), 21) @ gen((4, 5), 22))
case("matmul_2d_3d", {"a": [3, 4, 23], "b": [2, 4, 5, 24]}, gen((3, 4), 23) @ gen((2, 4, 5), 24))
case("matmul_2d_1d", {"a": [3, 4, 25], "b": [4, 26]}, gen((3, 4), 25) @ gen((4,), 26))
case("bmm", {"a": [3, 2, 4, 27], "b": [3, 4, 5, 28]}, torch.bmm(gen((3, 2, 4), 27, f32), gen((3, 4, 5), 28, f32)))
case("bmm_permuted", {"a": [2, 3, 4, 29], "b": [3, 4, 2, 30]},
     torch.bmm(gen((2, 3, 4), 29).permute(1, 0, 2), gen((3, 4, 2), 30)))
many = torch.bmm(gen((64, 8, 8), 31, f32), gen((64, 8, 8), 32, f32))
case("bmm_many_small", {"a": [64, 8, 8, 31], "b": [64, 8, 8, 32]}, {"sums": many.double().sum((1, 2)), "first": many[0]})
big = torch.bmm(gen((3, 128, 128), 33, f32), gen((3, 128, 128), 34, f32))
case("bmm_big", {"a": [3, 128, 128, 33], "b": [3, 128, 128, 34]}, {"sums": big.double().sum((1, 2)), "first_row": big[:, 0]})
case("mv", {"a": [3, 5, 35], "b": [5, 36]}, torch.mv(gen((3, 5), 35, f32), gen((5,), 36, f32)))
case("dot", {"a": [7, 37], "b": [7, 38]}, torch.dot(gen((7,), 37), gen((7,), 38)))
case("outer", {"a": [3, 39], "b": [4, 40]}, torch.outer(gen((3,), 39), gen((4,), 40)))
case("inner", {"a": [2, 3, 41], "b": [4, 3, 42]}, torch.inner(gen((2, 3), 41), gen((4, 3), 42)))
case("kron", {"a": [2, 3, 43], "b": [3, 2, 44]}, torch.kron(gen((2, 3), 43), gen((3, 2), 44)))
case("addmm", {"input": [5, 45], "a": [4, 3, 46], "b": [3, 5, 47], "beta": 0.5, "alpha": 2.0},
     torch.addmm(gen((5,), 45), gen((4, 3), 46), gen((3, 5), 47), beta=0.5, alpha=2.0))
case("addmv", {"input": [4, 48], "a": [4, 3, 49], "b": [3, 50], "beta": -1.0, "alpha": 0.25},
     torch.addmv(gen((4,), 48), gen((4, 3), 49), gen((3,), 50), beta=-1.0, alpha=0.25))
case("baddbmm", {"input": [2, 1, 4, 51], "a": [2, 3, 5, 52], "b": [2, 5, 4, 53], "beta": 2.0, "alpha": 1.5},
     torch.baddbmm(gen((2, 1, 4), 51), gen((2, 3, 5), 52), gen((2, 5, 4), 53), beta=2.0, alpha=1.5))
case("addbmm", {"input": [3, 4, 54], "a": [5, 3, 2, 55], "b": [5, 2, 4, 56], "beta": 0.75, "alpha": -2.0},
     torch.addbmm(gen((3, 4), 54), gen((5, 3, 2), 55), gen((5, 2, 4), 56), beta=0.75, alpha=-2.0))
# vector-shaped products (one row or column of C) with every transpose and a strided column
A, v5, v7, W = gen((5, 7), 71), gen((5, 1), 72), gen((7, 1), 73), gen((7, 4), 74)
col = W[:, 1:2]
case("gemv_variants", {"a": [5, 7, 71], "v5": [5, 1, 72], "v7": [7, 1, 73], "w": [7, 4, 74]},
     {"r1": A @ v7, "r2": A.t() @ v5, "r3": v5.t() @ A, "r4": v7.t() @ A.t(), "r5": A @ col, "r6": col.t() @ A.t()})
ia, ib = torch.tensor([[1, -2, 3], [4, 5, -6]]), torch.tensor([[7, 8], [-9, 10], [11, 12]])
case("mm_int64", {"a": ia, "b": ib}, ia @ ib)
# PyTorch 1.13 has no float16 matmul on the CPU: the reference computes in float32 and rounds, as we do
case("mm_half", {"a": [4, 6, 57], "b": [6, 3, 58]},
     (gen((4, 6), 57, torch.float16).float() @ gen((6, 3), 58, torch.float16).float()).half().float())
case("mm_bf16", {"a": [4, 6, 59], "b": [6, 3, 60]},
     (gen((4, 6), 59, torch.bfloat16) @ gen((6, 3), 60, torch.bfloat16)).float())

# ---- einsum ----
einsum_cases = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ii", [(4, 4)]),
    ("ii->i", [(3, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij,ij->", [(3, 4), (3, 4)]),
    ("...ij,...jk", [(2, 3, 4), (4, 5)]),
    ("...ij->...", [(2, 3, 4)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("iij->j", [(3, 3, 2)]),
    ("ba", [(2, 3)]),
    ("Ba,ab", [(2, 3), (3, 2)]),
    ("i,i->i", [(1,), (3,)]),
    ("ij,jk", [(2, 1), (3, 4)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]),
    ("ijk,ikl->jl", [(3, 2, 4), (3, 4, 5)]),
    ("i j , j k -> i k", [(2, 3), (3, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ij,kl->ijkl", [(2, 3), (2, 2)]),
    ("i,i", [(6,), (6,)]),
]
for k, (eq, shapes) in enumerate(einsum_cases):
    ops = [gen(s, 61 + k + 3 * j) for j, s in enumerate(shapes)]
    case(f"einsum_{k + 1}", {"equation": eq, "shapes": [list(s) for s in shapes], "seeds": [61 + k + 3 * j for j in range(len(shapes))]},
         torch.einsum(eq, *ops))

# ---- linalg ----
A = rnd(4, 4) + 4 * torch.eye(4, dtype=f64)
case("inv", {"a": A}, torch.linalg.inv(A))
case("inv_f32", {"a": A}, torch.linalg.inv(A.float()))
Ab = rnd(2, 3, 3) + 3 * torch.eye(3, dtype=f64)
case("inv_batched", {"a": Ab}, torch.linalg.inv(Ab))
D = rnd(3, 3, 3)
D[1, 2] = D[1, 0] * 2  # a singular matrix in the batch
case("det_batched", {"a": D}, torch.linalg.det(D))
N = torch.tensor([[0.0, 2.0, 1.0], [1.0, 0.5, 3.0], [2.0, 1.0, 0.25]], dtype=f64)
s, l = torch.linalg.slogdet(N)
case("slogdet", {"a": N}, {"sign": s, "logabsdet": l, "det": torch.linalg.det(N), "logdet": torch.logdet(N)})
Bm = rnd(4, 2)
case("solve", {"a": A, "b": Bm}, torch.linalg.solve(A, Bm))
bv = rnd(4)
case("solve_vector", {"a": A, "b": bv}, torch.linalg.solve(A, bv))
Bb = rnd(3, 5)
case("solve_broadcast", {"a": Ab, "b": Bb}, torch.linalg.solve(Ab, Bb))
Bl = rnd(2, 4)
case("solve_left_false", {"a": A, "b": Bl}, torch.linalg.solve(A, Bl, left=False))
M = rnd(3, 3)
S = M @ M.t() + 3 * torch.eye(3, dtype=f64)
case("cholesky", {"a": S}, {"lower": torch.linalg.cholesky(S), "upper": torch.linalg.cholesky(S, upper=True)})
Sb = torch.stack([S, 2 * S + torch.eye(3, dtype=f64)])
case("cholesky_batched", {"a": Sb}, torch.linalg.cholesky(Sb))
for name, shape in [("qr_tall", (5, 3)), ("qr_wide", (3, 5)), ("qr_batched", (2, 4, 3))]:
    X = rnd(*shape)
    Qr, Rr = torch.linalg.qr(X)
    Qc, Rc = torch.linalg.qr(X, mode="complete")
    case(name, {"a": X}, {"r_abs_diag": Rr.diagonal(dim1=-2, dim2=-1).abs(), "q_shape": list(Qr.shape),
                          "r_shape": list(Rr.shape), "qc_shape": list(Qc.shape), "rc_shape": list(Rc.shape),
                          "r_signed": Rr * torch.sign(Rr.diagonal(dim1=-2, dim2=-1)).unsqueeze(-1)})
for name, shape in [("svd_tall", (5, 3)), ("svd_wide", (2, 4)), ("svd_batched", (2, 3, 3))]:
    X = rnd(*shape)
    U, Sv, Vh = torch.linalg.svd(X)
    Ur, _, Vhr = torch.linalg.svd(X, full_matrices=False)
    case(name, {"a": X}, {"s": Sv, "u_shape": list(U.shape), "vh_shape": list(Vh.shape),
                          "ur_shape": list(Ur.shape), "vhr_shape": list(Vhr.shape), "svdvals": torch.linalg.svdvals(X)})
E = rnd(4, 4)
Es = E + E.t()
w, V = torch.linalg.eigh(Es)
case("eigh", {"a": Es}, {"w": w, "eigvalsh": torch.linalg.eigvalsh(Es)})
case("eigh_upper", {"a": E}, {"w": torch.linalg.eigh(E, UPLO="U")[0], "w_lower": torch.linalg.eigvalsh(E)})
Eb = rnd(2, 3, 3)
Eb = Eb + Eb.transpose(1, 2)
case("eigh_batched", {"a": Eb}, {"w": torch.linalg.eigvalsh(Eb)})

X = rnd(3, 4)
vn = {}
for key, ordv in [("o2", 2), ("o1", 1), ("oinf", math.inf), ("ominf", -math.inf), ("o0", 0), ("o3", 3), ("om1", -1)]:
    vn[key] = torch.linalg.vector_norm(X, ordv)
vn["dim2"] = torch.linalg.vector_norm(X, 2, dim=1)
vn["dim1_keep"] = torch.linalg.vector_norm(X, 1, dim=0, keepdim=True)
X3 = rnd(2, 3, 4)
vn["dims13"] = torch.linalg.vector_norm(X3, 2, dim=(0, 2))
case("vector_norm", {"a": X, "a3": X3}, vn)
mn = {}
for key, ordv in [("fro", "fro"), ("nuc", "nuc"), ("o1", 1), ("om1", -1), ("o2", 2), ("om2", -2), ("oinf", math.inf),
                  ("ominf", -math.inf)]:
    mn[key] = torch.linalg.matrix_norm(X, ordv)
mn["batched_1"] = torch.linalg.matrix_norm(X3, 1)
mn["batched_nuc_keep"] = torch.linalg.matrix_norm(X3, "nuc", keepdim=True)
mn["dims02_inf"] = torch.linalg.matrix_norm(X3, math.inf, dim=(0, 2))
case("matrix_norm", {"a": X, "a3": X3}, mn)
case("norm", {"a": X, "a3": X3, "v": X[0]},
     {"default": torch.linalg.norm(X), "default3": torch.linalg.norm(X3), "ord1_matrix": torch.linalg.norm(X, 1),
      "ord3_vector": torch.linalg.norm(X[0], 3), "dim1": torch.linalg.norm(X3, dim=1),
      "dim12_nuc": torch.linalg.norm(X3, "nuc", dim=(1, 2)), "float16": torch.linalg.vector_norm(X.half()).float()})

Al, Bls = rnd(5, 3), rnd(5, 2)
sol = torch.linalg.lstsq(Al, Bls)
sold = torch.linalg.lstsq(Al, Bls, driver="gelsd")
case("lstsq", {"a": Al, "b": Bls}, {"solution": sol.solution, "rank": int(sol.rank), "solution_gelsd": sold.solution,
                                     "residuals": sold.residuals, "sv": sold.singular_values})
Lr = rnd(4, 2) @ rnd(2, 3)  # rank 2
case("pinv", {"a": Lr, "s": Es}, {"pinv": torch.linalg.pinv(Lr), "rank": int(torch.linalg.matrix_rank(Lr)),
                                  "pinv_herm": torch.linalg.pinv(Es, hermitian=True),
                                  "rank_atol": int(torch.linalg.matrix_rank(Lr, atol=1.0, rtol=0.0))})
ca, cb = rnd(2, 3), rnd(3)
case("cross", {"a": ca, "b": cb}, {"last": torch.linalg.cross(ca, cb.expand(2, 3)), "dim0": torch.linalg.cross(ca.t(), cb.unsqueeze(1).expand(3, 2), dim=0)})

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg.lua")
with open(path, "w") as f:
    f.write("-- tests/ref/linalg.lua -- generated by tests/ref/gen_linalg.py (PyTorch %s); do not edit.\n" % torch.__version__)
    f.write("return " + lua(cases, indent="") + "\n")
print("wrote", path, len(cases), "cases")
