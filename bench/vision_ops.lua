-- bench/vision_ops.lua -- torch.vision.ops (float32, CPU; CUDA rows when
-- a GPU is present): nms on 10k and 50k detection-like boxes (200 objects,
-- each with many jittered candidates, so boxes overlap heavily), batched_nms
-- of 10k boxes in 80 classes, roi_align forward and backward (256 channels,
-- 2 images of 50x50, 512 rois, 7x7, sampling_ratio 2), roi_pool forward,
-- box_iou of 1000 x 1000 boxes. Inputs come from the same integer hash on
-- both sides. The row filter "cuda" runs the CUDA rows alone. Peer:
-- bench/peers/vision_ops.py.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local O = torch.vision.ops
local only = arg and arg[1]
local function want(name) return not only or only == name or (only == "cuda" and name:find("_cuda$") ~= nil) end

-- hash(k, a): deterministic values in [0, 1) for the int64 positions k
local function hash(k, a) return ((k * a + 12345) % 1000003):double() / 1000003 end

-- n boxes around 200 objects of a 1000 x 1000 image, scores, class labels
local function detections(n, classes)
  local k = torch.arange(n)
  local obj = k % 200
  local cx, cy = hash(obj, 7919) * 900 + 50, hash(obj, 104729) * 900 + 50
  local w, h = hash(obj, 1299709) * 100 + 20, hash(obj, 15485863) * 100 + 20
  local jx, jy = (hash(k, 32452843) - 0.5) * 0.3 * w, (hash(k, 49979687) - 0.5) * 0.3 * h
  local sw, sh = 1 + (hash(k, 86028121) - 0.5) * 0.4, 1 + (hash(k, 122949829) - 0.5) * 0.4
  local x1, y1 = cx + jx - w * sw / 2, cy + jy - h * sh / 2
  local boxes = torch.stack({x1, y1, x1 + w * sw, y1 + h * sh}, 2):float()
  return boxes, hash(k, 179424673):float(), (hash(k, 2038074743) * (classes or 1)):floor():long()
end

local function rois(k, n, hw)
  local i = torch.arange(k)
  local x1, y1 = hash(i, 7919) * (hw - 8), hash(i, 104729) * (hw - 8)
  local w, h = hash(i, 1299709) * 20 + 4, hash(i, 15485863) * 20 + 4
  return torch.stack({(i % n):double() + 1, x1, y1, (x1 + w):clamp{max = hw - 1}, (y1 + h):clamp{max = hw - 1}}, 2):float()
end

local function suite(dev, sfx)
  local sync = dev == "cuda" and torch.cuda.synchronize or function() end
  for _, n in ipairs{10000, 50000} do
    local name = ("nms_%dk%s"):format(n // 1000, sfx)
    if want(name) then
      local b, s = detections(n)
      b, s = b:to(dev), s:to(dev)
      local t = B.time(function() local _ <close> = O.nms(b, s, 0.5); sync() end, n > 20000 and 2 or 5)
      B.report(name, t)
    end
  end
  if want("batched_nms_10k" .. sfx) then
    local b, s, c = detections(10000, 80)
    b, s, c = b:to(dev), s:to(dev), c:to(dev)
    local t = B.time(function() local _ <close> = O.batched_nms(b, s, c, 0.5); sync() end, 5)
    B.report("batched_nms_10k" .. sfx, t)
  end
  local x, r = torch.randn(2, 256, 50, 50):to(dev), rois(512, 2, 50):to(dev)
  if want("roi_align_fwd" .. sfx) then
    local t = B.time(function() local _ <close> = O.roi_align(x, r, 7, 1.0, 2, true); sync() end, 5)
    B.report("roi_align_fwd" .. sfx, t)
  end
  if want("roi_align_bwd" .. sfx) then
    local g = torch.randn(512, 256, 7, 7):to(dev)
    local t = B.time(function()
      local _ <close> = torch._vision.roi_align_backward(g, r, x.shape, 7, 7, 1.0, 2, true)
      sync()
    end, 5)
    B.report("roi_align_bwd" .. sfx, t)
  end
  if want("roi_pool_fwd" .. sfx) then
    local t = B.time(function() local _ <close> = O.roi_pool(x, r, 7, 1.0); sync() end, 5)
    B.report("roi_pool_fwd" .. sfx, t)
  end
  if want("box_iou_1000" .. sfx) then
    local b = detections(1000):to(dev)
    local t = B.time(function() local _ <close> = O.box_iou(b, b); sync() end, 20)
    B.report("box_iou_1000" .. sfx, t)
  end
end

torch.no_grad(function()
  if only ~= "cuda" then suite("cpu", "") end
  if torch.cuda.is_available() then suite("cuda", "_cuda") end
end)
