-- torch.distributions.transformed_distribution --
-- TransformedDistribution(base, transforms): samples of base pushed through
-- the transforms in order; log_prob by the change of variables
-- (base log_prob of the inverse minus each log|det J|).
local torch = require "torch"
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local T = require "torch.distributions.transforms"
local Independent = require "torch.distributions.independent"

local TD = B.Distribution:extend("TransformedDistribution")

local function is_transform(t)
  local mt = getmetatable(t)
  while mt do
    if mt == T.Transform then return true end
    mt = rawget(mt, "__parent")
  end
  return false
end

-- TransformedDistribution(base_distribution, transforms[, validate_args]):
-- transforms is one Transform or a list of them.
function TD:__init(base, transforms, ...)
  local fname = B.name_of(self)
  local o = U.args(fname, {"validate_args"}, nil, ...)
  if type(base) ~= "table" or not base.batch_shape then
    error(fname .. ": base_distribution must be a distribution, got " .. type(base), 0)
  end
  if is_transform(transforms) then transforms = {transforms} end
  if type(transforms) ~= "table" then error(fname .. ": transforms must be a Transform or a list of them", 0) end
  for i, t in ipairs(transforms) do
    if not is_transform(t) then
      error(("%s: transforms[%d] is not a Transform (got %s)"):format(fname, i, type(t)), 0)
    end
  end
  self.transforms = transforms
  local chain = T.ComposeTransform(transforms)
  local base_shape = B.concat(base.batch_shape, base.event_shape)
  local base_event_dim = #base.event_shape
  local domain_event_dim = chain.domain.event_dim
  if #base_shape < domain_event_dim then
    error(("%s: base_distribution needs at least %d dims (for the transforms' events), has shape %s"):format(
      fname, domain_event_dim, B.shape_str(base_shape)), 0)
  end
  if domain_event_dim > base_event_dim then base = Independent(base, domain_event_dim - base_event_dim) end
  self.base_dist = base
  self.has_rsample = base.has_rsample
  local event_dim = chain.codomain.event_dim + math.max(base_event_dim - domain_event_dim, 0)
  local shape = chain:forward_shape(base_shape)
  local cut = #shape - event_dim
  self:_setup({table.unpack(shape, 1, cut)}, {table.unpack(shape, cut + 1, #shape)}, o.validate_args)
end

TD:property("support", function(self)
  local n = #self.transforms
  return n > 0 and self.transforms[n].codomain or self.base_dist.support
end)

function TD:_push(x)
  for _, t in ipairs(self.transforms) do x = t(x) end
  return x
end

function TD:sample(sample_shape)
  local g <close> = torch.no_grad()
  return self:_push(self.base_dist:sample(sample_shape))
end

function TD:rsample(sample_shape)
  if not self.has_rsample then B.not_implemented(self, "rsample (its base has no reparameterized sampler)") end
  return self:_push(self.base_dist:rsample(sample_shape))
end

-- log_prob(value) -> base log_prob of the inverse images, minus the
-- log|det J| of each transform summed over the event dims.
function TD:log_prob(value)
  self:_validate_sample(value)
  local event_dim = #self.event_shape
  local lp = 0
  local y = value
  for i = #self.transforms, 1, -1 do
    local t = self.transforms[i]
    local x = t.inv(y)
    event_dim = event_dim + t.domain.event_dim - t.codomain.event_dim
    lp = lp - B.sum_rightmost(t:log_abs_det_jacobian(x, y), event_dim - t.domain.event_dim)
    y = x
  end
  return lp + B.sum_rightmost(self.base_dist:log_prob(y), event_dim - #self.base_dist.event_shape)
end

-- cdf(value): the base cdf of the inverse image (for monotone transforms;
-- decreasing ones give 1 - cdf).
function TD:cdf(value)
  local y = value
  local sign = 1
  for i = #self.transforms, 1, -1 do
    local t = self.transforms[i]
    y = t.inv(y)
    sign = sign * t.sign
  end
  local c = self.base_dist:cdf(y)
  if type(sign) == "number" then return sign == 1 and c or 1 - c end
  return sign * (c - 0.5) + 0.5
end

function TD:_expand_into(new, bs)
  local shape = B.concat(bs, self.event_shape)
  for i = #self.transforms, 1, -1 do shape = self.transforms[i]:inverse_shape(shape) end
  new.base_dist = self.base_dist:expand({table.unpack(shape, 1, #shape - #self.base_dist.event_shape)})
end

function TD:_repr()
  local names = {}
  for i, t in ipairs(self.transforms) do names[i] = t:_repr() end
  return ("%s(%s, {%s})"):format(getmetatable(self).__name, self.base_dist:_repr(), table.concat(names, ", "))
end

return TD
