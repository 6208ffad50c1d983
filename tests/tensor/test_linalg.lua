-- tests/tensor/test_linalg.lua -- matrix products, einsum and torch.linalg
-- against PyTorch's values (tests/ref/linalg.lua, made by gen_linalg.py).
-- Decompositions with sign freedom (qr, svd, eigh) are checked by
-- reconstruction and orthogonality plus the values PyTorch fixes uniquely.
local R = ref("linalg")
local f32, f64 = torch.float32, torch.float64

-- gen(): the formula of gen_linalg.py, values k/8 exact in every dtype.
-- spec = {dims..., seed}
local function gen(spec, dtype)
  local shape, seed = {}, spec[#spec]
  for i = 1, #spec - 1 do shape[i] = spec[i] end
  local k = 0
  local function build(d)
    if d > #shape then
      local v = ((7 * k + 5 * seed) % 17 - 8) / 8
      k = k + 1
      return v
    end
    local t = {}
    for i = 1, shape[d] do t[i] = build(d + 1) end
    return t
  end
  return torch.tensor(build(1), {dtype = dtype or f64})
end

local function T(v, dtype) return torch.tensor(v, {dtype = dtype or f64}) end

local function eye(n)
  local t = {}
  for i = 1, n do
    t[i] = {}
    for j = 1, n do t[i][j] = i == j and 1 or 0 end
  end
  return t
end

-- row sums, column sums and first row of a (batch of) matrices, like summary() in the generator
local function summary(x)
  local rows, cols, first = {}, {}, nil
  local function walk(t, depth)
    if type(t[1][1]) == "number" then
      first = first or t[1]
      local c = {}
      for i, row in ipairs(t) do
        local s = 0
        for j, v in ipairs(row) do s = s + v; c[j] = (c[j] or 0) + v end
        rows[#rows + 1] = s
      end
      for _, v in ipairs(c) do cols[#cols + 1] = v end
    else
      for _, sub in ipairs(t) do walk(sub, depth + 1) end
    end
  end
  walk(x:totable(), 0)
  return rows, cols, first
end

local function check_summary(x, e, tol)
  local rows, cols, first = summary(x)
  check_close(rows, e.row_sums, tol)
  check_close(cols, e.col_sums, tol)
  check_close(first, e.first_row, tol)
end

-- ---- products ----

test("mm of small float32 matrices matches PyTorch (OpenBLAS path)", function()
  local c = R.mm_small
  local y = torch.mm(gen(c.input.a, f32), gen(c.input.b, f32))
  check_eq(y.dtype, f32)
  check_close(y, c.expected, {atol = 0, rtol = 0})
end)

test("mm of large float32 matrices matches PyTorch (oneDNN path)", function()
  local c = R.mm_large_f32
  check_summary(torch.mm(gen(c.input.a, f32), gen(c.input.b, f32)), c.expected, {atol = 1e-4, rtol = 0})
end)

test("mm of float64 matrices matches PyTorch", function()
  local c = R.mm_large_f64
  local y = gen(c.input.a):matmul(gen(c.input.b))
  check_eq(y.dtype, f64)
  check_summary(y, c.expected, {atol = 1e-9, rtol = 0})
end)

test("transposed views are multiplied without changing the result", function()
  local c = R.mm_transposed
  local a, b = gen(c.input.a, f32):t(), gen(c.input.b, f32):t()
  check(not a:is_contiguous())
  check_close(torch.matmul(a, b), c.expected, {atol = 0, rtol = 0})
  local d = R.mm_transposed_large
  check_summary(torch.matmul(gen(d.input.a, f32):t(), gen(d.input.b, f32):t()), d.expected, {atol = 1e-3, rtol = 0})
end)

test("a row vector times a matrix (gemv-like shape)", function()
  local c = R.mm_gemv_shapes
  check_close(torch.mm(gen(c.input.a, f32), gen(c.input.b, f32)), c.expected, {atol = 1e-4, rtol = 0})
end)

test("vector-shaped products with transposed and strided operands", function()
  local c = R.gemv_variants
  for _, dt in ipairs{f32, f64} do
    local a, v5, v7, w = gen(c.input.a, dt), gen(c.input.v5, dt), gen(c.input.v7, dt), gen(c.input.w, dt)
    local col = w:narrow(2, 2, 1)
    local e = c.expected
    check_close(a:matmul(v7), e.r1, {atol = 0, rtol = 0})
    check_close(a:t():matmul(v5), e.r2, {atol = 0, rtol = 0})
    check_close(v5:t():matmul(a), e.r3, {atol = 0, rtol = 0})
    check_close(v7:t():matmul(a:t()), e.r4, {atol = 0, rtol = 0})
    check_close(a:matmul(col), e.r5, {atol = 0, rtol = 0})
    check_close(col:t():matmul(a:t()), e.r6, {atol = 0, rtol = 0})
  end
end)

test("matmul follows PyTorch's 1-D/2-D/batched broadcasting rules", function()
  for _, name in ipairs{"matmul_broadcast", "matmul_1d_3d", "matmul_3d_1d", "matmul_1d_1d", "matmul_fold",
                        "matmul_2d_3d", "matmul_2d_1d"} do
    local c = R[name]
    local y = torch.matmul(gen(c.input.a), gen(c.input.b))
    if type(c.expected) == "number" then
      check_eq(y:dim(), 0, name)
    end
    check_close(y, c.expected, {atol = 1e-12, rtol = 0})
  end
  check_shape(torch.matmul(torch.ones(2, 1, 3, 4), torch.ones(5, 4, 2)), {2, 5, 3, 2})
  check_shape(torch.matmul(torch.ones(4), torch.ones(2, 4, 3)), {2, 3})
  check_shape(torch.matmul(torch.ones(2, 3, 4), torch.ones(4)), {2, 3})
end)

test("bmm, including permuted (non-contiguous) batches", function()
  local c = R.bmm
  check_close(torch.bmm(gen(c.input.a, f32), gen(c.input.b, f32)), c.expected, {atol = 0, rtol = 0})
  local p = R.bmm_permuted
  local a = gen(p.input.a):permute(2, 1, 3)
  check_close(a:bmm(gen(p.input.b)), p.expected, {atol = 1e-12, rtol = 0})
end)

test("bmm over many small and a few big matrices", function()
  local c = R.bmm_many_small
  local y = torch.bmm(gen(c.input.a, f32), gen(c.input.b, f32))
  local sums = {}
  for i, m in ipairs(y:totable()) do
    local s = 0
    for _, row in ipairs(m) do for _, v in ipairs(row) do s = s + v end end
    sums[i] = s
  end
  check_close(sums, c.expected.sums, {atol = 1e-4, rtol = 0})
  check_close(y[1], c.expected.first, {atol = 0, rtol = 0})
  local b = R.bmm_big
  local z = torch.bmm(gen(b.input.a, f32), gen(b.input.b, f32)):totable()
  for i = 1, 3 do check_close(z[i][1], b.expected.first_row[i], {atol = 1e-4, rtol = 0}) end
end)

test("mv, dot, vdot, outer, inner and kron", function()
  local c = R.mv
  check_close(torch.mv(gen(c.input.a, f32), gen(c.input.b, f32)), c.expected, {atol = 0, rtol = 0})
  c = R.dot
  local d = torch.dot(gen(c.input.a), gen(c.input.b))
  check_eq(d:dim(), 0)
  check_close(d, c.expected)
  check_close(torch.vdot(gen(c.input.a), gen(c.input.b)), c.expected)
  c = R.outer
  check_close(torch.outer(gen(c.input.a), gen(c.input.b)), c.expected)
  check_close(torch.ger(gen(c.input.a), gen(c.input.b)), c.expected)
  c = R.inner
  check_close(torch.inner(gen(c.input.a), gen(c.input.b)), c.expected)
  c = R.kron
  check_close(torch.kron(gen(c.input.a), gen(c.input.b)), c.expected)
end)

test("addmm, addmv, baddbmm and addbmm with beta and alpha", function()
  for _, name in ipairs{"addmm", "addmv", "baddbmm", "addbmm"} do
    local c = R[name]
    local i = c.input
    local y = torch[name](gen(i.input), gen(i.a), gen(i.b), {beta = i.beta, alpha = i.alpha})
    check_close(y, c.expected, {atol = 1e-12, rtol = 0})
    local y2 = torch[name](gen(i.input), gen(i.a), gen(i.b), i.beta, i.alpha)
    check_close(y2, c.expected, {atol = 1e-12, rtol = 0})
  end
end)

test("in-place addmm_ writes into self; beta=0 ignores NaN in the input", function()
  local c = R.addmm.input
  local x = gen(c.input):expand(4, 5):contiguous()
  local r = x:addmm_(gen(c.a), gen(c.b), {beta = c.beta, alpha = c.alpha})
  check(rawequal(r, x))
  check_close(x, R.addmm.expected, {atol = 1e-12, rtol = 0})
  local nan = torch.full({2, 2}, 0 / 0)
  local y = torch.addmm(nan, torch.ones(2, 3), torch.ones(3, 2), {beta = 0})
  check_close(y, {{3, 3}, {3, 3}})
end)

test("out= receives the product, also with another dtype", function()
  local out = torch.empty(3, 5)
  local c = R.mm_small
  local r = torch.mm(gen(c.input.a, f32), gen(c.input.b, f32), {out = out})
  check(rawequal(r, out))
  check_close(out, c.expected, {atol = 0, rtol = 0})
  local out64 = torch.zeros(3, 5, {dtype = f64})
  torch.matmul(gen(c.input.a, f32), gen(c.input.b, f32), {out = out64})
  check_close(out64, c.expected, {atol = 0, rtol = 0})
  local a = gen(c.input.a, f32)
  local sq = torch.mm(a, a:t())
  torch.mm(sq, sq, {out = sq}) -- aliasing the output with an input
  local sq2 = torch.mm(a, a:t())
  check_close(sq, torch.mm(sq2, sq2), {atol = 1e-6})
  check_error(function() torch.mm(a, a:t(), {out = torch.empty(2, 2)}) end, "mm: output of shape 2x2")
end)

test("integer, float16 and bfloat16 matmul", function()
  local c = R.mm_int64
  local y = torch.matmul(T(c.input.a, torch.int64), T(c.input.b, torch.int64))
  check_eq(y.dtype, torch.int64)
  check_eq(y:totable(), c.expected)
  local y32 = torch.mm(T(c.input.a, torch.int32), T(c.input.b, torch.int32))
  check_eq(y32.dtype, torch.int32)
  check_eq(y32:totable(), c.expected)
  c = R.mm_half
  local h = torch.mm(gen(c.input.a, torch.float16), gen(c.input.b, torch.float16))
  check_eq(h.dtype, torch.float16)
  check_close(h:float(), c.expected, {atol = 0, rtol = 0})
  c = R.mm_bf16
  local b = torch.matmul(gen(c.input.a, torch.bfloat16), gen(c.input.b, torch.bfloat16))
  check_eq(b.dtype, torch.bfloat16)
  check_close(b:float(), c.expected, {atol = 0, rtol = 0})
end)

test("empty and degenerate shapes", function()
  check_close(torch.mm(torch.ones(2, 0), torch.ones(0, 3)), {{0, 0, 0}, {0, 0, 0}})
  check_shape(torch.mm(torch.ones(0, 4), torch.ones(4, 3)), {0, 3})
  check_shape(torch.bmm(torch.ones(0, 2, 4), torch.ones(0, 4, 3)), {0, 2, 3})
  check_close(torch.addmm(torch.ones(2, 2), torch.ones(2, 0), torch.ones(0, 2), {beta = 3}), {{3, 3}, {3, 3}})
  check_close(torch.mm(torch.full({1, 1}, 2), torch.full({1, 1}, 3)), {{6}})
  check_close(torch.matmul(torch.ones(2, 3, 0), torch.ones(0, 2)), {{{0, 0}, {0, 0}, {0, 0}}, {{0, 0}, {0, 0}, {0, 0}}})
  check_close(torch.inner(torch.ones(2, 0), torch.ones(3, 0)), {{0, 0, 0}, {0, 0, 0}})
end)

test("products reject mismatched shapes, dtypes and ranks with clear messages", function()
  local a = torch.ones(3, 4)
  check_error(function() torch.matmul(a, torch.ones(5, 6)) end, "matmul: shapes 3x4 and 5x6 cannot be multiplied (4 ~= 5)")
  check_error(function() torch.mm(a, torch.ones(5)) end, "mm: expected 2-D and 2-D tensors")
  check_error(function() torch.mm(a, torch.ones(4, 2, {dtype = f64})) end, "same dtype, got float32 and float64")
  check_error(function() torch.bmm(torch.ones(2, 3, 4), torch.ones(3, 4, 5)) end, "bmm: batch sizes")
  check_error(function() torch.matmul(torch.ones(2, 3, 4), torch.ones(3, 4, 5)) end, "batch dimensions")
  check_error(function() torch.matmul(torch.tensor(1.0), a) end, "at least 1 dimension")
  check_error(function() torch.dot(torch.ones(3), torch.ones(4)) end, "dot: expected 1-D tensors of the same size")
  check_error(function() torch.mm(a:bool(), a:t():bool()) end, "bool tensors are not supported")
  check_error(function() torch.addmm(torch.ones(3), a, torch.ones(4, 2)) end, "addmm: input of shape 3 cannot be broadcast")
  check_close(a:matmul(torch.ones(4)), {4, 4, 4}) -- still usable after the errors
end)

-- ---- einsum ----

test("einsum matches PyTorch on explicit, implicit, ellipsis and broadcast equations", function()
  for k = 1, 100 do
    local c = R["einsum_" .. k]
    if not c then break end
    local ops = {}
    for j, shape in ipairs(c.input.shapes) do
      local spec = {table.unpack(shape)}
      spec[#spec + 1] = c.input.seeds[j]
      ops[j] = gen(spec)
    end
    local y = torch.einsum(c.input.equation, table.unpack(ops))
    check_close(y, c.expected, {atol = 1e-12, rtol = 0})
    local y2 = torch.einsum(c.input.equation, ops) -- operands as one table
    check_close(y2, c.expected, {atol = 1e-12, rtol = 0})
  end
end)

test("einsum does not alias its input and accepts out=", function()
  local x = torch.ones(2, 3)
  local y = torch.einsum("ij->ij", x)
  y:fill_(5)
  check_close(x, {{1, 1, 1}, {1, 1, 1}})
  local o = torch.zeros(3, 2)
  local r = torch.einsum("ij->ji", y, {out = o})
  check(rawequal(r, o))
  check_close(o, {{5, 5}, {5, 5}, {5, 5}})
  check_close(torch.einsum("ij,jk->ik", {x, o}, {out = torch.zeros(2, 2)}), {{15, 15}, {15, 15}})
end)

test("einsum errors name the problem", function()
  local a, b = torch.ones(2, 3), torch.ones(4, 5)
  check_error(function() torch.einsum("ij,jk", a, b) end, "subscript 'j' has size 4 in operand 2 but size 3")
  check_error(function() torch.einsum("ij,jk", a) end, "2 operands but 1 tensor was given")
  check_error(function() torch.einsum("i", a) end, "operand 1 has 2 dimensions but the equation gives it 1")
  check_error(function() torch.einsum("ij->k", a) end, "output subscript 'k' does not appear")
  check_error(function() torch.einsum("ij->ii", a) end, "appears more than once")
  check_error(function() torch.einsum("i..j", a) end, "not part of an ellipsis")
  check_error(function() torch.einsum("i1", a) end, "invalid subscript '1'")
  check_error(function() torch.einsum("ii", a) end, "repeated in operand 1 with different sizes")
  check_error(function() torch.einsum("ij,jk", a, torch.ones(3, 4, {dtype = f64})) end, "same dtype")
  check_close(torch.einsum("ij->", a), 6)
end)

-- ---- torch.linalg ----

test("linalg.inv matches PyTorch (float64, float32, batched)", function()
  check_close(torch.linalg.inv(T(R.inv.input.a)), R.inv.expected, {atol = 1e-12})
  local y = torch.linalg.inv(T(R.inv_f32.input.a, f32))
  check_eq(y.dtype, f32)
  check_close(y, R.inv_f32.expected, {atol = 1e-6, rtol = 1e-5})
  check_close(torch.linalg.inv(T(R.inv_batched.input.a)), R.inv_batched.expected, {atol = 1e-12})
  check_close(torch.inverse(T(R.inv.input.a)), R.inv.expected, {atol = 1e-12})
end)

test("linalg.inv of a singular matrix is an error, not NaN", function()
  local s = T{{1, 2, 3}, {2, 4, 6}, {1, 0, 1}}
  check_error(function() torch.linalg.inv(s) end, "linalg.inv: the matrix is singular (pivot")
  local b = torch.stack({T(eye(3)), T{{1, 2, 0}, {2, 4, 0}, {0, 0, 1}}})
  check_error(function() torch.linalg.inv(b) end, "matrix 2 of the batch is singular")
  check_close(torch.linalg.inv(T(eye(3))), eye(3))
end)

test("det and slogdet match PyTorch, singular matrices give 0", function()
  check_close(torch.linalg.det(T(R.det_batched.input.a)), R.det_batched.expected, {atol = 1e-12})
  local c = R.slogdet
  local s, l = torch.linalg.slogdet(T(c.input.a))
  check_close(s, c.expected.sign)
  check_close(l, c.expected.logabsdet, {atol = 1e-12})
  check_close(torch.det(T(c.input.a)), c.expected.det, {atol = 1e-12})
  check_close(torch.logdet(T(c.input.a)), c.expected.logdet, {nan_ok = false})
  local s0, l0 = torch.linalg.slogdet(torch.zeros(2, 2))
  check_close(s0, 0)
  check_close(l0, -math.huge)
end)

test("linalg.solve: matrix and vector right-hand sides, broadcasting, left=false", function()
  check_close(torch.linalg.solve(T(R.solve.input.a), T(R.solve.input.b)), R.solve.expected, {atol = 1e-12})
  local v = torch.linalg.solve(T(R.solve_vector.input.a), T(R.solve_vector.input.b))
  check_shape(v, {4})
  check_close(v, R.solve_vector.expected, {atol = 1e-12})
  local c = R.solve_broadcast
  check_close(torch.linalg.solve(T(c.input.a), T(c.input.b)), c.expected, {atol = 1e-12})
  c = R.solve_left_false
  check_close(torch.linalg.solve(T(c.input.a), T(c.input.b), {left = false}), c.expected, {atol = 1e-12})
  check_error(function() torch.linalg.solve(T{{1, 2}, {2, 4}}, T{1, 1}) end, "linalg.solve: the matrix is singular")
  check_error(function() torch.linalg.solve(T(eye(3)), torch.ones(4, 2, {dtype = f64})) end, "do not fit")
end)

test("linalg.cholesky matches PyTorch; indefinite input is an error", function()
  local c = R.cholesky
  check_close(torch.linalg.cholesky(T(c.input.a)), c.expected.lower, {atol = 1e-12})
  check_close(torch.linalg.cholesky(T(c.input.a), {upper = true}), c.expected.upper, {atol = 1e-12})
  check_close(torch.linalg.cholesky(T(R.cholesky_batched.input.a)), R.cholesky_batched.expected, {atol = 1e-12})
  check_error(function() torch.linalg.cholesky(T{{1, 2}, {2, 1}}) end,
              "not positive-definite (the leading minor of order 2 is not positive)")
end)

-- Q^T Q = I and Q R = A for each matrix of a batch
local function check_qr(a, q, r, tol)
  local qt = q:transpose(-2, -1)
  local n = q:size(-1)
  local ident = torch.matmul(qt, q)
  local want = T(eye(n)):expand(ident.shape)
  check_close(ident, want, {atol = tol})
  check_close(torch.matmul(q, r), a, {atol = tol})
end

test("linalg.qr: reconstruction, orthogonality, shapes and |R| as in PyTorch", function()
  for _, name in ipairs{"qr_tall", "qr_wide", "qr_batched"} do
    local c = R[name]
    local a = T(c.input.a)
    local q, r = torch.linalg.qr(a)
    check_eq(q:size(), c.expected.q_shape, name)
    check_eq(r:size(), c.expected.r_shape, name)
    check_qr(a, q, r, 1e-12)
    check_close(r:diagonal(0, -2, -1):abs(), c.expected.r_abs_diag, {atol = 1e-12})
    -- R with a positive diagonal is unique
    local sign = torch.sign(r:diagonal(0, -2, -1)):unsqueeze(-1)
    check_close(r * sign, c.expected.r_signed, {atol = 1e-12})
    local qc, rc = torch.linalg.qr(a, "complete")
    check_eq(qc:size(), c.expected.qc_shape)
    check_eq(rc:size(), c.expected.rc_shape)
    check_qr(a, qc, rc, 1e-12)
    local q0, r0 = torch.linalg.qr(a, {mode = "r"})
    check_eq(q0:numel(), 0)
    check_close(r0, r, {atol = 0})
  end
  check_error(function() torch.linalg.qr(torch.ones(2, 2), "thin") end, "mode must be 'reduced', 'complete' or 'r'")
end)

test("linalg.svd: singular values as PyTorch, U diag(S) Vh = A, orthogonal factors", function()
  for _, name in ipairs{"svd_tall", "svd_wide", "svd_batched"} do
    local c = R[name]
    local a = T(c.input.a)
    local u, s, vh = torch.linalg.svd(a)
    check_eq(u:size(), c.expected.u_shape, name)
    check_eq(vh:size(), c.expected.vh_shape, name)
    check_close(s, c.expected.s, {atol = 1e-12})
    check_close(torch.linalg.svdvals(a), c.expected.svdvals, {atol = 1e-12})
    check_close(torch.matmul(u:transpose(-2, -1), u), T(eye(u:size(-1))):expand(u.shape), {atol = 1e-12})
    check_close(torch.matmul(vh, vh:transpose(-2, -1)), T(eye(vh:size(-1))):expand(vh.shape), {atol = 1e-12})
    local ur, sr, vhr = torch.linalg.svd(a, false)
    check_eq(ur:size(), c.expected.ur_shape)
    check_eq(vhr:size(), c.expected.vhr_shape)
    check_close(torch.matmul(ur * sr:unsqueeze(-2), vhr), a, {atol = 1e-12})
    local ur32, sr32, vhr32 = torch.linalg.svd(a:float(), {full_matrices = false})
    check_close(torch.matmul(ur32 * sr32:unsqueeze(-2), vhr32), a:float(), {atol = 1e-5})
  end
end)

test("linalg.eigh: eigenvalues as PyTorch, A V = V diag(w), V orthogonal; UPLO", function()
  local c = R.eigh
  local a = T(c.input.a)
  local w, v = torch.linalg.eigh(a)
  check_close(w, c.expected.w, {atol = 1e-12})
  check_close(torch.linalg.eigvalsh(a), c.expected.eigvalsh, {atol = 1e-12})
  check_close(torch.matmul(a, v), v * w:unsqueeze(-2), {atol = 1e-12})
  check_close(torch.matmul(v:t(), v), eye(4), {atol = 1e-12})
  local u = R.eigh_upper
  check_close(torch.linalg.eigh(T(u.input.a), "U"), u.expected.w, {atol = 1e-12})
  check_close(torch.linalg.eigvalsh(T(u.input.a), {UPLO = "U"}), u.expected.w, {atol = 1e-12})
  check_close(torch.linalg.eigvalsh(T(u.input.a)), u.expected.w_lower, {atol = 1e-12})
  check_close(torch.linalg.eigvalsh(T(R.eigh_batched.input.a)), R.eigh_batched.expected.w, {atol = 1e-12})
  local w32 = torch.linalg.eigvalsh(a:float())
  check_eq(w32.dtype, f32)
  check_close(w32, c.expected.w, {atol = 1e-5})
end)

test("vector_norm and matrix_norm for every ord, dims and keepdim", function()
  local c = R.vector_norm
  local x, x3 = T(c.input.a), T(c.input.a3)
  local e = c.expected
  check_close(torch.linalg.vector_norm(x), e.o2, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, 1), e.o1, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, math.huge), e.oinf, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, -math.huge), e.ominf, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, "inf"), e.oinf, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, 0), e.o0, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, 3), e.o3, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, -1), e.om1, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x, 2, 2), e.dim2, {atol = 1e-12})
  local k = torch.linalg.vector_norm(x, {ord = 1, dim = 1, keepdim = true})
  check_shape(k, {1, 4})
  check_close(k, e.dim1_keep, {atol = 1e-12})
  check_close(torch.linalg.vector_norm(x3, 2, {1, 3}), e.dims13, {atol = 1e-12})
  local m = R.matrix_norm
  local me = m.expected
  for _, o in ipairs{{"fro", "fro"}, {"nuc", "nuc"}, {1, "o1"}, {-1, "om1"}, {2, "o2"}, {-2, "om2"},
                     {math.huge, "oinf"}, {-math.huge, "ominf"}} do
    check_close(torch.linalg.matrix_norm(x, o[1]), me[o[2]], {atol = 1e-12})
  end
  check_close(torch.linalg.matrix_norm(x3, 1), me.batched_1, {atol = 1e-12})
  local nk = torch.linalg.matrix_norm(x3, "nuc", {keepdim = true})
  check_shape(nk, {2, 1, 1})
  check_close(nk, me.batched_nuc_keep, {atol = 1e-12})
  check_close(torch.linalg.matrix_norm(x3, math.huge, {1, 3}), me.dims02_inf, {atol = 1e-12})
