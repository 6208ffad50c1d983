-- torch.distributions.bernoulli -- Bernoulli(probs | logits): 0/1 values
-- (floating, as PyTorch) with P(1) = probs = sigmoid(logits).
local torch = require "torch"
local F = require "torch.nn.functional"
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"

local Bernoulli = B.Distribution:extend("Bernoulli")
Bernoulli.arg_constraints = {probs = constraints.unit_interval, logits = constraints.real}
Bernoulli.support = constraints.boolean
Bernoulli.has_enumerate_support = true
Bernoulli._param_names = {"probs", "logits"}

-- Bernoulli(probs[, logits, validate_args]) or Bernoulli{logits=...}:
-- exactly one of them, a tensor or a number.
function Bernoulli:__init(...)
  local fname = "torch.distributions.Bernoulli"
  local o = U.args(fname, {"probs", "logits", "validate_args"}, nil, ...)
  if (o.probs == nil) == (o.logits == nil) then
    error(fname .. ": either probs or logits must be given, but not both", 0)
  end
  if o.probs ~= nil then
    self.probs = B.broadcast_all(fname, {"probs"}, o.probs)
  else
    self.logits = B.broadcast_all(fname, {"logits"}, o.logits)
  end
  self:_setup((rawget(self, "probs") or self.logits).shape, {}, o.validate_args)
end

Bernoulli:lazy_property("probs", function(self) return B.logits_to_probs(self.logits, true) end)
Bernoulli:lazy_property("logits", function(self) return B.probs_to_logits(self.probs, true) end)
Bernoulli:property("param_shape", function(self) return (rawget(self, "probs") or self.logits).shape end)
Bernoulli:property("mean", function(self) return self.probs end)
Bernoulli:property("variance", function(self) return self.probs * (1 - self.probs) end)
-- mode: 1 where probs > 0.5, 0 where below, NaN at exactly 0.5.
Bernoulli:property("mode", function(self)
  local p = self.probs
  local m = p:ge(0.5):to(p.dtype)
  return m:masked_fill(p:eq(0.5), 0 / 0)
end)

function Bernoulli:_sample(shape)
  local g <close> = torch.no_grad()
  return torch.bernoulli(self.probs:expand(self:_extended_shape(shape)))
end

-- log_prob(value) -> value log p + (1 - value) log(1 - p), computed from logits.
function Bernoulli:log_prob(value)
  self:_validate_sample(value)
  local logits, v = torch.broadcast_tensors(self.logits, value)
  return -F.binary_cross_entropy_with_logits(logits, v:to(logits.dtype), {reduction = "none"})
end

function Bernoulli:entropy()
  return F.binary_cross_entropy_with_logits(self.logits, self.probs, {reduction = "none"})
end

-- enumerate_support([expand=true]) -> {0, 1} shaped (2, 1, ...) or (2) + batch_shape.
function Bernoulli:enumerate_support(expand)
  local p = rawget(self, "probs") or self.logits
  local shape = {2}
  for i = 1, #self.batch_shape do shape[i + 1] = 1 end
  local vals = torch.tensor({0, 1}, {dtype = p.dtype, device = p.device}):view(shape)
  if expand == nil or expand then vals = vals:expand(B.concat({2}, self.batch_shape)) end
  return vals
end

return Bernoulli
