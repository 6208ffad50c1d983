-- scripts/check_layers.lua [BUILD] -- the layering check (run by `make
-- check`, which `make test` runs first). Fails (exit 1, one line per fault)
-- when:
--   * a C file includes a header of a layer above its own, by any path;
--   * an object of a layer uses a symbol that only a layer above defines
--     (nm: the undefined symbols of BUILD/<layer>/*.o by prefix);
--   * an exported symbol of a layer lacks the layer's prefix;
--   * a C file is over 1,500 lines or a function over 200 lines.
-- Layers, bottom up: tensor/ (mt_), graph/ (mtg_), jit/ (mtj_), the Lua
-- packages' C in nn/ and domains/ (luaopen_torch_*, and their own prefix),
-- lua_bindings/ (mtl_), repl/ (mtr_). Each may use only itself and the
-- layers below; the packages' C may also use lua_bindings' API (mtl.h), the
-- one exception, as the bindings' users.
local build = arg[1] or "build"

local layers = {
  {dir = "tensor", prefix = "mt_", may = {"tensor"}},
  {dir = "graph", prefix = "mtg_", may = {"tensor", "graph"}},
  {dir = "jit", prefix = "mtj_", may = {"tensor", "graph", "jit"}},
  {dir = "nn", prefix = "mtn_", may = {"tensor", "graph", "jit", "nn", "lua_bindings"}},
  {dir = "domains", prefix = "mtd_", may = {"tensor", "graph", "jit", "nn", "domains", "lua_bindings"}},
  {dir = "lua_bindings", prefix = "mtl_", may = {"tensor", "graph", "jit", "lua_bindings"}},
  {dir = "repl", prefix = "mtr_", may = {"tensor", "graph", "jit", "lua_bindings", "repl"}},
}
local by_dir = {}
for i, l in ipairs(layers) do l.rank = i; by_dir[l.dir] = l end
-- which layer a symbol prefix belongs to (the longest prefix wins)
local prefix_layer = {{"mtg_", "graph"}, {"mtj_", "jit"}, {"mtl_", "lua_bindings"}, {"mtr_", "repl"},
                      {"mtn_", "nn"}, {"mtd_", "domains"}, {"luaopen_torch_", "domains"}, {"lua_", "lua"},
                      {"luaL_", "lua"}, {"mt_", "tensor"}}
local lua_users = {nn = true, domains = true, lua_bindings = true, repl = true}

local faults = {}
local function fault(fmt, ...) faults[#faults + 1] = fmt:format(...) end

local function lines_of(cmd)
  local p = assert(io.popen(cmd))
  local t = {}
  for l in p:lines() do t[#t + 1] = l end
  p:close()
  return t
end

local function layer_of(path)
  return by_dir[path:match("^([^/]+)/")]
end

local function allowed(l, dir)
  for _, d in ipairs(l.may) do if d == dir then return true end end
  return false
end

local function normalize(path)
  local parts = {}
  for seg in path:gmatch("[^/]+") do
    if seg == ".." then parts[#parts] = nil elseif seg ~= "." then parts[#parts + 1] = seg end
  end
  return table.concat(parts, "/")
end

local function exists(p)
  local f = io.open(p)
  if f then f:close() end
  return f ~= nil
end

-- The include search of a file: its own folder, then the -I folders the
-- Makefile gives its layer (each layer sees only what it may use).
local include_dirs = {
  tensor = {"tensor"}, graph = {"tensor", "graph"}, jit = {"tensor", "graph", "jit"},
  nn = {"tensor", "graph", "lua_bindings"}, domains = {"tensor", "graph", "lua_bindings"},
  lua_bindings = {"tensor", "graph", "jit", "lua_bindings"}, repl = {"tensor", "graph", "jit", "lua_bindings", "repl"},
}

-- includes that point up
local sources = lines_of("git ls-files 'tensor/*' 'graph/*' 'jit/*' 'nn/*' 'domains/*' 'lua_bindings/*' 'repl/*' "
  .. "| grep -E '\\.(c|h|def)$'")
for _, file in ipairs(sources) do
  local l = layer_of(file)
  local n, f = 0, assert(io.open(file))
  for line in f:lines() do
    n = n + 1
    local q = line:match('^%s*#%s*include%s*"([^"]+)"')
    local sys = line:match("^%s*#%s*include%s*<([^>]+)>")
    if q then
      local here = file:match("^(.*)/[^/]*$")
      local target = normalize(here .. "/" .. q)
      if not exists(target) then
        target = nil
        for _, d in ipairs(include_dirs[l.dir]) do
          if exists(d .. "/" .. q) then target = normalize(d .. "/" .. q); break end
        end
      end
      local tl = target and layer_of(target)
      if tl and not allowed(l, tl.dir) then
        fault("%s:%d: includes %s, of %s/, a layer above %s/", file, n, q, tl.dir, l.dir)
      end
    elseif sys and not lua_users[l.dir] and (sys:match("^lua") or sys == "lauxlib.h" or sys == "lualib.h") then
      fault("%s:%d: includes <%s>: only lua_bindings/, repl/ and the packages' C see Lua", file, n, sys)
    end
  end
  f:close()
end

-- symbols: what each layer's objects use and export
local function symbol_layer(sym)
  for _, p in ipairs(prefix_layer) do
    if sym:sub(1, #p[1]) == p[1] then return p[2] end
  end
end
for _, l in ipairs(layers) do
  local objs = lines_of(("find %s/%s -name '*.o' 2>/dev/null | sort"):format(build, l.dir))
  for _, o in ipairs(objs) do
    for _, row in ipairs(lines_of("nm -u " .. o)) do
      local sym = row:match("U%s+(%S+)")
      local sl = sym and symbol_layer(sym)
      if sl == "lua" and not lua_users[l.dir] then
        fault("%s: uses %s: only lua_bindings/, repl/ and the packages' C call Lua", o, sym)
      elseif sl and sl ~= "lua" and not allowed(l, sl) then
        fault("%s: uses %s, of %s/, a layer above %s/", o, sym, sl, l.dir)
      end
    end
    for _, row in ipairs(lines_of("nm -g --defined-only " .. o)) do
      local kind, sym = row:match("^%x*%s+(%a)%s+(%S+)")
      local ok = sym and (sym:sub(1, #l.prefix) == l.prefix or
        (l.dir ~= "tensor" and l.dir ~= "graph" and l.dir ~= "jit" and sym:match("^luaopen_")) or
        (l.dir == "repl" and sym == "main") or sym:match("^__"))
      if kind and not ok then fault("%s: exports %s without the %s prefix of %s/", o, sym, l.prefix, l.dir) end
    end
  end
end

-- sizes: files over 1,500 lines, functions (column-0 blocks that are not
-- initializers or types) over 200 lines
for _, file in ipairs(lines_of("git ls-files '*.c' '*.h' '*.cu'")) do
  local f = assert(io.open(file))
  local n, start, head = 0, nil, nil
  for line in f:lines() do
    n = n + 1
    if not start and line:match("^[%w_].*{%s*$") and not line:match("=") and
       not line:match("^typedef") and not line:match("^struct") and not line:match("^enum") and
       not line:match("^union") and not line:match('^extern "C"') then
      start, head = n, line
    elseif not start and line:match("^{%s*$") then
      start, head = n, "(function at line " .. n .. ")"
    elseif start and line:match("^}") then
      if n - start + 1 > 200 then
        fault("%s:%d: function of %d lines (at most 200): %s", file, start, n - start + 1, head:sub(1, 70))
      end
      start = nil
    end
  end
  f:close()
  if n > 1500 then fault("%s: %d lines (at most 1,500): split it by job", file, n) end
end

for _, m in ipairs(faults) do io.stderr:write("check_layers: ", m, "\n") end
if #faults > 0 then
  io.stderr:write(("check_layers: %d faults\n"):format(#faults))
  os.exit(1)
end
print(("check_layers: %d sources, 7 layers: no upward include or symbol, prefixes kept, sizes within bounds")
  :format(#sources))
