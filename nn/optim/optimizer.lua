-- torch.optim.optimizer -- the Optimizer base class: parameter groups with
-- per-group options, per-parameter state, zero_grad, step(closure) (the
-- update itself runs under no_grad), state_dict / load_state_dict in
-- PyTorch's layout (parameters numbered 1.. across groups in order).
local torch = require "torch"
local U = require "torch.nn.util"

local Optimizer = {}
Optimizer.__index = Optimizer
Optimizer.__name = "Optimizer"

-- Marks a default that the user must give (SGD's lr).
Optimizer.required = setmetatable({}, {__tostring = function() return "<required parameter>" end})

-- Class(params, ...) and the methods below are public entry points: an
-- error raised inside the library names the optimizer at the caller's line.
local function name_of(o) return "optim." .. (rawget(o, "__name") or getmetatable(o).__name) end
local construct = U.public(function(C, ...) local self = setmetatable({}, C); self:__init(...); return self end,
                           name_of)

-- Optimizer:extend(name) -> a subclass; instances from Class(params, ...).
function Optimizer:extend(name)
  local C = {__name = name}
  C.__index = C
  C.__tostring = function(o) return o:_repr() end
  return setmetatable(C, {__index = self, __call = construct})
end

-- Base setup: params is a list of tensors or of groups {params = {...}, lr = ..., ...}.
function Optimizer:_setup(params, defaults)
  self.defaults, self.state, self.param_groups = defaults, {}, {}
  if torch.is_tensor(params) then
    error(name_of(self) .. ": params must be a list of tensors or of parameter groups, got a single tensor "
          .. "(wrap it in a table: {t})", 3)
  end
  if type(params) ~= "table" then error(name_of(self) .. ": params must be a list, got " .. type(params), 3) end
  if getmetatable(params) and getmetatable(params).__module_class then
    error(name_of(self) .. ": pass model:parameters(), not the module itself", 3)
  end
  if #params == 0 then error(name_of(self) .. ": got an empty parameter list", 3) end
  if torch.is_tensor(params[1]) then params = {{params = params}} end
  for _, g in ipairs(params) do self:add_param_group(g) end
end

-- add_param_group(group): group.params (a tensor or list) with options;
-- missing options come from the optimizer's defaults.
function Optimizer:add_param_group(group)
  if type(group) ~= "table" or group.params == nil then
    error(name_of(self) .. ": a parameter group must be a table with a 'params' field", 2)
  end
  local ps = group.params
  if torch.is_tensor(ps) then ps = {ps} end
  local g = {}
  for k, v in pairs(group) do g[k] = v end
  g.params = {}
  for i, p in ipairs(ps) do
    if not torch.is_tensor(p) then
      error(("%s: parameter %d of a group is a %s, not a tensor"):format(name_of(self), i, type(p)), 2)
    end
    if not p.is_leaf then
      error(name_of(self) .. ": can't optimize a non-leaf tensor (use a parameter or detach())", 2)
    end
    g.params[i] = p
  end
  for k, v in pairs(self.defaults) do
    if g[k] == nil then
      if v == Optimizer.required then
        error(("%s: parameter group didn't specify a value of required optimization parameter %s"):format(
              name_of(self), k), 2)
      end
      g[k] = type(v) == "table" and {table.unpack(v)} or v
    end
  end
  local seen = {}
  for _, other in ipairs(self.param_groups) do for _, p in ipairs(other.params) do seen[p] = true end end
  for _, p in ipairs(g.params) do
    if seen[p] then error(name_of(self) .. ": some parameters appear in more than one parameter group", 2) end
  end
  self.param_groups[#self.param_groups + 1] = g
end

-- zero_grad([set_to_none=true]): clears the gradients of all parameters.
function Optimizer:zero_grad(set_to_none)
  if U.opts("zero_grad", set_to_none, "set_to_none") then set_to_none = set_to_none.set_to_none end
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      if set_to_none == false then
        local gr = p.grad
        if gr ~= nil then torch.no_grad(function() gr:zero_() end) end
      else
        p.grad = nil
      end
    end
  end
end

-- step([closure]): one update of every parameter with a gradient; closure
-- (re-evaluating the loss with gradients) is called first if given.
function Optimizer:step(closure)
  local loss
  if closure ~= nil then loss = torch.enable_grad(closure) end
  torch.no_grad(function()
    for _, group in ipairs(self.param_groups) do self:_update_group(group) end
  end)
  return loss
end

-- state_dict(): {state = {[i] = {...}}, param_groups = {{..., params = {i, ...}}}}
-- with parameters numbered 1.. in group order. Tensors are shared, not copied.
function Optimizer:state_dict()
  local index, n = {}, 0
  local groups = {}
  for gi, g in ipairs(self.param_groups) do
    local pg = {}
    for k, v in pairs(g) do if k ~= "params" then pg[k] = type(v) == "table" and {table.unpack(v)} or v end end
    pg.params = {}
    for _, p in ipairs(g.params) do
      if index[p] == nil then n = n + 1; index[p] = n end
      pg.params[#pg.params + 1] = index[p]
    end
    groups[gi] = pg
  end
  local state = {}
  for p, st in pairs(self.state) do
    if index[p] then
      local s = {}
      for k, v in pairs(st) do s[k] = v end
      state[index[p]] = s
    end
  end
  return {state = state, param_groups = groups}
end

-- load_state_dict(sd): restores options and state; group count and sizes
-- must match. Floating state tensors are cast to their parameter's dtype
-- and moved to its device.
function Optimizer:load_state_dict(sd)
  local groups = sd.param_groups
  if type(groups) ~= "table" or #groups ~= #self.param_groups then
    error(("%s: loaded state dict has %d parameter groups, the optimizer has %d"):format(name_of(self),
          type(groups) == "table" and #groups or 0, #self.param_groups), 2)
  end
  local id_to_param = {}
  for gi, g in ipairs(self.param_groups) do
    if #groups[gi].params ~= #g.params then
      error(("%s: loaded state dict contains a parameter group (%d) of %d parameters, the optimizer's has %d"):format(
            name_of(self), gi, #groups[gi].params, #g.params), 2)
    end
    for j, id in ipairs(groups[gi].params) do id_to_param[id] = g.params[j] end
  end
  local state = {}
  for id, st in pairs(sd.state or {}) do
    local p = id_to_param[tonumber(id)]
    if p ~= nil then
      local s = {}
      for k, v in pairs(st) do
        if torch.is_tensor(v) then
          if v:is_floating_point() and k ~= "step" then v = v:to(p.dtype):to(p.device) end
          v = v:clone()
        end
        s[k] = v
      end
      state[p] = s
    end
  end
  self.state = state
  for gi, g in ipairs(self.param_groups) do
    for k, v in pairs(groups[gi]) do
      if k ~= "params" then g[k] = type(v) == "table" and {table.unpack(v)} or v end
    end
  end
end

function Optimizer:_repr()
  local lines = {self.__name .. " ("}
  for i, g in ipairs(self.param_groups) do
    lines[#lines + 1] = "Parameter Group " .. (i - 1 + 1)
    local keys = {}
    for k in pairs(g) do if k ~= "params" then keys[#keys + 1] = k end end
    table.sort(keys)
    for _, k in ipairs(keys) do lines[#lines + 1] = "    " .. k .. ": " .. U.repr(g[k]) end
  end
  lines[#lines + 1] = ")"
  return table.concat(lines, "\n")
end

for _, k in ipairs{"add_param_group", "zero_grad", "step", "state_dict", "load_state_dict"} do
  Optimizer[k] = U.public(Optimizer[k], name_of)
end

return Optimizer
