-- scripts/api_docs.lua -- checks the API reference (docs/api/*.md) against
-- the live namespaces, and brings the entries of functions that carry a help
-- text in the code (mtl_reg rows, U.doc) up to date with it.
--   build/moontorch scripts/api_docs.lua           report; exit 1 on problems
--   build/moontorch scripts/api_docs.lua --write   also rewrite stale entries
--                                                  and append missing names
-- A missing name is appended to the page of its namespace under "## New
-- entries (sort these)" with its code text, or "TODO" (which the docs test
-- rejects) when it has none: move it into its section and describe it.
-- help() reads the compiled-in copy of docs/api: rebuild (make) afterwards.
local write = arg[1] == "--write"
local H = torch._api()
local root = torch._packages().root
assert(root ~= "" and not torch._packages().installed, "api_docs: run it with the build tree's moontorch")
local dir = root .. "/docs/api"
local CODE = debug.getregistry()["mtl.help"]

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local pages, entries = {}, {}
local ls = assert(io.popen("ls '" .. dir .. "'"))
for name in ls:lines() do
  if name:match("%.md$") then
    local path = dir .. "/" .. name
    pages[#pages + 1] = path
    for _, e in ipairs(H.parse(read(path), "docs/api/" .. name)) do entries[#entries + 1] = e end
  end
end
ls:close()

local missing, dangling, stale = H.check(entries)
for _, m in ipairs(dangling) do print("dangling: " .. m) end
for _, s in ipairs(stale) do
  print(("stale: %s:%d:\n  have %s\n  want %s"):format(s.entry.file, s.entry.line, H.render(s.entry, s.entry.text), s.want))
end
for _, m in ipairs(missing) do print("missing: " .. m) end
local todo = 0
for _, e in ipairs(entries) do
  if e.desc == "TODO" or e.desc == "" then
    todo = todo + 1
    print(("undescribed: %s:%d: %s"):format(e.file, e.line, e.sig))
  end
end

-- the page a new name goes to: the longest namespace prefix with a page
local PAGE = {
  {"torch.nn.functional.", "nn.functional.md"}, {"torch.nn.init.", "nn.init.md"}, {"torch.nn.utils.", "nn.utils.md"},
  {"torch.nn.", "nn.md"}, {"torch.optim.", "optim.md"}, {"torch.utils.data.", "utils.data.md"},
  {"torch.utils.tensorboard.", "utils.tensorboard.md"}, {"torch.experiment.", "experiment.md"},
  {"torch.plot", "plot.md"}, {"torch.vision.models.", "vision.models.md"}, {"torch.vision.ops.", "vision.ops.md"},
  {"torch.vision.", "vision.md"}, {"torch.linalg.", "linalg.md"},
  {"torch.autograd.", "autograd.md"}, {"torch.cuda.amp.", "amp.md"}, {"torch.cuda.", "cuda.md"},
  {"torch.compiler.", "compile.md"}, {"torch.amp.", "amp.md"}, {"torch.profiler.", "profiler.md"},
  {"torch.backends.", "backends.md"}, {"torch.Tensor", "tensor.md"}, {"torch.", "torch.md"},
}
local function page_of(key)
  for _, p in ipairs(PAGE) do
    if key:sub(1, #p[1]) == p[1] then return dir .. "/" .. p[2] end
  end
  return dir .. "/torch.md"
end

if write then
  local by_file = {}
  for _, s in ipairs(stale) do
    local path = root .. "/" .. s.entry.file
    by_file[path] = by_file[path] or {}
    by_file[path][s.entry.line] = s.want
  end
  local public = {}
  for _, p in ipairs(H.public_names()) do public[H.short(p.key)] = p end
  for _, m in ipairs(missing) do
    local p = public[m]
    local path = page_of(p.key)
    local code = type(p.value) == "function" and CODE[p.value]
    local line = code and H.render({names = {m}}, code) or ("- `%s` -- TODO"):format(m)
    by_file[path] = by_file[path] or {}
    by_file[path].append = by_file[path].append or {}
    table.insert(by_file[path].append, line)
  end
  for path, edits in pairs(by_file) do
    local out, n = {}, 0
    for line in (read(path) .. "\n"):gmatch("(.-)\n") do
      n = n + 1
      out[#out + 1] = edits[n] or line
    end
    while out[#out] == "" do out[#out] = nil end
    if edits.append then
      local text = table.concat(out, "\n")
      if not text:find("\n## New entries %(sort these%)") then out[#out + 1] = "\n## New entries (sort these)\n" end
      for _, l in ipairs(edits.append) do out[#out + 1] = l end
    end
    local f = assert(io.open(path, "wb"))
    f:write(table.concat(out, "\n"), "\n")
    f:close()
    print("wrote " .. path)
  end
end

local problems = #missing + #dangling + #stale + todo
print(("%d entries in %d pages; %d missing, %d dangling, %d stale, %d undescribed"):format(#entries, #pages,
      #missing, #dangling, #stale, todo))
os.exit(problems == 0 and 0 or 1)
