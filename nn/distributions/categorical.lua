-- torch.distributions.categorical -- Categorical(probs | logits): one of K
-- categories per batch element. Categories are 1-based indices 1..K (as
-- every index of moontorch's API), so samples, mode and log_prob's values
-- are PyTorch's plus one.
local torch = require "torch"
local U = require "torch.nn.util"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"

local Categorical = B.Distribution:extend("Categorical")
Categorical.arg_constraints = {probs = constraints.simplex, logits = constraints.independent(constraints.real, 1)}
Categorical.has_enumerate_support = true
Categorical._param_names = {"probs", "logits"}
Categorical._param_event_dims = {probs = 1, logits = 1}

-- init_params(self, fname, probs, logits): exactly one given, with at
-- least one dim; stores it normalized. Returns the batch shape (all but the
-- last dim). Shared with OneHotCategorical.
function Categorical._init_params(self, fname, probs, logits)
  if (probs == nil) == (logits == nil) then
    error(fname .. ": either probs or logits must be given, but not both", 0)
  end
  local p = probs or logits
  if not torch.is_tensor(p) then
    error(("%s: %s must be a tensor, got %s"):format(fname, probs and "probs" or "logits", type(p)), 0)
  end
  if p:dim() < 1 then
    error(("%s: %s must have at least one dimension (the categories), got a 0-dim tensor"):format(
      fname, probs and "probs" or "logits"), 0)
  end
  if probs then
    self.probs = probs / probs:sum(-1, true)
  else
    self.logits = logits - logits:logsumexp(-1, true)
  end
  self._num_events = p.shape[p:dim()]
  local batch = {}
  for i = 1, p:dim() - 1 do batch[i] = p.shape[i] end
  return batch
end

-- Categorical(probs[, logits, validate_args]) or Categorical{logits=...}:
-- probs (non-negative, normalized over the last dim) or logits
-- (unnormalized log-probabilities) of shape batch_shape + (K).
function Categorical:__init(...)
  local fname = "torch.distributions.Categorical"
  local o = U.args(fname, {"probs", "logits", "validate_args"}, nil, ...)
  local batch = Categorical._init_params(self, fname, o.probs, o.logits)
  self:_setup(batch, {}, o.validate_args)
end

-- probs and logits: the one not given is computed on first use.
Categorical:lazy_property("probs", function(self) return B.logits_to_probs(self.logits) end)
Categorical:lazy_property("logits", function(self) return B.probs_to_logits(self.probs) end)
Categorical:property("param_shape", function(self) return (rawget(self, "probs") or self.logits).shape end)
Categorical:property("support", function(self) return constraints.integer_interval(1, self._num_events) end)

local function full_nan(self)
  local p = rawget(self, "probs") or self.logits
  return torch.full(self:_extended_shape({}), 0 / 0, {dtype = p.dtype, device = p.device})
end
Categorical:property("mean", full_nan)
Categorical:property("variance", full_nan)
Categorical:property("mode", function(self) return self.probs:argmax(-1) end)

-- sample([sample_shape]) -> int64 indices in 1..K of shape sample_shape + batch_shape.
function Categorical:_sample(shape)
  local g <close> = torch.no_grad()
  local probs = self.probs
  local k = self._num_events
  local n = 1
  for i = 1, #shape do n = n * shape[i] end
  local out_shape = self:_extended_shape(shape)
  if n == 0 then return torch.empty(out_shape, {dtype = torch.int64, device = probs.device}) end
  local p2 = probs:reshape(-1, k)
  local s = torch.multinomial(p2, n, true):t()
  return s:reshape(out_shape)
end

-- log_prob(value) -> log p(value) for int64 categories value in 1..K
-- (broadcast with batch_shape).
function Categorical:log_prob(value)
  self:_validate_sample(value)
  local v = value:long():unsqueeze(-1)
  local vb, lp = torch.broadcast_tensors(v, self.logits)
  vb = vb:narrow(-1, 1, 1)
  return lp:gather(-1, vb):squeeze(-1)
end

-- entropy() -> -sum(p log p) over the categories (0 log 0 = 0).
function Categorical:entropy()
  local logits = self.logits
  local lo = -B.finfo(logits.dtype).max
  return -(logits:clamp(lo) * self.probs):sum(-1)
end

-- enumerate_support([expand=true]) -> the categories 1..K as a tensor of
-- shape (K, 1, ...) or (K) + batch_shape.
function Categorical:enumerate_support(expand)
  local k = self._num_events
  local p = rawget(self, "probs") or self.logits
  local vals = torch.arange(1, k + 1, {dtype = torch.int64, device = p.device})
  local shape = {k}
  for i = 1, #self.batch_shape do shape[i + 1] = 1 end
  vals = vals:view(shape)
  if expand == nil or expand then vals = vals:expand(B.concat({k}, self.batch_shape)) end
  return vals
end

function Categorical:_expand_into(new, bs)
  for _, p in ipairs{"probs", "logits"} do
    local v = rawget(self, p)
    if v then new[p] = v:expand(B.concat(bs, {self._num_events})) end
  end
end

return Categorical
