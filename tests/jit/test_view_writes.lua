-- tests/jit/test_view_writes.lua -- in-place writes through views under
-- torch.compile (jit/ir.c, write_through): a write into a view of a tensor
-- made in the graph, or of an input, reaches the base through any chain of
-- views; what the JIT cannot follow runs eagerly, never replays wrongly.
-- Compiled results against eager ones, CPU.
local torch = require "torch"
local F = require "torch.nn.functional"

local TOL = {atol = 1e-6, rtol = 1e-6}

-- fn compiled agrees with fn eagerly over three calls on fresh inputs
-- (capture, then two replays); replayed says whether the later calls ran
-- compiled (true) or declined to eager (false)
local function same(fn, mk, replayed)
  torch.compiler.reset()
  local c = torch.compile(fn)
  for call = 1, 3 do
    local args = mk()
    local want = {fn(table.unpack(args))}
    local got = {c(table.unpack(args))}
    check_eq(#got, #want)
    for i = 1, #want do check_close(got[i], want[i], TOL) end
  end
  local s = torch.compiler.stats()
  if replayed then
    check_eq(s.compiled_calls, 2, "later calls replay the graph")
  else
    check_eq(s.compiled_calls, 0, "the JIT declined: eager calls")
  end
end

local function r(...) local sh = {...} return function() return {torch.randn(table.unpack(sh))} end end

test("copy_ into a chained narrow of a fresh full tensor reaches the result (the F.pad pattern)", function()
  same(function(t)
    local o = torch.full({2, 3, 9, 9}, 0.5)
    o:narrow(-2, 3, 6):narrow(-1, 2, 7):copy_(t * 2)
    return o
  end, r(2, 3, 6, 7), true)
end)

test("writes through select, slicing and narrow of a zeros tensor", function()
  same(function(t)
    local o = torch.zeros(4, 5)
    o:select(1, 2):copy_(t[1])
    o:narrow(2, 1, 2):fill_(7)
    o[{{3, 4}, {4, 5}}]:copy_(t[{{1, 2}, {1, 2}}] + 1)
    return o
  end, r(4, 5), true)
end)

test("writes through transpose, permute, view and reshape views", function()
  same(function(t)
    local o = torch.zeros(3, 4)
    o:t():copy_(t)          -- t is 4x3
    local p = torch.zeros(2, 3, 4)
    p:permute(2, 3, 1):narrow(1, 1, 2):copy_(t:narrow(2, 1, 2):unsqueeze(1)) -- 2x4x2
    local q = torch.zeros(2, 6)
    q:view(3, 4):narrow(2, 2, 2):fill_(3)
    q:reshape(12):narrow(1, 1, 5):mul_(2):add_(1)
    return o, p, q
  end, r(4, 3), true)
end)

test("diagonal views are written through", function()
  same(function(t)
    local o = torch.zeros(4, 4)
    o:diagonal():copy_(t)
    local z = torch.zeros(3, 4, 4)
    z:diagonal(0, 2, 3):narrow(2, 2, 2):add_(t:narrow(1, 1, 2))
    return o, z
  end, r(4), true)
end)

test("several writes to overlapping views in order, then the base used by later ops", function()
  same(function(t)
    local o = torch.ones(6, 6)
    o:narrow(1, 1, 4):narrow(2, 1, 4):copy_(t)
    o:narrow(1, 3, 4):narrow(2, 3, 4):mul_(3)
    o:select(2, 4):fill_(-1)
    local y = (o * 2):sum(1) + o:narrow(1, 2, 2):sum()
    return y, o:exp()
  end, r(4, 4), true)
end)

test("masked_fill_ through a view of a fresh tensor", function()
  same(function(t)
    local o = torch.zeros(3, 8)
    local v = o:narrow(2, 3, 4)
    v:copy_(t)
    v:masked_fill_(t:gt(0), 5)
    return o
  end, r(3, 4), true)
end)

test("index_put_ through a view of a fresh tensor: compiled or eager, never wrong", function()
  same(function(t)
    local w = torch.zeros(2, 5)
    w:select(1, 2):index_put_({torch.tensor({1, 4})}, t)
    return w + 1
  end, r(2), false)
end)

test("a write through a view of an input updates the caller's tensor", function()
  torch.compiler.reset()
  local f = function(x, t) x:narrow(1, 2, 2):select(2, 1):copy_(t) return x * 1 end
  local c = torch.compile(f)
  for call = 1, 3 do
    local x, t = torch.randn(4, 3), torch.randn(2)
    local xe = x:clone()
    local want = f(xe, t)
    local got = c(x, t)
    check_close(got, want, TOL)
    check_close(x, xe, TOL)
  end
end)

test("a view read after another view wrote its base runs eagerly, not stale", function()
  same(function(t)
    local o = torch.zeros(4, 4)
    local a = o:narrow(1, 1, 2)
    o:narrow(1, 2, 2):fill_(1)        -- overlaps a: a's old value is stale
    return a + t
  end, r(2, 4), false)
  same(function(t)
    local o = torch.zeros(4, 4)
    local a = o:narrow(1, 1, 3)
    local b = a:narrow(1, 2, 2)
    o:narrow(1, 1, 3):fill_(2)        -- a and b stale, then written through b
    b:copy_(t)
    return o
  end, r(2, 4), false)
end)

test("a write through unfold's windows runs eagerly with the reason", function()
  same(function(t)
    local o = torch.zeros(6)
    o:unfold(1, 2, 2):copy_(t)
    return o
  end, r(3, 2), false)
end)

test("F.pad constant mode compiles and matches eager", function()
  same(function(x) return F.pad(x, {1, 2, 3, 0}, "constant", 0.25) * 2 end, r(2, 3, 5, 4), true)
  same(function(x) return F.pad(x, {2, 2}) end, r(3, 7), true)
end)
