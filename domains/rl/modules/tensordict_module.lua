-- torch.rl.modules.tensordict_module -- TensorDictModule (a module that
-- reads its inputs from in_keys of a TensorDict and writes its outputs to
-- out_keys), TensorDictSequential, and TorchRL's two thin wrappers: Actor
-- (observation -> action) and ValueOperator (observation[, action] ->
-- state_value or state_action_value). forward writes into the TensorDict
-- it gets and returns it.
local torch = require "torch"
local nn = require "torch.nn"
local K = require "torch.rl.modules.keys"

local M = {}
local PREFIX = "torch.rl.modules."

local TensorDictModule = nn.Module:extend("TensorDictModule")
TensorDictModule.__prefix = PREFIX
M.TensorDictModule = TensorDictModule

-- TensorDictModule(module, in_keys, out_keys): module is an nn.Module or a
-- function; it gets the in_keys' values as arguments and returns one value
-- per out_key (several return values, or one table of them).
function TensorDictModule:__init(module, in_keys, out_keys)
  local fname = PREFIX .. self:_get_name()
  if type(module) == "function" then
    rawset(self, "_fn", module)
  elseif nn.is_module and nn.is_module(module) or (type(module) == "table" and module.forward) then
    self.module = module
  else
    error(("%s: module must be an nn.Module or a function, got %s"):format(fname, type(module)), 2)
  end
  self.in_keys = K.list(fname, "in_keys", in_keys)
  self.out_keys = K.list(fname, "out_keys", out_keys)
  if #self.out_keys == 0 then error(fname .. ": out_keys must name at least one key", 2) end
end

-- forward(td) -> td with the out_keys written.
function TensorDictModule:forward(td)
  local fname = PREFIX .. self:_get_name()
  local args = {}
  for i, k in ipairs(self.in_keys) do args[i] = K.get(fname, td, k) end
  local f = rawget(self, "_fn")
  local outs
  if f then outs = table.pack(f(table.unpack(args, 1, #self.in_keys)))
  else outs = table.pack(self.module(table.unpack(args, 1, #self.in_keys))) end
  if outs.n == 1 and type(outs[1]) == "table" and not torch.is_tensor(outs[1]) and #self.out_keys > 1 then
    outs = outs[1]
  end
  for i, k in ipairs(self.out_keys) do
    local v = outs[i]
    if v == nil then
      error(("%s: the module returned %d value(s) but out_keys names %d"):format(fname, i - 1, #self.out_keys), 2)
    end
    td:set(k, v)
  end
  return td
end

function TensorDictModule:extra_repr()
  local i, o = {}, {}
  for _, k in ipairs(self.in_keys) do i[#i + 1] = K.str(k) end
  for _, k in ipairs(self.out_keys) do o[#o + 1] = K.str(k) end
  return "in_keys={" .. table.concat(i, ", ") .. "}, out_keys={" .. table.concat(o, ", ") .. "}"
end

M.SafeModule = TensorDictModule

---------------------------------------------------------------- TensorDictSequential

local TensorDictSequential = nn.Module:extend("TensorDictSequential")
TensorDictSequential.__prefix = PREFIX
M.TensorDictSequential = TensorDictSequential

-- TensorDictSequential(m1, m2, ...) or TensorDictSequential{m1, m2}: runs
-- the TensorDict modules in order. in_keys: the keys read before being
-- written; out_keys: every key written.
function TensorDictSequential:__init(...)
  local mods = {...}
  if #mods == 1 and type(mods[1]) == "table" and not mods[1].forward then mods = mods[1] end
  local fname = PREFIX .. "TensorDictSequential"
  local ins, outs = {}, {}
  local function has(list, k) for _, x in ipairs(list) do if K.equal(x, k) then return true end end return false end
  for i, m in ipairs(mods) do
    if type(m) ~= "table" or type(m.in_keys) ~= "table" or type(m.out_keys) ~= "table" then
      error(("%s: argument %d is not a TensorDict module (it needs in_keys and out_keys)"):format(fname, i), 2)
    end
    self:add_module(tostring(i), m)
    for _, k in ipairs(m.in_keys) do if not has(outs, k) and not has(ins, k) then ins[#ins + 1] = k end end
    for _, k in ipairs(m.out_keys) do if not has(outs, k) then outs[#outs + 1] = k end end
  end
  self.in_keys, self.out_keys = ins, outs
end

function TensorDictSequential:forward(td)
  for _, m in ipairs(self:children()) do td = m(td) end
  return td
end

---------------------------------------------------------------- Actor, ValueOperator

local Actor = TensorDictModule:extend("Actor")
Actor.__prefix = PREFIX
M.Actor = Actor

-- Actor(module[, in_keys={"observation"}, out_keys={"action"}, spec]).
function Actor:__init(module, in_keys, out_keys, spec)
  if type(in_keys) == "table" and in_keys.in_keys ~= nil or (type(in_keys) == "table" and in_keys.spec) then
    local o = in_keys
    in_keys, out_keys, spec = o.in_keys, o.out_keys, o.spec
  end
  TensorDictModule.__init(self, module, in_keys or {"observation"}, out_keys or {"action"})
  rawset(self, "spec", spec)
end

local ValueOperator = TensorDictModule:extend("ValueOperator")
ValueOperator.__prefix = PREFIX
M.ValueOperator = ValueOperator

-- ValueOperator(module[, in_keys={"observation"}, out_keys]): out_keys
-- defaults to {"state_action_value"} when "action" is among in_keys, else
-- {"state_value"}.
function ValueOperator:__init(module, in_keys, out_keys)
  if type(in_keys) == "table" and (in_keys.in_keys ~= nil or in_keys.out_keys ~= nil) then
    in_keys, out_keys = in_keys.in_keys, in_keys.out_keys
  end
  in_keys = K.list(PREFIX .. "ValueOperator", "in_keys", in_keys, {"observation"})
  if out_keys == nil then
    out_keys = {"state_value"}
    for _, k in ipairs(in_keys) do if k == "action" then out_keys = {"state_action_value"} end end
  end
  TensorDictModule.__init(self, module, in_keys, out_keys)
end

return M
