-- torch.vision.ops nms and batched_nms over the engine op torch._vision.nms
-- (tensor/nms.c). Keep indices are 1-based int64 positions into boxes, by
-- decreasing score; equal scores keep their input order (a stable sort),
-- on CPU and CUDA alike.
local torch = require "torch"

local N = {}
local V = torch._vision

local function check(fname, boxes, scores, thr)
  if not torch.is_tensor(boxes) or not torch.is_tensor(scores) then
    error(fname .. ": boxes and scores must be tensors", 3)
  end
  if type(thr) ~= "number" then error(fname .. ": iou_threshold must be a number, got " .. type(thr), 3) end
end

-- nms(boxes, scores, iou_threshold): boxes (N, 4) xyxy, scores (N).
function N.nms(boxes, scores, iou_threshold)
  check("nms", boxes, scores, iou_threshold)
  return V.nms(boxes, scores, iou_threshold)
end

-- batched_nms(boxes, scores, idxs, iou_threshold): NMS within each
-- category of idxs. As torchvision: small inputs shift each category's
-- boxes apart by (max coordinate + 1) * idx and run one nms; large ones
-- (more than 4000 numbers on the CPU, 20000 on CUDA) run nms per category
-- (here one class-aware pass).
function N.batched_nms(boxes, scores, idxs, iou_threshold)
  local fname = "batched_nms"
  check(fname, boxes, scores, iou_threshold)
  if not torch.is_tensor(idxs) or idxs:is_floating_point() then
    error(fname .. ": idxs must be an integer tensor of category ids", 2)
  end
  local limit = boxes.is_cuda and 20000 or 4000
  if boxes:numel() > limit then return V.nms(boxes, scores, iou_threshold, idxs) end
  if boxes:numel() == 0 then return torch.empty({0}, {dtype = torch.int64, device = boxes.device}) end
  if idxs:dim() ~= 1 or idxs:size(1) ~= boxes:size(1) then
    error(("%s: idxs must hold one category id per box (%d), got shape %s"):format(fname, boxes:size(1),
      table.concat(idxs.shape, "x")), 2)
  end
  local offsets = idxs:to(boxes.dtype) * (boxes:max() + 1)
  return V.nms(boxes + offsets:unsqueeze(2), scores, iou_threshold)
end

return N
