-- tests/run.lua -- the moontorch test runner.
--   moontorch tests/run.lua [--engine PATH] [--repl] [files or dirs...]
-- With no files it runs every tests/**/test_*.lua. Each file runs in its own
-- environment with the assertion helpers below; the run ends with the line
-- "N passed, N failed" (C engine tests and the REPL pty test are counted in).
--
-- Helpers available in test files:
--   test(name, fn)                 one named case; an error fails it
--   check(cond, msg)               fails the case unless cond
--   check_eq(a, b, msg)            deep equality of Lua values
--   check_close(x, expected[, {atol=, rtol=, equal_nan=}])
--                                  tensor vs tensor / nested table / number
--   check_error(fn, needle)        fn must raise an error containing needle
--   check_shape(t, {2, 3})
--   ref(name)                      the table in tests/ref/<name>.lua (PyTorch values)
--   rss_mb()                       resident memory of this process in MB
--   DEVICE                         the device the suite runs on ("cpu" or "cuda")
--   cpu_only(reason)               at the top of a file that tests a CPU-only
--                                  component (the C code generator, oneDNN
--                                  epilogues, file parsers): under
--                                  MOONTORCH_TEST_DEVICE=cuda the file runs on
--                                  the CPU and is counted apart
--
-- MOONTORCH_TEST_DEVICE=cuda runs every file with torch.set_default_device
-- ('cuda'), so the tensors the tests make, and the ops on them, are on the GPU;
-- check_close and friends copy results to the host to compare.

local script_dir = (arg and arg[0] or "tests/run.lua"):match("^(.*)/[^/]*$") or "."
local root = script_dir:match("^(.*)/tests$") or (script_dir == "tests" and ".") or script_dir .. "/.."
package.cpath = root .. "/build/?.so;" .. package.cpath
package.path = root .. "/?.lua;" .. package.path
local torch = require "torch"

local passed, failed, failures = 0, 0, {}
local test_device = os.getenv("MOONTORCH_TEST_DEVICE") or "cpu"
if test_device ~= "cpu" then
  local ok, err = pcall(torch.set_default_device, test_device)
  torch.set_default_device("cpu")
  if not ok then
    io.write("MOONTORCH_TEST_DEVICE=", test_device, ": ", tostring(err), "\n0 passed, 1 failed\n")
    os.exit(1)
  end
