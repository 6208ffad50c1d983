-- tests/graph/gradlib.lua -- inputs for gradient checks. Every maker returns
-- a float64 leaf that requires grad, so gradcheck's finite differences are
-- accurate; the seed is fixed per call site through torch.manual_seed by
-- the caller.
local M = {}

local function shape_of(...)
  local s = {...}
  if type(s[1]) == "table" then s = s[1] end
  return s
end

local function leaf(t) return t:detach():requires_grad_() end

-- standard normal values
function M.R(...) return leaf(torch.randn(shape_of(...), {dtype = torch.float64})) end
-- positive values in [0.5, 1.5] (log, sqrt, pow bases)
function M.P(...) return leaf(torch.rand(shape_of(...), {dtype = torch.float64}) + 0.5) end
-- values in (-0.8, 0.8) (asin, acos)
function M.U(...) return leaf((torch.rand(shape_of(...), {dtype = torch.float64}) - 0.5) * 1.6) end
-- values at least 0.3 away from every integer (floor, round, fmod: no kinks)
function M.F(...)
  local t = torch.randint(-3, 3, shape_of(...)):double() + torch.rand(shape_of(...), {dtype = torch.float64}) * 0.4 + 0.3
  return leaf(t)
end
-- values spread apart (max/min/sort: no ties, gaps well above eps)
function M.D(...)
  local s = shape_of(...)
  local n = 1
  for _, v in ipairs(s) do n = n * v end
  return leaf((torch.randperm(n):double() * 0.7 - n * 0.3):view(s))
end
-- a non-contiguous leaf of the given shape made by make (the transpose of
-- a contiguous one): NCof(P, 2, 3)
function M.NCof(make, ...)
  local s = shape_of(...)
  assert(#s >= 2, "NC needs at least two dims")
  local r = {}
  for i = 1, #s do r[i] = s[i] end
  r[#s - 1], r[#s] = s[#s], s[#s - 1]
  return leaf(make(r):detach():transpose(#s - 1, #s))
end
function M.NC(...) return M.NCof(M.R, ...) end
-- a constant (no grad) tensor
function M.C(t) return t end

return M
