-- jit.lua -- Lua helpers of torch.compile (lua_bindings/l_jit.c), run with
-- (tensor_id) where tensor_id(v) is a light userdata naming v's tensor, or
-- nil when v is not a tensor. Returns the table of helpers.
local tensor_id = ...
local M = {}

local MAX_DEPTH, MAX_ENTRIES, MAX_VISITS = 7, 4096, 200000

-- find_paths(fn, wanted) -> {[id] = {upvalue, key1, key2, ...}}: for each
-- tensor id in the set `wanted`, the shortest chain of table keys leading
-- to it from one of fn's upvalues (breadth first; tables are followed
-- through their own entries, never metatables; very large tables are
-- skipped, so a dataset held in an upvalue costs little).
function M.find_paths(fn, wanted)
  local found, left = {}, 0
  for _ in pairs(wanted) do left = left + 1 end
  local queue, seen, head, visits = {}, {}, 1, 0
  for u = 1, math.huge do
    local name, v = debug.getupvalue(fn, u)
    if name == nil then break end
    local id = type(v) == "userdata" and tensor_id(v)
    if id and wanted[id] and not found[id] then
      found[id] = {u}
      left = left - 1
    elseif type(v) == "table" and not seen[v] then
      seen[v] = true
      queue[#queue + 1] = {v, {u}}
    end
  end
  while head <= #queue and left > 0 and visits < MAX_VISITS do
    local t, path = queue[head][1], queue[head][2]
    head = head + 1
    local n = 0
    for k, v in next, t do
      n, visits = n + 1, visits + 1
      if n > MAX_ENTRIES then break end
      local tv = type(v)
      if tv == "userdata" then
        local id = tensor_id(v)
        if id and wanted[id] and not found[id] then
          local p = table.move(path, 1, #path, 1, {})
          p[#p + 1] = k
          found[id] = p
          left = left - 1
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

return M
