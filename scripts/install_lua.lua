-- scripts/install_lua.lua DEST -- installs the Lua packages of torch into
-- DEST (PREFIX/share/lua/5.4) in Lua's standard layout, as the package map
-- (torch._packages(), lua_bindings/packages.c) places them in the source
-- tree: a file at <package folder>/a/b.lua goes to DEST/<package as
-- path>/a/b.lua, unless a deeper package's folder holds it. Run by `make
-- install` with build/moontorch.
local dest = assert(arg[1], "usage: moontorch scripts/install_lua.lua DEST")
local map = torch._packages()
assert(not map.installed and map.root ~= "", "install_lua: run it with the build tree's moontorch")

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function sh(cmd) assert(os.execute(cmd), "install_lua: failed: " .. cmd) end
local function as_path(module) return (module:gsub("%.", "/")) end

-- true if rel (a path from the root) lies in the folder of a package
-- deeper than p's
local function deeper(p, rel)
  for _, o in ipairs(map) do
    if #o.path > #p.path and rel:sub(1, #o.path + 1) == o.path .. "/" then return true end
  end
  return false
end

local count = 0
local function put(src, target)
  sh("install -D -m 644 " .. q(src) .. " " .. q(dest .. "/" .. target))
  count = count + 1
end

for _, p in ipairs(map) do
  if p.path:sub(1, 1) == "=" then -- another name of a module: a one-line file
    local target = dest .. "/" .. as_path(p.module) .. ".lua"
    sh("mkdir -p " .. q(target:match("^(.*)/[^/]*$")))
    local f = assert(io.open(target, "w"))
    f:write(("-- %s is %s\nreturn require %q\n"):format(p.module, p.path:sub(2), p.path:sub(2)))
    f:close()
    count = count + 1
  elseif p.path:match("%.lua$") then
    put(map.root .. "/" .. p.path, as_path(p.module) .. ".lua")
  else
    local list = assert(io.popen("cd " .. q(map.root .. "/" .. p.path) .. " && find . -name '*.lua' | sort"))
    for f in list:lines() do
      local inner = f:sub(3)
      if not deeper(p, p.path .. "/" .. inner) then
        put(map.root .. "/" .. p.path .. "/" .. inner, as_path(p.module) .. "/" .. inner)
      end
    end
    list:close()
  end
end
print(("install_lua: %d Lua files in %s"):format(count, dest))
