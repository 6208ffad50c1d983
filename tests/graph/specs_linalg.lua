-- tests/graph/specs_linalg.lua -- gradcheck cases for matrix products and
-- torch.linalg (see test_gradcheck.lua). Inputs are well conditioned:
-- A + n I for inverses and solves, X X^T + I for Cholesky, symmetric
-- matrices with distinct eigenvalues for eigh; decompositions whose
-- vectors are only defined up to sign are checked through sign-invariant
-- functions of them (U * U, V * V, U diag(S) Vh).
local G = require "gradlib"
local R, NC, F, D = G.R, G.NC, G.F, G.D

local f64 = {dtype = torch.float64}
local function leaf(t) return t:detach():requires_grad_() end
local function eye(n) return torch.eye(n, f64) end
-- a well-conditioned square matrix (or batch): R + n I
local function W(...)
  local s = {...}
  local n = s[#s]
  return leaf(torch.randn(s, f64) + eye(n) * n)
end
-- as W, but not contiguous
local function WNC(n) return leaf(W(n):detach():t()) end
-- a symmetric matrix with distinct eigenvalues (spread apart)
local function SYM(n)
  local q = torch.linalg.qr(torch.randn(n, n, f64))
  local w = torch.arange(1, n + 1, f64) * 1.5 + torch.rand(n, f64) * 0.5
  return leaf(q:matmul(torch.diag(w)):matmul(q:t()))
end
local function sym(x) return (x + x:transpose(-2, -1)) * 0.5 end

local mm = function(a, b) return a:matmul(b) end

return {
  matmul = {
    {fn = mm, inputs = function() return {R(2, 3), R(3, 4)} end, second_order = true},
    {fn = mm, inputs = function() return {R(3), R(3, 2)} end, second_order = true},
    {fn = mm, inputs = function() return {R(2, 3), R(3)} end},
    {fn = mm, inputs = function() return {R(3), R(3)} end},
    {fn = mm, inputs = function() return {R(2, 2, 3), R(3, 2)} end, second_order = true},
    {fn = mm, inputs = function() return {NC(2, 3), R(1, 3, 2)} end},
  },
  mm = {
    {fn = torch.mm, inputs = function() return {R(2, 3), R(3, 4)} end, second_order = true},
    {fn = torch.mm, inputs = function() return {NC(3, 2), NC(2, 4)} end},
  },
  bmm = {
    {fn = torch.bmm, inputs = function() return {R(2, 2, 3), R(2, 3, 2)} end, second_order = true},
  },
  mv = {
    {fn = torch.mv, inputs = function() return {R(2, 3), R(3)} end, second_order = true},
    {fn = torch.mv, inputs = function() return {NC(3, 2), R(2)} end},
  },
  dot = {
    {fn = torch.dot, inputs = function() return {R(4), R(4)} end, second_order = true},
    {fn = torch.vdot, inputs = function() return {R(3), R(3)} end},
  },
  inner = {
    {fn = torch.inner, inputs = function() return {R(2, 3), R(4, 3)} end, second_order = true},
    {fn = torch.inner, inputs = function() return {R(3), R(2, 2, 3)} end},
    {fn = torch.inner, inputs = function() return {R(3), R(3)} end},
  },
  outer = {
    {fn = torch.outer, inputs = function() return {R(3), R(4)} end, second_order = true},
  },
  kron = {
    {fn = torch.kron, inputs = function() return {R(2, 3), R(2, 2)} end, second_order = true},
    {fn = torch.kron, inputs = function() return {R(2), R(2, 3)} end},
    {fn = torch.kron, inputs = function() return {R(2, 1, 2), NC(2, 3)} end},
  },
  addmm = {
    {fn = function(x, a, b) return torch.addmm(x, a, b, {beta = 0.5, alpha = 2}) end,
     inputs = function() return {R(2, 4), R(2, 3), R(3, 4)} end, second_order = true},
    {fn = function(x, a, b) return torch.addmm(x, a, b) end, inputs = function() return {R(4), R(2, 3), NC(3, 4)} end},
    {fn = function(x, a, b) -- in place on a non-leaf
      local y = x * 1
      y:addmm_(a, b, {alpha = -1.5})
      return y
    end, inputs = function() return {R(2, 4), R(2, 3), R(3, 4)} end},
  },
  addmv = {
    {fn = function(x, a, v) return torch.addmv(x, a, v, {beta = 2, alpha = 0.5}) end,
     inputs = function() return {R(2), R(2, 3), R(3)} end, second_order = true},
    {fn = function(x, a, v) return torch.addmv(x, a, v) end, inputs = function() return {R(1), NC(2, 3), R(3)} end},
  },
  baddbmm = {
    {fn = function(x, a, b) return torch.baddbmm(x, a, b, {beta = -1, alpha = 3}) end,
     inputs = function() return {R(2, 2, 4), R(2, 2, 3), R(2, 3, 4)} end, second_order = true},
    {fn = function(x, a, b) return torch.baddbmm(x, a, b) end, inputs = function() return {R(2, 4), R(3, 2, 3), R(3, 3, 4)} end},
  },
  addbmm = {
    {fn = function(x, a, b) return torch.addbmm(x, a, b, {beta = 0.5, alpha = 2}) end,
     inputs = function() return {R(2, 4), R(3, 2, 3), R(3, 3, 4)} end, second_order = true},
  },
  einsum = {
    {fn = function(a, b) return torch.einsum("ij,jk->ik", a, b) end, inputs = function() return {R(2, 3), R(3, 4)} end,
     second_order = true},
    {fn = function(a) return torch.einsum("ii->i", a) end, inputs = function() return {R(3, 3)} end, second_order = true},
    {fn = function(a) return torch.einsum("ii", a) end, inputs = function() return {R(3, 3)} end},
    {fn = function(a) return torch.einsum("ij->ji", a) end, inputs = function() return {NC(2, 3)} end},
    {fn = function(a) return torch.einsum("ijk->i", a) end, inputs = function() return {R(2, 3, 2)} end},
    {fn = function(a, b) return torch.einsum("bij,bjk->bik", a, b) end, inputs = function() return {R(2, 2, 3), R(2, 3, 2)} end},
    {fn = function(a, b) return torch.einsum("...ij,...jk->...ik", a, b) end,
     inputs = function() return {R(2, 1, 2, 3), R(3, 3, 2)} end, second_order = true},
    {fn = function(a, b) return torch.einsum("i...,i...->...", a, b) end, inputs = function() return {R(3, 2), R(3, 1)} end},
    {fn = function(a, b) return torch.einsum("i,i->", a, b) end, inputs = function() return {R(4), R(4)} end},
    {fn = function(a, b) return torch.einsum("i,j->ij", a, b) end, inputs = function() return {R(3), R(2)} end},
    {fn = function(a, b) return torch.einsum("ij,jk", a, b) end, inputs = function() return {R(2, 3), R(3, 2)} end},
    {fn = function(a, b) return torch.einsum("iij,jk->ik", a, b) end, inputs = function() return {R(3, 3, 2), R(2, 4)} end},
    {fn = function(a, b) return torch.einsum("ij,ij->ij", a, b) end, inputs = function() return {R(1, 3), R(2, 3)} end},
    {fn = function(a, b, c) return torch.einsum("ij,jk,kl->il", a, b, c) end,
     inputs = function() return {R(2, 3), R(3, 2), R(2, 4)} end, second_order = true},
    {fn = function(a, b, c) return torch.einsum("bi,bj,bk->ijk", {a, b, c}) end,
     inputs = function() return {R(3, 2), R(3, 2), R(3, 3)} end},
    {fn = function(a, b) return torch.einsum("ii,i->i", a, b) end, inputs = function() return {R(3, 3), R(3)} end},
  },
  linalg_inv = {
    {fn = torch.linalg.inv, inputs = function() return {W(3, 3)} end, second_order = true},
    {fn = torch.linalg.inv, inputs = function() return {W(2, 3, 3)} end},
    {fn = torch.inverse, inputs = function() return {WNC(3)} end},
  },
  linalg_det = {
    {fn = torch.linalg.det, inputs = function() return {W(3, 3)} end, second_order = true},
    {fn = torch.linalg.det, inputs = function() return {W(2, 3, 3)} end, second_order = true},
    {fn = torch.det, inputs = function() return {R(4, 4)} end},
    -- singular: rank 2 of 3 (the cofactors come from the SVD)
    {fn = torch.linalg.det, inputs = function() return {leaf(torch.randn(3, 2, f64):matmul(torch.randn(2, 3, f64)))} end},
    -- a batch mixing a singular and a regular matrix
    {fn = torch.linalg.det, inputs = function()
      local s = torch.randn(3, 2, f64):matmul(torch.randn(2, 3, f64))
      return {leaf(torch.stack({s, W(3, 3):detach()}))}
    end},
  },
  linalg_slogdet = {
    {fn = function(a) local _, l = torch.linalg.slogdet(a); return l end, inputs = function() return {W(3, 3)} end,
     second_order = true},
    {fn = function(a) local _, l = torch.linalg.slogdet(a); return l end,
     inputs = function() return {leaf(-W(2, 3, 3):detach())} end},
    {fn = torch.logdet, inputs = function() return {leaf(W(3, 3):detach():matmul(W(3, 3):detach():t()))} end},
  },
  linalg_solve = {
    {fn = torch.linalg.solve, inputs = function() return {W(3, 3), R(3, 2)} end, second_order = true},
    {fn = torch.linalg.solve, inputs = function() return {W(3, 3), R(3)} end},
    {fn = torch.linalg.solve, inputs = function() return {W(2, 3, 3), R(3, 2)} end},
    {fn = torch.linalg.solve, inputs = function() return {W(2, 3, 3), R(2, 3)} end},
    {fn = function(a, b) return torch.linalg.solve(a, b, {left = false}) end,
     inputs = function() return {WNC(3), R(2, 3)} end},
    {fn = function(a, b) return torch.linalg.solve(a, b, {left = false}) end,
     inputs = function() return {W(2, 3, 3), R(2, 3)} end},
  },
  linalg_cholesky = {
    {fn = function(x) return torch.linalg.cholesky(x:matmul(x:t()) + eye(3)) end, inputs = function() return {R(3, 3)} end,
     second_order = true},
    {fn = function(x) return torch.linalg.cholesky(x:matmul(x:t()) + eye(3), {upper = true}) end,
     inputs = function() return {R(3, 3)} end},
    {fn = function(x) return torch.linalg.cholesky(x:matmul(x:transpose(2, 3)) + eye(3)) end,
     inputs = function() return {R(2, 3, 3)} end},
  },
  linalg_qr = {
    {fn = function(a) local q, r = torch.linalg.qr(a); return {q, r} end, inputs = function() return {R(4, 3)} end,
     second_order = true},
    {fn = function(a) local q, r = torch.linalg.qr(a); return {q, r} end, inputs = function() return {W(3, 3)} end},
    {fn = function(a) local q, r = torch.linalg.qr(a); return {q, r} end, inputs = function() return {R(2, 4)} end},
    {fn = function(a) local q, r = torch.linalg.qr(a, "complete"); return {q, r} end,
     inputs = function() return {R(2, 3)} end},
    {fn = function(a) local q, r = torch.linalg.qr(a); return {q, r} end, inputs = function() return {R(2, 4, 2)} end},
    {fn = function(a) return (torch.linalg.qr(a)) end, inputs = function() return {NC(3, 3)} end},
  },
  linalg_svd = {
    {fn = function(a) local u, s, vh = torch.linalg.svd(a, false); return {s, u * u, vh * vh} end,
     inputs = function() return {R(4, 3)} end},
    {fn = function(a) local u, s, vh = torch.linalg.svd(a, false); return {s, u * u, vh * vh} end,
     inputs = function() return {R(3, 5)} end},
    {fn = function(a) local u, s, vh = torch.linalg.svd(a); return {u * u, (u * s:unsqueeze(-2)):matmul(vh) * 1} end,
     inputs = function() return {R(3, 3)} end, second_order = true},
    {fn = function(a) local u, s, vh = torch.linalg.svd(a, false); return (u * s:sqrt():unsqueeze(-2)):matmul(vh) end,
     inputs = function() return {R(2, 3, 2)} end},
    {fn = function(a) local u, s, vh = torch.linalg.svd(a, true); return {s, u:narrow(2, 1, 2) * u:narrow(2, 1, 2)} end,
     inputs = function() return {R(4, 2)} end},
    {fn = torch.linalg.svdvals, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = torch.linalg.svdvals, inputs = function() return {NC(2, 3, 3)} end},
  },
  linalg_eigh = {
    {fn = function(a) local w, v = torch.linalg.eigh(sym(a)); return {w, v * v} end, inputs = function() return {SYM(3)} end,
     second_order = true},
    {fn = function(a) local w, v = torch.linalg.eigh(sym(a), "U"); return {w, v * v} end,
     inputs = function() return {SYM(4)} end},
    {fn = function(a) return torch.linalg.eigvalsh(sym(a)) end, inputs = function() return {SYM(3)} end, second_order = true},
    {fn = function(a) local w, v = torch.linalg.eigh(sym(a)); return (v * w:exp():unsqueeze(1)):matmul(v:t()) end,
     inputs = function() return {leaf(SYM(3):detach() * 0.3)} end},
    {fn = function(a) local w, v = torch.linalg.eigh(sym(a)); return {w, v * v} end,
     inputs = function() return {leaf(torch.stack({SYM(3):detach(), SYM(3):detach()}))} end},
  },
  linalg_lstsq = {
    {fn = function(a, b) return (torch.linalg.lstsq(a, b)) end, inputs = function() return {R(4, 3), R(4, 2)} end,
     second_order = true},
    {fn = function(a, b) return (torch.linalg.lstsq(a, b)) end, inputs = function() return {R(4, 3), R(4)} end},
    {fn = function(a, b) return (torch.linalg.lstsq(a, b, {driver = "gelsd"})) end,
     inputs = function() return {R(2, 4, 2), R(2, 4, 3)} end},
    {fn = function(a, b) return (torch.linalg.lstsq(a, b)) end, inputs = function() return {W(3, 3), R(3, 2)} end},
  },
  linalg_pinv = {
    {fn = torch.linalg.pinv, inputs = function() return {R(4, 3)} end, second_order = true},
    {fn = torch.linalg.pinv, inputs = function() return {R(2, 5)} end},
    {fn = torch.linalg.pinv, inputs = function() return {R(2, 3, 2)} end},
    {fn = function(a) return torch.linalg.pinv(sym(a), {hermitian = true}) end, inputs = function() return {SYM(3)} end},
  },
  linalg_vector_norm = {
    {fn = function(x) return torch.linalg.vector_norm(x) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.linalg.vector_norm(x, 1, 2) end, inputs = function() return {F(3, 4)} end},
    {fn = function(x) return torch.linalg.vector_norm(x, math.huge, {1, 3}, true) end,
     inputs = function() return {D(2, 3, 2)} end},
    {fn = function(x) return torch.linalg.vector_norm(x, -math.huge, 1) end, inputs = function() return {D(3, 2)} end},
    {fn = function(x) return torch.linalg.vector_norm(x, 3, 1) end, inputs = function() return {R(3, 2)} end,
     second_order = true},
    {fn = function(x) return torch.linalg.vector_norm(x, 0.5) end, inputs = function() return {F(2, 3)} end},
    {fn = function(x) return torch.linalg.vector_norm(x, 0) end, inputs = function() return {F(2, 3)} end},
    {fn = function(x) return torch.linalg.norm(x) end, inputs = function() return {NC(2, 3)} end},
    {fn = function(x) return torch.linalg.norm(x, 4) end, inputs = function() return {R(3)} end},
  },
  linalg_matrix_norm = {
    {fn = function(x) return torch.linalg.matrix_norm(x) end, inputs = function() return {R(3, 4)} end, second_order = true},
    {fn = function(x) return torch.linalg.matrix_norm(x, "nuc") end, inputs = function() return {R(3, 4)} end,
     second_order = true},
    {fn = function(x) return torch.linalg.matrix_norm(x, 2) end, inputs = function() return {R(2, 3, 3)} end},
    {fn = function(x) return torch.linalg.matrix_norm(x, -2, {3, 1}, true) end, inputs = function() return {R(3, 2, 4)} end},
    {fn = function(x) return torch.linalg.matrix_norm(x, 1) end, inputs = function() return {F(3, 4)} end},
    {fn = function(x) return torch.linalg.matrix_norm(x, -1) end, inputs = function() return {F(2, 3, 3)} end},
    {fn = function(x) return torch.linalg.matrix_norm(x, math.huge) end, inputs = function() return {F(3, 4)} end},
    {fn = function(x) return torch.linalg.matrix_norm(x, "-inf", {2, 1}) end, inputs = function() return {F(3, 4)} end},
    {fn = function(x) return torch.linalg.norm(x, "fro", {1, 2}) end, inputs = function() return {NC(3, 2)} end},
    {fn = function(x) return torch.linalg.norm(x, "nuc") end, inputs = function() return {R(2, 3)} end},
  },
  linalg_cross = {
    {fn = torch.linalg.cross, inputs = function() return {R(3), R(3)} end, second_order = true},
    {fn = torch.linalg.cross, inputs = function() return {R(2, 3), R(3)} end},
    {fn = function(a, b) return torch.linalg.cross(a, b, 1) end, inputs = function() return {R(3, 2), NC(3, 2)} end},
    {fn = torch.cross, inputs = function() return {R(2, 3, 2), R(1, 3, 2)} end},
  },
}
