-- tests/jit/test_compile.lua -- torch.compile end to end: compiled results
-- against eager ones on fresh random inputs (every elementwise op of the
-- registry, reductions, softmax/log_softmax/layer_norm/gelu chains,
-- broadcasting, non-contiguous inputs), guards and recompiles, runtime
-- scalars, graph breaks, fallbacks, the disk cache and MOONTORCH_JIT=0.
local torch = require "torch"
package.path = "tests/jit/?.lua;" .. package.path
local J = require "jitlib"

local cache = J.tmpdir()
local function fresh(...) return torch.randn(...) end

-- compiled fn and eager fn agree on args; returns the compiled function
local function same(fn, args, tol)
  local c = torch.compile(fn, {fullgraph = true})
  local want = {fn(table.unpack(args))}
  local got1 = {c(table.unpack(args))}
  local got2 = {c(table.unpack(args))}
  for i = 1, #want do
    check_close(got1[i], want[i], tol or {atol = 1e-5, rtol = 1e-5, equal_nan = true})
    check_close(got2[i], want[i], tol or {atol = 1e-5, rtol = 1e-5, equal_nan = true})
  end
  return c
end

-- the elementwise ops of the registry, by arity (the registry is walked
-- through torch's functions: every unary/binary op that exists as torch.<name>)
local unary = {"neg", "abs", "sign", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
  "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "gelu", "gelu_tanh", "silu", "erf",
  "erfc", "floor", "ceil", "round", "trunc", "frac", "reciprocal", "square", "logical_not", "isnan", "isinf",
  "isfinite"}
local binary = {"add", "sub", "mul", "div", "floor_divide", "pow", "atan2", "hypot", "fmod", "remainder", "maximum",
  "minimum", "logical_and", "logical_or", "logical_xor", "eq", "ne", "lt", "le", "gt", "ge"}
local intops = {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift", "add", "sub",
  "mul", "floor_divide", "remainder", "fmod", "maximum", "minimum", "eq", "lt"}

test("every float unary op: compiled == eager on fresh inputs", function()
  for _, name in ipairs(unary) do
    local f = torch[name]
    check(f, "torch." .. name .. " exists")
    for _, dt in ipairs {torch.float32, torch.float64} do
      local x = fresh(5, 7):to(dt)
      if name:match("^a?log") or name == "sqrt" or name == "rsqrt" or name:match("^log") then x = x:abs() + 0.1 end
      if name == "asin" or name == "acos" then x = x:clamp(-0.99, 0.99) end
      same(function(a) return f(a) end, {x}, {atol = 2e-5, rtol = 2e-5, equal_nan = true})
    end
  end
end)

test("every float binary op: compiled == eager, with broadcasting", function()
  for _, name in ipairs(binary) do
    local f = torch[name]
    local a, b = fresh(4, 6), fresh(6)
    if name == "pow" then a = a:abs() + 0.5 end
    if name == "floor_divide" or name == "fmod" or name == "remainder" or name == "div" then b = b:abs() + 0.5 end
    same(function(x, y) return f(x, y) end, {a, b}, {atol = 2e-5, rtol = 2e-5, equal_nan = true})
  end
end)

test("integer ops: compiled == eager exactly", function()
  for _, name in ipairs(intops) do
    local a = torch.randint(-50, 50, {3, 5}):long()
    local b = torch.randint(1, 7, {3, 5}):long()
    same(function(x, y) return torch[name](x, y) end, {a, b}, {atol = 0, rtol = 0})
  end
end)

test("ternary ops and ops with parameters: clamp, where, lerp, nan_to_num, leaky_relu", function()
  local x, y = fresh(3, 4), fresh(3, 4)
  same(function(a) return a:clamp(-0.5, 0.5) end, {x})
  same(function(a, b) return torch.where(a:gt(0), a, b) end, {x, y})
  same(function(a, b) return torch.lerp(a, b, 0.3) end, {x, y})
  same(function(a) return (a:log()):nan_to_num(0, 1, -1) end, {x})
  same(function(a) return torch.leaky_relu(a, 0.2) end, {x})
end)

test("reductions fused with their producers and consumers", function()
  local x = fresh(6, 33)
  same(function(a) return (a * 2):sum(-1) end, {x}, {atol = 1e-4, rtol = 1e-5})
  same(function(a) return (a:exp()):mean(-1, true) - a end, {x}, {atol = 1e-4, rtol = 1e-5})
  same(function(a) return a:amax(-1), a:amin(-1) end, {x})
  same(function(a) return (a - a:mean(-1, true)):sum() end, {x}, {atol = 1e-4, rtol = 1e-4})
  same(function(a) return a:sum(1) end, {x}, {atol = 1e-4, rtol = 1e-5}) -- not trailing: an extern call
end)

test("softmax, log_softmax, layer_norm and gelu chains", function()
  local x, w, b = fresh(8, 64), fresh(64), fresh(64)
  same(function(a) return a:softmax(-1) end, {x})
  same(function(a) return a:log_softmax(-1) end, {x})
  same(function(a, g, h) return (torch.layer_norm(a, {64}, g, h)) end, {x, w, b}, {atol = 1e-4, rtol = 1e-4})
  same(function(a) return (torch.layer_norm(a:view(8, 4, 16), {4, 16})) end, {x}, {atol = 1e-4, rtol = 1e-4})
  same(function(a, g, h) return (a * g + h):gelu() end, {x, w, b})
  same(function(a) return (a:softmax(-1) * 3):log_softmax(-1) end, {x}, {atol = 1e-4, rtol = 1e-4})
end)

test("rows longer than the 64 partial accumulators, with a partial block left", function()
  for _, n in ipairs{64, 200, 1000} do
    local x = fresh(5, n)
    same(function(a) return a:sum(-1), a:mean(-1), a:amax(-1), a:amin(-1) end, {x}, {atol = 1e-4, rtol = 1e-5})
    -- reductions in a second loop over the row (where partial sums are used)
    same(function(a)
      local d = a - a:mean(-1, true)
      return d:sum(-1), (d * d):mean(-1), d:amax(-1), d:amin(-1), (d * 0.01 + 1):prod(-1)
    end, {x}, {atol = 1e-4, rtol = 1e-4})
    same(function(a) return (a * 0.01 + 1):prod(-1) end, {x}, {atol = 1e-4, rtol = 1e-4})
    same(function(a) return a:softmax(-1) end, {x})
    same(function(a) return (torch.layer_norm(a, {n})) end, {x}, {atol = 1e-4, rtol = 1e-4})
    same(function(a) return a:double():sum(-1) end, {x}, {atol = 1e-10, rtol = 1e-12})
  end
end)

test("non-contiguous inputs are copied; permutes and views follow sizes", function()
  local x = fresh(5, 7)
  same(function(a) return a:exp() end, {x:t()})
  same(function(a) return a:t():sum(-1) end, {x}, {atol = 1e-4, rtol = 1e-5})
  same(function(a) return a:unsqueeze(1) * 2 end, {x})
end)

test("changing the batch size 10 times does not recompile", function()
  torch.compiler.reset()
  local w = fresh(16)
  local c = torch.compile(function(a) return (a * w):softmax(-1) end)
  for n = 2, 11 do
    local x = fresh(n, 16)
    check_close(c(x), (x * w):softmax(-1), {atol = 1e-5, rtol = 1e-5})
  end
  local s = torch.compiler.stats()
  check_eq(s.compiles, 1)
  check_eq(s.recompiles, 0)
  check_eq(s.compiled_calls, 9)
end)

test("a Lua number argument is a runtime scalar: no recompile when it changes", function()
  torch.compiler.reset()
  local c = torch.compile(function(p, g, lr) return p - g * lr end)
  local p, g = fresh(10), fresh(10)
  for _, lr in ipairs {0.1, 0.01, 0.5, 2.5, 1e-3} do
    check_close(c(p, g, lr), p - g * lr)
  end
  local s = torch.compiler.stats()
  check_eq(s.compiles, 2) -- the first graph, then one capture proving lr only feeds the graph
  check_eq(s.recompiles, 0)
  check_eq(s.recaptures, 1)
  check_eq(s.compiled_calls, 3)
end)

test("a number derived in Lua is not replayed stale", function()
  torch.compiler.reset()
  local c = torch.compile(function(x, k) return x * k + x * (k * 2) end)
  local x = fresh(4)
  for _, k in ipairs {1.5, 2.5, 3.5} do check_close(c(x, k), x * k + x * (k * 2)) end
end)

test("another dtype or rank gives a guarded recompile, never a wrong result", function()
  torch.compiler.reset()
  local c = torch.compile(function(a) return a * 2 + 1 end)
  local x = fresh(3, 4)
  check_close(c(x), x * 2 + 1)
  local xd = x:double()
  local y = c(xd)
  check_eq(y.dtype, torch.float64)
  check_close(y, xd * 2 + 1)
  local z = fresh(2, 3, 4)
  check_close(c(z), z * 2 + 1)
  local xi = torch.randint(0, 5, {3}):long()
  check_close(c(xi), xi * 2 + 1)
  local s = torch.compiler.stats()
  check(s.recompiles >= 3, "recompiles counted: " .. s.recompiles)
end)

test("a graph break on :item() is reported with its line; fullgraph=true raises", function()
  torch.compiler.reset()
  local fn = function(a)
    local m = a:sum():item()
    return a * m
  end
  local x = fresh(4)
  local out = J.child("XDG_CACHE_HOME=" .. cache, [[
    local torch = require "torch"
    local f = torch.compile(function(a)
      local m = a:sum():item()
      return a * m
    end)
    local x = torch.randn(4)
    f(x); f(x)
    print("breaks", torch.compiler.stats().graph_breaks)
  ]])
  check(out:match("graph break: [^\n]*:3: item%(%)"), "break reported with line 3: " .. out)
  local _, n = out:gsub("graph break", "")
  check_eq(n, 1, "reported once: " .. out)
  check(out:match("breaks\t1"), out)
  check_error(function() torch.compile(fn, {fullgraph = true})(x) end, "graph break")
end)

test("MOONTORCH_JIT=0 turns compilation off with identical results", function()
  local code = [[
    local torch = require "torch"
    torch.manual_seed(7)
    local f = torch.compile(function(a, b) return (a * b):softmax(-1):sum(-1) end)
    local x, y = torch.randn(3, 5), torch.randn(5)
    local r = f(x, y)
    print(string.format("%.9g %.9g %.9g", r[1]:item(), r[2]:item(), r[3]:item()), torch.compiler.stats().compiles)
  ]]
  local off = J.child("MOONTORCH_JIT=0 XDG_CACHE_HOME=" .. cache, code)
  check(off:match("\t0\n"), "no compiles when off: " .. off)
  local eager = off:match("^(%S+ %S+ %S+)")
  check(eager, off)
  local on = J.child("XDG_CACHE_HOME=" .. cache, code)
  local a, b = on:match("^(%S+) (%S+)"), off:match("^(%S+) (%S+)")
  check(math.abs(tonumber(a) - tonumber(b)) < 1e-5, on .. " vs " .. off)
end)

test("inputs requiring grad run eagerly (autograd is not compiled yet)", function()
  local c = torch.compile(function(a) return (a * 2):sum() end)
  local x = fresh(3):requires_grad_()
  local y = c(x)
  y:backward()
  check_close(x.grad, torch.full({3}, 2.0))
  torch.no_grad(function() check_close(c(x), (x * 2):sum()) end)
end)

test("tensors made inside fn by untraced ops: eager with the reason", function()
  local out = J.child("XDG_CACHE_HOME=" .. cache, [[
    local torch = require "torch"
    local f = torch.compile(function(a) return a + torch.rand(3) * 0 + 1 end)
    print(f(torch.zeros(3)):sum():item())
  ]])
  check(out:match("rand"), out)
  check(out:match("3"), out)
end)

test("explain shows the IR and the generated kernel", function()
  local txt = torch.compiler.explain(function(a) return a:softmax(-1) end, fresh(2, 8))
  check(txt:match("reduce%.amax"), txt)
  check(txt:match("void __launch_bounds__%(256%) mtj_k0") or txt:match("void mtj_k0"), txt)
  check(txt:match("graph breaks: none"), txt)
end)

test("captured upvalue tensors are guarded by identity", function()
  torch.compiler.reset()
  local w = fresh(4)
  local c = torch.compile(function(a) return a * w end)
  local x = fresh(4)
  check_close(c(x), x * w)
  w:mul_(2) -- in place: seen by the compiled graph
  check_close(c(x), x * w)
  w = fresh(4) -- rebound: guard miss, recompiled
  check_close(c(x), x * w)
end)

test("a cast of a constant keeps its shape and converts its value as eager does", function()
  local b, x = torch.ones(6, {dtype = torch.bool}), torch.randn(5)
  local cases = {
    {function(t) return torch.ones_like(t):to(torch.float32) end, b},
    {function(t) return torch.zeros_like(t):double() end, x},
    {function(t) return torch.full_like(t, 2.75):long() end, x},
    {function(t) return torch.full_like(t, -2.75):long():float() + t end, x},
    {function(t) return torch.full_like(t, 0.5):bool() end, x},
  }
  for i, c in ipairs(cases) do
    local f = torch.compile(c[1])
    local want = c[1](c[2])
    for r = 1, 3 do
      local got = f(c[2])
      check_eq(got.dtype, want.dtype, ("case %d call %d dtype"):format(i, r))
      check_close(got:double(), want:double(), {atol = 0, rtol = 0})
    end
  end
end)
