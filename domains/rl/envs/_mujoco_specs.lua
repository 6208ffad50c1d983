-- torch.rl.envs._mujoco_specs -- the two specs MujocoEnv needs, on
-- TorchRL's names: Unbounded (any real value) and Bounded (low <= x <=
-- high, elementwise). Small on purpose: the shared specs of torch.rl.envs
-- can replace them without changing MujocoEnv's callers.
local torch = require "torch"

local S = {}

local Unbounded = {}
Unbounded.__index = Unbounded
Unbounded.__name = "torch.rl.envs.Unbounded"

-- Unbounded(shape, {dtype=}): values of that shape, any real number
function S.Unbounded(shape, opts)
  opts = opts or {}
  return setmetatable({shape = shape, dtype = opts.dtype or torch.get_default_dtype()}, Unbounded)
end

function Unbounded:zero() return torch.zeros(self.shape, {dtype = self.dtype}) end
function Unbounded:rand() return torch.randn(self.shape, {dtype = self.dtype}) end
-- true when x has the spec's shape and no NaN
function Unbounded:is_in(x)
  if not torch.is_tensor(x) then return false end
  local sh = x.shape
  if #sh ~= #self.shape then return false end
  for i = 1, #sh do if sh[i] ~= self.shape[i] then return false end end
  return not x:isnan():any():item()
end
function Unbounded:__tostring()
  return ("Unbounded(shape={%s}, dtype=%s)"):format(table.concat(self.shape, ", "), tostring(self.dtype))
end

local Bounded = {}
Bounded.__index = Bounded
Bounded.__name = "torch.rl.envs.Bounded"

-- Bounded(low, high, shape, {dtype=}): low and high are tensors that
-- broadcast to shape (+-inf: no bound on that side)
function S.Bounded(low, high, shape, opts)
  opts = opts or {}
  local dt = opts.dtype or torch.get_default_dtype()
  return setmetatable({low = low:to(dt):expand(shape):contiguous(), high = high:to(dt):expand(shape):contiguous(),
                       shape = shape, dtype = dt}, Bounded)
end

function Bounded:zero() return torch.zeros(self.shape, {dtype = self.dtype}):clamp(self.low, self.high) end
-- uniform in [low, high] where both are finite, a standard normal clamped
-- to the finite side elsewhere
function Bounded:rand()
  local u = torch.rand(self.shape, {dtype = self.dtype})
  local finite = self.low:isfinite():logical_and(self.high:isfinite())
  local x = torch.where(finite, self.low + (self.high - self.low) * u, torch.randn(self.shape, {dtype = self.dtype}))
  return x:clamp(self.low, self.high)
end
function Bounded:is_in(x)
  if not torch.is_tensor(x) then return false end
  local sh = x.shape
  if #sh ~= #self.shape then return false end
  for i = 1, #sh do if sh[i] ~= self.shape[i] then return false end end
  local xd = x:to(self.dtype)
  return xd:ge(self.low):logical_and(xd:le(self.high)):all():item()
end
function Bounded:__tostring()
  return ("Bounded(shape={%s}, dtype=%s)"):format(table.concat(self.shape, ", "), tostring(self.dtype))
end

return S
