-- torch.vision.ops: torchvision.ops in Lua -- box conversions and the IoU
-- family (boxes.lua), box losses and the focal loss (losses.lua), nms and
-- batched_nms (nms.lua), roi_align and roi_pool (roi.lua), their modules
-- (modules.lua), MultiScaleRoIAlign (poolers.lua) and the layers of the
-- models (misc.lua: Conv2dNormActivation, SqueezeExcitation, MLP, ...). Geometric values
-- (box corners) are 0-based and continuous as in torchvision; indices (keep
-- lists, the batch column of rois) are 1-based.
local ops = {}
for _, part in ipairs{"boxes", "losses", "nms", "roi", "modules", "poolers", "misc"} do
  for name, fn in pairs(require("torch.vision.ops." .. part)) do
    if name:sub(1, 1) ~= "_" then ops[name] = fn end
  end
end
return ops
