-- torch.vision.transforms.v2._detection -- the detection transforms:
-- RandomIoUCrop (SSD's crop: a crop whose IoU with some box reaches a drawn
-- threshold), RandomZoomOut (the image placed on a larger canvas of fill)
-- and SanitizeBoundingBoxes (drops degenerate boxes with their labels and
-- masks; labels are 1-based class ids kept aligned with their boxes).
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local G = require "torch.vision.transforms.v2._geom_util"
local U = require "torch.vision.transforms.v2._utils"
local Fm = require "torch.vision.transforms.v2.functional._meta"
local tv = require "torch.vision.tv_tensors"

local M = {}

local function first_boxes(flat)
  for i = 1, flat.n do
    if tv.kind(flat[i]) == "BoundingBoxes" then return flat[i] end
  end
end

-- iou(a, b): the IoU of every XYXY box of a with the one box b {x1, y1, x2, y2}
local function iou(a, b)
  local x1 = a:select(-1, 1):clamp(b[1], math.huge)
  local y1 = a:select(-1, 2):clamp(b[2], math.huge)
  local x2 = a:select(-1, 3):clamp(-math.huge, b[3])
  local y2 = a:select(-1, 4):clamp(-math.huge, b[4])
  local inter = (x2 - x1):clamp(0, math.huge) * (y2 - y1):clamp(0, math.huge)
  local area_a = (a:select(-1, 3) - a:select(-1, 1)) * (a:select(-1, 4) - a:select(-1, 2))
  local area_b = (b[3] - b[1]) * (b[4] - b[2])
  return inter / (area_a + area_b - inter)
end

-- RandomIoUCrop([min_scale=0.3, max_scale=1, min_aspect_ratio=0.5,
-- max_aspect_ratio=2, sampler_options={0, 0.1, 0.3, 0.5, 0.7, 0.9, 1},
-- trials=40])
M.RandomIoUCrop = T.Transform:extend("RandomIoUCrop")
function M.RandomIoUCrop:__init(...)
  local o = G.args("RandomIoUCrop", {"min_scale", "max_scale", "min_aspect_ratio", "max_aspect_ratio",
    "sampler_options", "trials"}, {min_scale = 0.3, max_scale = 1.0, min_aspect_ratio = 0.5, max_aspect_ratio = 2.0,
    sampler_options = {0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0}, trials = 40}, ...)
  for _, k in ipairs({"min_scale", "max_scale", "min_aspect_ratio", "max_aspect_ratio"}) do
    if type(o[k]) ~= "number" then error(("v2.RandomIoUCrop: %s must be a number"):format(k), 3) end
  end
  if type(o.sampler_options) ~= "table" or #o.sampler_options == 0 then
    error("v2.RandomIoUCrop: sampler_options must be a non-empty list of numbers", 3)
  end
  if math.type(o.trials) ~= "integer" or o.trials < 1 then
    error("v2.RandomIoUCrop: trials must be a positive integer", 3)
  end
  for k, v in pairs(o) do self[k] = v end
  self.options = o.sampler_options
  self.sampler_options = nil
end
function M.RandomIoUCrop:_check_inputs(flat)
  if not (U.has_any(flat, "BoundingBoxes") and U.has_any(flat, "Image", "tensor")) then
    error("v2.RandomIoUCrop: the sample must hold an image and BoundingBoxes", 4)
  end
