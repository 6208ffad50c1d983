-- torch.distributions.kl -- kl_divergence(p, q) = KL(p || q) in closed
-- form for registered pairs of distribution classes (register_kl adds
-- one); the most specific registered pair of the classes' ancestors wins.
local torch = require "torch"
local B = require "torch.distributions.distribution"

local K = {}
local registry = {} -- registry[P][Q] = fn(p, q)

-- register_kl(type_p, type_q, fn): fn(p, q) computes KL(p || q) for
-- instances of these classes (or their subclasses).
function K.register_kl(type_p, type_q, fn)
  if type(fn) ~= "function" then error("register_kl: fn must be a function, got " .. type(fn), 2) end
  for _, c in ipairs{type_p, type_q} do
    if type(c) ~= "table" or type(rawget(c, "__name")) ~= "string" then
      error("register_kl: type_p and type_q must be distribution classes", 2)
    end
  end
  registry[type_p] = registry[type_p] or {}
  registry[type_p][type_q] = fn
end

local function ancestors(c)
  local out = {}
  while c do
    out[#out + 1] = c
    c = rawget(c, "__parent")
  end
  return out
end

-- kl_divergence(p, q) -> KL(p || q) over the batch (shape batch_shape).
function K.kl_divergence(p, q)
  local cp, cq = getmetatable(p), getmetatable(q)
  if type(p) ~= "table" or type(q) ~= "table" or not p.batch_shape or not q.batch_shape then
    error("kl_divergence: p and q must be distributions", 2)
  end
  local best, best_rank
  for i, a in ipairs(ancestors(cp)) do
    for j, b in ipairs(ancestors(cq)) do
      local f = registry[a] and registry[a][b]
      if f and (not best_rank or i + j < best_rank) then best, best_rank = f, i + j end
    end
  end
  if not best then
    error(("kl_divergence: no closed form is registered for KL(%s || %s)"):format(cp.__name, cq.__name), 2)
  end
  return best(p, q)
end

local D = {
  Normal = require "torch.distributions.normal",
  Categorical = require "torch.distributions.categorical",
  OneHotCategorical = require "torch.distributions.one_hot_categorical",
  Bernoulli = require "torch.distributions.bernoulli",
  Uniform = require "torch.distributions.uniform",
  Independent = require "torch.distributions.independent",
}

-- KL of Normals: 0.5 (r + ((mu_p - mu_q) / s_q)^2 - 1 - log r), r = (s_p / s_q)^2.
K.register_kl(D.Normal, D.Normal, function(p, q)
  local r = (p.scale / q.scale):pow(2)
  local t1 = ((p.loc - q.loc) / q.scale):pow(2)
  return (r + t1 - 1 - r:log()) * 0.5
end)

-- KL of Categoricals: sum p (log p - log q); inf where q is 0 and p is not.
local function kl_cat(p, q)
  local t = p.probs * (p.logits - q.logits)
  t = t:masked_fill(q.probs:eq(0):expand_as(t), math.huge)
  t = t:masked_fill(p.probs:eq(0):expand_as(t), 0)
  return t:sum(-1)
end
K.register_kl(D.Categorical, D.Categorical, kl_cat)
K.register_kl(D.OneHotCategorical, D.OneHotCategorical, function(p, q)
  return kl_cat(p._categorical, q._categorical)
end)

-- KL of Bernoullis, from logits (PyTorch's form).
K.register_kl(D.Bernoulli, D.Bernoulli, function(p, q)
  local F = require "torch.nn.functional"
  local t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
  t1 = t1:masked_fill(q.probs:eq(0), math.huge)
  t1 = t1:masked_fill(p.probs:eq(0), 0)
  local t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
  t2 = t2:masked_fill(q.probs:eq(1), math.huge)
  t2 = t2:masked_fill(p.probs:eq(1), 0)
  return t1 + t2
end)

-- KL of Uniforms: log((hq - lq) / (hp - lp)) when [lp, hp] lies in [lq, hq], else inf.
K.register_kl(D.Uniform, D.Uniform, function(p, q)
  local r = ((q.high - q.low) / (p.high - p.low)):log()
  return r:masked_fill(q.low:gt(p.low):logical_or(q.high:lt(p.high)), math.huge)
end)

-- KL of Independents: the base KL summed over the reinterpreted dims.
K.register_kl(D.Independent, D.Independent, function(p, q)
  if p.reinterpreted_batch_ndims ~= q.reinterpreted_batch_ndims then
    error("kl_divergence: the Independent distributions reinterpret different numbers of dims", 0)
  end
  return B.sum_rightmost(K.kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
end)

local _ = torch
return K
