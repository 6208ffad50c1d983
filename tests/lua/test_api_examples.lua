-- tests/lua/test_api_examples.lua -- the examples API.md gives under "Rules"
-- and "Tensor core", run as written: they are the contract scripts rely on.

local x = torch.tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})

test("rule 3: optional arguments positionally, by table, or mixed", function()
  local a, b, c = x:sum(2, true), x:sum(2, {keepdim = true}), x:sum{dim = 2, keepdim = true}
  check_close(a, {{6}, {15}})
  check(torch.equal(a, b) and torch.equal(b, c))
  check_shape(c, {2, 1})
end)

test("rule 4: function and method forms, in-place variants, out=, repeat alias", function()
  check(torch.equal(torch.add(x, x), x:add(x)))
  local y = x:clone()
  y:add_(1)
  check_close(y, {{2, 3, 4}, {5, 6, 7}})
  local o = torch.empty(2, 3)
  torch.mul(x, 2, {out = o})
  check_close(o, {{2, 4, 6}, {8, 10, 12}})
  check(torch.equal(x:tile(2, 1), x["repeat"](x, 2, 1)))
end)

test("rule 5: operators with numbers on either side; # is the size of dim 1", function()
  check_close(2 - x, {{1, 0, -1}, {-2, -3, -4}})
  check_close(x ^ 2 / 2, {{0.5, 2, 4.5}, {8, 12.5, 18}})
  check_close(-x % 4, {{3, 2, 1}, {0, 3, 2}})
  check_eq(#x, 2)
  check(x == x and not (x == x:clone()), "== compares identity")
  check_error(function() return x < x end, "x:lt(y)")
  check_close(x:lt(3), {{true, true, false}, {false, false, false}})
end)

test("rule 6: dtypes and devices are values", function()
  check(x.dtype == torch.float32)
  check(x:to(torch.float64).dtype == torch.float64)
  check(x:double().dtype == torch.float64 and x:long().dtype == torch.int64 and x:half().dtype == torch.float16)
  check_eq(tostring(x.device):match("^%a+"), DEVICE)
  if DEVICE == "cpu" then check(x:to("cpu") == x) end
  if not torch.cuda.is_available() then check_error(function() return x:to("cuda") end, "cuda") end
end)

test("rule 7: errors name the op and shapes, and the session goes on", function()
  check_error(function() return torch.ones(3, 4):matmul(torch.ones(5, 6)) end,
    "matmul: shapes 3x4 and 5x6 cannot be multiplied (4 ~= 5)")
  check_close(x:sum(), 21)
end)

test("rule 8: PyTorch-style printing", function()
  check_eq(tostring(torch.tensor({{0.1234, -1.2}}, {dtype = torch.float64, device = "cpu"})),
    "tensor([[ 0.1234, -1.2000]], dtype=float64)")
end)

test("indexing: x[i], ranges, steps, {}, masks, index tensors, assignment", function()
  local t = torch.arange(1, 13):view(3, 4)
  check_eq(t[2]:totable(), {5, 6, 7, 8})
  check_eq(t[{2, {1, 3}}]:totable(), {5, 6, 7})
  check_eq(t[{{}, -1}]:totable(), {4, 8, 12})
  check_eq(t[{1, {1, 4, 2}}]:totable(), {1, 3})
  check_eq(t[-1][-1]:item(), 12)
  check_eq(torch.tensor({10, 20, 30})[2]:dim(), 0)
  check_eq(t[t:gt(10)]:totable(), {11, 12})
  check_eq(t[torch.tensor({3, 1})]:totable(), {{9, 10, 11, 12}, {1, 2, 3, 4}})
  local u = t:clone()
  u[{2, {1, 3}}] = 0
  u[1] = torch.tensor({-1, -2, -3, -4})
  check_eq(u:totable(), {{-1, -2, -3, -4}, {0, 0, 0, 8}, {9, 10, 11, 12}})
  local view = t[2]
  view:fill_(7) -- x[i] is a view: writes go through
  check_eq(t[2]:totable(), {7, 7, 7, 7})
end)

test("index tensors are 1-based everywhere", function()
  local v = torch.tensor({5.0, 3.0, 9.0, 1.0})
  check_eq(v:argmax():item(), 3)
  local s, i = v:sort()
  check_eq(i:totable(), {4, 2, 1, 3})
  check_eq(v:index_select(1, i):totable(), s:totable())
  check_eq(v:gt(2):nonzero():view(-1):totable(), {1, 2, 3})
  local _, top = v:topk(2)
  check_eq(top:totable(), {3, 1})
  local p = torch.randperm(10)
  check_eq(p:sort():totable(), torch.arange(1, 11):totable())
  local r = torch.randint(3, 7, {1000})
  check(r:min():item() >= 3 and r:max():item() <= 6, "randint draws values in [low, high)")
end)

test("misc: time, Timer, threads, version", function()
  check(type(torch.time()) == "number")
  local timer = torch.Timer()
  check(timer:elapsed() >= 0)
  timer:reset()
  local n = torch.get_num_threads()
  torch.set_num_threads(1)
  check_eq(torch.get_num_threads(), 1)
  torch.set_num_threads(n)
  check(type(torch.version) == "string")
end)

---------------------------------------------------------------- the docs' runnable blocks

-- docs/howto.md (and any page listed here) marks code to run: ```lua run
-- blocks run as scripts with moontorch in an empty directory shared by the
-- page's blocks, ```lua file=NAME blocks are written there first, ```sh run
-- blocks run with bash from the source tree (with /tmp/mt, the how-to's
-- install prefix, replaced by a directory of the test's own).
local RUNNABLE_PAGES = {"docs/howto.md", "docs/api/README.md"}
local root = torch._packages().root
local exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or root .. "/build/moontorch"
  if exe:sub(1, 1) ~= "/" then exe = os.getenv("PWD") .. "/" .. exe end

local function sh_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function run(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return ok, out, code
end

local function blocks_of(path)
  local f = assert(io.open(root .. "/" .. path))
  local out, cur, n = {}, nil, 0
  for line in f:lines() do
    n = n + 1
    if cur then
      if line:match("^```%s*$") then out[#out + 1] = cur; cur = nil
      else cur.code[#cur.code + 1] = line end
    else
      local lang, info = line:match("^```(%a+)%s*(.-)%s*$")
      if lang and (info == "run" or info:match("^file=")) then
        cur = {lang = lang, run = info == "run", file = info:match("^file=(%S+)"), line = n, code = {}}
      end
    end
  end
  f:close()
  return out
end

-- true when `make install` would not rebuild (under make asan it would
-- build the plain tree: the install how-to is skipped there)
local function installable()
  if os.getenv("MOONTORCH_ASAN") then return false end
  return (run("make -C " .. sh_quote(root) .. " -q all"))
end

for _, page in ipairs(RUNNABLE_PAGES) do
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. sh_quote(dir)))
  for _, b in ipairs(blocks_of(page)) do
    local code = table.concat(b.code, "\n") .. "\n"
    if b.file then
      local f = assert(io.open(dir .. "/" .. b.file, "w"))
      f:write(code)
      f:close()
    elseif b.lang == "lua" then
      test(("%s:%d runs as written"):format(page, b.line), function()
        local script = ("%s/block_%d.lua"):format(dir, b.line)
        local f = assert(io.open(script, "w"))
        f:write(code)
        f:close()
        local ok, out = run(("cd %s && MOONTORCH_TEST_DEVICE= %s %s"):format(sh_quote(dir), sh_quote(exe),
                                                                            sh_quote(script)))
        check(ok, out)
      end)
    elseif b.lang == "sh" then
      test(("%s:%d runs as written"):format(page, b.line), function()
        if code:find("make install", 1, true) and not installable() then return end
        local prefix = dir .. "/prefix"
        local body = code:gsub("/tmp/mt", prefix)
        local ok, out = run(("cd %s && bash -e -c %s"):format(sh_quote(root), sh_quote(body)))
        check(ok, out)
      end)
    end
  end
end
