-- torch.vision.ops box functions (torchvision.ops.boxes): format
-- conversion, areas, the IoU family, clipping, filtering and masks to
-- boxes, written with recorded tensor ops (any float dtype, CPU or CUDA,
-- differentiable where torchvision's are). Box coordinates are continuous
-- and 0-based as in torchvision; returned positions are 1-based.
local torch = require "torch"
local U = require "torch.nn.util"

local B = {}

local function check_boxes(fname, b, what)
  if not torch.is_tensor(b) then error(("%s: %s must be a tensor, got %s"):format(fname, what, type(b)), 3) end
  if b:dim() ~= 2 or b:size(2) ~= 4 then
    error(("%s: %s must be an N x 4 tensor, got shape %s"):format(fname, what, table.concat(b.shape, "x")), 3)
  end
end

-- torchvision's _upcast: 16-bit floats to float32, small integers to int32.
local function upcast(t)
  if t:is_floating_point() then
    return (t.dtype == torch.float32 or t.dtype == torch.float64) and t or t:float()
  end
  return (t.dtype == torch.int32 or t.dtype == torch.int64) and t or t:int()
end
B._upcast = upcast

local function cols(b) return table.unpack(b:unbind(-1)) end

local FMTS = {xyxy = true, xywh = true, cxcywh = true}
local to_xyxy = {
  xywh = function(b) local x, y, w, h = cols(b) return torch.stack({x, y, x + w, y + h}, -1) end,
  cxcywh = function(b)
    local cx, cy, w, h = cols(b)
    return torch.stack({cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h}, -1)
  end,
}
local from_xyxy = {
  xywh = function(b) local x1, y1, x2, y2 = cols(b) return torch.stack({x1, y1, x2 - x1, y2 - y1}, -1) end,
  cxcywh = function(b)
    local x1, y1, x2, y2 = cols(b)
    return torch.stack({(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1}, -1)
  end,
}

-- box_convert(boxes, in_fmt, out_fmt): boxes (..., 4) between 'xyxy',
-- 'xywh' and 'cxcywh'.
function B.box_convert(boxes, in_fmt, out_fmt)
  local fname = "box_convert"
  if not torch.is_tensor(boxes) or boxes:dim() < 1 or boxes:size(-1) ~= 4 then
    error(fname .. ": boxes must be a tensor whose last dim has size 4", 2)
  end
  if not FMTS[in_fmt] or not FMTS[out_fmt] then
    error(("%s: unsupported formats '%s' -> '%s' (expected 'xyxy', 'xywh' or 'cxcywh')"):format(fname,
      tostring(in_fmt), tostring(out_fmt)), 2)
  end
  if in_fmt == out_fmt then return boxes:clone() end
  if in_fmt ~= "xyxy" then boxes = to_xyxy[in_fmt](boxes) end
  if out_fmt ~= "xyxy" then boxes = from_xyxy[out_fmt](boxes) end
  return boxes
end

function B.box_area(boxes)
  check_boxes("box_area", boxes, "boxes")
  boxes = upcast(boxes)
  local x1, y1, x2, y2 = cols(boxes)
  return (x2 - x1) * (y2 - y1)
end

-- pairwise corners: boxes1[:, None, k] against boxes2[:, k]
local function pair(b1, b2, k) return b1:select(2, k):unsqueeze(2), b2:select(2, k):unsqueeze(1) end

-- intersection and union (N, M), and the enclosing box's width and height.
local function inter_union(b1, b2)
  local area1, area2 = B.box_area(b1), B.box_area(b2)
  local w = upcast(torch.minimum(pair(b1, b2, 3)) - torch.maximum(pair(b1, b2, 1))):clamp{min = 0}
  local h = upcast(torch.minimum(pair(b1, b2, 4)) - torch.maximum(pair(b1, b2, 2))):clamp{min = 0}
  local inter = w * h
  return inter, area1:unsqueeze(2) + area2 - inter
end

local function enclosing(b1, b2)
  local w = upcast(torch.maximum(pair(b1, b2, 3)) - torch.minimum(pair(b1, b2, 1))):clamp{min = 0}
  local h = upcast(torch.maximum(pair(b1, b2, 4)) - torch.minimum(pair(b1, b2, 2))):clamp{min = 0}
  return w, h
end

local function two(fname, b1, b2)
  check_boxes(fname, b1, "boxes1")
  check_boxes(fname, b2, "boxes2")
end

function B.box_iou(boxes1, boxes2)
  two("box_iou", boxes1, boxes2)
  local inter, union = inter_union(boxes1, boxes2)
  return inter / union
end

function B.generalized_box_iou(boxes1, boxes2)
  two("generalized_box_iou", boxes1, boxes2)
  local inter, union = inter_union(boxes1, boxes2)
  local w, h = enclosing(boxes1, boxes2)
  local area = w * h
  return inter / union - (area - union) / area
end

-- DIoU and IoU (N, M)
local function diou_iou(b1, b2, eps)
  local inter, union = inter_union(b1, b2)
  local iou = inter / union
  local w, h = enclosing(b1, b2)
  local diag = w ^ 2 + h ^ 2 + eps
  local c1 = (b1:select(2, 1) + b1:select(2, 3)) / 2
  local d1 = (b1:select(2, 2) + b1:select(2, 4)) / 2
  local c2 = (b2:select(2, 1) + b2:select(2, 3)) / 2
  local d2 = (b2:select(2, 2) + b2:select(2, 4)) / 2
  local dist = upcast(c1:unsqueeze(2) - c2:unsqueeze(1)) ^ 2 + upcast(d1:unsqueeze(2) - d2:unsqueeze(1)) ^ 2
  return iou - dist / diag, iou
end

local function eps_arg(fname, ...)
  return U.args(fname, {"eps"}, {eps = 1e-7}, ...).eps
end

function B.distance_box_iou(boxes1, boxes2, ...)
  two("distance_box_iou", boxes1, boxes2)
  local eps = eps_arg("distance_box_iou", ...)
  return (diou_iou(upcast(boxes1), upcast(boxes2), eps))
end

function B.complete_box_iou(boxes1, boxes2, ...)
  two("complete_box_iou", boxes1, boxes2)
  local eps = eps_arg("complete_box_iou", ...)
  boxes1, boxes2 = upcast(boxes1), upcast(boxes2)
  local diou, iou = diou_iou(boxes1, boxes2, eps)
  local x1, y1, x2, y2 = cols(boxes1)
  local gx1, gy1, gx2, gy2 = cols(boxes2)
  local ap = torch.atan((x2 - x1) / (y2 - y1)):unsqueeze(2)
  local ag = torch.atan((gx2 - gx1) / (gy2 - gy1)):unsqueeze(1)
  local v = (4 / math.pi ^ 2) * (ap - ag) ^ 2
  local alpha = torch.no_grad(function() return v / (1 - iou + v + eps) end)
  return diou - alpha * v
end

-- clip_boxes_to_image(boxes, size): boxes (..., 4) xyxy clamped to
-- [0, W] x [0, H] for size {H, W}.
function B.clip_boxes_to_image(boxes, size)
  local fname = "clip_boxes_to_image"
  if not torch.is_tensor(boxes) or boxes:dim() < 1 or boxes:size(-1) ~= 4 then
    error(fname .. ": boxes must be a tensor whose last dim has size 4", 2)
  end
  if type(size) ~= "table" or #size ~= 2 or type(size[1]) ~= "number" or type(size[2]) ~= "number" then
    error(fname .. ": size must be a table {height, width}", 2)
  end
  local h, w = size[1], size[2]
  local x1, y1, x2, y2 = cols(boxes)
  return torch.stack({x1:clamp(0, w), y1:clamp(0, h), x2:clamp(0, w), y2:clamp(0, h)}, -1)
end

-- remove_small_boxes(boxes, min_size): 1-based positions of the boxes
-- whose width and height are both >= min_size.
function B.remove_small_boxes(boxes, min_size)
  check_boxes("remove_small_boxes", boxes, "boxes")
  if type(min_size) ~= "number" then error("remove_small_boxes: min_size must be a number", 2) end
  local x1, y1, x2, y2 = cols(boxes)
  local keep = (x2 - x1):ge(min_size):logical_and((y2 - y1):ge(min_size))
  return keep:nonzero():reshape(-1)
end

-- masks_to_boxes(masks): (N, H, W) masks to float32 xyxy boxes of their
-- nonzero pixels (0-based pixel coordinates, inclusive).
function B.masks_to_boxes(masks)
  local fname = "masks_to_boxes"
  if not torch.is_tensor(masks) or masks:dim() ~= 3 then
    error(fname .. ": masks must be an N x H x W tensor", 2)
  end
  if masks:numel() == 0 then return torch.zeros({0, 4}, {device = masks.device}) end
  local n, h, w = masks:size(1), masks:size(2), masks:size(3)
  local on = masks:ne(0)
  local cols_on, rows_on = on:any(2), on:any(3) -- (N, W), (N, H)
  local empty = cols_on:any(2):logical_not()
  if empty:any():item() then
    local k = empty:nonzero()[1][1]:item()
    error(("%s: mask %d has no nonzero pixel"):format(fname, k), 2)
  end
  local xs = torch.arange(w, {device = masks.device}):float()
  local ys = torch.arange(h, {device = masks.device}):float()
  local function lo_hi(any, r, size)
    local lo = torch.where(any, r, size + 1):amin(2)
    local hi = torch.where(any, r, -1):amax(2)
    return lo, hi
  end
  local x1, x2 = lo_hi(cols_on, xs, w)
  local y1, y2 = lo_hi(rows_on, ys, h)
  return torch.stack({x1, y1, x2, y2}, 2)
end

return B