end)

test("linalg.norm picks vector or matrix norms like PyTorch", function()
  local c = R.norm
  local x, x3, v = T(c.input.a), T(c.input.a3), T(c.input.v)
  local e = c.expected
  check_close(torch.linalg.norm(x), e.default, {atol = 1e-12})
  check_close(torch.linalg.norm(x3), e.default3, {atol = 1e-12})
  check_close(torch.linalg.norm(x, 1), e.ord1_matrix, {atol = 1e-12})
  check_close(torch.linalg.norm(v, 3), e.ord3_vector, {atol = 1e-12})
  check_close(torch.linalg.norm(x3, nil, 2), e.dim1, {atol = 1e-12})
  check_close(torch.linalg.norm(x3, "nuc", {2, 3}), e.dim12_nuc, {atol = 1e-12})
  local h = torch.linalg.vector_norm(x:half())
  check_eq(h.dtype, torch.float16)
  check_close(h:float(), e.float16, {atol = 0})
  check_error(function() torch.linalg.norm(x3, 2) end, "the input must be 1-D or 2-D, got 3-D")
  check_error(function() torch.linalg.vector_norm(torch.ones(3, {dtype = torch.int64})) end,
              "expected a floating-point tensor, got int64")
  check_error(function() torch.linalg.matrix_norm(x, 3) end, "ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf")
end)

