-- scripts/demo.lua -- a short tour of the moontorch engine from Lua: creation,
-- broadcasting arithmetic, type promotion, views, reductions, matrix
-- products and errors. Run: build/moontorch scripts/demo.lua
local torch = require "torch"

local function section(title) print(("\n== %s =="):format(title)) end
local function has(name) return torch[name] ~= nil end

section("creation")
local x = torch.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = torch.float32})
print("x =", x)
print("x.shape =", x.shape, " x.dtype =", x.dtype)
print("zeros(2, 2, int32) =", torch.zeros(2, 2, {dtype = torch.int32}))

section("broadcasting and promotion")
local row = torch.tensor({10, 20, 30})
print("x + row =", x + row)
print("int32 + 2.5 ->", (torch.tensor({1, 2}, {dtype = torch.int32}) + 2.5).dtype)
print("sigmoid(x) =", x:sigmoid())

section("views share storage")
local t = x.T
print("x.T =", t, "contiguous:", t:is_contiguous())
if has("narrow") then
  local col = x:narrow(2, 2, 1)
  col:fill_(0)
  print("after x:narrow(2, 2, 1):fill_(0), x =", x)
end

if has("sum") then
  section("reductions")
  print("x:sum() =", x:sum(), " x:sum(2) =", x:sum(2), " x:mean{dim=1, keepdim=true} =", x:mean{dim = 1, keepdim = true})
  print("softmax over rows =", torch.softmax(x, 2))
end

if has("matmul") then
  section("matrix product")
  local a = torch.arange and torch.arange(1, 7):float():view(2, 3) or x
  print("a:matmul(a.T) =", a:matmul(a.T))
end

if has("randn") then
  section("random numbers (seeded)")
  torch.manual_seed(0)
  print("randn(3) =", torch.randn(3))
end

section("errors are Lua errors, the session goes on")
local ok, err = pcall(function() return x + torch.ones(4) end)
print("x + ones(4) ->", err)
ok, err = pcall(function() return torch.empty(1e9, 1e9) end)
print("empty(1e9, 1e9) ->", err)
print("x is still usable:", x:float():sum and x:sum() or x)

section("speed")
local a, b = torch.ones(16), torch.ones(16)
local n, t0 = 200000, torch.time()
for _ = 1, n do local _ = a + b end
print(("16-float add: %.0f ns per op"):format((torch.time() - t0) / n * 1e9))