end
-- one trial: the crop {top, left, height, width} and which boxes have
-- their centre inside, or nil
function M.RandomIoUCrop:_trial(h, w, xyxy, threshold)
  local r = torch.rand(2):totable()
  local nw = math.floor(w * (self.min_scale + (self.max_scale - self.min_scale) * r[1]))
  local nh = math.floor(h * (self.min_scale + (self.max_scale - self.min_scale) * r[2]))
  if nh == 0 then return nil end
  local aspect = nw / nh
  if not (self.min_aspect_ratio <= aspect and aspect <= self.max_aspect_ratio) then return nil end
  r = torch.rand(2):totable()
  local left, top = math.floor((w - nw) * r[1]), math.floor((h - nh) * r[2])
  local right, bottom = left + nw, top + nh
  if left == right or top == bottom then return nil end
  local cx = (xyxy:select(-1, 1) + xyxy:select(-1, 3)) * 0.5
  local cy = (xyxy:select(-1, 2) + xyxy:select(-1, 4)) * 0.5
  local within = cx:gt(left):logical_and(cx:lt(right)):logical_and(cy:gt(top)):logical_and(cy:lt(bottom))
  if not within:any():item() then return nil end
  if iou(xyxy[within], {left, top, right, bottom}):max():item() < threshold then return nil end
  return {top = top, left = left, height = nh, width = nw, within = within}
