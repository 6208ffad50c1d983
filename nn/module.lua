-- torch.nn.module -- nn.Module, the base class of every layer, and the one
-- class helper (Module:extend). A module holds parameters, buffers and child
-- modules in three ordered registries; assigning a module or an nn.Parameter
-- to a field registers it, as in PyTorch. Knows no layer.
local torch = require "torch"
local U = require "torch.nn.util"

local is_tensor = torch.is_tensor

-- Tensors made by nn.Parameter (weak keys: the set never keeps one alive).
local PARAMS = setmetatable({}, {__mode = "k"})

-- nn.Parameter(t[, requires_grad]): a leaf sharing t's storage that requires
-- grad (unless requires_grad is false); assigning it to a module field
-- registers it as a parameter.
local function Parameter(t, requires_grad)
  if t == nil then t = torch.empty(0) end
  if not is_tensor(t) then error("nn.Parameter: expected a tensor, got " .. type(t), 2) end
  local p = t:detach()
  p:requires_grad_(requires_grad ~= false)
  PARAMS[p] = true
  return p
end

-- An ordered registry: names in insertion order (a name may map to nil, as
-- PyTorch's `bias = None`), has[name], map[name] = value.
local function registry() return {names = {}, has = {}, map = {}} end

local function reg_set(r, name, v)
  if not r.has[name] then
    r.has[name] = true
    r.names[#r.names + 1] = name
  end
  r.map[name] = v
end

local function reg_remove(r, name)
  if not r.has[name] then return end
  r.has[name], r.map[name] = nil, nil
  for i, n in ipairs(r.names) do
    if n == name then table.remove(r.names, i) break end
  end
end

local Module = {}

-- True if v is a module instance.
local function is_module(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  return mt ~= nil and rawget(mt, "__module_class") == true
end

-- Name of the i-th child (negative counts from the end), or nil.
local function child_at(self, i)
  local names = rawget(self, "_modules").names
  if i < 0 then i = #names + i + 1 end
  return names[i]
end

local function check_name(self, name, what)
  if type(name) ~= "string" then
    error(("%s: %s name must be a string, got %s"):format(self:_get_name(), what, type(name)), 3)
  end
  if name == "" or name:find(".", 1, true) then
    error(("%s: %s name must be non-empty and contain no '.', got '%s'"):format(self:_get_name(), what, name), 3)
  end
end

-- How errors name a module class: "nn.Linear" for the library's classes
-- (another package's classes set the prefix as the field __prefix of a
-- common base: "v2." for torch.vision.transforms.v2), the bare name for a
-- user's own.
local function class_name(C)
  local name = rawget(C, "__name") or "Module"
  local f = rawget(C, "__init") or rawget(C, "forward")
  if f == nil or torch._is_library(f) then return (C.__prefix or "nn.") .. name end
  return name
end
local function instance_name(self) return class_name(getmetatable(self)) end

-- m(...) calls m:forward(...): a public entry point (U.public), so an error
-- raised inside the library names the module at the caller's line.
local call_forward = U.public("forward", instance_name)

-- Builds the metamethods of class C (metamethods are not inherited).
local function install_meta(C)
  C.__module_class = true
  C.__index = function(self, k)
    local v = C[k]
    if v ~= nil then return v end
    if math.type(k) == "integer" then k = child_at(self, k); if k == nil then return nil end end
    local r = rawget(self, "_parameters")
    if r == nil then return nil end
    v = r.map[k]; if v ~= nil then return v end
    v = rawget(self, "_buffers").map[k]; if v ~= nil then return v end
    return rawget(self, "_modules").map[k]
  end
  C.__newindex = function(self, k, v)
    if math.type(k) == "integer" then
      local name = child_at(self, k)
      if not name then error(("%s: no child at index %d"):format(self:_get_name(), k), 2) end
      k = name
    end
    local params, buffers, mods = rawget(self, "_parameters"), rawget(self, "_buffers"), rawget(self, "_modules")
    if is_module(v) then
      reg_remove(params, k); reg_remove(buffers, k)
      reg_set(mods, k, v)
    elseif params.has[k] then
      if v ~= nil and not is_tensor(v) then
        error(("%s: cannot assign a %s to parameter '%s' (a tensor or nil expected)"):format(self:_get_name(), type(v), k), 2)
      end
      params.map[k] = v
    elseif buffers.has[k] then
      buffers.map[k] = v
    elseif mods.has[k] then
      if v ~= nil then error(("%s: cannot assign a %s to child module '%s'"):format(self:_get_name(), type(v), k), 2) end
      mods.map[k] = nil
    elseif is_tensor(v) and PARAMS[v] then
      reg_set(params, k, v)
    else
      rawset(self, k, v)
    end
  end
  C.__call = call_forward
  C.__tostring = function(self) return self:_repr() end
  C.__len = function(self) return #rawget(self, "_modules").names end
end

local class_mt = {}
class_mt.__index = function(C, k) local p = rawget(C, "__parent"); return p and p[k] end
class_mt.__tostring = function(C) return (C.__prefix or "nn.") .. rawget(C, "__name") .. " (class)" end
-- Class(...): a new instance, set up by its __init(...)
class_mt.__call = U.public(function(C, ...)
  local self = setmetatable({training = true, _parameters = registry(), _buffers = registry(),
                             _modules = registry(), _non_persistent = {}}, C)
  self:__init(...)
  return self
end, class_name)

-- Module:extend(name) -> a new class deriving from self. Instances come from
-- Class(...), which calls Class.__init(self, ...); define forward(self, ...).
function Module:extend(name)
  if type(name) ~= "string" then error("Module:extend(name): name must be a string", 2) end
  local C = {__name = name, __parent = self}
  install_meta(C)
  return setmetatable(C, class_mt)
end

Module.__name = "Module"
install_meta(Module)
setmetatable(Module, class_mt)

function Module:__init() end

function Module:_get_name() return getmetatable(self).__name end

-- "Name(extra_repr)": how error messages name the module.
function Module:_label() return self:_get_name() .. "(" .. self:extra_repr() .. ")" end

function Module:forward()
  error(self:_get_name() .. ": forward is not implemented (define " .. self:_get_name() .. ":forward)", 2)
end

-- register_parameter(name, p): p a tensor (made a parameter) or nil.
function Module:register_parameter(name, p)
  check_name(self, name, "parameter")
  if p ~= nil and not is_tensor(p) then
    error(("%s: register_parameter('%s'): expected a tensor or nil, got %s"):format(self:_get_name(), name, type(p)), 2)
  end
  if p ~= nil and not PARAMS[p] then PARAMS[p] = true end
  if rawget(self, name) ~= nil then rawset(self, name, nil) end
  reg_remove(self._buffers, name); reg_remove(self._modules, name)
  reg_set(self._parameters, name, p)
end

-- register_buffer(name, t[, persistent=true]): state that is not trained
-- (running statistics); non-persistent buffers stay out of state_dict().
function Module:register_buffer(name, t, persistent)
  if U.opts("register_buffer", persistent, "persistent") then persistent = persistent.persistent end
  check_name(self, name, "buffer")
  if t ~= nil and not is_tensor(t) then
    error(("%s: register_buffer('%s'): expected a tensor or nil, got %s"):format(self:_get_name(), name, type(t)), 2)
  end
  if rawget(self, name) ~= nil then rawset(self, name, nil) end
  reg_remove(self._parameters, name); reg_remove(self._modules, name)
  reg_set(self._buffers, name, t)
  self._non_persistent[name] = (persistent == false) or nil
end

-- add_module(name, m): registers child m (or nil) under name.
function Module:add_module(name, m)
  if math.type(name) == "integer" then name = tostring(name) end
  check_name(self, name, "module")
  if m ~= nil and not is_module(m) then
    error(("%s: add_module('%s'): expected a module, got %s"):format(self:_get_name(), name, type(m)), 2)
  end
  reg_remove(self._parameters, name); reg_remove(self._buffers, name)
  reg_set(self._modules, name, m)
end
Module.register_module = Module.add_module

-- Lists (name, value) pairs of registry `which` over self and (if recurse)
-- its descendants, with dotted names, each tensor once.
local function named_members(self, which, prefix, recurse)
  local out, seen = {}, {}
  local mods
  if recurse == false then mods = {{prefix or "", self}} else mods = self:_named_module_list(prefix or "") end
  for _, pm in ipairs(mods) do
    local mp, m = pm[1], pm[2]
    local r = rawget(m, which)
    for _, name in ipairs(r.names) do
      local v = r.map[name]
      if v ~= nil and not seen[v] and not (which == "_buffers" and false) then
        seen[v] = true
        out[#out + 1] = {mp == "" and name or (mp .. "." .. name), v}
      end
    end
  end
  return out
end

local function iter(list)
  local i = 0
  return function()
    i = i + 1
    local e = list[i]
    if e then return e[1], e[2] end
  end
end

local function values(list)
  local r = {}
  for i, e in ipairs(list) do r[i] = e[2] end
  return r
end

-- [{prefix, module}] of self and its descendants (each module once).
function Module:_named_module_list(prefix)
  local out, seen = {}, {}
  local function walk(m, p)
    if seen[m] then return end
    seen[m] = true
    out[#out + 1] = {p, m}
    local r = rawget(m, "_modules")
    for _, name in ipairs(r.names) do
      local c = r.map[name]
      if c ~= nil then walk(c, p == "" and name or (p .. "." .. name)) end
    end
  end
  walk(self, prefix or "")
  return out
end

-- for name, p in m:named_parameters() do ... end  (names like "fc1.weight";
-- Sequential children are named "1", "2", ...)
function Module:named_parameters(prefix, recurse)
  if U.opts("named_parameters", prefix, "prefix recurse") then prefix, recurse = prefix.prefix, prefix.recurse end
  return iter(named_members(self, "_parameters", prefix, recurse))
end
-- A list of the parameters (each once), in registration order.
function Module:parameters(recurse)
  if U.opts("parameters", recurse, "recurse") then recurse = recurse.recurse end
  return values(named_members(self, "_parameters", "", recurse))
end
function Module:named_buffers(prefix, recurse)
  if U.opts("named_buffers", prefix, "prefix recurse") then prefix, recurse = prefix.prefix, prefix.recurse end
  return iter(named_members(self, "_buffers", prefix, recurse))
end
function Module:buffers(recurse)
  if U.opts("buffers", recurse, "recurse") then recurse = recurse.recurse end
  return values(named_members(self, "_buffers", "", recurse))
end
function Module:named_children()
  local out, r = {}, self._modules
  for _, name in ipairs(r.names) do
    if r.map[name] ~= nil then out[#out + 1] = {name, r.map[name]} end
  end
  return iter(out)
end
function Module:children()
  local out, r = {}, self._modules
  for _, name in ipairs(r.names) do
    if r.map[name] ~= nil then out[#out + 1] = r.map[name] end
  end
  return out
end
-- for name, m in model:named_modules() do ... end  (self first, named "")
function Module:named_modules(prefix)
  if U.opts("named_modules", prefix, "prefix") then prefix = prefix.prefix end
  return iter(self:_named_module_list(prefix or ""))
end
function Module:modules() return values(self:_named_module_list("")) end

-- get_submodule("features.1"): the descendant at a dotted path.
function Module:get_submodule(target)
  if target == "" then return self end
  local m = self
  for part in target:gmatch("[^.]+") do
    local c = rawget(m, "_modules").map[part]
    if c == nil then error(("%s has no submodule '%s' (in '%s')"):format(m:_get_name(), part, target), 2) end
    m = c
  end
  return m
end

function Module:train(mode)
  if mode == nil then mode = true end
  for _, pm in ipairs(self:_named_module_list("")) do rawset(pm[2], "training", mode and true or false) end
  return self
end
function Module:eval() return self:train(false) end

function Module:requires_grad_(flag)
  for _, p in ipairs(self:parameters()) do p:requires_grad_(flag ~= false) end
  return self
end

-- zero_grad([set_to_none=true]): clears the .grad of every parameter.
function Module:zero_grad(set_to_none)
  if U.opts("zero_grad", set_to_none, "set_to_none") then set_to_none = set_to_none.set_to_none end
  for _, p in ipairs(self:parameters()) do
    if set_to_none == false then
      local g = p.grad
      if g then g:zero_() end
    else
      p.grad = nil
    end
  end
  return self
end

-- fn(m) for every descendant (children first), then fn(self); returns self.
function Module:apply(fn)
  for _, c in ipairs(self:children()) do c:apply(fn) end
  fn(self)
  return self
end

local DTYPES
local function is_dtype(v)
  if not DTYPES then
    DTYPES = {}
    for _, n in ipairs{"float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
                       "bool", "uint16"} do
      DTYPES[torch[n]] = true
    end
  end
  return DTYPES[v] == true
end

-- Converts every parameter and buffer with conv(t) (nil: unchanged). A
-- converted parameter is a new leaf tensor (create optimizers afterwards).
function Module:_apply_tensors(conv)
  local torch_no_grad = torch.no_grad
  torch_no_grad(function()
    for _, pm in ipairs(self:_named_module_list("")) do
      local m = pm[2]
      local params = rawget(m, "_parameters")
      for _, name in ipairs(params.names) do
        local p = params.map[name]
        if p ~= nil then
          local q = conv(p)
          if q ~= nil and q ~= p then
            local np = q:detach()
            np:requires_grad_(p.requires_grad)
            PARAMS[np] = true
            local g = p.grad
            if g ~= nil then local ng = conv(g); if ng ~= nil then np.grad = ng end end
            params.map[name] = np
          end
        end
      end
      local bufs = rawget(m, "_buffers")
      for _, name in ipairs(bufs.names) do
        local b = bufs.map[name]
        if b ~= nil then
          local q = conv(b)
          if q ~= nil then bufs.map[name] = q end
        end
      end
    end
  end)
  return self
end

-- to(dtype) converts floating parameters and buffers; to(device) moves all.
function Module:to(target, ...)
  if U.opts("to", target, "dtype device") then target = target.dtype or target.device end
  if is_dtype(target) then
    return self:_apply_tensors(function(t)
      if t:is_floating_point() and t.dtype ~= target then return t:to(target) end
    end)
  end
  return self:_apply_tensors(function(t) return t:to(target) end)
end
function Module:float() return self:to(torch.float32) end
function Module:double() return self:to(torch.float64) end
function Module:half() return self:to(torch.float16) end
function Module:bfloat16() return self:to(torch.bfloat16) end
function Module:cpu() return self:to("cpu") end
function Module:cuda() return self:to("cuda") end

-- state_dict([{prefix=, keep_vars=}]): key -> tensor for every parameter and
-- persistent buffer, keys like "features.1.weight". Values share storage with
-- the module (detached unless keep_vars).
function Module:state_dict(opts)
  opts = opts or {}
  U.check("state_dict", opts, "prefix keep_vars")
  local prefix, keep = opts.prefix or "", opts.keep_vars
  local out = {}
  for _, pm in ipairs(self:_named_module_list("")) do
    local mp, m = pm[1], pm[2]
    local base = prefix .. (mp == "" and "" or mp .. ".")
    for _, which in ipairs{"_parameters", "_buffers"} do
      local r = rawget(m, which)
      for _, name in ipairs(r.names) do
        local v = r.map[name]
        if v ~= nil and not (which == "_buffers" and m._non_persistent[name]) then
          out[base .. name] = keep and v or v:detach()
        end
      end
    end
  end
  return out
end

-- Ordered keys of state_dict() (the order parameters were registered).
function Module:state_dict_keys()
  local keys = {}
  for _, pm in ipairs(self:_named_module_list("")) do
    local mp, m = pm[1], pm[2]
    local base = mp == "" and "" or mp .. "."
    for _, which in ipairs{"_parameters", "_buffers"} do
      local r = rawget(m, which)
      for _, name in ipairs(r.names) do
        if r.map[name] ~= nil and not (which == "_buffers" and m._non_persistent[name]) then
          keys[#keys + 1] = base .. name
        end
      end
    end
  end
  return keys
end

local function quoted(list)
  local q = {}
  for i, k in ipairs(list) do q[i] = '"' .. k .. '"' end
  return table.concat(q, ", ")
end

-- load_state_dict(sd[, strict=true | {strict=}]): copies sd's tensors into
-- the parameters and buffers. With strict, missing or unexpected keys are an
-- error; a shape mismatch always is. All problems are reported in one error
-- and nothing is copied then. Returns {missing_keys=, unexpected_keys=}.
function Module:load_state_dict(sd, strict)
  if U.opts("load_state_dict", strict, "strict") then strict = strict.strict end
  if strict == nil then strict = true end
  if type(sd) ~= "table" then error("load_state_dict: expected a table of tensors, got " .. type(sd), 2) end
  local own = self:state_dict({keep_vars = true})
  local keys = self:state_dict_keys()
  local missing, unexpected, errors = {}, {}, {}
  for _, k in ipairs(keys) do
    local v = sd[k]
    if v == nil then
      missing[#missing + 1] = k
    elseif not is_tensor(v) then
      errors[#errors + 1] = ('While copying the parameter named "%s", expected a tensor from checkpoint but received %s'):format(k, type(v))
    else
      local a, b = U.shape_str(v), U.shape_str(own[k])
      if a ~= b then
        errors[#errors + 1] = ("size mismatch for %s: copying a param with shape %s from checkpoint, the shape in current model is %s.")
            :format(k, a, b)
      end
    end
  end
  for k in pairs(sd) do
    if own[k] == nil then unexpected[#unexpected + 1] = tostring(k) end
  end
  table.sort(unexpected)
  local lines = {}
  if strict then
    if #unexpected > 0 then lines[#lines + 1] = "Unexpected key(s) in state_dict: " .. quoted(unexpected) .. "." end
    if #missing > 0 then lines[#lines + 1] = "Missing key(s) in state_dict: " .. quoted(missing) .. "." end
  end
  for _, e in ipairs(errors) do lines[#lines + 1] = e end
  if #lines > 0 then
    error("Error(s) in loading state_dict for " .. self:_get_name() .. ":\n\t" .. table.concat(lines, "\n\t"), 2)
  end
  torch.no_grad(function()
    for _, k in ipairs(keys) do
      local v = sd[k]
      if v ~= nil then own[k]:copy_(v) end
    end
  end)
  return {missing_keys = missing, unexpected_keys = unexpected}
end

-- The argument part of the module's printed form, e.g. "in_features=3, ...".
function Module:extra_repr() return "" end

local function addindent(s, n)
  local pad = string.rep(" ", n)
  return (s:gsub("\n", "\n" .. pad))
end

-- PyTorch's module repr: Name(extra) or a tree of "(name): Child(...)" lines.
function Module:_repr()
  local extra = self:extra_repr()
  local lines, nextra = {}, 0
  if extra ~= "" then
    for l in (extra .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l; nextra = nextra + 1 end
  end
  local r = self._modules
  local nchild = 0
  for _, name in ipairs(r.names) do
    local c = r.map[name]
    if c ~= nil then
      lines[#lines + 1] = "(" .. name .. "): " .. addindent(c:_repr(), 2)
      nchild = nchild + 1
    end
  end
  local s = self:_get_name() .. "("
  if #lines > 0 then
    if nextra == 1 and nchild == 0 then s = s .. lines[1]
    else s = s .. "\n  " .. table.concat(lines, "\n  ") .. "\n" end
  end
  return s .. ")"
end

-- The methods users call on modules are public entry points as well.
for _, k in ipairs{"register_parameter", "register_buffer", "add_module", "named_parameters", "parameters",
                   "named_buffers", "buffers", "named_children", "children", "named_modules", "modules",
                   "get_submodule", "train", "eval", "requires_grad_", "zero_grad", "apply", "to", "float", "double",
                   "half", "bfloat16", "cpu", "cuda", "state_dict", "load_state_dict"} do
  Module[k] = U.public(Module[k], instance_name)
end
Module.register_module = Module.add_module

return {Module = Module, Parameter = Parameter, is_module = is_module, is_parameter = function(t) return PARAMS[t] == true end}
