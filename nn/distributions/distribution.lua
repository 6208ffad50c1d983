-- torch.distributions.distribution -- the Distribution base class, the class
-- helper every distribution and transform is made with (properties such as
-- d.mean are getters), and the shape and parameter helpers they share. It
-- knows no particular distribution.
local torch = require "torch"
local U = require "torch.nn.util"

local M = {}

local SIZE_MT = getmetatable(torch.zeros(1).shape)
local is_tensor = torch.is_tensor

-- size(list) -> a torch.Size holding a copy of the numbers of list.
local function size(list)
  local s = {}
  for i = 1, #list do s[i] = list[i] end
  return setmetatable(s, SIZE_MT)
end
M.size = size

-- concat(a, b, ...) -> a torch.Size of the lists one after another.
function M.concat(...)
  local s = {}
  for i = 1, select("#", ...) do
    local l = select(i, ...)
    for j = 1, #l do s[#s + 1] = l[j] end
  end
  return setmetatable(s, SIZE_MT)
end

-- "(2, 3)" as PyTorch writes a torch.Size.
function M.shape_str(s)
  if is_tensor(s) then s = s.shape end
  local p = {}
  for i = 1, #s do p[i] = tostring(s[i]) end
  return "(" .. table.concat(p, ", ") .. (#p == 1 and ",)" or ")")
end

-- sample_shape(fname, v) -> a torch.Size: nil -> (), n -> (n), a list -> itself.
function M.sample_shape(fname, v)
  if v == nil then return size{} end
  if math.type(v) == "integer" then v = {v} end
  if type(v) ~= "table" then error(("%s: sample_shape must be a list of sizes, got %s"):format(fname, type(v)), 3) end
  for i = 1, #v do
    if math.type(v[i]) ~= "integer" or v[i] < 0 then
      error(("%s: sample_shape must hold non-negative integers, got %s"):format(fname, tostring(v[i])), 3)
    end
  end
  return size(v)
end

-- Machine constants of a floating dtype (torch.finfo's eps, tiny, max).
local FINFO = {
  [torch.float32] = {eps = 1.1920928955078125e-07, tiny = 1.1754943508222875e-38, max = 3.4028234663852886e+38},
  [torch.float64] = {eps = 2.220446049250313e-16, tiny = 2.2250738585072014e-308, max = 1.7976931348623157e+308},
  [torch.float16] = {eps = 0.0009765625, tiny = 6.103515625e-05, max = 65504.0},
  [torch.bfloat16] = {eps = 0.0078125, tiny = 1.1754943508222875e-38, max = 3.3895313892515355e+38},
}
function M.finfo(dtype) return FINFO[dtype] or FINFO[torch.float32] end

-- broadcast_all(fname, names, ...) -> the values as tensors of one shape.
-- Numbers become tensors of the dtype and device of the tensor arguments
-- (the default dtype if none is a tensor), as PyTorch's broadcast_all.
function M.broadcast_all(fname, names, ...)
  local n = select("#", ...)
  local vals, like = {...}, nil
  for i = 1, n do
    local v = vals[i]
    if is_tensor(v) then
      like = like or v
    elseif type(v) ~= "number" then
      error(("%s: %s must be a tensor or a number, got %s"):format(fname, names[i], type(v)), 4)
    end
  end
  local opts = like and {dtype = like.dtype.is_floating_point and like.dtype or torch.get_default_dtype(),
                         device = like.device} or {dtype = torch.get_default_dtype()}
  for i = 1, n do
    if not is_tensor(vals[i]) then vals[i] = torch.tensor(vals[i], opts) end
  end
  if n == 1 then return vals[1] end
  local ok, r = pcall(function() return table.pack(torch.broadcast_tensors(table.unpack(vals, 1, n))) end)
  if not ok then
    local shapes = {}
    for i = 1, n do shapes[i] = names[i] .. " " .. M.shape_str(vals[i]) end
    error(("%s: the shapes of %s do not broadcast"):format(fname, table.concat(shapes, " and ")), 4)
  end
  return table.unpack(r, 1, n)
end

-- sum_rightmost(x, k): x summed over its last k dims (x itself when k == 0).
function M.sum_rightmost(x, k)
  if k <= 0 then return x end
  local d = x:dim()
  local dims = {}
  for i = 1, k do dims[i] = d - k + i end
  return x:sum(dims)
end

-- Conversions between probabilities and logits (PyTorch's
-- distributions.utils): binary ones are elementwise, the others normalize
-- over the last dim.
function M.logits_to_probs(logits, is_binary)
  if is_binary then return torch.sigmoid(logits) end
  return torch.softmax(logits, -1)
end

function M.clamp_probs(probs)
  local eps = M.finfo(probs.dtype).eps
  return probs:clamp(eps, 1 - eps)
end

function M.probs_to_logits(probs, is_binary)
  local p = M.clamp_probs(probs)
  if is_binary then return torch.log(p) - torch.log1p(-p) end
  return torch.log(p)
end

---------------------------------------------------------------- classes

-- Instances look a key up in their class chain, then among its properties
-- (getters: d.mean calls the class's mean getter).
local function make_index(C)
  return function(self, k)
    local v = C[k]
    if v ~= nil then return v end
    local g = C.__props[k]
    if g then return g(self) end
    return nil
  end
end

-- The name errors use: the class's __fullname (a subclass in another
-- package sets one), else torch.distributions.<Name>.
local function name_of(o)
  local c = rawget(o, "__name") and o or getmetatable(o)
  return rawget(c, "__fullname") or "torch.distributions." .. c.__name
end
M.name_of = name_of

local construct = U.public(function(C, ...)
  local self = setmetatable({}, C)
  self:__init(...)
  return self
end, name_of)

-- Base:extend(name) -> a subclass; instances come from Class(...), which
-- calls self:__init(...). Properties are added with Class:property(name, fn).
function M.extend(Base, name)
  local C = {__name = name, __parent = Base}
  C.__props = setmetatable({}, {__index = Base and Base.__props})
  C.__index = make_index(C)
  C.__tostring = function(o) return o:_repr() end
  return setmetatable(C, {__index = Base, __call = construct})
end

-- Wraps the public methods of the classes (a list) so errors
-- name the class at the caller's line. Called once all classes are made.
function M.publish(classes)
  for _, C in ipairs(classes) do
    for k, v in pairs(C) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" and type(v) == "function" and k ~= "extend"
         and k ~= "property" then
        C[k] = U.public(v, name_of)
      end
    end
  end
end

---------------------------------------------------------------- Distribution

local Distribution = M.extend(nil, "Distribution")
Distribution.__props = {}
M.Distribution = Distribution
Distribution.extend = M.extend
function Distribution:property(name, fn) self.__props[name] = fn end

-- Class:lazy_property(name, fn): a property computed once, with gradients
-- enabled (as PyTorch's lazy_property: a value first needed inside
-- sample()'s no_grad still carries the graph), then stored in the instance.
function Distribution:lazy_property(name, fn)
  self.__props[name] = function(obj)
    local v
    do
      local g <close> = torch.enable_grad()
      v = fn(obj)
    end
    rawset(obj, name, v)
    return v
  end
end

Distribution.has_rsample = false
Distribution.has_enumerate_support = false
Distribution.arg_constraints = {}
Distribution.support = nil

local default_validate = true

-- Distribution.set_default_validate_args(value): whether distributions
-- check their parameters and the values given to log_prob (default true,
-- as in PyTorch). Checks read values on the host, so they are skipped
-- while torch.compile captures a graph.
function Distribution.set_default_validate_args(value)
  if type(value) ~= "boolean" then
    error("Distribution.set_default_validate_args: value must be a boolean, got " .. type(value), 2)
  end
  default_validate = value
end

local function validating(self)
  local v = rawget(self, "_validate_args")
  return v and not torch.compiler.is_compiling()
end

-- _setup(batch_shape, event_shape, validate_args): what every __init ends
-- with. Checks each parameter against its constraint when validating.
function Distribution:_setup(batch_shape, event_shape, validate_args)
  self.batch_shape = size(batch_shape or {})
  self.event_shape = size(event_shape or {})
  if validate_args == nil then validate_args = default_validate end
  self._validate_args = validate_args
  if validating(self) then
    for _, pname in ipairs(self._param_names or {}) do
      local c = self.arg_constraints[pname]
      local v = rawget(self, pname)
      if c and not c.is_dependent and is_tensor(v) then
        local ok = c.check(v)
        if not ok:all():item() then
          error(("%s: expected parameter %s (tensor of shape %s) to satisfy the constraint %s, but found invalid "
                 .. "values:\n%s"):format(name_of(self), pname, M.shape_str(v), tostring(c), tostring(v)), 0)
        end
      end
    end
  end
end

-- _validate_sample(value): value must broadcast with batch_shape +
-- event_shape and lie in the support. Raises naming the distribution.
function Distribution:_validate_sample(value)
  if not validating(self) then return end
  if not is_tensor(value) then
    error(("%s: the value must be a tensor, got %s"):format(name_of(self), type(value)), 0)
  end
  local vs, want = value.shape, M.concat(self.batch_shape, self.event_shape)
  local ne = #self.event_shape
  local bad = #vs < ne
  for i = 1, ne do
    if bad then break end
    if vs[#vs - ne + i] ~= self.event_shape[i] then bad = true end
  end
  for i = 1, math.min(#vs, #want) do
    local a, b = vs[#vs - i + 1], want[#want - i + 1]
    if a ~= b and a ~= 1 and b ~= 1 then bad = true end
  end
  if bad then
    error(("%s: the value (shape %s) does not broadcast with batch_shape + event_shape %s"):format(
      name_of(self), M.shape_str(vs), M.shape_str(want)), 0)
  end
  local support = self.support
  if support and not support.check(value):all():item() then
    error(("%s: expected the value (tensor of shape %s) to be within the support (%s), but found invalid "
           .. "values:\n%s"):format(name_of(self), M.shape_str(vs), tostring(support), tostring(value)), 0)
  end
end

-- _extended_shape(sample_shape) -> sample_shape + batch_shape + event_shape.
function Distribution:_extended_shape(sample_shape)
  return M.concat(sample_shape, self.batch_shape, self.event_shape)
end

local function not_implemented(self, what)
  error(("%s does not implement %s"):format(name_of(self), what), 0)
end
M.not_implemented = not_implemented

-- sample([sample_shape]) -> a sample without gradient, of shape
-- sample_shape + batch_shape + event_shape.
function Distribution:sample(sample_shape)
  local shape = M.sample_shape(name_of(self) .. ":sample", sample_shape)
  if not self.has_rsample then return self:_sample(shape) end
  local g <close> = torch.no_grad()
  return self:rsample(shape)
end

function Distribution:_sample() not_implemented(self, "sample") end

-- rsample([sample_shape]) -> a reparameterized sample (gradients flow to
-- the parameters).
function Distribution:rsample(sample_shape)
  if not self.has_rsample then not_implemented(self, "rsample (it has no reparameterized sampler)") end
  return self:_rsample(M.sample_shape(name_of(self) .. ":rsample", sample_shape))
end

-- sample_n(n) -> sample({n}).
function Distribution:sample_n(n) return self:sample({n}) end

function Distribution:log_prob() not_implemented(self, "log_prob") end
function Distribution:entropy() not_implemented(self, "entropy") end
function Distribution:cdf() not_implemented(self, "cdf") end
function Distribution:icdf() not_implemented(self, "icdf") end
function Distribution:enumerate_support() not_implemented(self, "enumerate_support") end

-- perplexity() -> exp(entropy()).
function Distribution:perplexity() return torch.exp(self:entropy()) end

Distribution:property("mean", function(self) not_implemented(self, "mean") end)
Distribution:property("mode", function(self) not_implemented(self, "mode") end)
Distribution:property("variance", function(self) not_implemented(self, "variance") end)
Distribution:property("stddev", function(self) return self.variance:sqrt() end)

-- expand(batch_shape) -> a new distribution of the same kind whose
-- parameters are expanded to batch_shape (views, no copies).
function Distribution:expand(batch_shape)
  if type(batch_shape) ~= "table" then
    error(name_of(self) .. ":expand: batch_shape must be a list of sizes", 0)
  end
  local new = setmetatable({}, getmetatable(self))
  for k, v in pairs(self) do new[k] = v end
  local bs = size(batch_shape)
  local nb = #self.batch_shape
  if #bs < nb then
    error(("%s:expand: cannot expand batch_shape %s to %s"):format(name_of(self), M.shape_str(self.batch_shape),
                                                                     M.shape_str(bs)), 0)
  end
  for i = 1, nb do
    local a, b = self.batch_shape[nb - i + 1], bs[#bs - i + 1]
    if a ~= b and a ~= 1 then
      error(("%s:expand: cannot expand batch_shape %s to %s"):format(name_of(self), M.shape_str(self.batch_shape),
                                                                       M.shape_str(bs)), 0)
    end
  end
  self:_expand_into(new, bs)
  new.batch_shape = bs
  return new
end

-- _expand_into(new, batch_shape): expands each tensor parameter (listed in
-- _param_names, with _param_event_dims trailing dims kept) into new.
function Distribution:_expand_into(new, bs)
  for _, p in ipairs(self._param_names or {}) do
    local v = rawget(self, p)
    if is_tensor(v) then
      local tail = {}
      local ed = (self._param_event_dims or {})[p] or 0
      for i = v:dim() - ed + 1, v:dim() do tail[#tail + 1] = v.shape[i] end
      new[p] = v:expand(M.concat(bs, tail))
    end
  end
end

function Distribution:_repr()
  local parts = {}
  for _, p in ipairs(self._param_names or {}) do
    local v = rawget(self, p)
    if v ~= nil then
      local s = is_tensor(v) and (v:numel() == 1 and tostring(v:item()) or "size " .. M.shape_str(v)) or tostring(v)
      parts[#parts + 1] = p .. ": " .. s
    end
  end
  return getmetatable(self).__name .. "(" .. table.concat(parts, ", ") .. ")"
end

return M
