-- tests/lua/options_walk.lua -- run by test_options.lua in a process of its
-- own (the calls below have side effects): calls every registered (gated)
-- C function with a few argument lists, each ending in an options table,
-- while the options audit records every option name the function reads.
-- Prints "UNDECLARED fname: name" for each name read but not declared in
-- the function's mtl_reg row, "READS n", "FUNCTIONS n" and "DONE".
local torch = require "torch"

-- gated functions: C closures whose first upvalue is their mtl_reg row
local function gated(f)
  if type(f) ~= "function" then return false end
  local ok, _, row = pcall(debug.getupvalue, f, 1)
  local _, flags = debug.getupvalue(f, 2)
  return ok and type(row) == "userdata" and math.type(flags) == "integer"
end

local fns, seen = {}, {}
local function collect(t, prefix, depth)
  if seen[t] then return end
  seen[t] = true
  local keys = {}
  for k in pairs(t) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = rawget(t, k)
    if gated(v) and not seen[v] then
      seen[v] = true
      fns[#fns + 1] = {prefix .. k, v}
    elseif type(v) == "table" and depth > 0 then
      collect(v, prefix .. k .. ".", depth - 1)
    end
  end
end
for _, m in ipairs{"torch.nn", "torch.utils.data", "torch.vision", "torch.experiment", "torch.utils.tensorboard",
                   "torch.plot", "torch.profiler"} do
  pcall(require, m)
end
collect(torch.Tensor, "Tensor:", 0)
collect(torch, "torch.", 2)
for name, mod in pairs(package.loaded) do
  if type(mod) == "table" and name:match("^torch%.") then collect(mod, name .. ".", 1) end
end

-- these would wait, start processes or end this one
local skip = {exit = true, sleep = true, spawn = true, wait = true, kill = true, _exit = true, poll = true,
              read = true, readline = true, interrupt = true, _options_audit = true}

local x = torch.randn(2, 3)
local args = {
  {}, {x}, {x, 1}, {x, x}, {x, 1, 1}, {x, x, x}, {2, 3}, {torch.tensor({1, 2})}, {torch.randn(1, 1, 4, 4)},
  {torch.randn(1, 1, 4, 4), torch.randn(1, 1, 3, 3)}, {x, {1}}, {"x"}, {torch.randn(3, 3)},
  {torch.randn(2, 3, 4), torch.randn(2, 3, 4), torch.randn(2, 3, 4)}, {x, 1, true}, {x, 2, 1}, {{x, x}},
  {torch.ones(2, 2):bool()}, {torch.randn(4)},
}
torch._options_audit(true)
for _, e in ipairs(fns) do
  local name, f = e[1], e[2]
  if not skip[name:match("[%w_]+$")] then
    for _, a in ipairs(args) do
      local call = {table.unpack(a)}
      call[#call + 1] = {__audit = true}
      pcall(f, table.unpack(call))
    end
  end
end
local undeclared, reads = torch._options_audit(false)
for _, u in ipairs(undeclared) do print("UNDECLARED " .. u) end
print("READS " .. #reads)
print("FUNCTIONS " .. #fns)
print("DONE")
