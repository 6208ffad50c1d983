-- torch.rl.modules.distributions -- the distributions TorchRL's policies
-- use, on top of torch.distributions: TanhNormal (a Normal squashed by
-- tanh onto [low, high]), IndependentNormal, OneHotCategorical (with a
-- straight-through rsample) and MaskedCategorical (actions outside a mask
-- have probability 0). Discrete actions are 1-based indices.
local torch = require "torch"
local U = require "torch.nn.util"
local D = require "torch.distributions"
local B = require "torch.distributions.distribution"
local constraints = require "torch.distributions.constraints"

local M = {}
local PREFIX = "torch.rl.modules."

-- The smallest step of a dtype's decimal precision (torch.finfo's resolution).
local RESOLUTION = {[torch.float64] = 1e-15, [torch.float32] = 1e-6, [torch.float16] = 1e-3, [torch.bfloat16] = 1e-2}
local function lim_of(x) return 1 - (RESOLUTION[x.dtype] or 1e-6) end

-- clamp_pass(x, lo, hi): x clamped, with the gradient of x itself (the
-- clamp is invisible to autograd, as TorchRL's safetanh).
local function clamp_pass(x, lo, hi) return x + (x:clamp(lo, hi) - x):detach() end

-- SafeTanhTransform: tanh kept inside +-(1 - resolution) so its inverse
-- and log_prob stay finite for saturated samples.
local SafeTanh = D.TanhTransform:extend("SafeTanhTransform")
SafeTanh.__fullname = PREFIX .. "SafeTanhTransform"
M.SafeTanhTransform = SafeTanh
function SafeTanh:_call(x)
  local lim = lim_of(x)
  return clamp_pass(x:tanh(), -lim, lim)
end
function SafeTanh:_inverse(y)
  local lim = lim_of(y)
  y = clamp_pass(y, -lim, lim)
  return (y:log1p() - (-y):log1p()) * 0.5
end

local function number_or_tensor(fname, name, v)
  if type(v) ~= "number" and not torch.is_tensor(v) then
    error(("%s: %s must be a tensor or a number, got %s"):format(fname, name, type(v)), 0)
  end
  return v
end

-- scale_of(fname, scale, loc): scale as given, or scale(loc) for a function.
local function scale_of(fname, scale, loc)
  if type(scale) == "function" then scale = scale(loc) end
  return number_or_tensor(fname, "scale", scale)
end

---------------------------------------------------------------- TanhNormal

local TanhNormal = D.TransformedDistribution:extend("TanhNormal")
TanhNormal.__fullname = PREFIX .. "TanhNormal"
M.TanhNormal = TanhNormal

-- TanhNormal(loc, scale[, upscale=5, low=-1, high=1, event_dims, tanh_loc=false, safe_tanh=true]):
-- y = (high + low)/2 + (high - low)/2 tanh(x), x ~ Normal(loc', scale)
-- with loc' = upscale tanh(loc / upscale) when tanh_loc (else loc); the
-- last event_dims dims (default min(1, loc:dim())) form one action.
-- scale may be a function of loc.
function TanhNormal:__init(loc, scale, ...)
  local fname = PREFIX .. "TanhNormal"
  local o = U.args(fname, {"upscale", "low", "high", "event_dims", "tanh_loc", "safe_tanh"},
                   {upscale = 5.0, low = -1.0, high = 1.0, tanh_loc = false, safe_tanh = true}, ...)
  if not torch.is_tensor(loc) then error(fname .. ": loc must be a tensor, got " .. type(loc), 0) end
  scale = scale_of(fname, scale, loc)
  local low, high = number_or_tensor(fname, "low", o.low), number_or_tensor(fname, "high", o.high)
  number_or_tensor(fname, "upscale", o.upscale)
  local function t(v) return torch.is_tensor(v) and v:to(loc.dtype) or torch.tensor(v, {dtype = loc.dtype}) end
  local lo_t, hi_t = t(low):to(loc.device), t(high):to(loc.device)
  if not torch.compiler.is_compiling() and not hi_t:gt(lo_t):all():item() then
    error(("%s: high must be greater than low everywhere (low %s, high %s)"):format(fname, tostring(low),
                                                                                   tostring(high)), 0)
  end
  local ed = o.event_dims
  if ed == nil then ed = math.min(1, loc:dim()) end
  if math.type(ed) ~= "integer" or ed < 0 or ed > loc:dim() then
    error(("%s: event_dims must be an integer in 0..%d (loc's dims), got %s"):format(fname, loc:dim(),
                                                                                    tostring(o.event_dims)), 0)
  end
  if o.tanh_loc then loc = (loc / o.upscale):tanh() * o.upscale end
  self.low, self.high, self.upscale, self.tanh_loc = low, high, o.upscale, o.tanh_loc
  local transforms = {o.safe_tanh and SafeTanh() or D.TanhTransform({cache_size = 1})}
  local trivial = lo_t:eq(-1):all():item() and hi_t:eq(1):all():item()
  if not trivial then transforms[2] = D.AffineTransform((hi_t + lo_t) / 2, (hi_t - lo_t) / 2) end
  local base = D.Independent(D.Normal(loc, scale), ed)
  D.TransformedDistribution.__init(self, base, transforms)
end

TanhNormal:property("loc", function(self) return self.base_dist.base_dist.loc end)
TanhNormal:property("scale", function(self) return self.base_dist.base_dist.scale end)
TanhNormal:property("support", function(self) return constraints.interval(self.low, self.high) end)

-- mode / deterministic_sample: loc' pushed through the transforms (the
-- image of the Normal's mode; TorchRL's estimate of the mode).
local function push_loc(self) return self:_push(self.base_dist.base_dist.loc) end
TanhNormal:property("mode", push_loc)
TanhNormal:property("deterministic_sample", push_loc)
TanhNormal:property("mean", function()
  error(PREFIX .. "TanhNormal: the mean has no closed form; use deterministic_sample (the squashed loc)", 0)
end)

---------------------------------------------------------------- IndependentNormal

local IndependentNormal = D.Independent:extend("IndependentNormal")
IndependentNormal.__fullname = PREFIX .. "IndependentNormal"
M.IndependentNormal = IndependentNormal

-- IndependentNormal(loc, scale[, upscale=5, tanh_loc=false, event_dim=1]):
-- a Normal whose last event_dim dims form one event; loc is
-- upscale tanh(loc / upscale) when tanh_loc.
function IndependentNormal:__init(loc, scale, ...)
  local fname = PREFIX .. "IndependentNormal"
  local o = U.args(fname, {"upscale", "tanh_loc", "event_dim"}, {upscale = 5.0, tanh_loc = false, event_dim = 1}, ...)
  if not torch.is_tensor(loc) then error(fname .. ": loc must be a tensor, got " .. type(loc), 0) end
  scale = scale_of(fname, scale, loc)
  if o.tanh_loc then loc = (loc / o.upscale):tanh() * o.upscale end
  self.upscale, self.tanh_loc = o.upscale, o.tanh_loc
  D.Independent.__init(self, D.Normal(loc, scale), o.event_dim)
end
IndependentNormal:property("deterministic_sample", function(self) return self.base_dist.loc end)

---------------------------------------------------------------- discrete

local OneHotCategorical = D.OneHotCategoricalStraightThrough:extend("OneHotCategorical")
OneHotCategorical.__fullname = PREFIX .. "OneHotCategorical"
M.OneHotCategorical = OneHotCategorical

-- OneHotCategorical([logits, probs, grad_method="pass_through"]) or
-- OneHotCategorical{logits=...}: one-hot actions of length K (TorchRL's
-- argument order: logits first); rsample() passes the gradient of probs
-- straight through the one-hot sample.
function OneHotCategorical:__init(...)
  local fname = PREFIX .. "OneHotCategorical"
  local o = U.args(fname, {"logits", "probs", "grad_method", "validate_args"}, {grad_method = "pass_through"}, ...)
  if o.grad_method ~= "pass_through" and o.grad_method ~= "PassThrough" then
    error(("%s: grad_method %s is not supported (only \"pass_through\")"):format(fname, tostring(o.grad_method)), 0)
  end
  D.OneHotCategorical.__init(self, {probs = o.probs, logits = o.logits, validate_args = o.validate_args})
end
OneHotCategorical:property("deterministic_sample", function(self) return self.mode end)

-- log_prob(value) -> log p of the argmax of value. Unlike the base class it
-- accepts rsample()'s straight-through vectors, which are one-hot only up
-- to rounding (1 + p - p).
function OneHotCategorical:log_prob(value)
  if not torch.is_tensor(value) then error(PREFIX .. "OneHotCategorical.log_prob: value must be a tensor", 2) end
  return self._categorical:log_prob(value:argmax(-1))
end

local MaskedCategorical = D.Categorical:extend("MaskedCategorical")
MaskedCategorical.__fullname = PREFIX .. "MaskedCategorical"
M.MaskedCategorical = MaskedCategorical

-- MaskedCategorical{logits= | probs=, mask=[, neg_inf=-inf]}: a
-- Categorical over 1..K where categories with mask false have probability
-- 0 (their logits become neg_inf). mask is a bool tensor of the logits'
-- shape (batch_shape + (K)) or one that broadcasts to it.
function MaskedCategorical:__init(...)
  local fname = PREFIX .. "MaskedCategorical"
  local o = U.args(fname, {"logits", "probs", "mask", "indices", "neg_inf", "padding_value", "validate_args"},
                   {neg_inf = -math.huge}, ...)
  if o.indices ~= nil or o.padding_value ~= nil then
    error(fname .. ": sparse masks (indices=, padding_value=) are not supported; pass a dense bool mask", 0)
  end
  local mask = o.mask
  if not torch.is_tensor(mask) then error(fname .. ": mask must be a bool tensor, got " .. type(mask), 0) end
  if mask.dtype ~= torch.bool then mask = mask:ne(0) end
  if (o.logits == nil) == (o.probs == nil) then
    error(fname .. ": either probs or logits must be given, but not both", 0)
  end
  local logits = o.logits
  if o.probs ~= nil then
    if not torch.is_tensor(o.probs) then error(fname .. ": probs must be a tensor, got " .. type(o.probs), 0) end
    logits = o.probs:log()
  elseif not torch.is_tensor(logits) then
    error(fname .. ": logits must be a tensor, got " .. type(logits), 0)
  end
  local ok, bmask = pcall(function() return mask:expand_as(logits) end)
  if not ok then
    error(("%s: mask %s does not broadcast with the logits %s"):format(fname, U.shape_str(mask),
                                                                      U.shape_str(logits)), 0)
  end
  if not torch.compiler.is_compiling() and not bmask:any(-1):all():item() then
    error(fname .. ": every batch element needs at least one allowed category (a mask row is all false)", 0)
  end
  self.mask = bmask
  D.Categorical.__init(self, {logits = logits:masked_fill(bmask:logical_not(), o.neg_inf),
                              validate_args = o.validate_args})
end
MaskedCategorical:property("deterministic_sample", function(self) return self.mode end)

-- entropy(): over the allowed categories only (0 log 0 = 0).
function MaskedCategorical:entropy()
  local p = self.probs
  local lp = self.logits:masked_fill(self.mask:logical_not(), 0)
  return -(p * lp):sum(-1)
end

B.publish({SafeTanh, TanhNormal, IndependentNormal, OneHotCategorical, MaskedCategorical})
return M
