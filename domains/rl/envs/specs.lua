-- torch.rl.envs.specs -- TorchRL's tensor specs (torchrl.data's Bounded,
-- Unbounded, Categorical, OneHot, Composite): the shape, dtype, device and
-- domain of an env's observations, actions and rewards. Categorical values
-- are 1-based indices (1..n), as every index in moontorch. A spec checks
-- values (is_in) and draws them (rand, zero); it holds no data.
local torch = require "torch"

local S = {}

local function class(name)
  local c = {__name = name}
  c.__index = c
  c.__tostring = function(self) return self:_repr() end
  return c
end

local function shape_str(shape) return "[" .. table.concat(shape, ", ") .. "]" end

local function copy_shape(shape)
  local s = {}
  for i, v in ipairs(shape or {}) do s[i] = v end
  return s
end

local function numel(shape)
  local n = 1
  for _, v in ipairs(shape) do n = n * v end
  return n
end

-- the given shape followed by the spec's own
local function full_shape(prefix, shape)
  local s = copy_shape(prefix)
  for _, v in ipairs(shape) do s[#s + 1] = v end
  return s
end

-- whether t's trailing dims equal shape
local function ends_with(t, shape)
  local ts, k = t.shape, #t.shape - #shape
  if k < 0 then return false end
  for i, v in ipairs(shape) do
    if ts[k + i] ~= v then return false end
  end
  return true
end

local function new_spec(cls, fname, opts, names)
  opts = torch._check_options(fname, opts or {}, names)
  local self = setmetatable({}, cls)
  self.shape = copy_shape(opts.shape)
  self.device = opts.device or "cpu"
  return self, opts
end

-- ---- Bounded: values in [low, high] elementwise ----
local Bounded = class("Bounded")
S.Bounded = Bounded

-- Bounded{low=, high=, shape=, dtype=, device=}: low and high are numbers
-- or tables (one entry per element of shape, last dim only)
function S.Bounded_new(opts)
  local self, o = new_spec(Bounded, "torch.rl.envs.specs.Bounded", opts, "low high shape dtype device")
  self.dtype = o.dtype or torch.float32
  local function bound(v, what)
    if v == nil then error("torch.rl.envs.specs.Bounded: " .. what .. " is required", 3) end
    if type(v) == "number" then v = torch.full(self.shape, v, {dtype = torch.float64}) end
    if type(v) == "table" then v = torch.tensor(v, {dtype = torch.float64}) end
    return v:to(torch.float64):expand(self.shape):contiguous()
  end
  self.low, self.high = bound(o.low, "low"), bound(o.high, "high")
  if self.low:gt(self.high):any():item() then
    error("torch.rl.envs.specs.Bounded: low must not exceed high", 2)
  end
  self.space = {low = self.low, high = self.high}
  return self
end

function Bounded:is_in(v)
  if not torch.is_tensor(v) or not ends_with(v, self.shape) then return false end
  local x = v:to(torch.float64):cpu()
  return x:ge(self.low):all():item() and x:le(self.high):all():item()
end

function Bounded:rand(shape)
  local s = full_shape(shape, self.shape)
  local lo, hi = self.low:clamp(-3.4e38, 3.4e38), self.high:clamp(-3.4e38, 3.4e38)
  local u = torch.rand(s, {dtype = torch.float64})
  return (lo + (hi - lo) * u):to(self.dtype):to(self.device)
end

function Bounded:zero(shape) return torch.zeros(full_shape(shape, self.shape), {dtype = self.dtype, device = self.device}) end

function Bounded:_repr()
  return ("Bounded(shape=%s, dtype=%s, device=%s, low=%s, high=%s)"):format(shape_str(self.shape),
    tostring(self.dtype), self.device, tostring(self.low), tostring(self.high))
end

-- ---- Unbounded: any value ----
local Unbounded = class("Unbounded")
S.Unbounded = Unbounded

function S.Unbounded_new(opts)
  local self, o = new_spec(Unbounded, "torch.rl.envs.specs.Unbounded", opts, "shape dtype device")
  self.dtype = o.dtype or torch.float32
  return self
end

function Unbounded:is_in(v) return torch.is_tensor(v) and ends_with(v, self.shape) end
function Unbounded:rand(shape)
  return torch.randn(full_shape(shape, self.shape), {dtype = self.dtype}):to(self.device)
end
function Unbounded:zero(shape) return torch.zeros(full_shape(shape, self.shape), {dtype = self.dtype, device = self.device}) end
function Unbounded:_repr()
  return ("Unbounded(shape=%s, dtype=%s, device=%s)"):format(shape_str(self.shape), tostring(self.dtype), self.device)
end

-- ---- Categorical: integer indices 1..n ----
local Categorical = class("Categorical")
S.Categorical = Categorical

function S.Categorical_new(n, opts)
  if math.type(n) ~= "integer" or n < 1 then
    error("torch.rl.envs.specs.Categorical: n must be a positive integer, got " .. tostring(n), 2)
  end
  local self, o = new_spec(Categorical, "torch.rl.envs.specs.Categorical", opts, "shape dtype device")
  self.n, self.dtype = n, o.dtype or torch.int64
  self.space = {n = n}
  return self
end

function Categorical:is_in(v)
  if not torch.is_tensor(v) or not ends_with(v, self.shape) or v.dtype.is_floating_point then return false end
  if v:numel() == 0 then return true end
  return v:min():item() >= 1 and v:max():item() <= self.n
end

function Categorical:rand(shape)
  return torch.randint(1, self.n + 1, full_shape(shape, self.shape), {dtype = self.dtype}):to(self.device)
end
function Categorical:zero(shape)
  return torch.ones(full_shape(shape, self.shape), {dtype = self.dtype, device = self.device})
end
function Categorical:_repr()
  return ("Categorical(n=%d, shape=%s, dtype=%s, device=%s; values 1..%d)"):format(self.n, shape_str(self.shape),
    tostring(self.dtype), self.device, self.n)
end

-- ---- OneHot: one-hot rows of n ----
local OneHot = class("OneHot")
S.OneHot = OneHot

function S.OneHot_new(n, opts)
  if math.type(n) ~= "integer" or n < 1 then
    error("torch.rl.envs.specs.OneHot: n must be a positive integer, got " .. tostring(n), 2)
  end
  local self, o = new_spec(OneHot, "torch.rl.envs.specs.OneHot", opts, "shape dtype device")
  self.n, self.dtype = n, o.dtype or torch.int64
  if #self.shape == 0 then self.shape = {n} end
  self.space = {n = n}
  return self
end

function OneHot:is_in(v)
  if not torch.is_tensor(v) or not ends_with(v, self.shape) then return false end
  local x = v:to(torch.float64)
  return x:eq(0):logical_or(x:eq(1)):all():item() and x:sum(-1):eq(1):all():item()
end

function OneHot:rand(shape)
  local s = full_shape(shape, self.shape)
  s[#s] = nil
  local idx = torch.randint(1, self.n + 1, s)
  return torch.nn.functional.one_hot(idx, self.n):to(self.dtype):to(self.device)
end
function OneHot:zero(shape)
  local z = torch.zeros(full_shape(shape, self.shape), {dtype = self.dtype})
  z:select(-1, 1):fill_(1)
  return z:to(self.device)
end
-- the 1-based index of each one-hot row
function OneHot:to_categorical(v) return v:argmax(-1) end
function OneHot:_repr()
  return ("OneHot(n=%d, shape=%s, dtype=%s, device=%s)"):format(self.n, shape_str(self.shape), tostring(self.dtype),
    self.device)
end

-- ---- Composite: named specs ----
local Composite = class("Composite")
S.Composite = Composite

function S.Composite_new(specs, opts)
  opts = torch._check_options("torch.rl.envs.specs.Composite", opts or {}, "shape device")
  local self = setmetatable({_specs = {}, shape = copy_shape(opts.shape), device = opts.device or "cpu"}, Composite)
  for k, v in pairs(specs or {}) do self._specs[k] = v end
  return self
end

function Composite:get(key) return self._specs[key] end
function Composite:set(key, spec) self._specs[key] = spec end
function Composite:keys()
  local ks = {}
  for k in pairs(self._specs) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end
-- is_in(t): t a table of values under the same keys
function Composite:is_in(t)
  if type(t) ~= "table" then return false end
  for k, s in pairs(self._specs) do
    if t[k] == nil or not s:is_in(t[k]) then return false end
  end
  return true
end
function Composite:rand(shape)
  local out = {}
  for k, s in pairs(self._specs) do out[k] = s:rand(shape) end
  return out
end
function Composite:zero(shape)
  local out = {}
  for k, s in pairs(self._specs) do out[k] = s:zero(shape) end
  return out
end
function Composite:_repr()
  local parts = {}
  for _, k in ipairs(self:keys()) do parts[#parts + 1] = "  " .. k .. ": " .. self._specs[k]:_repr() end
  return ("Composite(shape=%s,\n%s)"):format(shape_str(self.shape), table.concat(parts, ",\n"))
end

-- constructors are the call of the class: specs.Bounded{...}
-- (public entry points: errors raised inside name the caller's line)
local function callable(cls, ctor, name)
  local call = function(_, ...) return ctor(...) end
  return setmetatable(cls, {__call = torch._public(call, "torch.rl.envs.specs." .. name)})
end
callable(Bounded, S.Bounded_new, "Bounded")
callable(Unbounded, S.Unbounded_new, "Unbounded")
callable(Categorical, S.Categorical_new, "Categorical")
callable(OneHot, S.OneHot_new, "OneHot")
callable(Composite, S.Composite_new, "Composite")
S.Bounded_new, S.Unbounded_new, S.Categorical_new, S.OneHot_new, S.Composite_new = nil, nil, nil, nil, nil

-- respec(sp, new_shape, new_bound, dev) -> a spec of sp's kind and dtype on
-- dev whose shape is new_shape(sp.shape) (a Composite's members likewise);
-- a Bounded's low and high become new_bound(t, shape)
function S.respec(sp, new_shape, new_bound, dev)
  local mt, shape = getmetatable(sp), new_shape(sp.shape)
  if mt == Composite then
    local sub = {}
    for _, k in ipairs(sp:keys()) do sub[k] = S.respec(sp:get(k), new_shape, new_bound, dev) end
    return S.Composite(sub, {shape = shape, device = dev})
  elseif mt == Bounded then
    return S.Bounded{low = new_bound(sp.low, shape), high = new_bound(sp.high, shape), shape = shape,
      dtype = sp.dtype, device = dev}
  elseif mt == Categorical then
    return S.Categorical(sp.n, {shape = shape, dtype = sp.dtype, device = dev})
  elseif mt == OneHot then
    return S.OneHot(sp.n, {shape = shape, dtype = sp.dtype, device = dev})
  end
  return S.Unbounded{shape = shape, dtype = sp.dtype, device = dev}
end

return S
