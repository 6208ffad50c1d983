-- torch.distributions.transforms -- invertible maps of samples, for
-- TransformedDistribution: Transform (the base), ExpTransform,
-- SigmoidTransform, TanhTransform, AffineTransform and ComposeTransform,
-- with PyTorch's formulas for the inverse and log|det J|. t(x) maps,
-- t.inv(y) inverts; with cache_size=1 the last pair is remembered, so the
-- inverse of a value t just produced is exact (no atanh of +-1).
local torch = require "torch"
local F = require "torch.nn.functional"
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"

local T = {}
local LOG2 = math.log(2)

local Transform = B.extend(nil, "Transform")
T.Transform = Transform
Transform.domain, Transform.codomain = constraints.real, constraints.real
Transform.bijective, Transform.sign = false, 1
function Transform:property(name, fn) self.__props[name] = fn end

-- Transform:extend(name): a subclass; instances are callable (t(x)).
function Transform.extend(Base, name)
  local C = B.extend(Base, name)
  C.__call = function(self, x) return self:_cached_call(x) end
  return C
end
Transform.__call = function(self, x) return self:_cached_call(x) end

local function check_cache(fname, cache_size)
  if cache_size ~= nil and cache_size ~= 0 and cache_size ~= 1 then
    error(("%s: cache_size must be 0 or 1, got %s"):format(fname, tostring(cache_size)), 0)
  end
  return cache_size or 0
end

function Transform:__init(...)
  local o = U.args(B.name_of(self), {"cache_size"}, nil, ...)
  self._cache_size = check_cache(B.name_of(self), o.cache_size)
end

-- _cached_call(x) -> y = t(x); remembers (x, y) when cache_size is 1.
function Transform:_cached_call(x)
  if self._cache_size == 1 and rawequal(x, self._cx) then return self._cy end
  local y = self:_call(x)
  if self._cache_size == 1 then self._cx, self._cy = x, y end
  return y
end

-- _inv_call(y) -> x with t(x) = y; the remembered x when y is the last output.
function Transform:_inv_call(y)
  if self._cache_size == 1 and rawequal(y, self._cy) then return self._cx end
  local x = self:_inverse(y)
  if self._cache_size == 1 then self._cx, self._cy = x, y end
  return x
end

function Transform:_call() B.not_implemented(self, "the forward map") end
function Transform:_inverse() B.not_implemented(self, "the inverse map") end
function Transform:log_abs_det_jacobian() B.not_implemented(self, "log_abs_det_jacobian") end
-- forward_shape(shape) / inverse_shape(shape): elementwise maps keep shapes.
function Transform:forward_shape(shape) return shape end
function Transform:inverse_shape(shape) return shape end
function Transform:_repr() return getmetatable(self).__name .. "()" end

-- t.inv: the inverse transform (t.inv(y) maps back; t.inv.inv is t).
local Inverse = Transform:extend("_InverseTransform")
Transform:property("inv", function(self)
  local i = rawget(self, "_inv")
  if not i then
    i = setmetatable({_base = self, _cache_size = 0}, Inverse)
    rawset(self, "_inv", i)
  end
  return i
end)
Inverse:property("inv", function(self) return self._base end)
Inverse:property("domain", function(self) return self._base.codomain end)
Inverse:property("codomain", function(self) return self._base.domain end)
Inverse:property("bijective", function(self) return self._base.bijective end)
Inverse:property("sign", function(self) return self._base.sign end)
function Inverse:_cached_call(y) return self._base:_inv_call(y) end
function Inverse:log_abs_det_jacobian(x, y) return -self._base:log_abs_det_jacobian(y, x) end
function Inverse:_repr() return "_InverseTransform(" .. self._base:_repr() .. ")" end

---------------------------------------------------------------- elementwise

-- ExpTransform([cache_size=0]): y = exp(x); log|det J| = x.
local Exp = Transform:extend("ExpTransform")
T.ExpTransform = Exp
Exp.codomain = constraints.positive
Exp.bijective = true
function Exp:_call(x) return x:exp() end
function Exp:_inverse(y) return y:log() end
function Exp:log_abs_det_jacobian(x) return x end

-- SigmoidTransform([cache_size=0]): y = sigmoid(x), kept inside (tiny, 1 - eps).
local Sigmoid = Transform:extend("SigmoidTransform")
T.SigmoidTransform = Sigmoid
Sigmoid.codomain = constraints.unit_interval
Sigmoid.bijective = true
function Sigmoid:_call(x)
  local fi = B.finfo(x.dtype)
  return torch.sigmoid(x):clamp(fi.tiny, 1 - fi.eps)
end
function Sigmoid:_inverse(y)
  local fi = B.finfo(y.dtype)
  y = y:clamp(fi.tiny, 1 - fi.eps)
  return y:log() - (-y):log1p()
end
function Sigmoid:log_abs_det_jacobian(x) return -F.softplus(-x) - F.softplus(x) end

