-- torch.distributions.normal -- Normal(loc, scale): the Gaussian with
-- reparameterized samples loc + scale * eps, eps ~ N(0, 1).
local torch = require "torch"
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"

local Normal = B.Distribution:extend("Normal")
Normal.arg_constraints = {loc = constraints.real, scale = constraints.positive}
Normal.support = constraints.real
Normal.has_rsample = true
Normal._param_names = {"loc", "scale"}

local HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)

-- Normal(loc, scale[, validate_args]): loc and scale are tensors or numbers
-- that broadcast; batch_shape is their common shape.
function Normal:__init(loc, scale, ...)
  local o = U.args("torch.distributions.Normal", {"validate_args"}, nil, ...)
  self.loc, self.scale = B.broadcast_all("torch.distributions.Normal", {"loc", "scale"}, loc, scale)
  self:_setup(self.loc.shape, {}, o.validate_args)
end

Normal:property("mean", function(self) return self.loc end)
Normal:property("mode", function(self) return self.loc end)
Normal:property("stddev", function(self) return self.scale end)
Normal:property("variance", function(self) return self.scale:pow(2) end)

function Normal:_rsample(shape)
  local eps = torch.randn(self:_extended_shape(shape), {dtype = self.loc.dtype, device = self.loc.device})
  return self.loc + eps * self.scale
end

-- log_prob(value) -> -(value - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi)).
function Normal:log_prob(value)
  self:_validate_sample(value)
  local var = self.scale:pow(2)
  return -(value - self.loc):pow(2) / (var * 2) - self.scale:log() - HALF_LOG_2PI
end

-- cdf(value) -> 0.5 (1 + erf((value - loc) / (scale sqrt 2))).
function Normal:cdf(value)
  self:_validate_sample(value)
  return ((value - self.loc) / (self.scale * math.sqrt(2))):erf():add(1):mul(0.5)
end

-- entropy() -> 0.5 + 0.5 log(2 pi) + log(scale).
function Normal:entropy()
  return self.scale:log() + (0.5 + HALF_LOG_2PI)
end

return Normal