test("lstsq, pinv, matrix_rank and cross match PyTorch", function()
  local c = R.lstsq
  local a, b = T(c.input.a), T(c.input.b)
  local x, res, rank, sv = torch.linalg.lstsq(a, b)
  check_close(x, c.expected.solution, {atol = 1e-12})
  check_eq(rank:item(), c.expected.rank)
  check_eq(res:numel(), 0)
  check_eq(sv:numel(), 0)
  local xd, resd, _, svd = torch.linalg.lstsq(a, b, {driver = "gelsd"})
  check_close(xd, c.expected.solution_gelsd, {atol = 1e-12})
  check_close(resd, c.expected.residuals, {atol = 1e-12})
  check_close(svd, c.expected.sv, {atol = 1e-12})
  local p = R.pinv
  check_close(torch.linalg.pinv(T(p.input.a)), p.expected.pinv, {atol = 1e-12})
  check_close(torch.linalg.pinv(T(p.input.s), {hermitian = true}), p.expected.pinv_herm, {atol = 1e-12})
  check_eq(torch.linalg.matrix_rank(T(p.input.a)):item(), p.expected.rank)
  check_eq(torch.linalg.matrix_rank(T(p.input.a), {atol = 1.0, rtol = 0.0}):item(), p.expected.rank_atol)
  check_eq(torch.linalg.matrix_rank(T(p.input.a)).dtype, torch.int64)
  local x2 = R.cross
  local ca, cb = T(x2.input.a), T(x2.input.b)
  check_close(torch.linalg.cross(ca, cb), x2.expected.last, {atol = 1e-12})
  check_close(torch.linalg.cross(ca:t(), cb:unsqueeze(2):expand(3, 2), 1), x2.expected.dim0, {atol = 1e-12})
  check_close(torch.cross(ca:t(), cb:unsqueeze(2):expand(3, 2)), x2.expected.dim0, {atol = 1e-12})
  check_error(function() torch.linalg.cross(torch.ones(2, 4), torch.ones(2, 4)) end, "must have size 3")
end)

