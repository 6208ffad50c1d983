-- torch.distributions -- probability distributions with PyTorch's names,
-- arguments and semantics: Distribution, Normal, Independent, Categorical,
-- OneHotCategorical(StraightThrough), Bernoulli, Uniform,
-- TransformedDistribution and its transforms, kl_divergence. Categories
-- are 1-based indices (Categorical's samples are in 1..K).
local B = require "torch.distributions.distribution"
local T = require "torch.distributions.transforms"
local K = require "torch.distributions.kl"

local D = {
  Distribution = B.Distribution,
  Normal = require "torch.distributions.normal",
  Independent = require "torch.distributions.independent",
  Categorical = require "torch.distributions.categorical",
  OneHotCategorical = require "torch.distributions.one_hot_categorical",
  OneHotCategoricalStraightThrough = require "torch.distributions.one_hot_categorical_straight_through",
  Bernoulli = require "torch.distributions.bernoulli",
  Uniform = require "torch.distributions.uniform",
  TransformedDistribution = require "torch.distributions.transformed_distribution",
  constraints = require "torch.distributions.constraints",
  kl_divergence = K.kl_divergence,
  register_kl = K.register_kl,
  transforms = T,
}
for _, name in ipairs{"Transform", "ExpTransform", "SigmoidTransform", "TanhTransform", "AffineTransform",
                      "ComposeTransform"} do
  D[name] = T[name]
end

local classes = {}
for _, c in pairs(D) do
  if type(c) == "table" and rawget(c, "__props") then classes[#classes + 1] = c end
end
B.publish(classes)
return D
