-- tests/jit/test_codegen_c.lua -- the C code generator and its cache
-- specifically (tests/jit/test_compile.lua covers torch.compile on any
-- device): the accuracy of its float32 gelu polynomial, the disk cache of
-- compiled shared objects and the C compiler's runs.
cpu_only("the C code generator and the C compiler's cache")
local torch = require "torch"
package.path = "tests/jit/?.lua;" .. package.path
local J = require "jitlib"

-- gelu(x) = x * Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2, from the float64
-- math library: the compiled float32 kernel's error (docs/jit.md) is at
-- most a few units of |x| * 2^-24
test("compiled float32 gelu against x * Phi(x) in float64, edges included", function()
  local vals = {0, -0.0, 1e-30, -1e-30, 1e-3, -1e-3, 0.5, -0.5, 1, -1, 2, -2, 3.5, -3.5, 5, -5, 5.4, -5.4, 5.6, -5.6,
                10, -10, 1e6, -1e6}
  for k = 0, 400 do vals[#vals + 1] = -8 + k * 0.04 end
  local x = torch.tensor(vals)
  local c = torch.compile(function(a) return a:gelu() end, {fullgraph = true})
  c(x) -- the first call runs eagerly while it records
  local got = c(x):double()
  local xd = x:double()
  local want = xd * torch.erfc(-xd / math.sqrt(2)) * 0.5
  local err = (got - want):abs()
  local bound = xd:abs() * 2 ^ -24 * 4 + 1e-45
  check(err:le(bound):all():item(), "gelu error above 4 |x| 2^-24, worst " .. (err / bound):max():item())
  local edge = torch.tensor({0 / 0, math.huge, -math.huge})
  c(edge)
  local e = c(edge)
  check(e[1]:isnan():item(), "gelu(nan) is nan")
  check_eq(e[2]:item(), math.huge)
  check(e[3]:isnan():item(), "gelu(-inf) is nan, as in PyTorch (-inf * 0)")
end)

-- The same reference on a dense sweep of floats: 2^15 evenly spaced
-- mantissas in every binade from 2^-30 to 8, both signs (2.1M floats), in
-- ulps of the float result where x >= -1 (docs/jit.md: at most 4.04 over
-- every float) and in units of |x| 2^-24 below -1, where 1 + erf cancels
-- (at most 2.56). Beyond the clamp gelu is exactly x, and exactly 0 below -5.5.
-- The eager float32 kernel (tensor/cpu/unary.c) computes the same rational
-- function with AVX2 intrinsics and is held to the same bounds.
test("compiled and eager float32 gelu on a dense sweep of floats, in ulps against float64 x * Phi(x)", function()
  local steps = torch.arange(0, 2 ^ 15):double() / 2 ^ 15 + 1
  local parts = {}
  for e = -30, 2 do
    parts[#parts + 1] = steps * 2 ^ e
    parts[#parts + 1] = steps * -(2 ^ e)
  end
  parts[#parts + 1] = torch.tensor({5.5, 5.5625, 5.6, 6, 100, 1e30, -5.5, -5.50001, -5.6, -100, -1e30}):double()
  local x = torch.cat(parts):float()
  local c = torch.compile(function(a) return a:gelu() end, {fullgraph = true})
  c(x)
  local strided = torch.stack({x, x}, 2) -- every other float: the eager kernel's gathered path
  for _, run in ipairs{{"compiled", function() return c(x) end}, {"eager", function() return x:gelu() end},
                       {"eager strided", function() return strided:select(2, 1):gelu() end}} do
  local got = run[2]():double()
  local xd = x:double()
  local want = xd * torch.erfc(-xd / math.sqrt(2)) * 0.5
  local err = (got - want):abs()
  local ulp = torch.exp2((want:abs():float():double():log2()):floor() - 23)
  local hi = xd:ge(-1)
  local in_ulps = (err / ulp)[hi]:max():item()
  local in_x = (err / (xd:abs() * 2 ^ -24))[hi:logical_not()]:max():item()
  check(in_ulps <= 4.5, run[1] .. " gelu error above 4.5 ulp for x >= -1: " .. in_ulps)
  check(in_x <= 3, run[1] .. " gelu error above 3 |x| 2^-24 for x < -1: " .. in_x)
  local big, neg = xd:ge(5.5625), xd:lt(-5.5)
  check((got[big] - xd[big]):abs():max():item() == 0, run[1] .. ": gelu(x) is x from 5.5625 on")
  check(got[neg]:abs():max():item() == 0, run[1] .. ": gelu(x) is 0 below -5.5")
  end
  local e = torch.tensor({0 / 0, math.huge, -math.huge}):float():gelu()
  check(e[1]:isnan():item() and e[2]:item() == math.huge and e[3]:isnan():item(), "eager gelu at NaN and +-inf")
end)

test("a corrupt disk cache entry is detected and rebuilt", function()
  local dir = J.tmpdir()
  local code = [[
    local torch = require "torch"
    local f = torch.compile(function(a) return (a * 3):tanh() * 0.5 + 0.25 end)
    local x = torch.linspace(-2, 2, 9)
    local d = (f(x) - ((x * 3):tanh() * 0.5 + 0.25)):abs():max():item()
    local s = torch.compiler.stats()
    print("result", d < 1e-6, "cc", s.cc_runs, "disk", s.disk_hits, "corrupt", s.corrupt_entries)
  ]]
  local first = J.child("XDG_CACHE_HOME=" .. dir, code)
  check(first:match("result\ttrue\tcc\t1\tdisk\t0"), first)
  local warm = J.child("XDG_CACHE_HOME=" .. dir, code)
  check(warm:match("result\ttrue\tcc\t0\tdisk\t1"), warm)
  local p = io.popen("ls " .. dir .. "/moontorch/jit/*.so")
  local so = p:read("l")
  p:close()
  local h = io.open(so, "r+b")
  h:seek("set", 200)
  h:write("garbage garbage garbage")
  h:close()
  local again = J.child("XDG_CACHE_HOME=" .. dir, code)
  check(again:match("result\ttrue\tcc\t1\tdisk\t0\tcorrupt\t1"), again)
end)

test("a warm start from the disk cache runs no compiler, not even cc --version", function()
  local dir = J.tmpdir()
  local log = dir .. "/cc-runs.log"
  local cc = dir .. "/cc-counting" -- a compiler that notes each run, then runs cc
  local h = io.open(cc, "w")
  h:write("#!/bin/sh\necho run >> '" .. log .. "'\nexec cc \"$@\"\n")
  h:close()
  os.execute("chmod +x '" .. cc .. "'")
  local code = [[
    local torch = require "torch"
    local f = torch.compile(function(a) return a:exp() + 1 end)
    local x = torch.randn(5)
    print("ok", (f(x) - (x:exp() + 1)):abs():max():item() < 1e-5, (f(x) - (x:exp() + 1)):abs():max():item() < 1e-5)
  ]]
  local function runs()
    local f = io.open(log)
    if not f then return 0 end
    local _, n = f:read("a"):gsub("run", "")
    f:close()
    return n
  end
  check(J.child("XDG_CACHE_HOME=" .. dir .. " CC=" .. cc, code):match("ok\ttrue\ttrue"))
  check_eq(runs(), 2, "cold: --version and one compile")
  check(J.child("XDG_CACHE_HOME=" .. dir .. " CC=" .. cc, code):match("ok\ttrue\ttrue"))
  check_eq(runs(), 2, "warm: no run")
end)

test("no C compiler: runs eagerly with one warning", function()
  local out = J.child("XDG_CACHE_HOME=" .. J.tmpdir() .. " CC=/nonexistent", [[
    local torch = require "torch"
    local f = torch.compile(function(a) return a:exp() + 1 end)
    local x = torch.randn(5)
    for _ = 1, 3 do assert(((f(x) - (x:exp() + 1)):abs():max():item()) == 0) end
    print("ok", torch.compiler.stats().fallbacks)
  ]])
  check(out:match("ok\t1"), out)
  local _, n = out:gsub("torch.compile:", "")
  check_eq(n, 1, "one warning: " .. out)
  check(out:match("/nonexistent"), "the warning names the compiler: " .. out)
end)

