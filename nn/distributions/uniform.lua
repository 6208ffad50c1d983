-- torch.distributions.uniform -- Uniform(low, high): uniform on the
-- half-open interval [low, high), with reparameterized samples
-- low + (high - low) u, u ~ U[0, 1).
local torch = require "torch"
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"

local Uniform = B.Distribution:extend("Uniform")
Uniform.arg_constraints = {low = constraints.dependent, high = constraints.dependent}
Uniform.has_rsample = true
Uniform._param_names = {"low", "high"}

-- Uniform(low, high[, validate_args]): tensors or numbers that broadcast;
-- low < high everywhere (checked when validating).
function Uniform:__init(low, high, ...)
  local fname = "torch.distributions.Uniform"
  local o = U.args(fname, {"validate_args"}, nil, ...)
  self.low, self.high = B.broadcast_all(fname, {"low", "high"}, low, high)
  self:_setup(self.low.shape, {}, o.validate_args)
  if self._validate_args and not torch.compiler.is_compiling() and not self.low:lt(self.high):all():item() then
    error(("%s: Uniform is not defined when low >= high (low %s, high %s)"):format(fname, tostring(self.low),
                                                                                 tostring(self.high)), 0)
  end
end

Uniform:property("support", function(self) return constraints.interval(self.low, self.high) end)
Uniform:property("mean", function(self) return (self.high + self.low) / 2 end)
Uniform:property("mode", function(self) return self.high * (0 / 0) end)
Uniform:property("stddev", function(self) return (self.high - self.low) / math.sqrt(12) end)
Uniform:property("variance", function(self) return (self.high - self.low):pow(2) / 12 end)

function Uniform:_rsample(shape)
  local u = torch.rand(self:_extended_shape(shape), {dtype = self.low.dtype, device = self.low.device})
  return self.low + u * (self.high - self.low)
end

-- log_prob(value) -> -log(high - low) inside [low, high), -inf outside.
function Uniform:log_prob(value)
  self:_validate_sample(value)
  local lb = self.low:le(value):to(self.low.dtype)
  local ub = self.high:gt(value):to(self.low.dtype)
  return torch.log(lb * ub) - torch.log(self.high - self.low)
end

function Uniform:cdf(value)
  self:_validate_sample(value)
  return ((value - self.low) / (self.high - self.low)):clamp(0, 1)
end

function Uniform:icdf(value) return value * (self.high - self.low) + self.low end

function Uniform:entropy() return torch.log(self.high - self.low) end

return Uniform
