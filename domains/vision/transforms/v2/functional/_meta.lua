-- torch.vision.transforms.v2.functional._meta -- what boxes, keypoints and
-- images are made of: sizes (get_size, get_dimensions, get_num_channels),
-- box formats (convert_bounding_box_format), clamping boxes and keypoints
-- to their canvas, and sanitize_bounding_boxes. Coordinates are pixels,
-- 0-based and continuous (x to the right, y down); boxes are clamped to
-- [0, W] x [0, H], keypoints to [0, W - 1] x [0, H - 1], as torchvision.
local torch = require "torch"
local U = require "torch.nn.util"
local tv = require "torch.vision.tv_tensors"
local D = require "torch.vision.transforms.v2.functional._dispatch"

local M = {}

local FORMATS = tv.BoundingBoxFormat

-- format_of(fname, f): f as an upper-case format name, or an error
local function format_of(fname, f)
  local up = type(f) == "string" and f:upper() or nil
  if not FORMATS[up] then
    error(("%s: format must be one of XYXY, XYWH, CXCYWH, got %s"):format(fname, tostring(f)), 4)
  end
  return up
end

local function canvas_of(fname, cs)
  if type(cs) ~= "table" or math.type(cs[1]) ~= "integer" or math.type(cs[2]) ~= "integer" then
    error(("%s: canvas_size must be {height, width} (integers), got %s"):format(fname, torch.pformat(cs)), 4)
  end
  return cs
end

-- boxes_of(fname, x, last): x as [..., 4] boxes (an error naming fname
-- otherwise); `last` is the coordinate count
local function check_boxes(fname, x)
  if not torch.is_tensor(x) or x:dim() < 1 or x:size(-1) ~= 4 then
    error(("%s: expected bounding boxes of shape [..., 4], got %s"):format(fname,
      torch.is_tensor(x) and torch.pformat(x.shape) or type(x)), 4)
  end
end

-- the cat of the four [..., 1] columns a, b, c, d
local function cols4(a, b, c, d) return torch.cat({a, b, c, d}, -1) end

-- to XYXY from fmt (a new tensor). Integer CXCYWH boxes are computed in
-- float and truncated back, as torchvision 0.26 (x1 = trunc(cx - w / 2),
-- x2 = trunc(cx + w / 2)).
local function to_xyxy(b, fmt)
  if fmt == "XYXY" then return b:clone() end
  local p, q, w, h = b:narrow(-1, 1, 1), b:narrow(-1, 2, 1), b:narrow(-1, 3, 1), b:narrow(-1, 4, 1)
  if fmt == "XYWH" then return cols4(p, q, p + w, q + h) end
  if not b:is_floating_point() then return to_xyxy(b:float(), fmt):to(b.dtype) end
  local x1, y1 = p - w / 2, q - h / 2
  return cols4(x1, y1, x1 + w, y1 + h)
end

-- from XYXY to fmt (integer centres computed in float and truncated)
local function from_xyxy(b, fmt)
  if fmt == "XYXY" then return b end
  local x1, y1, x2, y2 = b:narrow(-1, 1, 1), b:narrow(-1, 2, 1), b:narrow(-1, 3, 1), b:narrow(-1, 4, 1)
  local w, h = x2 - x1, y2 - y1
  if fmt == "XYWH" then return cols4(x1, y1, w, h) end
  if not b:is_floating_point() then return from_xyxy(b:float(), fmt):to(b.dtype) end
  return cols4((x1 * 2 + w) / 2, (y1 * 2 + h) / 2, w, h)
end

-- convert(b, old, new): the plain [..., 4] tensor b from format old to new
local function convert(b, old, new)
  if old == new then return b:clone() end
  return from_xyxy(to_xyxy(b, old), new)
end
M._convert = convert

-- convert_bounding_box_format(inpt, old_format, new_format[, inplace]):
-- BoundingBoxes (old_format from their metadata; passing it is an error)
-- or a plain [..., 4] tensor (old_format required) in new_format
function M.convert_bounding_box_format(inpt, ...)
  local fname = "F.convert_bounding_box_format"
  local o = U.args(fname, {"old_format", "new_format", "inplace"}, nil, ...)
  check_boxes(fname, inpt)
  if not o.new_format then error(fname .. ": new_format is required", 2) end
  local new = format_of(fname, o.new_format)
  if tv.kind(inpt) == "BoundingBoxes" then
    if o.old_format then error(fname .. ": old_format must not be given for BoundingBoxes (they know their format)", 2) end
    local out = convert(inpt, inpt.format, new)
    return tv.wrap(out, {like = inpt, format = new})
  end
  if not o.old_format then error(fname .. ": old_format is required for a plain tensor", 2) end
  local out = convert(inpt, format_of(fname, o.old_format), new)
  if o.inplace then
    inpt:copy_(out)
    return inpt
  end
  return out
