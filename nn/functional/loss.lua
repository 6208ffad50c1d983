-- torch.nn.functional.loss -- loss functions (PyTorch's formulas, written
-- with recorded engine ops so autograd differentiates them). Class targets
-- are 1-based int64 indices; ignore_index defaults to -100 as in PyTorch.
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}
local is_tensor = torch.is_tensor
local reduce = U.reduce

-- PyTorch's legacy size_average/reduce pair -> a reduction name.
local function reduction_of(o)
  if o.size_average ~= nil or o.reduce ~= nil then
    local sa, r = o.size_average ~= false, o.reduce ~= false
    if sa and r then return "mean" elseif r then return "sum" else return "none" end
  end
  return o.reduction or "mean"
end

local function check_tensors(fname, input, target)
  if not is_tensor(input) then error(fname .. ": input must be a tensor, got " .. type(input), 3) end
  if not is_tensor(target) then error(fname .. ": target must be a tensor, got " .. type(target), 3) end
end

-- Elementwise losses: input and target must broadcast together (PyTorch
-- warns when they differ and raises when they cannot broadcast).
local function check_broadcast(fname, input, target)
  check_tensors(fname, input, target)
  local a, b = input:size(), target:size()
  for i = 1, math.min(#a, #b) do
    local x, y = a[#a - i + 1], b[#b - i + 1]
    if x ~= y and x ~= 1 and y ~= 1 then
      error(("%s: input of shape %s and target of shape %s cannot be broadcast together (%d ~= %d at dimension %d "
             .. "from the end)"):format(fname, U.shape_str(input), U.shape_str(target), x, y, i), 3)
    end
  end
end

local function check_same(fname, input, target)
  check_tensors(fname, input, target)
  if U.shape_str(input) ~= U.shape_str(target) then
    error(("%s: target of shape %s does not match input of shape %s"):format(fname, U.shape_str(target),
          U.shape_str(input)), 3)
  end
end

local RED = {"size_average", "reduce", "reduction"}

-- mse_loss(input, target[, reduction='mean']): (input - target)^2
function F.mse_loss(input, target, ...)
  check_broadcast("F.mse_loss", input, target)
  local o = U.args("F.mse_loss", RED, nil, ...)
  local d = input - target
  return reduce(d * d, reduction_of(o), "F.mse_loss")
end

-- l1_loss(input, target[, reduction='mean']): |input - target|
function F.l1_loss(input, target, ...)
  check_broadcast("F.l1_loss", input, target)
  local o = U.args("F.l1_loss", RED, nil, ...)
  return reduce((input - target):abs(), reduction_of(o), "F.l1_loss")
end

-- smooth_l1_loss(input, target[, reduction='mean', beta=1]):
-- 0.5 z^2 / beta where z = |input - target| < beta, else z - 0.5 beta.
function F.smooth_l1_loss(input, target, ...)
  check_broadcast("F.smooth_l1_loss", input, target)
  local o = U.args("F.smooth_l1_loss", {"size_average", "reduce", "reduction", "beta"}, {beta = 1.0}, ...)
  if o.beta < 0 then error("F.smooth_l1_loss: beta must be non-negative, got " .. o.beta, 2) end
  local z = (input - target):abs()
  local loss
  if o.beta == 0 then loss = z
  else loss = torch.where(z:lt(o.beta), z * 0.5 * z / o.beta, z - 0.5 * o.beta) end
  return reduce(loss, reduction_of(o), "F.smooth_l1_loss")
end

-- huber_loss(input, target[, reduction='mean', delta=1]):
-- 0.5 z^2 where z = |input - target| < delta, else delta (z - 0.5 delta).
function F.huber_loss(input, target, ...)
  check_broadcast("F.huber_loss", input, target)
  local o = U.args("F.huber_loss", {"reduction", "delta"}, {reduction = "mean", delta = 1.0}, ...)
  if o.delta <= 0 then error("F.huber_loss: delta must be positive, got " .. o.delta, 2) end
  local z = (input - target):abs()
  local loss = torch.where(z:lt(o.delta), z * 0.5 * z, (z - 0.5 * o.delta) * o.delta)
  return reduce(loss, o.reduction, "F.huber_loss")
end

-- The class dim (2, or 1 for an unbatched input) and the number of classes.
local function class_dim(fname, input)
  local nd = input:dim()
  if nd == 0 then error(fname .. ": input must have at least 1 dimension (classes)", 3) end
  local cdim = nd == 1 and 1 or 2
  return cdim, input:size(cdim)
end

local function check_index_target(fname, input, target, cdim)
  if target:is_floating_point() or target.dtype == torch.bool then
    error(("%s: expected target of 1-based class indices (int64) or of class probabilities with input's shape %s, "
           .. "got %s of shape %s"):format(fname, U.shape_str(input), tostring(target.dtype), U.shape_str(target)), 3)
  end
  local s, t = input:size(), target:size()
  table.remove(s, cdim)
  if #s ~= #t then
    error(("%s: expected target of shape %s for input of shape %s, got %s"):format(fname, U.shape_str(s),
          U.shape_str(input), U.shape_str(target)), 3)
  end
  for i = 1, #s do
    if s[i] ~= t[i] then
      error(("%s: expected target of shape %s for input of shape %s, got %s"):format(fname, U.shape_str(s),
            U.shape_str(input), U.shape_str(target)), 3)
    end
  end
end

-- Negative log likelihood of log-probabilities lp (class dim cdim) at
-- class indices target; returns the loss after reduction.
local function nll(fname, lp, target, weight, ignore_index, reduction, cdim, C)
  local t, valid = target, nil
  if torch.compiler.is_compiling() then
    -- no host reads inside a compiled graph: ignored targets are masked
    -- without looking at them, and an out-of-range class fails in gather
    valid = target:ne(ignore_index)
    local vi = valid:to(target.dtype)
    t = target * vi + (1 - vi)
  elseif target:numel() > 0 then
    local ign = target:eq(ignore_index)
    if ign:any():item() then
      valid = ign:logical_not()
      t = torch.where(valid, target, torch.ones_like(target))
    end
    local lo, hi = t:min():item(), t:max():item()
    if lo < 1 or hi > C then
      error(("%s: target %d is out of bounds: class indices are 1-based and there are %d classes"):format(fname,
            (lo < 1) and lo or hi, C), 3)
    end
  end
  local picked = lp:gather(cdim, t:unsqueeze(cdim)):squeeze(cdim)
  local w
  if weight ~= nil then
    if weight:dim() ~= 1 or weight:numel() ~= C then
      error(("%s: weight must have %d elements (one per class), got shape %s"):format(fname, C, U.shape_str(weight)), 3)
    end
    w = weight:index_select(1, t:reshape(-1)):view(t:size())
  end
  if valid ~= nil then
    local vm = valid:to(lp.dtype)
    w = w and w * vm or vm
  end
  local loss = -picked
  if w ~= nil then loss = loss * w end
  if reduction == "none" then return loss end
  if reduction == "sum" then return loss:sum() end
  if reduction ~= "mean" then
    error(("%s: reduction must be 'mean', 'sum' or 'none', got '%s'"):format(fname, tostring(reduction)), 3)
  end
  if w ~= nil then return loss:sum() / w:sum() end
  return loss:mean()
end

local NLL = {"weight", "size_average", "ignore_index", "reduce", "reduction"}

-- nll_loss(input, target[, weight, ignore_index=-100, reduction='mean']):
-- input holds log-probabilities (N, C, ...), target 1-based classes (N, ...).
function F.nll_loss(input, target, ...)
  check_tensors("F.nll_loss", input, target)
  local o = U.args("F.nll_loss", NLL, {ignore_index = -100}, ...)
  local cdim, C = class_dim("F.nll_loss", input)
  check_index_target("F.nll_loss", input, target, cdim)
  return nll("F.nll_loss", input, target, o.weight, o.ignore_index, reduction_of(o), cdim, C)
end

-- weight viewed to broadcast along the class dim of an nd-dim input.
local function class_view(weight, nd, cdim, C)
  local s = {}
  for i = 1, nd do s[i] = 1 end
  s[cdim] = C
  return weight:view(s)
end

local CE = {"weight", "size_average", "ignore_index", "reduce", "reduction", "label_smoothing"}

-- cross_entropy(input, target[, weight, ignore_index=-100, reduction='mean',
-- label_smoothing=0]): log_softmax over the class dim (2) then nll_loss; a
-- floating target of input's shape holds class probabilities instead.
function F.cross_entropy(input, target, ...)
  check_tensors("F.cross_entropy", input, target)
  local o = U.args("F.cross_entropy", CE, {ignore_index = -100, label_smoothing = 0.0}, ...)
  local reduction = reduction_of(o)
  local cdim, C = class_dim("F.cross_entropy", input)
  local ls = o.label_smoothing
  if ls < 0 or ls > 1 then error("F.cross_entropy: label_smoothing must be between 0 and 1, got " .. ls, 2) end
  local lp = input:log_softmax(cdim)
  local nd = input:dim()
  if target:is_floating_point() then
    if U.shape_str(target) ~= U.shape_str(input) then
      error(("F.cross_entropy: a probability target must have input's shape %s, got %s"):format(
            U.shape_str(input), U.shape_str(target)), 2)
    end
    if ls > 0 then target = target * (1 - ls) + ls / C end
    local prod = lp * target
    if o.weight ~= nil then prod = prod * class_view(o.weight, nd, cdim, C) end
    if reduction == "none" then return -prod:sum(cdim) end
    if reduction == "sum" then return -prod:sum() end
    if reduction == "mean" then return -prod:sum() / (input:numel() / C) end
    error("F.cross_entropy: reduction must be 'mean', 'sum' or 'none', got '" .. tostring(reduction) .. "'", 2)
  end
  check_index_target("F.cross_entropy", input, target, cdim)
  local loss = nll("F.cross_entropy", lp, target, o.weight, o.ignore_index, reduction, cdim, C)
  if ls <= 0 then return loss end
  local smooth
  if o.weight ~= nil then smooth = -(lp * class_view(o.weight, nd, cdim, C)):sum(cdim)
  else smooth = -lp:sum(cdim) end
  local ignore = target:eq(o.ignore_index)
  local keep = ignore:logical_not()
  smooth = smooth * keep:to(smooth.dtype)
  local ret
  if reduction == "mean" then
    if o.weight ~= nil then
      ret = smooth:sum() / o.weight:index_select(1, target:masked_select(keep)):sum()
    else
      ret = smooth:sum() / keep:sum():to(smooth.dtype)
    end
  elseif reduction == "sum" then
    ret = smooth:sum()
  else
    ret = smooth
  end
  return loss * (1 - ls) + ret * (ls / C)
end

local BCE = {"weight", "size_average", "reduce", "reduction"}

-- binary_cross_entropy(input, target[, weight, reduction='mean']): input
-- holds probabilities; logs are clamped at -100 as in PyTorch.
function F.binary_cross_entropy(input, target, ...)
  check_same("F.binary_cross_entropy", input, target)
  local o = U.args("F.binary_cross_entropy", BCE, nil, ...)
  if input:numel() > 0 then
    local lo, hi = input:min():item(), input:max():item()
    if not (lo >= 0 and hi <= 1) then
      error("F.binary_cross_entropy: all elements of input should be between 0 and 1", 2)
    end
  end
  local loss = (target - 1) * (-input):log1p():clamp(-100) - target * input:log():clamp(-100)
  if o.weight ~= nil then loss = loss * o.weight end
  return reduce(loss, reduction_of(o), "F.binary_cross_entropy")
end

-- binary_cross_entropy_with_logits(input, target[, weight, reduction='mean',
-- pos_weight]): sigmoid + binary cross entropy in the stable form.
function F.binary_cross_entropy_with_logits(input, target, ...)
  check_same("F.binary_cross_entropy_with_logits", input, target)
  local o = U.args("F.binary_cross_entropy_with_logits", {"weight", "size_average", "reduce", "reduction",
                                                          "pos_weight"}, nil, ...)
  local max_val = (-input):clamp(0)
  local lse = ((-max_val):exp() + (-input - max_val):exp()):log()
  local loss
  if o.pos_weight ~= nil then
    local log_weight = (o.pos_weight - 1) * target + 1
    loss = (1 - target) * input + log_weight * (lse + max_val)
  else
    loss = (1 - target) * input + max_val + lse
  end
  if o.weight ~= nil then loss = loss * o.weight end
  return reduce(loss, reduction_of(o), "F.binary_cross_entropy_with_logits")
end

-- kl_div(input, target[, reduction='mean', log_target=false]): input holds
-- log-probabilities; target probabilities (log-probabilities if log_target).
-- reduction 'batchmean' divides the sum by the batch size.
function F.kl_div(input, target, ...)
  check_broadcast("F.kl_div", input, target)
  local o = U.args("F.kl_div", {"size_average", "reduce", "reduction", "log_target"}, {log_target = false}, ...)
  local reduction = reduction_of(o)
  local out
  if o.log_target then
    out = target:exp() * (target - input)
  else
    local safe = torch.where(target:gt(0), target, torch.ones_like(target))
    out = target * safe:log() - target * input
  end
  if reduction == "batchmean" then
    local s = out:sum()
    if input:dim() ~= 0 then s = s / input:size(1) end
    return s
  end
  return reduce(out, reduction, "F.kl_div")
end

return F
