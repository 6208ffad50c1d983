-- tests/lua/test_stock_lua.lua -- the torch module outside moontorch: a
-- stock lua5.4 loads torch.so from the build tree and from a `make install`
-- tree, and its packages (torch.nn, torch.optim, torch.vision, ...) load
-- from there, run from another directory. Also: an unknown torch.X is nil.

local root = (debug.getinfo(1, "S").source:match("^@(.*)/tests/lua/[^/]*$")) or "."
if root:sub(1, 1) ~= "/" then root = os.getenv("PWD") .. "/" .. root end
local exe = arg and arg[-1] or (root .. "/build/moontorch")
if exe:sub(1, 1) ~= "/" then exe = os.getenv("PWD") .. "/" .. exe end
local build = exe:match("^(.*)/[^/]*$")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- Runs a shell command from /tmp; returns its output and whether it succeeded.
local function run(cmd)
  local p = io.popen("cd /tmp && " .. cmd .. " 2>&1; echo \"rc=$?\"")
  local out = p:read("a")
  p:close()
  local rc = tonumber(out:match("rc=(%d+)%s*$"))
  return out:gsub("rc=%d+%s*$", ""), rc == 0
end

local LUA = io.open("/usr/bin/lua5.4") and "/usr/bin/lua5.4"
-- a sanitizer build's torch.so needs the sanitizer runtime loaded first,
-- which a stock lua5.4 does not have
local stock_ok = LUA and not os.getenv("MOONTORCH_ASAN")
local probe = [[
local torch = require "torch"
local nn = require "torch.nn"
local m = nn.Linear(2, 3)
assert(m(torch.ones(4, 2)).shape[2] == 3)
assert(torch.optim.SGD and torch.utils.data.DataLoader and torch.vision.io.read_idx)
assert(require("torch.nn.functional") == torch.nn.functional)
assert(require("torch.utils") == torch.utils and require("torch.cuda") == torch.cuda)
assert(torch.foo == nil and torch.nn.optim == nil)
print("stock-ok " .. tostring(m))
]]

test("an unknown torch.X or package field is nil, not a loader error", function()
  check(torch.foo == nil, "torch.foo")
  check(torch.utils.foo == nil, "torch.utils.foo")
  check(torch.cuda.foo == nil, "torch.cuda.foo")
  check(torch.nn.optim == nil, "torch.nn.optim: nn/optim is torch.optim's folder, not a part of torch.nn")
  check(torch.amp.cuda == nil, "torch.amp.cuda is only reachable as torch.cuda.amp")
  check_error(function() require "torch.nosuch" end, "module 'torch.nosuch' not found")
  check(require("torch.utils") == torch.utils, "require 'torch.utils': the namespace torch makes")
  check(require("torch.cuda") == torch.cuda, "require 'torch.cuda'")
  check_error(function() require "torch.utils.nosuch" end, "module 'torch.utils.nosuch' not found")
  check(torch.cuda.amp.GradScaler, "torch.cuda.amp")
  check(torch.autocast == torch.amp.autocast, "torch.autocast is torch.amp.autocast")
end)

test("torch._subpackages lists the packages before they load", function()
  local names = table.concat(torch._subpackages("torch"), " ")
  for _, n in ipairs{"nn", "optim", "utils", "vision", "amp", "profiler", "experiment", "plot"} do
    check(names:find(n, 1, true), n .. " in " .. names)
  end
  check_eq(torch._subpackages("torch.utils"), {"data", "tensorboard"})
end)

test("a stock lua5.4 requires torch from the build tree", function()
  if not stock_ok then return print("note: skipped (" .. (LUA and "sanitizer build" or "no /usr/bin/lua5.4") .. ")") end
  local out, ok = run("LUA_CPATH=" .. q(build .. "/?.so;;") .. " " .. LUA .. " -e " .. q(probe))
  check(ok and out:find("stock-ok Linear(in_features=2, out_features=3, bias=true)", 1, true), out)
end)

test("make install puts a working moontorch, torch.so and the packages under PREFIX", function()
  local prefix = os.tmpname()
  os.remove(prefix)
  local out, ok = run("make -s -C " .. q(root) .. " install BUILD=" .. q(build) .. " PREFIX=" .. q(prefix))
  check(ok, "make install failed:\n" .. out)
  out, ok = run(q(prefix .. "/bin/moontorch") .. " -e " ..
    q("print(torch.nn.Linear(2, 3), torch.vision.io ~= nil, torch.utils.tensorboard.SummaryWriter ~= nil)"))
  check(ok and out:find("Linear(in_features=2, out_features=3, bias=true)\ttrue\ttrue", 1, true), out)
  -- the installed files, not the source tree, are what it loads
  out = run(q(prefix .. "/bin/moontorch") .. " -e " .. q("print(torch._packages().root, torch._packages().installed)"))
  check(out:find(prefix .. "/share/lua/5.4\ttrue", 1, true), out)
  if stock_ok then
    out, ok = run("LUA_CPATH=" .. q(prefix .. "/lib/lua/5.4/?.so;;") .. " " .. LUA .. " -e " .. q(probe))
    check(ok and out:find("stock-ok", 1, true), "LUA_CPATH only: " .. out)
    -- Lua's standard paths also find the packages before torch is loaded
    out, ok = run("LUA_CPATH=" .. q(prefix .. "/lib/lua/5.4/?.so;;") .. " LUA_PATH=" ..
      q(prefix .. "/share/lua/5.4/?.lua;" .. prefix .. "/share/lua/5.4/?/init.lua;;") .. " " .. LUA .. " -e " ..
      q('local nn = require "torch.nn"; print("nn-first", nn.Linear(1, 1))'))
    check(ok and out:find("nn-first\tLinear", 1, true), "LUA_PATH: " .. out)
  end
  os.execute("rm -rf " .. q(prefix))
end)