end

-- clamp_boxes(b, fmt, canvas): the plain boxes b clamped to the canvas
-- (through XYXY in float; back to b's dtype)
local function clamp_boxes(b, fmt, canvas)
  local dt = b.dtype
  local f = b:is_floating_point() and b or b:float()
  local x = to_xyxy(f, fmt)
  local h, w = canvas[1], canvas[2]
  local x1 = x:narrow(-1, 1, 1):clamp(0, w)
  local y1 = x:narrow(-1, 2, 1):clamp(0, h)
  local x2 = x:narrow(-1, 3, 1):clamp(0, w)
  local y2 = x:narrow(-1, 4, 1):clamp(0, h)
  local out = from_xyxy(cols4(x1, y1, x2, y2), fmt)
  return out.dtype == dt and out or out:to(dt)
end
M._clamp_boxes = clamp_boxes

-- clamp_bounding_boxes(inpt[, format, canvas_size, clamping_mode]):
-- boxes clamped to [0, W] x [0, H] (BoundingBoxes: their own format and
-- canvas; a plain tensor needs both). clamping_mode false: unchanged.
function M.clamp_bounding_boxes(inpt, ...)
  local fname = "F.clamp_bounding_boxes"
  local o = U.args(fname, {"format", "canvas_size", "clamping_mode"}, nil, ...)
  check_boxes(fname, inpt)
  if o.clamping_mode ~= nil and o.clamping_mode ~= false and o.clamping_mode ~= "soft" and o.clamping_mode ~= "hard"
    and o.clamping_mode ~= "auto" then
    error(("%s: clamping_mode must be 'soft', 'hard', 'auto' or false, got %s"):format(fname,
      tostring(o.clamping_mode)), 2)
  end
  if tv.kind(inpt) == "BoundingBoxes" then
    if o.format or o.canvas_size then
      error(fname .. ": format and canvas_size must not be given for BoundingBoxes (they carry their own)", 2)
    end
    if o.clamping_mode == false then return inpt end
    return tv.wrap(clamp_boxes(inpt, inpt.format, inpt.canvas_size), {like = inpt})
  end
  if not o.format or not o.canvas_size then error(fname .. ": format and canvas_size are required for a plain tensor", 2) end
  if o.clamping_mode == false then return inpt:clone() end
  return clamp_boxes(inpt, format_of(fname, o.format), canvas_of(fname, o.canvas_size))
end

-- the plain keypoints k clamped to [0, W - 1] x [0, H - 1]
local function clamp_points(k, canvas)
  local dt = k.dtype
  local f = k:is_floating_point() and k or k:float()
  local out = torch.cat({f:narrow(-1, 1, 1):clamp(0, canvas[2] - 1), f:narrow(-1, 2, 1):clamp(0, canvas[1] - 1)}, -1)
  return out.dtype == dt and out or out:to(dt)
end
M._clamp_points = clamp_points

-- clamp_keypoints(inpt[, canvas_size]): keypoints clamped to the canvas
function M.clamp_keypoints(inpt, ...)
  local fname = "F.clamp_keypoints"
  local o = U.args(fname, {"canvas_size"}, nil, ...)
  if not torch.is_tensor(inpt) or inpt:dim() < 1 or inpt:size(-1) ~= 2 then
    error(fname .. ": expected keypoints of shape [..., 2]", 2)
  end
  if tv.kind(inpt) == "KeyPoints" then
    if o.canvas_size then error(fname .. ": canvas_size must not be given for KeyPoints (they carry their own)", 2) end
    return tv.wrap(clamp_points(inpt, inpt.canvas_size), {like = inpt})
  end
  if not o.canvas_size then error(fname .. ": canvas_size is required for a plain tensor", 2) end
  return clamp_points(inpt, canvas_of(fname, o.canvas_size))
end

-- the valid-box mask of torchvision's sanitize: width and height >= min_size,
-- area >= min_area, every coordinate >= 0 and the box inside the canvas
local function valid_mask(b, fmt, canvas, min_size, min_area)
  local x = to_xyxy(b, fmt)
  local x1, y1 = x:select(-1, 1), x:select(-1, 2)
  local x2, y2 = x:select(-1, 3), x:select(-1, 4)
  local ws, hs = x2 - x1, y2 - y1
  local valid = ws:ge(min_size):logical_and(hs:ge(min_size)):logical_and(x:ge(0):all(-1))
  valid = valid:logical_and((ws * hs):ge(min_area))
  valid = valid:logical_and(x1:le(canvas[2])):logical_and(x2:le(canvas[2]))
  return valid:logical_and(y1:le(canvas[1])):logical_and(y2:le(canvas[1]))
end
M._valid_mask = valid_mask

-- sanitize_bounding_boxes(boxes[, format, canvas_size, min_size=1,
-- min_area=1]) -> kept boxes, valid (a bool tensor per box)
function M.sanitize_bounding_boxes(inpt, ...)
  local fname = "F.sanitize_bounding_boxes"
  local o = U.args(fname, {"format", "canvas_size", "min_size", "min_area"}, {min_size = 1.0, min_area = 1.0}, ...)
  check_boxes(fname, inpt)
  if inpt:dim() ~= 2 then error(("%s: expected N x 4 boxes, got shape %s"):format(fname, torch.pformat(inpt.shape)), 2) end
  if type(o.min_size) ~= "number" or o.min_size < 1 then
    error(("%s: min_size must be a number >= 1, got %s"):format(fname, tostring(o.min_size)), 2)
  end
  if type(o.min_area) ~= "number" or o.min_area < 1 then
    error(("%s: min_area must be a number >= 1, got %s"):format(fname, tostring(o.min_area)), 2)
  end
  local fmt, canvas
  if tv.kind(inpt) == "BoundingBoxes" then
    if o.format or o.canvas_size then
      error(fname .. ": format and canvas_size must not be given for BoundingBoxes (they carry their own)", 2)
    end
    fmt, canvas = inpt.format, inpt.canvas_size
  else
    if not o.format or not o.canvas_size then error(fname .. ": format and canvas_size are required for a plain tensor", 2) end
    fmt, canvas = format_of(fname, o.format), canvas_of(fname, o.canvas_size)
  end
  local valid = valid_mask(inpt, fmt, canvas, o.min_size, o.min_area)
  local kept = inpt[valid]
  return tv.wrap(kept, {like = inpt}), valid
end

-- get_size(inpt) -> {H, W}: an image's, video's or mask's last two dims, or
-- the canvas of boxes and keypoints
function M.get_size(inpt)
  local k = tv.kind(inpt)
  if k == "BoundingBoxes" or k == "KeyPoints" then return {inpt.canvas_size[1], inpt.canvas_size[2]} end
  if not torch.is_tensor(inpt) or inpt:dim() < 2 then
    error("F.get_size: expected an image, video or mask of at least 2 dims", 2)
  end
  return {inpt:size(-2), inpt:size(-1)}
end

-- get_dimensions(inpt) -> {C, H, W} of an image or video
function M.get_dimensions(inpt)
  local k = tv.kind(inpt)
  if k ~= nil and k ~= "Image" and k ~= "Video" then error("F.get_dimensions: not supported for " .. k .. " inputs", 2) end
  if not torch.is_tensor(inpt) or inpt:dim() < 2 then
    error("F.get_dimensions: expected an image [..., C, H, W]", 2)
  end
  local c = inpt:dim() >= 3 and inpt:size(-3) or 1
  return {c, inpt:size(-2), inpt:size(-1)}
end

-- get_num_channels(inpt) -> C of an image or video
function M.get_num_channels(inpt)
  local k = tv.kind(inpt)
  if k ~= nil and k ~= "Image" and k ~= "Video" then error("F.get_num_channels: not supported for " .. k .. " inputs", 2) end
  if not torch.is_tensor(inpt) or inpt:dim() < 2 then error("F.get_num_channels: expected an image [..., C, H, W]", 2) end
  return inpt:dim() >= 3 and inpt:size(-3) or 1
end

-- get_size is a dispatching functional in torchvision too: register the
-- kinds so register_kernel and transforms see it
for _, kind in ipairs({"Image", "Video", "Mask", "BoundingBoxes", "KeyPoints"}) do
  D.register("get_size", kind, function(x) return M.get_size(x) end)
end

return M