end
local cpu_files = {} -- files that declared cpu_only under a GPU test device
local engine_bin, want_repl, files = nil, true, {}
local i = 1
while arg and i <= #arg do
  local a = arg[i]
  if a == "--engine" then engine_bin = arg[i + 1]; i = i + 1
  elseif a == "--no-repl" then want_repl = false
  else files[#files + 1] = a end
  i = i + 1
end

local function fmt(v)
  if torch.is_tensor(v) then return tostring(v) end
  if type(v) == "table" then
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = tostring(k) .. "=" .. fmt(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end

local function deep_eq(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not deep_eq(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local env_base = {}
-- resident memory of this process in MB (nil where /proc is missing)
function env_base.rss_mb()
  local f = io.open("/proc/self/status")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  local kb = s:match("VmRSS:%s*(%d+)")
  return kb and tonumber(kb) / 1024
end
function env_base.check(cond, msg)
  if not cond then error(msg or "check failed", 2) end
end
function env_base.check_eq(a, b, msg)
  if not deep_eq(a, b) then
    error((msg and msg .. ": " or "") .. "expected " .. fmt(b) .. ", got " .. fmt(a), 2)
  end
end
function env_base.check_shape(t, shape)
  local s = t:size()
  local same = #s == #shape
  for k = 1, #shape do same = same and s[k] == shape[k] end
  if not same then error("expected shape " .. fmt(shape) .. ", got " .. fmt(s), 2) end
end

-- Flattens a nested table of numbers/booleans (nan as 0/0) into a list.
local function flatten(t, out)
  out = out or {}
  if type(t) == "table" then for _, v in ipairs(t) do flatten(v, out) end
  else out[#out + 1] = t end
  return out
end

function env_base.check_close(x, expected, opts)
  opts = opts or {}
  local atol, rtol = opts.atol or 1e-5, opts.rtol or 1.3e-6
  local got
  if torch.is_tensor(x) then got = flatten(x:totable()) else got = flatten(x) end
  local want
  if torch.is_tensor(expected) then
    if torch.is_tensor(x) and #x:size() ~= #expected:size() then
      error("expected shape " .. fmt(expected:size()) .. ", got " .. fmt(x:size()), 2)
    end
    want = flatten(expected:totable())
  else want = flatten(expected) end
  if #got ~= #want then
    error(("expected %d values, got %d"):format(#want, #got), 2)
  end
  for k = 1, #want do
    local g, w = got[k], want[k]
    if type(g) == "boolean" or type(w) == "boolean" then
      if g ~= w then error(("value %d: expected %s, got %s"):format(k, tostring(w), tostring(g)), 2) end
    elseif w ~= w then
      if g == g and not opts.nan_ok then error(("value %d: expected nan, got %s"):format(k, tostring(g)), 2) end
    elseif w == math.huge or w == -math.huge then
      if g ~= w then error(("value %d: expected %s, got %s"):format(k, tostring(w), tostring(g)), 2) end
    elseif not (math.abs(g - w) <= atol + rtol * math.abs(w)) then
      error(("value %d: expected %.10g, got %.10g (atol %g, rtol %g)"):format(k, w, g, atol, rtol), 2)
    end
  end
end

function env_base.check_error(fn, needle)
  local ok, err = pcall(fn)
  if ok then error("expected an error" .. (needle and (" containing '" .. needle .. "'") or ""), 2) end
  err = tostring(err)
  if needle and not err:find(needle, 1, true) then
    error("error message '" .. err .. "' does not contain '" .. needle .. "'", 2)
  end
  return err
end

local ref_cache = {}
function env_base.ref(name)
  if not ref_cache[name] then
    local path = root .. "/tests/ref/" .. name .. ".lua"
    local chunk, err = loadfile(path, "t", {math = math})
    if not chunk then error("missing reference file " .. path .. ": " .. tostring(err), 2) end
    ref_cache[name] = chunk()
  end
  return ref_cache[name]
end

local current_file
env_base.DEVICE = test_device
function env_base.cpu_only(reason)
  if test_device == "cpu" then return end
  torch.set_default_device("cpu")
  env_base.DEVICE = "cpu"
  cpu_files[#cpu_files + 1] = current_file .. " (" .. reason .. ")"
end

function env_base.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    passed = passed + 1
  else
    failed = failed + 1
    local first = tostring(err):gsub("\nstack traceback:.*", "")
    failures[#failures + 1] = current_file .. ": " .. name .. ": " .. first
    io.write("FAIL ", current_file, ": ", name, "\n  ", first, "\n")
  end
end

local function run_file(path)
  current_file = path
  local env = setmetatable({torch = torch}, {__index = function(_, k)
    local v = env_base[k]; if v ~= nil then return v end; return _G[k] end})
  local chunk, err = loadfile(path, "t", env)
  if not chunk then
    failed = failed + 1
    failures[#failures + 1] = path .. ": cannot load: " .. err
    io.write("FAIL ", path, ": cannot load: ", err, "\n")
    return
  end
  local before = passed + failed
  local t0 = torch.time()
  -- the GPU tests in tests/cuda/ place every tensor themselves
  local dev = path:find("tests/cuda/", 1, true) and "cpu" or test_device
  env_base.DEVICE = dev
  torch.set_default_device(dev)
  local ok, e = xpcall(chunk, debug.traceback)
  torch.set_default_device("cpu")
  if not ok then
    failed = failed + 1
    failures[#failures + 1] = path .. ": error outside a test: " .. tostring(e)
    io.write("FAIL ", path, ": error outside a test: ", tostring(e), "\n")
  end
  io.write(("%-48s %4d cases  %.2fs\n"):format(path, passed + failed - before, torch.time() - t0))
  collectgarbage()
end

-- Runs an external test program and adds its closing "N passed, N failed".
local function run_external(label, cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  p:close()
  local np, nf = out:match("(%d+) passed, (%d+) failed%s*$")
  if not np then
    failed = failed + 1
    io.write("FAIL ", label, ": no result line\n", out, "\n")
    failures[#failures + 1] = label .. ": no result line"
    return
  end
  passed, failed = passed + tonumber(np), failed + tonumber(nf)
  if tonumber(nf) > 0 then
    io.write(out)
    failures[#failures + 1] = label .. ": " .. nf .. " failed"
  end
  io.write(("%-48s %4d cases\n"):format(label, tonumber(np) + tonumber(nf)))
end

if #files == 0 then
  local p = io.popen("find '" .. root .. "/tests' -name 'test_*.lua' | sort")
  for f in p:lines() do files[#files + 1] = f end
  p:close()
  if engine_bin then run_external("C engine tests", engine_bin) end
  -- the REPL under test is the interpreter running this file, if it is moontorch
  local exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or root .. "/build/moontorch"
  if want_repl and io.open("/usr/bin/python3") and io.open(exe) then
    run_external("REPL (pty)", "/usr/bin/python3 " .. root .. "/tests/repl/test_repl.py " .. exe)
  end
end
for _, f in ipairs(files) do
  local kind = io.popen("test -d '" .. f .. "' && echo dir"):read("l")
  if kind == "dir" then
    local p = io.popen("find '" .. f .. "' -name 'test_*.lua' | sort")
    for g in p:lines() do run_file(g) end
    p:close()
  else
    run_file(f)
  end
end

if #failures > 0 then
  io.write("\nFailures:\n")
  for _, f in ipairs(failures) do io.write("  ", f, "\n") end
end
if #cpu_files > 0 then
  io.write(("\n%d files test CPU-only components and ran on the CPU:\n"):format(#cpu_files))
  for _, f in ipairs(cpu_files) do io.write("  ", f, "\n") end
end
if test_device ~= "cpu" then io.write("test device: ", test_device, "\n") end
io.write(("%d passed, %d failed\n"):format(passed, failed))
os.exit(failed == 0 and 0 or 1, true) -- close the state: every tensor is freed
