-- torch.distributions.independent -- Independent(base, n): the last n batch
-- dims of base reinterpreted as event dims (log_prob and entropy summed
-- over them), e.g. a diagonal Gaussian from a Normal over vectors.
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"

local Independent = B.Distribution:extend("Independent")
Independent._param_names = {}

-- Independent(base_distribution, reinterpreted_batch_ndims[, validate_args])
function Independent:__init(base, n, ...)
  local fname = "torch.distributions.Independent"
  local o = U.args(fname, {"validate_args"}, nil, ...)
  if type(base) ~= "table" or not base.batch_shape then
    error(fname .. ": base_distribution must be a distribution, got " .. type(base), 0)
  end
  local nb = #base.batch_shape
  if math.type(n) ~= "integer" or n < 0 or n > nb then
    error(("%s: expected 0 <= reinterpreted_batch_ndims <= %d (the base's batch dims, batch_shape %s), got %s")
          :format(fname, nb, B.shape_str(base.batch_shape), tostring(n)), 0)
  end
  self.base_dist, self.reinterpreted_batch_ndims = base, n
  self.has_rsample = base.has_rsample
  local batch, event = {}, {}
  for i = 1, nb - n do batch[i] = base.batch_shape[i] end
  for i = nb - n + 1, nb do event[#event + 1] = base.batch_shape[i] end
  for i = 1, #base.event_shape do event[#event + 1] = base.event_shape[i] end
  self:_setup(batch, event, o.validate_args)
end

Independent:property("support", function(self)
  local s = self.base_dist.support
  if not s or self.reinterpreted_batch_ndims == 0 then return s end
  return constraints.independent(s, self.reinterpreted_batch_ndims)
end)
Independent:property("mean", function(self) return self.base_dist.mean end)
Independent:property("mode", function(self) return self.base_dist.mode end)
Independent:property("variance", function(self) return self.base_dist.variance end)

function Independent:sample(sample_shape) return self.base_dist:sample(sample_shape) end
function Independent:rsample(sample_shape) return self.base_dist:rsample(sample_shape) end

function Independent:log_prob(value)
  return B.sum_rightmost(self.base_dist:log_prob(value), self.reinterpreted_batch_ndims)
end

function Independent:entropy()
  return B.sum_rightmost(self.base_dist:entropy(), self.reinterpreted_batch_ndims)
end

function Independent:_expand_into(new, bs)
  local full = B.concat(bs, {table.unpack(self.event_shape, 1, self.reinterpreted_batch_ndims)})
  new.base_dist = self.base_dist:expand(full)
end

function Independent:_repr()
  return ("Independent(%s, %d)"):format(self.base_dist:_repr(), self.reinterpreted_batch_ndims)
end

return Independent
