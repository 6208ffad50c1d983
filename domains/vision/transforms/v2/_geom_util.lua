-- torch.vision.transforms.v2._geom_util -- what the geometry transform
-- classes share: option parsing of sizes, fills and probabilities, and the
-- per_sample checks (a batch [N, ...] gets N draws in one kernel).
local torch = require "torch"
local U = require "torch.nn.util"
local tv = require "torch.vision.tv_tensors"

local G = {}

-- args(cls, names, defaults, ...): the optional arguments of a class's
-- constructor (positional in torchvision's order or a trailing table)
function G.args(cls, names, defaults, ...) return U.args("v2." .. cls, names, defaults, ...) end

-- size_hw(cls, what, v): an integer or {n} -> {n, n}; {h, w} -> {h, w}
function G.size_hw(cls, what, v)
  if math.type(v) == "integer" then v = {v} end
  if type(v) ~= "table" or (#v ~= 1 and #v ~= 2) then
    error(("v2.%s: %s must be an integer or a list of 1 or 2 integers, got %s"):format(cls, what, torch.pformat(v)), 4)
  end
  for i = 1, #v do
    if math.type(v[i]) ~= "integer" or v[i] < 1 then
      error(("v2.%s: %s entries must be positive integers, got %s"):format(cls, what, tostring(v[i])), 4)
    end
  end
  return {v[1], v[#v]}
end

-- pair(cls, what, v): a list of two numbers a <= b
function G.pair(cls, what, v)
  if type(v) ~= "table" or #v ~= 2 or type(v[1]) ~= "number" or type(v[2]) ~= "number" then
    error(("v2.%s: %s must be a list of two numbers, got %s"):format(cls, what, torch.pformat(v)), 4)
  end
  if v[1] > v[2] then
    error(("v2.%s: %s should be of kind (min, max), got {%s, %s}"):format(cls, what, v[1], v[2]), 4)
  end
  return {v[1], v[2]}
end

-- fill_for(fill, x): the fill for x's kind: fill itself, or, for a table
-- keyed by kind names (Image, Mask, Video, ...; "others" for the rest),
-- its entry (nil: 0)
function G.fill_for(fill, x)
  if type(fill) ~= "table" or #fill > 0 then return fill end
  local kind = tv.kind(x) or "Image"
  local f = fill[kind]
  if f == nil then f = fill.others end
  return f
end

-- check_fill(cls, fill): a number, a list of numbers, false/nil, or a table
-- of those keyed by kind names
function G.check_fill(cls, fill)
  local function ok(f)
    if f == nil or f == false or type(f) == "number" then return true end
    if type(f) ~= "table" or #f == 0 then return false end
    for _, v in ipairs(f) do if type(v) ~= "number" then return false end end
    return true
  end
  if ok(fill) then return fill end
  if type(fill) == "table" then
    for k, v in pairs(fill) do
      if type(k) ~= "string" or not (tv._KINDS[k] or k == "others") or not ok(v) then
        error(("v2.%s: fill for '%s' must be a number or a list of numbers"):format(cls, tostring(k)), 4)
      end
    end
    return fill
  end
  error(("v2.%s: fill must be a number, a list of numbers or a table keyed by kind, got %s"):format(cls,
    torch.pformat(fill)), 4)
end

-- per_sample_batch(cls, flat): N, the batch size every leaf of the sample
-- shares ([N, C, H, W] images and videos [N, T, C, H, W], masks [N, H, W]
-- or [N, K, H, W]); boxes and keypoints are refused
function G.per_sample_batch(cls, flat)
  local n
  for i = 1, flat.n do
    local x = flat[i]
    if torch.is_tensor(x) then
      local k = tv.kind(x)
      if k == "BoundingBoxes" or k == "KeyPoints" then
        error(("v2.%s: per_sample=true takes batches of images, videos and masks, not %s"):format(cls, k), 4)
      end
      local need = (k == "Mask") and 3 or 4
      if x:dim() < need then
        error(("v2.%s: per_sample=true needs a batch [N, C, H, W] (masks [N, H, W]), got shape %s"):format(cls,
          torch.pformat(x.shape)), 4)
      end
      if n and x:size(1) ~= n then
        error(("v2.%s: per_sample=true: the batch sizes differ (%d and %d)"):format(cls, n, x:size(1)), 4)
      end
      n = x:size(1)
    end
  end
  return n or 0
end

-- same_size(cls, flat): every image, video, mask and box set of the sample
-- has the same {H, W} (an error naming cls and the two sizes otherwise)
function G.same_size(cls, flat)
  local size
  for i = 1, flat.n do
    local x = flat[i]
    local k = torch.is_tensor(x) and (tv.kind(x) or "Image")
    if k and (k == "BoundingBoxes" or k == "KeyPoints" or x:dim() >= 2) then
      local s = (k == "BoundingBoxes" or k == "KeyPoints") and x.canvas_size or {x:size(-2), x:size(-1)}
      if size and (size[1] ~= s[1] or size[2] ~= s[2]) then
        error(("v2.%s: the sample's images, masks and boxes differ in size: %dx%d and %dx%d"):format(cls, size[1],
          size[2], s[1], s[2]), 5)
      end
      size = s
    end
  end
end

-- is_mask(x): masks are never interpolated
function G.is_mask(x) return tv.kind(x) == "Mask" end

-- batched(x, list, oh, ow, mode, aa): image n of the batch x cropped to
-- list[n] = {top=, left=, height=, width=[, hflip=, vflip=]}, resampled to
-- oh x ow and flipped where asked, in one kernel (torch._image_crop_resize;
-- masks nearest, their dtype kept)
function G.batched(x, list, oh, ow, mode, aa)
  if G.is_mask(x) then mode, aa = "nearest", false end
  local rows = {}
  for i, p in ipairs(list) do
    rows[i] = {p.top, p.left, p.height, p.width, p.hflip and 1 or 0, p.vflip and 1 or 0}
  end
  local b = torch.tensor(rows, {dtype = torch.int64})
  local dt, v = x.dtype, x
  if dt ~= torch.uint8 and not x:is_floating_point() then v = x:to(torch.float64) end
  local y
  if v:dim() == 3 then
    y = torch._image_crop_resize(v:unsqueeze(2), b, oh, ow, mode, aa):squeeze(2)
  else
    y = torch._image_crop_resize(v, b, oh, ow, mode, aa)
  end
  if y.dtype ~= dt then y = y:to(dt) end
  return tv.wrap(y, {like = x})
end

return G
