-- torch.vision.ops losses (torchvision.ops giou_loss, diou_loss,
-- ciou_loss, focal_loss): elementwise over matching pairs of xyxy boxes
-- (..., 4), written with recorded tensor ops so they train.
local torch = require "torch"
local U = require "torch.nn.util"
local F = require "torch.nn.functional"

local L = {}

local function upcast_non_float(t)
  return (t.dtype == torch.float32 or t.dtype == torch.float64) and t or t:float()
end

local function reduce(fname, loss, reduction)
  if reduction == "none" then return loss end
  if reduction == "mean" then return loss:numel() > 0 and loss:mean() or 0.0 * loss:sum() end
  if reduction == "sum" then return loss:sum() end
  error(("%s: invalid reduction '%s' (expected 'none', 'mean' or 'sum')"):format(fname, tostring(reduction)), 3)
end

local function args(fname, b1, b2, ...)
  for k, b in ipairs{b1, b2} do
    if not torch.is_tensor(b) or b:dim() < 1 or b:size(-1) ~= 4 then
      error(("%s: boxes%d must be a tensor whose last dim has size 4"):format(fname, k), 3)
    end
  end
  local o = U.args(fname, {"reduction", "eps"}, {reduction = "none", eps = 1e-7}, ...)
  local a, b = upcast_non_float(b1), upcast_non_float(b2)
  local x1, y1, x2, y2 = table.unpack(a:unbind(-1))
  local gx1, gy1, gx2, gy2 = table.unpack(b:unbind(-1))
  return o, {x1, y1, x2, y2}, {gx1, gy1, gx2, gy2}
end

-- intersection (0 unless the boxes overlap) and union
local function inter_union(p, g)
  local xk1, yk1 = torch.maximum(p[1], g[1]), torch.maximum(p[2], g[2])
  local xk2, yk2 = torch.minimum(p[3], g[3]), torch.minimum(p[4], g[4])
  local overlap = yk2:gt(yk1):logical_and(xk2:gt(xk1))
  local inter = torch.where(overlap, (xk2 - xk1) * (yk2 - yk1), 0)
  local union = (p[3] - p[1]) * (p[4] - p[2]) + (g[3] - g[1]) * (g[4] - g[2]) - inter
  return inter, union
end

-- the smallest enclosing box's corners
local function hull(p, g)
  return torch.minimum(p[1], g[1]), torch.minimum(p[2], g[2]), torch.maximum(p[3], g[3]), torch.maximum(p[4], g[4])
end

function L.generalized_box_iou_loss(boxes1, boxes2, ...)
  local fname = "generalized_box_iou_loss"
  local o, p, g = args(fname, boxes1, boxes2, ...)
  local inter, union = inter_union(p, g)
  local iou = inter / (union + o.eps)
  local xc1, yc1, xc2, yc2 = hull(p, g)
  local area = (xc2 - xc1) * (yc2 - yc1)
  return reduce(fname, 1 - (iou - (area - union) / (area + o.eps)), o.reduction)
end

local function diou_loss(p, g, eps)
  local inter, union = inter_union(p, g)
  local iou = inter / (union + eps)
  local xc1, yc1, xc2, yc2 = hull(p, g)
  local diag = (xc2 - xc1) ^ 2 + (yc2 - yc1) ^ 2 + eps
  local dx = (p[3] + p[1]) / 2 - (g[1] + g[3]) / 2
  local dy = (p[4] + p[2]) / 2 - (g[2] + g[4]) / 2
  return 1 - iou + (dx ^ 2 + dy ^ 2) / diag, iou
end

function L.distance_box_iou_loss(boxes1, boxes2, ...)
  local fname = "distance_box_iou_loss"
  local o, p, g = args(fname, boxes1, boxes2, ...)
  return reduce(fname, (diou_loss(p, g, o.eps)), o.reduction)
end

function L.complete_box_iou_loss(boxes1, boxes2, ...)
  local fname = "complete_box_iou_loss"
  local o, p, g = args(fname, boxes1, boxes2, ...)
  local loss, iou = diou_loss(p, g, o.eps)
  local v = (4 / math.pi ^ 2) * (torch.atan((g[3] - g[1]) / (g[4] - g[2])) - torch.atan((p[3] - p[1]) / (p[4] - p[2]))) ^ 2
  local alpha = torch.no_grad(function() return v / (1 - iou + v + o.eps) end)
  return reduce(fname, loss + alpha * v, o.reduction)
end

-- sigmoid_focal_loss(inputs, targets[, alpha=0.25, gamma=2, reduction='none']):
-- RetinaNet's loss on logits; alpha < 0 turns the class weighting off.
function L.sigmoid_focal_loss(inputs, targets, ...)
  local fname = "sigmoid_focal_loss"
  if not torch.is_tensor(inputs) or not torch.is_tensor(targets) then
    error(fname .. ": inputs and targets must be tensors", 2)
  end
  local o = U.args(fname, {"alpha", "gamma", "reduction"}, {alpha = 0.25, gamma = 2, reduction = "none"}, ...)
  local p = torch.sigmoid(inputs)
  local ce = F.binary_cross_entropy_with_logits(inputs, targets, {reduction = "none"})
  local p_t = p * targets + (1 - p) * (1 - targets)
  local loss = ce * (1 - p_t) ^ o.gamma
  if o.alpha >= 0 then loss = (o.alpha * targets + (1 - o.alpha) * (1 - targets)) * loss end
  if o.reduction == "mean" then return loss:mean() end
  return reduce(fname, loss, o.reduction)
end

return L
