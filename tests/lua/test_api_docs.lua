-- tests/lua/test_api_docs.lua -- the API reference (docs/api/*.md) and the
-- live namespaces agree: every public name has an entry, every entry names
-- something that exists, entries of functions with a help text in the code
-- copy it, and help() prints the entries (lua_bindings/help.lua). A failure
-- names the entries to write or fix; scripts/api_docs.lua --write does the
-- copying part.

local H = torch._api()
local map = torch._packages()
local root = map.root

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local out = {}
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

-- the pages as they are in the tree (help() has a compiled-in copy)
local pages, entries = {}, {}
for _, name in ipairs(lines_of("ls '" .. root .. "/docs/api'")) do
  if name:match("%.md$") then
    local text = read(root .. "/docs/api/" .. name)
    pages[name] = text
    for _, e in ipairs(H.parse(text, "docs/api/" .. name)) do entries[#entries + 1] = e end
  end
end

local missing, dangling, stale = H.check(entries)

local function listing(list, what)
  return ("%d %s:\n  %s"):format(#list, what, table.concat(list, "\n  "))
end

test("the reference has an index and a page per package", function()
  for _, p in ipairs{"README.md", "torch.md", "tensor.md", "linalg.md", "autograd.md", "cuda.md", "compile.md",
                     "amp.md", "profiler.md", "backends.md", "nn.md", "nn.functional.md", "nn.init.md", "nn.utils.md",
                     "optim.md", "utils.data.md", "utils.tensorboard.md", "experiment.md", "plot.md", "vision.md"} do
    check(pages[p], "docs/api/" .. p .. " is missing")
  end
  check(#entries > 800, "only " .. #entries .. " entries")
end)

test("every public name of the live namespaces has an entry in docs/api", function()
  check(#missing == 0, listing(missing, "public names without an entry (add a line  - `name(args)` -- what it "
        .. "does  to their page; build/moontorch scripts/api_docs.lua --write appends them)"))
end)

test("every entry names something that exists, and one value per entry", function()
  check(#dangling == 0, listing(dangling, "entries that name nothing"))
end)

test("entries of functions with a help text in the code copy it", function()
  local msgs = {}
  for _, s in ipairs(stale) do
    msgs[#msgs + 1] = ("%s:%d\n    have: %s\n    want: %s"):format(s.entry.file, s.entry.line,
      H.render(s.entry, s.entry.text), s.want)
  end
  check(#stale == 0, listing(msgs, "entries that differ from the code's help text (the code is the source: run "
        .. "build/moontorch scripts/api_docs.lua --write)"))
end)

test("every entry says what it is", function()
  local bad = {}
  for _, e in ipairs(entries) do
    if e.desc == "" or e.desc:find("TODO", 1, true) then bad[#bad + 1] = e.file .. ":" .. e.line .. ": " .. e.sig end
  end
  check(#bad == 0, listing(bad, "entries without a description"))
end)

test("the checker notices an undocumented function and a dangling entry", function()
  -- a public function nobody documented, and an entry for a function that is gone
  torch.nn.init.undocumented_fn_ = function() end
  local fake = H.parse("- `torch.no_such_function(x)` -- gone", "fake.md")
  local all = {}
  for _, e in ipairs(entries) do all[#all + 1] = e end
  all[#all + 1] = fake[1]
  local ok, m, d = pcall(H.check, all)
  torch.nn.init.undocumented_fn_ = nil
  check(ok, tostring(m))
  local seen = false
  for _, n in ipairs(m) do seen = seen or n == "nn.init.undocumented_fn_" end
  check(seen, "nn.init.undocumented_fn_ was not reported missing")
  check(#d == 1 and d[1]:find("torch.no_such_function", 1, true), "the dangling entry was not reported")
end)

test("the namespaces walked include every package of the map and the core ones", function()
  local walked = {}
  for _, n in ipairs(H.NAMESPACES) do walked[n] = true end
  for _, n in ipairs{"torch", "torch.Tensor", "torch.linalg", "torch.autograd", "torch.cuda", "torch.compiler",
                     "torch.backends", "torch.amp", "torch.profiler", "torch.nn", "torch.nn.functional",
                     "torch.nn.init", "torch.nn.utils", "torch.optim", "torch.optim.lr_scheduler",
                     "torch.utils.data", "torch.utils.tensorboard", "torch.experiment", "torch.plot",
                     "torch.vision"} do
    check(walked[n], n .. " is not walked")
  end
  for _, p in ipairs(map) do
    local ok, v = H.resolve(p.module, true)
    check(ok, p.module .. " does not load")
    -- a package table is walked; a package that is a function (torch.autocast) needs an entry instead
    if type(v) == "table" and not getmetatable(v) or (type(v) == "table" and rawget(v, "__help")) then
      check(walked[p.module], p.module .. " (a package of lua_bindings/packages.c) is not in help.lua's NAMESPACES")
    end
  end
end)

test("modules of lazily loaded packages are walked (torch.vision.io, ...)", function()
  local walked = {}
  for _, n in ipairs(H.NAMESPACES) do walked[n] = true end
  for _, p in ipairs(map) do
    local ok, v = H.resolve(p.module, true)
    local mt = ok and type(v) == "table" and getmetatable(v)
    local lazy = mt and type(mt.__index) == "function" and debug.getinfo(mt.__index, "S").what == "C"
    if lazy and not p.path:find("%.lua$") and p.path:sub(1, 1) ~= "=" then
      for _, f in ipairs(lines_of("ls '" .. root .. "/" .. p.path .. "'")) do
        local m = f:match("^([%a][%w_]*)%.lua$")
        if m and m ~= "init" then
          check(walked[p.module .. "." .. m], p.module .. "." .. m .. " is not in help.lua's NAMESPACES")
        end
      end
    end
  end
end)

test("help() has the pages of docs/api compiled in (rebuild after editing them)", function()
  local built = H.entries()
  check(#built == #entries, ("the build has %d entries, docs/api %d: run make"):format(#built, #entries))
  for i = 1, math.min(#built, #entries) do
    if built[i].text ~= entries[i].text then
      check(false, ("%s:%d differs from the build's copy: run make"):format(entries[i].file, entries[i].line))
      break
    end
  end
end)

-- help's text for a value, as the C side would print it
local function help_text(...) return (H.text(...)) end

test("help(f) prints the entry of f, for every documented function", function()
  local bad = {}
  for _, e in ipairs(entries) do
    local ok, v = H.resolve(e.keys[1], true)
    if ok and type(v) == "function" then
      local t = help_text(v)
      if not t:find(e.text, 1, true) then bad[#bad + 1] = e.sig .. "\n    got: " .. t:gsub("\n.*", "") end
    end
  end
  check(#bad == 0, listing(bad, "functions whose help() is not their entry"))
end)

test("help(class): constructor entry and public methods, no metamethods", function()
  local t = help_text(nn.Linear)
  check(t:find("nn.Linear(in_features, out_features", 1, true), t)
  check(t:find("reset_parameters", 1, true) and t:find("forward", 1, true), t)
  check(not t:find("__call", 1, true) and not t:find("__index", 1, true) and not t:find("_update_group", 1, true), t)
  check(t:find("help(nn.Module)", 1, true), "no pointer to the inherited methods:\n" .. t)
  t = help_text(optim.Adam)
  check(t:find("optim.Adam(params", 1, true) and not t:find("_update_group", 1, true), t)
end)

test("help(instance): the class and its methods, inherited ones grouped", function()
  local Net = nn.Module:extend("TinyNet")
  function Net:__init() self.fc = nn.Linear(2, 1) end
  function Net:forward(x) return self.fc(x) end
  local t = help_text(Net())
  check(t:find("an instance of TinyNet", 1, true), t)
  check(t:find("methods of TinyNet:\n  forward(x)", 1, true), t)
  check(t:find("methods of nn.Module:", 1, true) and t:find("load_state_dict(sd[, strict=true])", 1, true), t)
  local opt = optim.SGD(Net():parameters(), 0.1)
  t = help_text(opt)
  check(t:find("an instance of optim.SGD", 1, true) and t:find("methods of optim.Optimizer:", 1, true), t)
  check(t:find("zero_grad([set_to_none=true])", 1, true), t)
end)

test("help(method) for Lua methods", function()
  check(help_text(nn.Module.extend):find("nn.Module:extend(name) -- ", 1, true))
  local net = nn.Sequential(nn.Linear(2, 2))
  check(help_text(net.forward):find("forward", 1, true) and help_text(net.forward):find(" -- ", 1, true))
  local opt = optim.SGD(net:parameters(), 0.1)
  check(help_text(opt.step):find("optim.Optimizer:step([closure])", 1, true), help_text(opt.step))
  check(help_text(nn.Linear.reset_parameters):find("reset_parameters() -- ", 1, true),
        help_text(nn.Linear.reset_parameters))
end)

test("help('name') searches every package; unknown names say so", function()
  check(help_text("relu"):find("F.relu(input[, inplace])", 1, true), help_text("relu"))
  check(help_text("relu"):find("torch.relu(x)", 1, true))
  check(help_text("read_idx"):find("torch.vision.io.read_idx(path)", 1, true), help_text("read_idx"))
  check(help_text("nn.Linear"):find("nn.Linear(in_features", 1, true))
  check(help_text("SummaryWriter"):find("SummaryWriter([log_dir]", 1, true))
  local t = help_text("foo")
  check(t:find("torch has no member 'foo'", 1, true), t)
  check(not t:find("error", 1, true) and not t:find("loading", 1, true), t)
  t = help_text("nn.Lienar")
  check(t:find("nn has no member 'Lienar'", 1, true) and t:find("nn.Linear", 1, true), t)
end)

test("help(tensor) is a summary with a pointer to every method", function()
  local t = help_text(torch.zeros(2, 3))
  check(t:find("shape 2x3", 1, true) and t:find("float32", 1, true), t)
  check(t:find("help(torch.Tensor)", 1, true), t)
  local n = select(2, t:gsub("\n", ""))
  check(n < 10, "help(x) printed " .. n .. " lines")
end)

test("help of a long text is cut with a hint when stdout is not a terminal", function()
  local exe = (arg and arg[-1] and arg[-1]:match("moontorch$")) and arg[-1] or root .. "/build/moontorch"
  if exe:sub(1, 1) ~= "/" then exe = os.getenv("PWD") .. "/" .. exe end
  local out = lines_of(exe .. " -e 'help(torch.Tensor)' 2>&1")
  check(#out <= 41, #out .. " lines")
  check(out[#out]:find("help(torch.Tensor, {all=true})", 1, true), out[#out])
  out = lines_of(exe .. " -e 'help(torch.Tensor, {all=true})' 2>&1")
  check(#out > 300, #out .. " lines with all=true")
end)

test("README.md and docs/ link only to files in the repository", function()
  local bad = {}
  local files = {"README.md"}
  for _, f in ipairs(lines_of("cd '" .. root .. "' && ls docs/*.md docs/api/*.md")) do files[#files + 1] = f end
  for _, f in ipairs(files) do
    local text = read(root .. "/" .. f)
    local dir = f:match("^(.*)/[^/]*$") or "."
    if text:find("../shared", 1, true) then bad[#bad + 1] = f .. ": mentions ../shared (outside the repository)" end
    for target in text:gmatch("%]%(([^)%s]+)%)") do
      local path = target:gsub("#.*$", "")
      if path ~= "" and not path:match("^%a+:") then
        local full = root .. "/" .. dir .. "/" .. path
        local fh = io.open(full)
        if fh then fh:close() else bad[#bad + 1] = f .. ": link to " .. target .. " (no such file)" end
      end
    end
  end
  check(#bad == 0, listing(bad, "broken links"))
end)
