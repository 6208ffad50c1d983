-- torch.nn.container -- Sequential, ModuleList and ModuleDict. Children of
-- Sequential and ModuleList are named "1", "2", ... (Lua counts from 1), so
-- their parameters are "1.weight", "2.bias", ...; seq[i] / seq[-1] index them.
local M = require "torch.nn.module"
local Module, is_module = M.Module, M.is_module

local C = {}

local function add_list(self, mods, what)
  for i, m in ipairs(mods) do
    if not is_module(m) then error(("%s: argument %d is not a module (%s)"):format(what, i, type(m)), 3) end
    self:add_module(tostring(#self._modules.names + 1), m)
  end
end

-- Sequential(m1, m2, ...) or Sequential{m1, m2} or Sequential{name = m, ...}
-- (a table with names keeps no order: prefer add_module for named children).
local Sequential = Module:extend("Sequential")
function Sequential:__init(...)
  local first = ...
  if select("#", ...) == 1 and type(first) == "table" and not is_module(first) then
    if #first > 0 then add_list(self, first, "Sequential")
    else
      local names = {}
      for k in pairs(first) do names[#names + 1] = k end
      table.sort(names)
      for _, k in ipairs(names) do self:add_module(k, first[k]) end
    end
  else
    add_list(self, {...}, "Sequential")
  end
end
function Sequential:forward(x, ...)
  local r = self._modules
  local names, map = r.names, r.map
  for i = 1, #names do
    local m = map[names[i]]
    if m ~= nil then x = m:forward(x, ...) end
  end
  return x
end
-- append(m): adds m as the next child; returns self.
function Sequential:append(m)
  add_list(self, {m}, "Sequential:append")
  return self
end

-- ModuleList{m1, m2, ...}: holds modules (registered) without a forward.
local ModuleList = Module:extend("ModuleList")
function ModuleList:__init(mods)
  if mods ~= nil then add_list(self, mods, "ModuleList") end
end
function ModuleList:append(m) add_list(self, {m}, "ModuleList:append"); return self end
function ModuleList:extend(mods) add_list(self, mods, "ModuleList:extend"); return self end
-- insert(i, m): m becomes child i; later children move up (names are renumbered).
function ModuleList:insert(i, m)
  local list = self:children()
  if i < 0 then i = #list + i + 2 end
  table.insert(list, i, m)
  local r = self._modules
  r.names, r.has, r.map = {}, {}, {}
  add_list(self, list, "ModuleList:insert")
end
function ModuleList:forward()
  error("ModuleList has no forward: call its modules (for i, m in ipairs(list) do ... end)", 2)
end

-- ModuleDict{name = m, ...}: modules by name (sorted names when built from a
-- table); md.name or md["name"]; keys(), values(), items() in order.
local ModuleDict = Module:extend("ModuleDict")
function ModuleDict:__init(mods)
  if mods ~= nil then self:update(mods) end
end
function ModuleDict:update(mods)
  if #mods > 0 then
    for _, kv in ipairs(mods) do self:add_module(kv[1], kv[2]) end
  else
    local names = {}
    for k in pairs(mods) do names[#names + 1] = k end
    table.sort(names)
    for _, k in ipairs(names) do self:add_module(k, mods[k]) end
  end
  return self
end
function ModuleDict:keys()
  local out = {}
  for _, n in ipairs(self._modules.names) do out[#out + 1] = n end
  return out
end
function ModuleDict:values() return self:children() end
function ModuleDict:items()
  local list, i = self._modules, 0
  return function()
    i = i + 1
    local n = list.names[i]
    if n then return n, list.map[n] end
  end
end
function ModuleDict:contains(name) return self._modules.has[name] == true end
function ModuleDict:pop(name)
  local m = self._modules.map[name]
  local r = self._modules
  r.has[name], r.map[name] = nil, nil
  for i, n in ipairs(r.names) do if n == name then table.remove(r.names, i) break end end
  return m
end
function ModuleDict:forward()
  error("ModuleDict has no forward: call its modules by name", 2)
end

C.Sequential, C.ModuleList, C.ModuleDict = Sequential, ModuleList, ModuleDict
return C
