-- scripts/demo.lua -- a short tour of the moontorch engine from Lua: creation,
-- broadcasting arithmetic and type promotion, views and indexing, reductions,
-- matrix products and linear algebra, random numbers, errors, and speed.
-- Run: build/moontorch scripts/demo.lua
local torch = require "torch"

local function section(title) print(("\n== %s =="):format(title)) end

section("creation")
local x = torch.arange(1, 7):float():view(2, 3)
print("x = torch.arange(1, 7):float():view(2, 3)\n" .. tostring(x))
print("x.shape =", x.shape, " x.dtype =", x.dtype)
print("torch.linspace(0, 1, 5) =", torch.linspace(0, 1, 5))
print("torch.eye(3, {dtype=torch.int32}) =\n" .. tostring(torch.eye(3, {dtype = torch.int32})))

section("broadcasting and type promotion")
local row = torch.tensor({10, 20, 30})
print("x + row =\n" .. tostring(x + row))
print("int32 tensor + 2.5 has dtype", (torch.tensor({1, 2}, {dtype = torch.int32}) + 2.5).dtype)
print("sigmoid(x) =\n" .. tostring(x:sigmoid()))

section("views and 1-based indexing")
print("x[2] =", x[2])
print("x[{2, {1, 2}}] =", x[{2, {1, 2}}])
print("x.T is a view, contiguous:", x.T:is_contiguous())
local y = x:clone()
y[{{}, 2}] = 0
print("after y[{{}, 2}] = 0, y =\n" .. tostring(y))
print("x[x:gt(3)] =", x[x:gt(3)])

section("reductions")
print("x:sum() =", x:sum(), " x:sum(2) =", x:sum(2))
print("x:mean{dim=1, keepdim=true} =", x:mean{dim = 1, keepdim = true})
local vals, idx = x:max(2)
print("x:max(2) =", vals, idx)
print("torch.softmax(x, 2) =\n" .. tostring(torch.softmax(x, 2)))
print("torch.sort(torch.tensor({3, 1, 2})) =", torch.sort(torch.tensor({3, 1, 2})))

section("matrix products and linear algebra")
print("x:matmul(x.T) =\n" .. tostring(x:matmul(x.T)))
local a = torch.tensor({{4.0, 1.0}, {1.0, 3.0}}, {dtype = torch.float64})
print("linalg.inv(a) =\n" .. tostring(torch.linalg.inv(a)))
print("linalg.eigh(a) eigenvalues =", (torch.linalg.eigh(a)))
print("einsum('ij,ij->i', x, x) =", torch.einsum("ij,ij->i", x, x))

section("random numbers (seeded, same on any thread count)")
torch.manual_seed(0)
print("torch.randn(4) =", torch.randn(4))
print("torch.randperm(6) =", torch.randperm(6))

section("errors are Lua errors; the session goes on")
for _, f in ipairs({
  function() return x + torch.ones(4) end,
  function() return torch.ones(3, 4):matmul(torch.ones(3, 4)) end,
  function() return x[5] end,
  function() return torch.empty(1e9, 1e9) end,
}) do
  local _, err = pcall(f)
  print("  " .. tostring(err))
end
print("x is still usable: x:sum() =", x:sum())

section("speed")
local p, q = torch.ones(16), torch.ones(16)
local n, t0 = 300000, torch.time()
for _ = 1, n do local _ = p + q end
print(("16-float add: %.0f ns per op (PyTorch 1.13 takes about 1-3 us here)"):format((torch.time() - t0) / n * 1e9))
local m1, m2 = torch.randn(1024, 1024), torch.randn(1024, 1024)
m1:matmul(m2)
t0 = torch.time()
for _ = 1, 5 do m1:matmul(m2) end
print(("1024x1024 float32 matmul: %.1f GFLOP/s"):format(5 * 2 * 1024 ^ 3 / (torch.time() - t0) / 1e9))
