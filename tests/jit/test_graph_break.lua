-- tests/jit/test_graph_break.lua -- host reads inside a compiled function
-- (x:item(), tostring) split it into compiled graphs with its Lua code
-- running between them: values read on the host are real, branches on
-- them work, a whole training step with a logged loss trains as eagerly,
-- and a path the capture did not see is either finished eagerly (a branch
-- after a host read) or refused with an error naming the function.
local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"

local TOL = {atol = 2e-5, rtol = 1e-4}

local function stats_delta(f)
  local a = torch.compiler.stats()
  f()
  local b = torch.compiler.stats()
  return {compiled = b.compiled_calls - a.compiled_calls, fallbacks = b.fallbacks - a.fallbacks,
          compiles = b.compiles - a.compiles}
end

test("a value read in the middle steers Lua; the graphs before and after it are compiled", function()
  local w = torch.randn(6, 6)
  local function f(x)
    local h = (x:matmul(w)):tanh()
    local s = h:sum():item() -- a graph break
    local scale = s > 0 and 2 or -3 -- Lua arithmetic on the host value
    return (h * scale):exp():sum(1), s
  end
  local c = torch.compile(f, {_quiet = true})
  local d = stats_delta(function()
    for _ = 1, 6 do
      local x = torch.randn(5, 6)
      local ye, se = f(x)
      local yc, sc = c(x)
      check_close(yc, ye, TOL)
      check(math.abs(sc - se) < 1e-4, "host value")
    end
  end)
  check(d.compiled >= 4, "compiled calls: " .. d.compiled)
  check_eq(d.fallbacks, 0)
  local text = torch.compiler.explain(f, torch.randn(5, 6))
  check(text:find("graphs split at host reads", 1, true), text:sub(1, 200))
  check(text:find("graph 2 of 2", 1, true), "two graphs")
end)

test("a training step that logs loss:item() and branches on it trains as eagerly", function()
  local function build()
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
  end
  torch.manual_seed(5); local m1 = build()
  torch.manual_seed(5); local m2 = build()
  local o1, o2 = optim.Adam(m1:parameters(), {lr = 1e-2}), optim.Adam(m2:parameters(), {lr = 1e-2})
  local lf = nn.CrossEntropyLoss()
  local function make(m, o, log)
    return function(x, y)
      o:zero_grad()
      local loss = lf(m(x), y)
      loss:backward()
      local l = loss:item()
      log[#log + 1] = l
      if l == l then o:step() end -- skip a step on NaN: a branch on the host value
      return l
    end
  end
  local log1, log2 = {}, {}
  local s1, s2 = make(m1, o1, log1), make(m2, o2, log2)
  local c = torch.compile(s2, {_quiet = true})
  local d = stats_delta(function()
    for _ = 1, 8 do
      local x, y = torch.randn(6, 8), torch.randint(1, 4, {6})
      local a, b = s1(x, y), c(x, y)
      check(math.abs(a - b) < 1e-4, ("loss %g vs %g"):format(a, b))
    end
  end)
  local p1, p2 = m1:parameters(), m2:parameters()
  for k = 1, #p1 do check_close(p2[k], p1[k], TOL) end
  check_eq(#log2, 8)
  check(d.compiled >= 5, "compiled calls: " .. d.compiled)
end)

test("another branch after a host read finishes that call eagerly, with one warning", function()
  local w = torch.randn(4, 4)
  local function f(x)
    local h = x:matmul(w)
    if h:sum():item() > 0 then h = h:relu() * 3 else h = h:sigmoid() - 1 end
    return h:sum(1)
  end
  local c = torch.compile(f, {_quiet = true})
  local pos, neg = torch.ones(3, 4), -torch.ones(3, 4)
  if (pos:matmul(w)):sum():item() <= 0 then pos, neg = neg, pos end
  c(pos); c(pos) -- captured on the positive branch
  for _ = 1, 2 do
    check_close(c(neg), f(neg), TOL)
    check_close(c(pos), f(pos), TOL)
  end
end)

test("a static graph split at a host read, called with another size, computes at that size", function()
  local w = torch.randn(4)
  local function f(x)
    local y = (x * 2):sin()
    if y:sum():item() > -1e9 then return (y + 1):cos() * w end
    return y
  end
  local c = torch.compile(f, {dynamic = false, _quiet = true})
  local a = torch.randn(3, 4)
  c(a); c(a) -- captured with op calls recorded at 3x4
  for _ = 1, 2 do
    local b = torch.randn(5, 4)
    local y = c(b)
    check_shape(y, {5, 4})
    check_close(y, f(b), TOL)
    check_close(c(a), f(a), TOL)
  end
end)

test("several host reads in a loop, tostring, and an early return", function()
  local w = torch.randn(3, 3) * 0.5
  local function f(x, n)
    local total, text = 0, nil
    for _ = 1, 3 do
      x = (x:matmul(w)):tanh()
      total = total + x:sum():item()
    end
    text = tostring(x:sum())
    if n == 0 then return total end
    return x * total, text
  end
  local c = torch.compile(f, {_quiet = true})
  for _ = 1, 4 do
    local x = torch.randn(2, 3)
    local ye = f(x, 1)
    local yc, tc = c(x, 1)
    check_close(yc, ye, TOL)
    check(type(tc) == "string" and tc:find("tensor", 1, true), "tostring inside: " .. tostring(tc))
  end
  local x = torch.randn(2, 3)
  check(math.abs(c(x, 0) - f(x, 0)) < 1e-4, "early return")
end)

test("a path change the guards cannot see inside a graph is an error naming the function; it recaptures", function()
  local flip = false
  local w = torch.randn(4, 4)
  local function f(x)
    local h = x:matmul(w)
    if flip then h = h * 2 end -- Lua state, no host read: inside the first graph
    local s = h:sum():item()
    return h + s
  end
  local c = torch.compile(f, {_quiet = true})
  local x = torch.randn(2, 4)
  c(x); c(x)
  flip = true
  check_error(function() c(x) end, "took another path than when it was captured")
  check_close(c(x), f(x), TOL) -- captured again with the new path
  check_close(c(x), f(x), TOL)
end)

test("fullgraph=true still refuses a host read", function()
  local c = torch.compile(function(x) return x * x:sum():item() end, {fullgraph = true})
  check_error(function() c(torch.randn(3)) end, "fullgraph=true")
end)
