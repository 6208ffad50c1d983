-- torch.distributions.one_hot_categorical -- OneHotCategorical(probs |
-- logits): a Categorical whose samples are one-hot vectors of length K
-- (event_shape (K)), and its straight-through variant whose rsample passes
-- gradients to probs.
local torch = require "torch"
local F = require "torch.nn.functional"
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"
local Categorical = require "torch.distributions.categorical"

local OneHotCategorical = B.Distribution:extend("OneHotCategorical")
OneHotCategorical.arg_constraints = Categorical.arg_constraints
OneHotCategorical.support = constraints.one_hot
OneHotCategorical.has_enumerate_support = true

-- OneHotCategorical(probs[, logits, validate_args]) or
-- OneHotCategorical{logits=...}: as Categorical.
function OneHotCategorical:__init(...)
  local fname = B.name_of(self)
  local o = U.args(fname, {"probs", "logits", "validate_args"}, nil, ...)
  self._categorical = Categorical(o.probs, o.logits, {validate_args = o.validate_args})
  local c = self._categorical
  self:_setup(c.batch_shape, {c._num_events}, o.validate_args)
end

OneHotCategorical:property("probs", function(self) return self._categorical.probs end)
OneHotCategorical:property("logits", function(self) return self._categorical.logits end)
OneHotCategorical:property("param_shape", function(self) return self._categorical.param_shape end)
OneHotCategorical:property("mean", function(self) return self._categorical.probs end)
OneHotCategorical:property("mode", function(self)
  local p = self._categorical.probs
  return F.one_hot(p:argmax(-1), p.shape[p:dim()]):to(p.dtype)
end)
OneHotCategorical:property("variance", function(self)
  local p = self._categorical.probs
  return p * (1 - p)
end)

-- sample([sample_shape]) -> one-hot vectors (probs' dtype) of shape
-- sample_shape + batch_shape + (K).
function OneHotCategorical:_sample(shape)
  local c = self._categorical
  local idx = c:sample(shape)
  return F.one_hot(idx, c._num_events):to(c.probs.dtype)
end

-- log_prob(value) -> log p of one-hot vectors value.
function OneHotCategorical:log_prob(value)
  self:_validate_sample(value)
  return self._categorical:log_prob(value:argmax(-1))
end

function OneHotCategorical:entropy() return self._categorical:entropy() end

-- enumerate_support([expand=true]) -> the K one-hot vectors, shape
-- (K, 1, ..., K) or (K) + batch_shape + (K).
function OneHotCategorical:enumerate_support(expand)
  local c = self._categorical
  local k = c._num_events
  local p = c.probs
  local shape = {k}
  for i = 1, #self.batch_shape do shape[i + 1] = 1 end
  shape[#shape + 1] = k
  local vals = torch.eye(k, {dtype = p.dtype, device = p.device}):view(shape)
  if expand == nil or expand then vals = vals:expand(B.concat({k}, self.batch_shape, {k})) end
  return vals
end

function OneHotCategorical:_expand_into(new, bs)
  new._categorical = self._categorical:expand(bs)
end

function OneHotCategorical:_repr()
  return getmetatable(self).__name .. self._categorical:_repr():sub(#"Categorical" + 1)
end

return OneHotCategorical