end
function M.RandomIoUCrop:make_params(flat)
  local h, w = table.unpack(U.query_size(flat, "v2.RandomIoUCrop"))
  local boxes = first_boxes(flat)
  local xyxy = Fm._convert(boxes, boxes.format, "XYXY"):double()
  while true do
    local threshold = self.options[torch.randint(1, #self.options + 1, {1}):item()]
    if threshold >= 1.0 then return {} end
    for _ = 1, self.trials do
      local p = self:_trial(h, w, xyxy, threshold)
      if p then return p end
    end
  end
end
function M.RandomIoUCrop:transform(inpt, p)
  if not p.top then return inpt end
  local out = self:_call_kernel("crop", inpt, p.top, p.left, p.height, p.width)
  if tv.kind(out) == "BoundingBoxes" then
    -- boxes whose centre left the crop become degenerate (SanitizeBoundingBoxes drops them)
    local keep = p.within:to(out.device):unsqueeze(-1)
    out = tv.wrap(torch.where(keep, out, torch.zeros({}, {dtype = out.dtype, device = out.device})), {like = out})
  end
  return out
end

-- RandomZoomOut([fill=0, side_range={1, 4}, p=0.5])
M.RandomZoomOut = T.RandomTransform:extend("RandomZoomOut")
function M.RandomZoomOut:__init(...)
  local o = G.args("RandomZoomOut", {"fill", "side_range", "p"}, {side_range = {1.0, 4.0}, p = 0.5}, ...)
  T.RandomTransform.__init(self, o.p)
  self.fill = G.check_fill("RandomZoomOut", o.fill or 0)
  self.side_range = G.pair("RandomZoomOut", "side_range", o.side_range)
  if self.side_range[1] < 1 then
    error(("v2.RandomZoomOut: side_range must be within [1, inf), got {%s, %s}"):format(self.side_range[1],
      self.side_range[2]), 3)
  end
end
function M.RandomZoomOut:make_params(flat)
  local h, w = table.unpack(U.query_size(flat, "v2.RandomZoomOut"))
  local lo, hi = self.side_range[1], self.side_range[2]
  local r = lo + torch.rand(1):item() * (hi - lo)
  local cw, ch = math.floor(w * r), math.floor(h * r)
  local q = torch.rand(2):totable()
  local left, top = math.floor((cw - w) * q[1]), math.floor((ch - h) * q[2])
  return {padding = {left, top, cw - (left + w), ch - (top + h)}}
end
function M.RandomZoomOut:transform(inpt, p)
  return self:_call_kernel("pad", inpt, p.padding, G.fill_for(self.fill, inpt))
end
function M.RandomZoomOut:extra_repr()
  return ("side_range=%s, p=%s"):format(torch.pformat(self.side_range), self.p)
end

-- the labels of a sample by torchvision's default rule: in the sample's
-- table (or the second of two arguments), the key "labels" (any case), else
-- the first key containing "label"
local function default_labels(inputs)
  local t = inputs
  if type(t) == "table" and getmetatable(t) == nil and (t.n == 2 or (#t == 2 and next(t, #t) == nil)) then t = t[2] end
  if type(t) ~= "table" or getmetatable(t) ~= nil then
    error("v2.SanitizeBoundingBoxes: the default labels_getter needs a table sample (or two arguments, the second a "
      .. "table) holding the labels; pass labels_getter=false when there are none", 4)
  end
  local keys = {}
  for k in pairs(t) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if k:lower() == "labels" then return t[k] end
  end
  for _, k in ipairs(keys) do
    if k:lower():find("label", 1, true) then return t[k] end
  end
  error("v2.SanitizeBoundingBoxes: could not find the labels in the sample (no key 'labels'); pass a labels_getter "
    .. "function, or labels_getter=false when there are none", 4)
end

-- SanitizeBoundingBoxes([min_size=1, min_area=1, labels_getter="default"])
M.SanitizeBoundingBoxes = T.Transform:extend("SanitizeBoundingBoxes")
function M.SanitizeBoundingBoxes:__init(...)
  local o = G.args("SanitizeBoundingBoxes", {"min_size", "min_area", "labels_getter"},
    {min_size = 1.0, min_area = 1.0, labels_getter = "default"}, ...)
  if type(o.min_size) ~= "number" or o.min_size < 1 then
    error(("v2.SanitizeBoundingBoxes: min_size must be a number >= 1, got %s"):format(tostring(o.min_size)), 3)
  end
  if type(o.min_area) ~= "number" or o.min_area < 1 then
    error(("v2.SanitizeBoundingBoxes: min_area must be a number >= 1, got %s"):format(tostring(o.min_area)), 3)
  end
  local g = o.labels_getter
  if g == "default" then g = default_labels
  elseif g ~= false and type(g) ~= "function" then
    error("v2.SanitizeBoundingBoxes: labels_getter must be 'default', false or a function", 3)
  end
  self.min_size, self.min_area, self.labels_getter = o.min_size, o.min_area, g
end
function M.SanitizeBoundingBoxes:forward(...)
  local n = select("#", ...)
  local inputs = n == 1 and (...) or table.pack(...)
  local labels = self.labels_getter and self.labels_getter(inputs) or nil
  local set = {}
  if torch.is_tensor(labels) then set[labels] = true
  elseif type(labels) == "table" then for _, l in ipairs(labels) do set[l] = true end
  elseif labels ~= nil then error("v2.SanitizeBoundingBoxes: the labels_getter must give a tensor or a list of them", 2)
  end
  local flat, spec = U.flatten(inputs)
  local boxes
  for i = 1, flat.n do
    if tv.kind(flat[i]) == "BoundingBoxes" then
      if boxes then error("v2.SanitizeBoundingBoxes: the sample holds more than one BoundingBoxes", 2) end
      boxes = flat[i]
    end
  end
  if not boxes then error("v2.SanitizeBoundingBoxes: the sample holds no BoundingBoxes", 2) end
  local valid = Fm._valid_mask(boxes, boxes.format, boxes.canvas_size, self.min_size, self.min_area)
  local nb = boxes:size(1)
  for i = 1, flat.n do
    local x = flat[i]
    if torch.is_tensor(x) then
      local k = tv.kind(x)
      if set[x] or k == "BoundingBoxes" or (k == "Mask" and x:dim() >= 3 and x:size(1) == nb) then
        if x:dim() == 0 or x:size(1) ~= nb then
          error(("v2.SanitizeBoundingBoxes: labels of %s entries for %d boxes"):format(
            x:dim() == 0 and "0" or tostring(x:size(1)), nb), 2)
        end
        local kept = x[valid:to(x.device)]
        flat[i] = k and tv.wrap(kept, {like = x}) or kept
      end
    end
  end
  local out = U.unflatten(flat, spec)
  if n == 1 then return out end
  return table.unpack(out, 1, n)
end
function M.SanitizeBoundingBoxes:extra_repr()
  return ("min_size=%s, min_area=%s"):format(self.min_size, self.min_area)
end

-- every geometry transform checks that the parts of a sample share one size
function M.RandomZoomOut:_check_inputs(flat) G.same_size("RandomZoomOut", flat) end

return M
