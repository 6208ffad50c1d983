-- jit.lua -- Lua helpers of torch.compile (lua_bindings/l_jit.c), run with
-- (tensor_id) where tensor_id(v) is a light userdata naming v's tensor, or
-- nil when v is not a tensor. Returns the table of helpers.
local tensor_id = ...
local M = {}

-- (a parameter of a module nested in a module sits 3 keys per level below it:
-- _modules.map.<name>, then _parameters.map.<name>)
local MAX_DEPTH, MAX_ENTRIES, MAX_VISITS, MAX_PATHS = 24, 4096, 200000, 4

-- find_paths(fn, wanted) -> {[id] = {path, ...}}: for each tensor id in
-- the set `wanted`, the chains of table keys {upvalue, key1, key2, ...}
-- leading to it from fn's upvalues, shortest first, at most MAX_PATHS
-- (breadth first; each table is entered once; tables are followed through
-- their own entries, never metatables; very large tables are cut short, so
-- a dataset held in an upvalue costs little). A tensor reachable two ways
-- (a model's weight and the optimizer's list) gets both, and both are
-- guarded.
function M.find_paths(fn, wanted)
  local found = {}
  local function add(id, path)
    local list = found[id]
    if not list then list = {}; found[id] = list end
    if #list < MAX_PATHS then list[#list + 1] = path end
  end
  local queue, seen, head, visits = {}, {}, 1, 0
  for u = 1, math.huge do
    local name, v = debug.getupvalue(fn, u)
    if name == nil then break end
    local id = type(v) == "userdata" and tensor_id(v)
    if id and wanted[id] then
      add(id, {u})
    elseif type(v) == "table" and not seen[v] then
      seen[v] = true
      queue[#queue + 1] = {v, {u}}
    end
  end
  while head <= #queue and visits < MAX_VISITS do
    local t, path = queue[head][1], queue[head][2]
    head = head + 1
    local n = 0
    for k, v in next, t do
      n, visits = n + 1, visits + 1
      if n > MAX_ENTRIES then break end
      local tv = type(v)
      if tv == "userdata" then
        local id = tensor_id(v)
        if id and wanted[id] then
          local p = table.move(path, 1, #path, 1, {})
          p[#p + 1] = k
          add(id, p)
        end
      elseif tv == "table" and not seen[v] and #path < MAX_DEPTH then
        seen[v] = true
        local p = table.move(path, 1, #path, 1, {})
        p[#p + 1] = k
        queue[#queue + 1] = {v, p}
      end
    end
  end
  return found
end

-- compile_module(compile, mod, opts) -> a callable proxy of module mod
-- whose calls run torch.compile of mod's forward; everything else (its
-- parameters, train/eval, state_dict) reads through to mod, as PyTorch's
-- OptimizedModule does (the module itself is in ._orig_mod).
-- The training flags of mod and its submodules ("1" or "0" each, in
-- registration order): passed to the compiled call as a string argument,
-- whose value is guarded, so train() and eval() select their own graphs.
local function train_flags(mod, acc)
  acc[#acc + 1] = rawget(mod, "training") == false and "0" or "1"
  local r = type(mod) == "table" and rawget(mod, "_modules")
  if r and r.names then
    for _, name in ipairs(r.names) do
      local sub = r.map[name]
      if sub then train_flags(sub, acc) end
    end
  end
  return acc
end

function M.compile_module(compile, mod, opts)
  local c = compile(function(_, ...) return mod(...) end, opts)
  local proxy = {_orig_mod = mod, _compiled = c}
  return setmetatable(proxy, {
    __call = function(_, ...) return c(table.concat(train_flags(mod, {})), ...) end,
    __index = function(_, k) -- methods called on the proxy run on the module
      local v = mod[k]
      if type(v) ~= "function" then return v end
      return function(self, ...)
        if self == proxy then self = mod end
        return v(self, ...)
      end
    end,
    __tostring = function() return "compiled " .. tostring(mod) end,
  })
end

-- as_function(obj) -> a function calling obj (a module or another callable)
function M.as_function(obj) return function(...) return obj(...) end end

return M
