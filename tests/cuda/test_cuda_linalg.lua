-- tests/cuda/test_cuda_linalg.lua -- torch.linalg on CUDA (cuSOLVER through
-- tensor/cuda/solver.c and tensor/linalg_cuda.c), einsum, kron, cross and
-- the diag helpers, against the CPU (LAPACK) on the same data in float32
-- and float64, batched; decompositions with sign freedom are compared by
-- absolute values, reconstruction and orthogonality; then gradients of
-- det/inv/solve/qr/svd/eigh/cholesky/norms/einsum on CUDA against the
-- CPU's. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU linalg tests skipped\n")
  return
end

local f32, f64 = torch.float32, torch.float64
local L = torch.linalg

local function tol(dt)
  if dt == f32 then return {atol = 5e-4, rtol = 5e-4} end
  return {atol = 1e-9, rtol = 1e-9}
end

local function same(g, c, dt, what)
  check(g.is_cuda, what .. " stays on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  check_eq(g.shape, c.shape, what .. " shape")
  check_close(g:cpu():double(), c:double(), tol(dt))
end

local function with_last(shape, v)
  local s = {}
  for i = 1, #shape - 1 do s[i] = shape[i] end
  if v then s[#s + 1] = v end
  return s
end

-- well conditioned: randn + n I (float64 made, then cast)
local function W(shape, dt)
  local n = shape[#shape]
  return (torch.randn(shape, {dtype = f64}) + torch.eye(n, {dtype = f64}) * n):to(dt or f64)
end
-- symmetric positive definite: x x^T + I
local function SPD(shape, dt)
  local x = torch.randn(shape, {dtype = f64})
  return (x:matmul(x:transpose(-2, -1)) + torch.eye(shape[#shape], {dtype = f64})):to(dt or f64)
end
local function eye_like(n, dt) return torch.eye(n, {dtype = dt}) end

local function message(fn)
  local ok, err = pcall(fn)
  check(not ok, "expected an error")
  return tostring(err):gsub("^.-:%d+: ", "")
end

test("inv, det, slogdet, logdet and solve match the CPU (float32/float64, batched, broadcast, left/right)", function()
  torch.manual_seed(1)
  for _, dt in ipairs{f32, f64} do
    for _, shape in ipairs{{1, 1}, {3, 3}, {5, 5}, {4, 3, 3}, {2, 3, 4, 4}, {40, 40}} do
      local what = ("%s %s"):format(tostring(dt), table.concat(shape, "x"))
      local a = W(shape, dt)
      local ag = a:cuda()
      same(L.inv(ag), L.inv(a), dt, "inv " .. what)
      same(torch.inverse(ag), torch.inverse(a), dt, "inverse " .. what)
      same(L.det(ag), L.det(a), dt, "det " .. what)
      local s, l = L.slogdet(ag)
      local sc, lc = L.slogdet(a)
      same(s, sc, dt, "slogdet sign " .. what)
      same(l, lc, dt, "slogdet logabs " .. what)
      same(torch.logdet(ag), torch.logdet(a), dt, "logdet " .. what)
      local b = torch.randn(with_last(shape), {dtype = f64}):to(dt) -- vector right-hand sides: shape[:-1]
      same(L.solve(ag, b:cuda()), L.solve(a, b), dt, "solve vector " .. what)
      local B = torch.randn(with_last(shape, 2), {dtype = f64}):to(dt) -- (..., n, 2)
      B = B:transpose(-2, -1):contiguous():transpose(-2, -1)
      same(L.solve(ag, B:cuda()), L.solve(a, B), dt, "solve " .. what)
      local Bt = B:transpose(-2, -1)
      same(L.solve(ag, Bt:cuda(), {left = false}), L.solve(a, Bt, {left = false}), dt, "solve right " .. what)
    end
    -- broadcast batch dims, a transposed (non-contiguous) A
    local a, b = W({3, 3}, dt):t(), torch.randn(4, 3, 2, {dtype = dt})
    same(L.solve(a:cuda(), b:cuda()), L.solve(a, b), dt, "solve broadcast")
    -- negative determinants (a row swap) and ill-conditioned random matrices in float64
    local p = W({4, 4}, dt):index_select(1, torch.tensor({2, 1, 3, 4}))
    same(L.det(p:cuda()), L.det(p), dt, "det negative")
    same(torch.logdet(p:cuda()), torch.logdet(p), dt, "logdet negative (NaN)")
  end
  local r = torch.randn(6, 5, 5, {dtype = f64})
  same(L.det(r:cuda()), L.det(r), f64, "det of random matrices")
  local s, l = L.slogdet(r:cuda())
  local sc, lc = L.slogdet(r)
  same(s, sc, f64, "slogdet sign of random matrices")
  same(l, lc, f64, "slogdet logabs of random matrices")
end)

test("singular and indefinite matrices raise the CPU's errors; det of a singular matrix is 0", function()
  local a = W({3, 4, 4})
  a[2]:zero_()
  local ag = a:cuda()
  for _, dt in ipairs{f32, f64} do
    local x, xg = a:to(dt), ag:to(dt)
    local want = message(function() return L.inv(x) end)
    check_eq(message(function() return L.inv(xg) end), want, "inv error")
    check(want:find("matrix 2 of the batch is singular", 1, true), want)
    local b = torch.randn(3, 4, 1, {dtype = dt})
    check_eq(message(function() return L.solve(xg, b:cuda()) end), message(function() return L.solve(x, b) end),
             "solve error")
    same(L.det(xg), L.det(x), dt, "det with a singular matrix")
    local s, l = L.slogdet(xg)
    check_eq(s:cpu():totable()[2], 0)
    check_eq(l:cpu():totable()[2], -math.huge)
  end
  local single = torch.tensor({{1, 2}, {2, 4}}, {dtype = f64})
  check_eq(message(function() return L.inv(single:cuda()) end), message(function() return L.inv(single) end))
  check_eq(message(function() return L.inv(single:cuda()) end),
           "linalg.inv: the matrix is singular (pivot 2 is zero), so it has no inverse")
  local s = SPD({3, 4, 4})
  s[3] = -torch.eye(4, {dtype = f64})
  for _, upper in ipairs{false, true} do
    local want = message(function() return L.cholesky(s, {upper = upper}) end)
    check(want:find("matrix 3 of the batch is not positive-definite", 1, true), want)
    check_eq(message(function() return L.cholesky(s:cuda(), {upper = upper}) end), want, "cholesky error")
  end
  check_error(function() return L.inv(torch.ones(2, 2, {dtype = torch.int32}):cuda()) end, "float32 or float64")
  check_error(function() return L.inv(torch.ones(2, 3):cuda()) end, "square")
  check_error(function() return L.solve(torch.eye(2):cuda(), torch.ones(2, 1)) end, "device")
end)

test("cholesky and qr match the CPU (lower/upper; reduced, complete, r; tall, wide, batched)", function()
  torch.manual_seed(2)
  for _, dt in ipairs{f32, f64} do
    for _, shape in ipairs{{1, 1}, {4, 4}, {3, 5, 5}, {2, 2, 6, 6}} do
      local a = SPD(shape, dt)
      for _, upper in ipairs{false, true} do
        same(L.cholesky(a:cuda(), {upper = upper}), L.cholesky(a, {upper = upper}), dt,
             ("cholesky upper=%s %s"):format(upper, table.concat(shape, "x")))
      end
    end
    for _, shape in ipairs{{5, 3}, {3, 5}, {4, 4}, {2, 6, 4}, {2, 4, 6}, {1, 7}, {7, 1}} do
      local a = torch.randn(shape, {dtype = f64}):to(dt)
      local ag = a:cuda()
      for _, mode in ipairs{"reduced", "complete", "r"} do
        local what = ("qr %s %s %s"):format(mode, tostring(dt), table.concat(shape, "x"))
        local q, r = L.qr(ag, mode)
        local qc, rc = L.qr(a, mode)
        same(r:abs(), rc:abs(), dt, what .. " |R|")
        if mode == "r" then
          check_eq(q:numel(), 0, what .. " empty Q")
        else
          same(q:abs(), qc:abs(), dt, what .. " |Q|")
          check_close(q:matmul(r):cpu():double(), a:double(), tol(dt))
          local qtq = q:transpose(-2, -1):matmul(q):cpu():double()
          check_close(qtq, torch.eye(q.shape[#q.shape], {dtype = f64}):expand(qtq.shape), tol(dt))
        end
      end
    end
  end
end)

test("svd, svdvals, eigh and eigvalsh match the CPU (values; vectors by reconstruction and orthogonality)", function()
  torch.manual_seed(3)
  for _, dt in ipairs{f32, f64} do
    for _, shape in ipairs{{5, 3}, {3, 5}, {4, 4}, {2, 6, 4}, {3, 2, 5}, {1, 1}, {40, 24}} do
      local a = torch.randn(shape, {dtype = f64}):to(dt)
      local ag = a:cuda()
      local m, n = shape[#shape - 1], shape[#shape]
      local k = math.min(m, n)
      for _, full in ipairs{true, false} do
        local what = ("svd full=%s %s %s"):format(full, tostring(dt), table.concat(shape, "x"))
        local u, s, vh = L.svd(ag, full)
        local uc, sc, vhc = L.svd(a, full)
        same(s, sc, dt, what .. " S")
        check_eq(u.shape, uc.shape, what .. " U shape")
        check_eq(vh.shape, vhc.shape, what .. " Vh shape")
        local uk, vk = u:narrow(-1, 1, k), vh:narrow(-2, 1, k)
        check_close(uk:mul(s:unsqueeze(-2)):matmul(vk):cpu():double(), a:double(), tol(dt))
        local ut = u:transpose(-2, -1):matmul(u):cpu():double()
        check_close(ut, torch.eye(ut.shape[#ut.shape], {dtype = f64}):expand(ut.shape), tol(dt))
        local vv = vh:matmul(vh:transpose(-2, -1)):cpu():double()
        check_close(vv, torch.eye(vv.shape[#vv.shape], {dtype = f64}):expand(vv.shape), tol(dt))
      end
      same(L.svdvals(ag), L.svdvals(a), dt, "svdvals")
    end
    for _, shape in ipairs{{1, 1}, {4, 4}, {3, 5, 5}, {30, 30}} do
      local x = torch.randn(shape, {dtype = f64}):to(dt)
      local sym = (x + x:transpose(-2, -1)) * 0.5
      for _, uplo in ipairs{"L", "U"} do
        local what = ("eigh %s %s %s"):format(uplo, tostring(dt), table.concat(shape, "x"))
        -- x itself: only the named triangle is read
        same(L.eigvalsh(x:cuda(), uplo), L.eigvalsh(x, uplo), dt, what .. " eigvalsh of a non-symmetric input")
        local w, v = L.eigh(sym:cuda(), uplo)
        local wc = L.eigh(sym, uplo)
        same(w, wc, dt, what .. " values")
        check_close(v:mul(w:unsqueeze(-2)):matmul(v:transpose(-2, -1)):cpu():double(), sym:double(), tol(dt))
      end
    end
  end
end)

test("pinv, matrix_rank and lstsq match the CPU", function()
  torch.manual_seed(4)
  for _, dt in ipairs{f32, f64} do
    for _, shape in ipairs{{5, 3}, {3, 5}, {2, 4, 4}} do
      local a = torch.randn(shape, {dtype = f64}):to(dt)
      same(L.pinv(a:cuda()), L.pinv(a), dt, "pinv " .. table.concat(shape, "x"))
      local r = L.matrix_rank(a:cuda())
      check(r.is_cuda)
      check_eq(r.dtype, torch.int64)
      check_eq(r:cpu():totable(), L.matrix_rank(a):totable())
    end
    local low = torch.randn(3, 6, 2, {dtype = f64}):matmul(torch.randn(3, 2, 5, {dtype = f64})):to(dt)
    check_eq(L.matrix_rank(low:cuda()):cpu():totable(), {2, 2, 2})
    check_eq(L.matrix_rank(low:cuda(), {atol = 1e6, rtol = 0}):cpu():totable(), {0, 0, 0})
    local s = SPD({4, 4}, dt)
    same(L.pinv(s:cuda(), {hermitian = true}), L.pinv(s, {hermitian = true}), dt, "pinv hermitian")
    check_eq(L.matrix_rank(s:cuda(), {hermitian = true}):cpu():item(), 4)
    local a, b = torch.randn(2, 6, 3, {dtype = f64}):to(dt), torch.randn(2, 6, 2, {dtype = f64}):to(dt)
    for _, driver in ipairs{"gelsy", "gelsd"} do
      local x, res, rank, sv = L.lstsq(a:cuda(), b:cuda(), {driver = driver})
      local xc, resc, rankc, svc = L.lstsq(a, b, {driver = driver})
      same(x, xc, dt, "lstsq solution " .. driver)
      check_eq(res.shape, resc.shape)
      if resc:numel() > 0 then same(res, resc, dt, "lstsq residuals") end
      check_eq(rank:cpu():totable(), rankc:totable())
      check_eq(sv.shape, svc.shape)
      if svc:numel() > 0 then same(sv, svc, dt, "lstsq singular values") end
    end
  end
end)

test("vector, matrix and default norms match the CPU for every ord, dim and keepdim", function()
  torch.manual_seed(5)
  for _, dt in ipairs{f32, f64} do
    local x = torch.randn(3, 4, 5, {dtype = f64}):to(dt)
    x[1][2][3] = 0
    local xg = x:cuda()
    for _, ord in ipairs{2, 1, 3, 0.5, 0, math.huge, -math.huge} do
      for _, dim in ipairs{false, 1, -1, {1, 3}} do
        for _, kd in ipairs{false, true} do
          local what = ("vector_norm ord=%s dim=%s keepdim=%s"):format(ord, type(dim) == "table" and "{1,3}" or
                                                                       tostring(dim), kd)
          local d = dim or nil
          same(L.vector_norm(xg, ord, d, kd), L.vector_norm(x, ord, d, kd), dt, what)
        end
      end
    end
    same(L.vector_norm(xg:transpose(1, 3)), L.vector_norm(x:transpose(1, 3)), dt, "vector_norm strided")
    same(L.vector_norm(torch.tensor(-3, {dtype = dt}):cuda()), L.vector_norm(torch.tensor(-3, {dtype = dt})), dt,
         "vector_norm 0-dim")
    for _, ord in ipairs{"fro", "nuc", 2, -2, 1, -1, math.huge, -math.huge} do
      for _, kd in ipairs{false, true} do
        local what = ("matrix_norm ord=%s keepdim=%s"):format(ord, kd)
        same(L.matrix_norm(xg, ord, nil, kd), L.matrix_norm(x, ord, nil, kd), dt, what)
        same(L.matrix_norm(xg, ord, {1, 3}, kd), L.matrix_norm(x, ord, {1, 3}, kd), dt, what .. " dims {1,3}")
      end
    end
    same(L.norm(xg), L.norm(x), dt, "linalg.norm")
    same(L.norm(xg:select(1, 1)), L.norm(x:select(1, 1)), dt, "linalg.norm of a matrix")
  end
end)

test("cross, kron, einsum, diag, diag_embed, tril and triu match the CPU", function()
  torch.manual_seed(6)
  for _, dt in ipairs{f32, f64} do
    local a, b = torch.randn(4, 3, {dtype = dt}), torch.randn(4, 3, {dtype = dt})
    same(L.cross(a:cuda(), b:cuda()), L.cross(a, b), dt, "linalg.cross")
    same(torch.cross(a:cuda(), b:cuda()), torch.cross(a, b), dt, "torch.cross")
    same(L.cross(a:t():cuda(), b:t():cuda(), 1), L.cross(a:t(), b:t(), 1), dt, "cross dim 1")
    local p, q = torch.randn(2, 3, {dtype = dt}), torch.randn(3, 2, {dtype = dt})
    same(torch.kron(p:cuda(), q:cuda()), torch.kron(p, q), dt, "kron")
    local m = torch.randn(5, 5, {dtype = dt})
    same(torch.diag(m:cuda()), torch.diag(m), dt, "diag of a matrix")
    same(torch.diag(m[1]:cuda(), 1), torch.diag(m[1], 1), dt, "diag of a vector")
    same(torch.diag_embed(m:cuda()), torch.diag_embed(m), dt, "diag_embed")
    same(torch.tril(m:cuda(), -1), torch.tril(m, -1), dt, "tril")
    same(torch.triu(m:cuda(), 1), torch.triu(m, 1), dt, "triu")
  end
  local A, B, C = torch.randn(3, 4, {dtype = f64}), torch.randn(4, 5, {dtype = f64}), torch.randn(5, 2, {dtype = f64})
  local S, V = torch.randn(4, 4, {dtype = f64}), torch.randn(4, {dtype = f64})
  local X, Y = torch.randn(2, 3, 4, {dtype = f64}), torch.randn(2, 4, 5, {dtype = f64})
  local T3 = torch.randn(4, 4, 5, {dtype = f64})
  local cases = {
    {"ij,jk->ik", A, B}, {"ij,jk,kl->il", A, B, C}, {"bij,bjk->bik", X, Y}, {"...ij,...jk->...ik", X, Y},
    {"ii->i", S}, {"ii", S}, {"ij->ji", A}, {"ij->", A}, {"i,i->", V, V}, {"i,j->ij", V, V}, {"iij,jk->ik", T3, C},
    {"bij->bj", X}, {"ij,ij->ij", A, A}, {"bn,anm,bm->ba", torch.randn(2, 3, {dtype = f64}),
                                           torch.randn(4, 3, 5, {dtype = f64}), torch.randn(2, 5, {dtype = f64})},
  }
  for _, c in ipairs(cases) do
    local ops, gops = {}, {}
    for i = 2, #c do
      ops[#ops + 1] = c[i]
      gops[#gops + 1] = c[i]:cuda()
    end
    same(torch.einsum(c[1], table.unpack(gops)), torch.einsum(c[1], table.unpack(ops)), f64, "einsum " .. c[1])
    same(torch.einsum(c[1], gops), torch.einsum(c[1], ops), f64, "einsum (table) " .. c[1])
  end
  local f = torch.randn(3, 4):cuda()
  check(torch.einsum("ij,jk->ik", f, f:t()).dtype == f32)
end)

test("integer products (a kernel, not cuBLAS), vdot, addbmm and the in-place addmm_ family match the CPU", function()
  torch.manual_seed(9)
  for _, dt in ipairs{torch.int64, torch.int32, torch.int16, torch.uint8} do
    local a, b = torch.randint(0, 7, {2, 1, 3, 4}):to(dt), torch.randint(0, 7, {3, 4, 5}):to(dt)
    local y = torch.matmul(a:cuda(), b:cuda())
    check(y.is_cuda)
    check_eq(y.dtype, dt)
    check_eq(y:cpu():totable(), torch.matmul(a, b):totable(), "matmul " .. tostring(dt))
    local m = torch.randint(0, 5, {4, 3}):to(dt)
    check_eq(torch.mm(m:t():cuda(), m:cuda()):cpu():totable(), torch.mm(m:t(), m):totable(), "mm transposed")
    check_eq(torch.mv(m:cuda(), m[1]:cuda()):cpu():totable(), torch.mv(m, m[1]):totable(), "mv")
  end
  local big = torch.full({2, 2}, 2 ^ 40, {dtype = torch.int64})
  check_eq(torch.mm(big:cuda(), big:cuda()):cpu():totable(), torch.mm(big, big):totable(), "int64 wraps as on the CPU")
  local i, p, q = torch.randint(0, 9, {3, 5}), torch.randint(0, 9, {3, 4}), torch.randint(0, 9, {4, 5})
  check_eq(torch.addmm(i:cuda(), p:cuda(), q:cuda(), {beta = 2, alpha = 3}):cpu():totable(),
           torch.addmm(i, p, q, {beta = 2, alpha = 3}):totable(), "integer addmm")
  check_eq(torch.mm(torch.full({1, 1}, 2):cuda(), torch.full({1, 1}, 3):cuda()):cpu():totable(), {{6}})
  check_error(function() return torch.mm(torch.ones(2, 2, {dtype = torch.bool}):cuda(), torch.ones(2, 2, {dtype = torch.bool}):cuda()) end, "bool")
  for _, dt in ipairs{f32, f64} do
    local v, w = torch.randn(7, {dtype = dt}), torch.randn(7, {dtype = dt})
    same(torch.vdot(v:cuda(), w:cuda()), torch.vdot(v, w), dt, "vdot")
    local x, b1, b2 = torch.randn(3, 5, {dtype = dt}), torch.randn(4, 3, 2, {dtype = dt}), torch.randn(4, 2, 5, {dtype = dt})
    same(torch.addbmm(x:cuda(), b1:cuda(), b2:cuda(), {beta = 0.5, alpha = 2}),
         torch.addbmm(x, b1, b2, {beta = 0.5, alpha = 2}), dt, "addbmm")
    local xg = x:cuda()
    local r = xg:addmm_(b1[1]:cuda(), b2[1]:cuda(), {beta = 0.5, alpha = 2})
    check(rawequal(r, xg), "addmm_ returns self")
    same(xg, x:clone():addmm_(b1[1], b2[1], {beta = 0.5, alpha = 2}), dt, "addmm_")
    local vv = torch.randn(3, {dtype = dt})
    local vg = vv:cuda()
    local u2 = torch.randn(2, {dtype = dt})
    vg:addmv_(b1[1]:cuda(), u2:cuda())
    same(vg, vv:clone():addmv_(b1[1], u2), dt, "addmv_")
    local bb = torch.randn(4, 3, 5, {dtype = dt})
    local bg = bb:cuda()
    bg:baddbmm_(b1:cuda(), b2:cuda(), {alpha = 0.5})
    same(bg, bb:clone():baddbmm_(b1, b2, {alpha = 0.5}), dt, "baddbmm_")
    local ag = x:cuda()
    ag:addbmm_(b1:cuda(), b2:cuda())
    same(ag, x:clone():addbmm_(b1, b2), dt, "addbmm_")
  end
end)

test("empty matrices on CUDA give the CPU's results", function()
  for _, shape in ipairs{{0, 0}, {3, 0, 0}, {0, 3, 3}} do
    local a = torch.randn(shape, {dtype = f64})
    local ag = a:cuda()
    same(L.inv(ag), L.inv(a), f64, "inv empty")
    same(L.det(ag), L.det(a), f64, "det empty")
    local w, v = L.eigh(ag)
    local wc, vc = L.eigh(a)
    same(w, wc, f64, "eigh values empty")
    same(v, vc, f64, "eigh vectors empty")
    same(L.cholesky(ag), L.cholesky(a), f64, "cholesky empty")
  end
  for _, shape in ipairs{{0, 3}, {3, 0}, {2, 0, 4}} do
    local a = torch.randn(shape, {dtype = f64})
    local ag = a:cuda()
    local u, s, vh = L.svd(ag)
    local uc, sc, vhc = L.svd(a)
    same(u, uc, f64, "svd U empty")
    same(s, sc, f64, "svd S empty")
    same(vh, vhc, f64, "svd Vh empty")
    local q, r = L.qr(ag, "complete")
    local qc, rc = L.qr(a, "complete")
    same(q, qc, f64, "qr Q empty")
    same(r, rc, f64, "qr R empty")
    check_eq(L.matrix_rank(ag):cpu():totable(), L.matrix_rank(a):totable())
  end
end)

-- gradients of sum(f(inputs) * w) on CUDA against the CPU's (float64)
local function sym(x) return (x + x:transpose(-2, -1)) * 0.5 end
local grad_cases = {
  {"det", L.det, function() return {W({4, 4})} end},
  {"det batched", L.det, function() return {W({3, 3, 3})} end},
  {"det singular", L.det, function() -- two equal rows: LU gives an exact zero pivot on both devices
    local x = torch.randn(3, 3, {dtype = f64})
    x[2]:copy_(x[1])
    return {x}
  end},
  {"slogdet", function(a) return select(2, L.slogdet(a)) end, function() return {W({2, 4, 4})} end},
  {"inv", L.inv, function() return {W({2, 4, 4})} end},
  {"solve", L.solve, function() return {W({2, 4, 4}), torch.randn(2, 4, 3, {dtype = f64})} end},
  {"solve right", function(a, b) return L.solve(a, b, {left = false}) end,
   function() return {W({4, 4}), torch.randn(3, 4, {dtype = f64})} end},
  {"cholesky", function(a) return L.cholesky(sym(a)) end, function() return {SPD({2, 4, 4})} end},
  {"cholesky upper", function(a) return L.cholesky(sym(a), {upper = true}) end, function() return {SPD({4, 4})} end},
  {"qr r", function(a) return select(2, L.qr(a)) end, function() return {torch.randn(5, 3, {dtype = f64})} end},
  {"qr q*q wide", function(a)
    local q = L.qr(a)
    return q * q
  end, function() return {torch.randn(3, 5, {dtype = f64})} end},
  {"svdvals", L.svdvals, function() return {torch.randn(2, 5, 3, {dtype = f64})} end},
  {"svd u*u", function(a)
    local u = L.svd(a, false)
    return u * u
  end, function() return {torch.randn(5, 3, {dtype = f64})} end},
  {"svd vh*vh", function(a)
    local _, _, vh = L.svd(a, false)
    return vh * vh
  end, function() return {torch.randn(3, 5, {dtype = f64})} end},
  {"eigvalsh", function(a) return L.eigvalsh(sym(a)) end, function() return {torch.randn(2, 4, 4, {dtype = f64})} end},
  {"eigh vectors", function(a)
    local _, v = L.eigh(sym(a))
    return v * v
  end, function() return {torch.randn(4, 4, {dtype = f64})} end},
  {"pinv", L.pinv, function() return {torch.randn(5, 3, {dtype = f64})} end},
  {"matrix_norm nuc", function(a) return L.matrix_norm(a, "nuc") end, function() return {torch.randn(4, 3, {dtype = f64})} end},
  {"matrix_norm 2", function(a) return L.matrix_norm(a, 2) end, function() return {torch.randn(4, 3, {dtype = f64})} end},
  {"matrix_norm inf", function(a) return L.matrix_norm(a, math.huge) end,
   function() return {torch.randn(4, 3, {dtype = f64})} end},
  {"vector_norm 3", function(a) return L.vector_norm(a, 3, 2) end, function() return {torch.randn(4, 3, {dtype = f64})} end},
  {"vector_norm 2 with a zero row", function(a) return L.vector_norm(a, 2, 2) end,
   function()
     local x = torch.randn(4, 3, {dtype = f64})
     x[2]:zero_()
     return {x}
   end},
  {"cross", function(a, b) return L.cross(a, b) end,
   function() return {torch.randn(4, 3, {dtype = f64}), torch.randn(4, 3, {dtype = f64})} end},
  {"kron", torch.kron, function() return {torch.randn(2, 3, {dtype = f64}), torch.randn(3, 2, {dtype = f64})} end},
  {"einsum trace", function(a) return torch.einsum("ii", a) end, function() return {torch.randn(4, 4, {dtype = f64})} end},
  {"einsum repeated", function(a, b) return torch.einsum("iij,jk->ik", a, b) end,
   function() return {torch.randn(3, 3, 4, {dtype = f64}), torch.randn(4, 2, {dtype = f64})} end},
  {"einsum three", function(a, b, c) return torch.einsum("ij,jk,kl->il", a, b, c) end,
   function()
     return {torch.randn(2, 3, {dtype = f64}), torch.randn(3, 4, {dtype = f64}), torch.randn(4, 2, {dtype = f64})}
   end},
}

test("gradients on CUDA equal the CPU's (det, inv, solve, cholesky, qr, svd, eigh, pinv, norms, einsum)", function()
  torch.manual_seed(7)
  for _, c in ipairs(grad_cases) do
    local name, fn, make = c[1], c[2], c[3]
    local inputs = make()
    local cpu, gpu = {}, {}
    for i, x in ipairs(inputs) do
      cpu[i] = x:clone():requires_grad_()
      gpu[i] = x:cuda():requires_grad_()
    end
    local yc = fn(table.unpack(cpu))
    local w = torch.randn(yc.shape, {dtype = f64})
    local gc = torch.autograd.grad((yc * w):sum(), cpu)
    local yg = fn(table.unpack(gpu))
    check(yg.is_cuda, name .. ": output on cuda")
    local gg = torch.autograd.grad((yg * w:cuda()):sum(), gpu)
    for i = 1, #cpu do
      check(gg[i].is_cuda, name .. ": gradient on cuda")
      check_close(gg[i]:cpu(), gc[i], {atol = 1e-7, rtol = 1e-6})
    end
  end
end)

test("second derivatives of inv and det through create_graph on CUDA equal the CPU's", function()
  torch.manual_seed(8)
  for _, fn in ipairs{L.inv, L.det} do
    local a = W({3, 3})
    local res = {}
    for _, dev in ipairs{"cpu", "cuda"} do
      local x = a:to(dev):requires_grad_()
      local y = fn(x)
      local w = torch.ones(y.shape, {dtype = f64}):to(dev)
      local g = torch.autograd.grad((y * w):sum(), {x}, {create_graph = true})[1]
      local gg = torch.autograd.grad((g * g):sum(), {x})[1]
      res[dev] = gg:cpu()
    end
    check_close(res.cuda, res.cpu, {atol = 1e-7, rtol = 1e-6})
  end
end)
