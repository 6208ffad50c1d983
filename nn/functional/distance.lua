-- torch.nn.functional.distance -- normalize, cosine_similarity and
-- pairwise_distance (dims are 1-based: PyTorch's dim=1 is dim=2 here).
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}

-- normalize(input[, p=2, dim=2, eps=1e-12]): input / max(||input||_p, eps) along dim.
function F.normalize(x, ...)
  local o = U.args("F.normalize", {"p", "dim", "eps"}, {p = 2.0, dim = 2, eps = 1e-12}, ...)
  local dim = o.dim
  if x:dim() == 1 and dim == 2 then dim = 1 end
  local n = x:norm(o.p, dim, true):clamp(o.eps)
  return x / n:expand_as(x)
end

-- cosine_similarity(x1, x2[, dim=2, eps=1e-8]): sum(x1 x2) / sqrt(max(|x1|^2 |x2|^2, eps^2)).
function F.cosine_similarity(x1, x2, ...)
  local o = U.args("F.cosine_similarity", {"dim", "eps"}, {dim = 2, eps = 1e-8}, ...)
  local dim = o.dim
  local w12 = (x1 * x2):sum(dim)
  local w1 = (x1 * x1):sum(dim)
  local w2 = (x2 * x2):sum(dim)
  local n12 = (w1 * w2):clamp(o.eps * o.eps):sqrt()
  return w12 / n12
end

-- pairwise_distance(x1, x2[, p=2, eps=1e-6, keepdim=false]): ||x1 - x2 + eps||_p over the last dim.
function F.pairwise_distance(x1, x2, ...)
  local o = U.args("F.pairwise_distance", {"p", "eps", "keepdim"}, {p = 2.0, eps = 1e-6, keepdim = false}, ...)
  return (x1 - x2 + o.eps):norm(o.p, -1, o.keepdim)
end

return F