test("linalg rejects bad inputs and stays usable", function()
  local a = T{{2, 1}, {1, 3}}
  check_error(function() torch.linalg.inv(torch.ones(2, 3)) end, "expected a square matrix")
  check_error(function() torch.linalg.det(torch.ones(3)) end, "at least 2 dimensions")
  check_error(function() torch.linalg.inv(torch.ones(2, 2, {dtype = torch.int64})) end,
              "expected a float32 or float64 tensor, got int64")
  check_error(function() torch.linalg.solve(a, torch.ones(2, {dtype = f32})) end, "same dtype")
  check_error(function() torch.linalg.eigh(a, "X") end, "UPLO must be 'L' or 'U'")
  check_error(function() torch.linalg.svd(T{{0 / 0, 1}, {1, 1}}) end, "")
  check_close(torch.linalg.det(a), 5, {atol = 1e-12})
  check_close(torch.linalg.inv(a):matmul(a), eye(2), {atol = 1e-12})
end)

test("batched linalg over empty and 0x0 matrices", function()
  check_shape(torch.linalg.inv(torch.zeros(0, 3, 3, {dtype = f64})), {0, 3, 3})
  check_close(torch.linalg.det(torch.zeros(0, 0, {dtype = f64})), 1)
  local u, s, vh = torch.linalg.svd(torch.zeros(0, 3, {dtype = f64}))
  check_shape(u, {0, 0})
  check_shape(s, {0})
  check_close(vh, eye(3))
end)

test("torch._blas_info names the libraries", function()
  local info = torch._blas_info()
  check(info:find("oneDNN", 1, true) ~= nil, info)
end)
