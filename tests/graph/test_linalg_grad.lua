-- tests/graph/test_linalg_grad.lua -- gradients of matrix products, einsum
-- and torch.linalg against PyTorch's (tests/ref/linalg_grad.lua, made by
-- gen_linalg_grad.py): each case is the gradient of sum(f(inputs) * w), or
-- with w2 the second derivative sum(grad * w2) through create_graph. Also:
-- the gradcheck cases of specs_linalg.lua really record (a case whose
-- output does not require grad would pass gradcheck vacuously), node names,
-- and the errors of the recorded forms.
local R = ref("linalg_grad")
local f64 = {dtype = torch.float64}
local function T(v) return torch.tensor(v, f64) end

local fns = {
  inv = torch.linalg.inv, inv_batched = torch.linalg.inv, inv_second = torch.linalg.inv,
  det = torch.linalg.det, det_batched = torch.linalg.det, det_second = torch.linalg.det,
  det_singular = torch.linalg.det,
  slogdet = function(a) local _, l = torch.linalg.slogdet(a); return l end,
  solve = torch.linalg.solve,
  solve_right = function(a, b) return torch.linalg.solve(a, b, {left = false}) end,
  cholesky = torch.linalg.cholesky,
  cholesky_upper = function(a) return torch.linalg.cholesky(a, {upper = true}) end,
  svdvals = torch.linalg.svdvals,
  svd_s = function(a) local _, s = torch.linalg.svd(a, false); return s end,
  svd_usv = function(a) local u = torch.linalg.svd(a, false); return u * u end,
  eigvalsh = torch.linalg.eigvalsh,
  eigh_values = function(a) return (torch.linalg.eigh(a)) end,
  eigh_vectors_sq = function(a) local _, v = torch.linalg.eigh(a); return v * v end,
  qr_r = function(a) local _, r = torch.linalg.qr(a); return r end,
  pinv = torch.linalg.pinv,
  lstsq = function(a, b) return (torch.linalg.lstsq(a, b)) end,
  matrix_norm_nuc = function(a) return torch.linalg.matrix_norm(a, "nuc") end,
  matrix_norm_2 = function(a) return torch.linalg.matrix_norm(a, 2) end,
  vector_norm_3 = function(a) return torch.linalg.vector_norm(a, 3, 2) end,
  einsum_mm = function(a, b) return torch.einsum("ij,jk->ik", a, b) end,
  einsum_diag = function(a) return torch.einsum("ii->i", a) end,
  einsum_trace = function(a) return torch.einsum("ii", a) end,
  einsum_batch = function(a, b) return torch.einsum("bij,bjk->bik", a, b) end,
  einsum_ellipsis = function(a, b) return torch.einsum("...ij,...jk->...ik", a, b) end,
  einsum_repeated = function(a, b) return torch.einsum("iij,jk->ik", a, b) end,
  einsum_three = function(a, b, c) return torch.einsum("ij,jk,kl->il", a, b, c) end,
  einsum_second = function(a, b) return torch.einsum("ij,jk->ik", a, b) ^ 2 end,
}

