-- torch.distributions.one_hot_categorical_straight_through --
-- OneHotCategoricalStraightThrough(probs | logits): a OneHotCategorical
-- whose rsample() is a one-hot sample carrying the gradient of probs
-- (sample + probs - probs:detach(), the straight-through estimator).
local OneHotCategorical = require "torch.distributions.one_hot_categorical"

local ST = OneHotCategorical:extend("OneHotCategoricalStraightThrough")
ST.has_rsample = true

function ST:_rsample(shape)
  local s = OneHotCategorical._sample(self, shape)
  local p = self._categorical.probs
  return s + p - p:detach()
end

return ST