-- TanhTransform([cache_size=0]): y = tanh(x); x = atanh(y);
-- log|det J| = 2 (log 2 - x - softplus(-2x)).
local Tanh = Transform:extend("TanhTransform")
T.TanhTransform = Tanh
Tanh.codomain = constraints.interval(-1.0, 1.0)
Tanh.bijective = true
function Tanh:_call(x) return x:tanh() end
function Tanh:_inverse(y) return (y:log1p() - (-y):log1p()) * 0.5 end
function Tanh:log_abs_det_jacobian(x) return (LOG2 - x - F.softplus(x * -2)) * 2 end

-- AffineTransform(loc, scale[, event_dim=0, cache_size=0]): y = loc + scale x;
-- log|det J| = log|scale|, summed over the last event_dim dims.
local Affine = Transform:extend("AffineTransform")
T.AffineTransform = Affine
Affine.bijective = true

function Affine:__init(loc, scale, ...)
  local fname = "torch.distributions.AffineTransform"
  local o = U.args(fname, {"event_dim", "cache_size"}, {event_dim = 0}, ...)
  for name, v in pairs{loc = loc, scale = scale} do
    if type(v) ~= "number" and not torch.is_tensor(v) then
      error(("%s: %s must be a tensor or a number, got %s"):format(fname, name, type(v)), 0)
    end
  end
  if math.type(o.event_dim) ~= "integer" or o.event_dim < 0 then
    error(("%s: event_dim must be a non-negative integer, got %s"):format(fname, tostring(o.event_dim)), 0)
  end
  self.loc, self.scale, self.event_dim = loc, scale, o.event_dim
  self._cache_size = check_cache(fname, o.cache_size)
end

local function real_of(event_dim)
  if event_dim == 0 then return constraints.real end
  return constraints.independent(constraints.real, event_dim)
end
Affine:property("domain", function(self) return real_of(self.event_dim) end)
Affine:property("codomain", function(self) return real_of(self.event_dim) end)
Affine:property("sign", function(self)
  if type(self.scale) == "number" then return self.scale >= 0 and 1 or -1 end
  return self.scale:sign()
end)

function Affine:_call(x) return x * self.scale + self.loc end
function Affine:_inverse(y) return (y - self.loc) / self.scale end
function Affine:log_abs_det_jacobian(x)
  local r
  if type(self.scale) == "number" then
    r = torch.full_like(x, math.log(math.abs(self.scale)))
  else
    r = self.scale:abs():log()
  end
  local shape = x.shape
  if self.event_dim > 0 then
    local keep = {}
    for i = 1, #shape - self.event_dim do keep[i] = shape[i] end
    r = B.sum_rightmost(r:expand(shape), self.event_dim)
    return r:expand(keep)
  end
  return r:expand(shape)
end
function Affine:_repr() return ("AffineTransform(event_dim=%d)"):format(self.event_dim) end

-- ComposeTransform(parts[, cache_size=0]): the parts applied in order.
local Compose = Transform:extend("ComposeTransform")
T.ComposeTransform = Compose

function Compose:__init(parts, ...)
  local fname = "torch.distributions.ComposeTransform"
  local o = U.args(fname, {"cache_size"}, nil, ...)
  if type(parts) ~= "table" or getmetatable(parts) ~= nil then
    error(fname .. ": parts must be a list of transforms", 0)
  end
  self.parts = parts
  self._cache_size = check_cache(fname, o.cache_size)
end
Compose:property("bijective", function(self)
  for _, p in ipairs(self.parts) do if not p.bijective then return false end end
  return true
end)
-- domain and codomain event dims as PyTorch computes them for a chain.
Compose:property("domain", function(self)
  local n = #self.parts
  if n == 0 then return constraints.real end
  local ed = self.parts[n].codomain.event_dim
  for i = n, 1, -1 do
    local p = self.parts[i]
    ed = math.max(ed + p.domain.event_dim - p.codomain.event_dim, p.domain.event_dim)
  end
  return real_of(ed)
end)
Compose:property("codomain", function(self)
  local n = #self.parts
  if n == 0 then return constraints.real end
  local ed = self.parts[1].domain.event_dim
  for i = 1, n do
    local p = self.parts[i]
    ed = math.max(ed + p.codomain.event_dim - p.domain.event_dim, p.codomain.event_dim)
  end
  return real_of(ed)
end)
function Compose:_call(x)
  for _, p in ipairs(self.parts) do x = p(x) end
  return x
end
function Compose:_inverse(y)
  for i = #self.parts, 1, -1 do y = self.parts[i].inv(y) end
  return y
end
function Compose:log_abs_det_jacobian(x, y)
  if #self.parts == 0 then return torch.zeros_like(x) end
  local ed = self.domain.event_dim
  local total = 0
  for i, p in ipairs(self.parts) do
    local yi = i == #self.parts and y or p(x)
    total = total + B.sum_rightmost(p:log_abs_det_jacobian(x, yi), ed - p.domain.event_dim)
    ed = ed + p.codomain.event_dim - p.domain.event_dim
    x = yi
  end
  return total
end

return T