local names = {}
for name in pairs(R) do names[#names + 1] = name end
table.sort(names)

test("every reference case has a function here", function()
  for _, name in ipairs(names) do check(fns[name], "no function for reference case " .. name) end
end)

for _, name in ipairs(names) do
  test("gradient matches PyTorch: " .. name, function()
    local c = R[name]
    local leaves = {}
    for i, v in ipairs(c.inputs) do leaves[i] = T(v):requires_grad_() end
    local loss = (fns[name](table.unpack(leaves)) * T(c.w)):sum()
    local grads
    if c.w2 then
      local gs = torch.autograd.grad(loss, leaves, {create_graph = true})
      local loss2 = (gs[1] * T(c.w2[1])):sum()
      for i = 2, #gs do loss2 = loss2 + (gs[i] * T(c.w2[i])):sum() end
      grads = torch.autograd.grad(loss2, leaves)
    else
      grads = torch.autograd.grad(loss, leaves)
    end
    for i, g in ipairs(c.grads) do check_close(grads[i], g, {atol = 1e-8, rtol = 1e-6}) end
  end)
end

test("every gradcheck case of specs_linalg records a graph (no vacuous pass)", function()
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/graph"
  package.path = here .. "/?.lua;" .. package.path
  local specs = require "specs_linalg"
  for op, cases in pairs(specs) do
    for k, case in ipairs(cases) do
      torch.manual_seed(1000 + k)
      local r = case.fn(table.unpack(case.inputs()))
      if torch.is_tensor(r) then r = {r} end
      for i, y in ipairs(r) do check(y.requires_grad, ("%s #%d: output %d does not require grad"):format(op, k, i)) end
    end
  end
end)

test("nodes carry PyTorch's names", function()
  local a = torch.randn(3, 3, f64):requires_grad_()
  local v = torch.randn(3, f64):requires_grad_()
  check_eq(torch.linalg.det(a).grad_fn.name, "LinalgDetBackward0")
  check_eq(torch.linalg.inv(a).grad_fn.name, "LinalgInvBackward0")
  check_eq(torch.mm(a, a).grad_fn.name, "MmBackward0")
  check_eq(torch.mv(a, v).grad_fn.name, "MvBackward0")
  check_eq(torch.linalg.cross(v, v).grad_fn.name, "LinalgCrossBackward0")
  local u, s = torch.linalg.svd(a)
  check_eq(u.grad_fn.name, "LinalgSvdBackward0")
  check(u.grad_fn == s.grad_fn, "U and S share their node")
  local sign, logabs = torch.linalg.slogdet(a)
  check(not sign.requires_grad, "the sign of slogdet has no gradient")
  check(logabs.requires_grad)
end)

test("recorded linalg ops refuse out= and keep the engine's errors", function()
  local a = torch.randn(3, 3, f64):requires_grad_()
  check_error(function() return torch.linalg.inv(a, {out = torch.empty(3, 3, f64)}) end, "out=")
  check_error(function() return torch.mm(a, a, {out = torch.empty(3, 3, f64)}) end, "out=")
  check_error(function() return torch.einsum("ij,jk->ik", a, a, {out = torch.empty(3, 3, f64)}) end, "out=")
  check_error(function() return torch.mm(a, torch.randn(4, 2, f64)) end, "mm")
  check_error(function() return torch.einsum("ij,jk->ik", a, torch.randn(4, 2, f64)) end, "einsum")
  check_error(function() return torch.einsum("ij,jk->iq", a, a) end, "einsum: output subscript 'q'")
  check_error(function() return torch.einsum("ij->", a, a) end, "einsum")
  check_error(function() return torch.linalg.inv(torch.zeros(2, 2, f64):requires_grad_()) end, "singular")
  check_error(function() return torch.linalg.cholesky(-torch.eye(2, f64):requires_grad_()) end, "cholesky")
end)

test("qr: mode='r' and tall mode='complete' have no derivative", function()
  local a = torch.randn(4, 3, f64):requires_grad_()
  local _, r = torch.linalg.qr(a, "r")
  check_error(function() r:sum():backward() end, "mode='r'")
  local _, r2 = torch.linalg.qr(a, "complete")
  check_error(function() r2:sum():backward() end, "mode='complete'")
end)

test("an input changed in place after recording is caught at backward", function()
  local a = torch.randn(3, 3, f64) + torch.eye(3, f64) * 3
  local x = a:clone():requires_grad_()
  local y = x * 1
  local d = torch.linalg.det(y)
  y:add_(1)
  check_error(function() d:backward() end, "modified by an in-place operation")
end)

test("in-place addmm_ records through copy_ and refuses a leaf", function()
  local x = torch.randn(2, 4, f64):requires_grad_()
  local m1, m2 = torch.randn(2, 3, f64):requires_grad_(), torch.randn(3, 4, f64)
  check_error(function() x:addmm_(m1, m2) end, "leaf")
  local y = x * 2
  y:addmm_(m1, m2, {beta = 0.5})
  y:sum():backward()
  check_close(x.grad, torch.ones(2, 4, f64))
  check_close(m1.grad, torch.ones(2, 4, f64):matmul(m2:t()))
end)

test("no_grad: nothing is recorded", function()
  local a = torch.randn(3, 3, f64):requires_grad_()
  local g <close> = torch.no_grad()
  check(not torch.linalg.inv(a).requires_grad)
  check(not torch.einsum("ij,jk->ik", a, a).requires_grad)
  local u = torch.linalg.svd(a)
  check(not u.requires_grad)
end)
