-- torch.vision.transforms.v2.functional._pad_flip -- pad (constant, edge,
-- reflect, symmetric; negative padding crops) and the horizontal and
-- vertical flips, for images, videos, masks, boxes and keypoints. Padding
-- is {left, top, right, bottom} (1, 2 or 4 numbers, as torchvision).
local torch = require "torch"
local U = require "torch.nn.util"
local D = require "torch.vision.transforms.v2.functional._dispatch"
local meta = require "torch.vision.transforms.v2.functional._meta"

local M = {}

-- parse_padding(fname, p) -> left, right, top, bottom
local function parse_padding(fname, p)
  if math.type(p) == "integer" then return p, p, p, p end
  if type(p) == "table" then
    for i = 1, #p do
      if math.type(p[i]) ~= "integer" then
        error(("%s: padding entries must be integers, got %s"):format(fname, tostring(p[i])), 4)
      end
    end
    if #p == 1 then return p[1], p[1], p[1], p[1] end
    if #p == 2 then return p[1], p[1], p[2], p[2] end
    if #p == 4 then return p[1], p[3], p[2], p[4] end
  end
  error(("%s: padding must be an integer or a list of 1, 2 or 4 integers, got %s"):format(fname, torch.pformat(p)), 4)
end
M._parse_padding = parse_padding

local MODES = {constant = true, edge = true, reflect = true, symmetric = true}

-- the index tensor (1-based) of an axis of n padded by lo and hi in mode
-- (edge, reflect, symmetric), made of arange and elementwise ops so that
-- torch.compile replays it: s = position - lo; edge clamps s; reflect
-- folds it with period 2(n - 1) without repeating the edge, symmetric with
-- period 2n repeating it
local function axis_index(mode, n, lo, hi, device)
  local s = torch.arange(-lo, n + hi, {dtype = torch.int64, device = device})
  local idx
  if mode == "edge" then
    idx = s:clamp(0, n - 1)
  elseif mode == "reflect" then
    if n == 1 then return torch.ones(n + lo + hi, {dtype = torch.int64, device = device}) end
    local m = torch.remainder(s, 2 * (n - 1))
    idx = -(m - (n - 1)):abs() + (n - 1)
  else
    local m = torch.remainder(s, 2 * n)
    idx = torch.floor_divide(-(m * 2 - (2 * n - 1)):abs() + (2 * n - 1), 2)
  end
  return idx + 1
end

-- place(x, top, left, H, W, fill): a [..., H, W] canvas of fill (a number
-- or a [C, 1, 1] tensor) holding x with its corner at (top, left); what
-- falls outside is cut. Eager: a fill and a copy. While torch.compile
-- traces: an edge gather and a where (the JIT does not replay a copy into
-- a view of a new tensor).
local function place(x, top, left, H, W, fill)
  local h, w, dev = x:size(-2), x:size(-1), x.device
  if torch.compiler.is_compiling() then
    local g = x:index_select(-1, axis_index("edge", w, left, W - w - left, dev))
    g = g:index_select(-2, axis_index("edge", h, top, H - h - top, dev))
    local sh = torch.arange(-top, H - top, {dtype = torch.int64, device = dev})
    local sw = torch.arange(-left, W - left, {dtype = torch.int64, device = dev})
    local mask = sh:ge(0):logical_and(sh:lt(h)):unsqueeze(-1):logical_and(sw:ge(0):logical_and(sw:lt(w)):unsqueeze(1))
    return torch.where(mask, g, fill)
  end
  local s = x.shape
  s[#s - 1], s[#s] = H, W
  local out = torch.is_tensor(fill) and fill:expand(s):contiguous()
    or torch.full(s, fill, {dtype = x.dtype, device = dev})
  local y0, y1, x0, x1 = math.max(top, 0), math.min(top + h, H), math.max(left, 0), math.min(left + w, W)
  if y1 > y0 and x1 > x0 then
    out:narrow(-2, y0 + 1, y1 - y0):narrow(-1, x0 + 1, x1 - x0)
      :copy_(x:narrow(-2, y0 - top + 1, y1 - y0):narrow(-1, x0 - left + 1, x1 - x0))
  end
  return out
end
M._place = place

-- crop_negative(x, l, r, t, b): x with negative paddings cut off; the
-- paddings that remain (all >= 0)
local function crop_negative(x, l, r, t, b)
  local h, w = x:size(-2), x:size(-1)
  local ct, cb, cl, cr = math.max(-t, 0), math.max(-b, 0), math.max(-l, 0), math.max(-r, 0)
  if ct + cb >= h or cl + cr >= w then return nil end
  if ct + cb + cl + cr > 0 then x = x:narrow(-2, ct + 1, h - ct - cb):narrow(-1, cl + 1, w - cl - cr) end
  return x, math.max(l, 0), math.max(r, 0), math.max(t, 0), math.max(b, 0)
end

-- fill_of(fname, fill, x) -> a number or a list (one value per channel)
local function fill_of(fname, fill)
  if fill == nil or fill == false then return 0 end
  if type(fill) == "number" then return fill end
  if type(fill) == "table" and #fill >= 1 then
    for _, v in ipairs(fill) do
      if type(v) ~= "number" then error(fname .. ": fill must be a number or a list of numbers", 4) end
    end
    if #fill == 1 then return fill[1] end
    return fill
  end
  error(("%s: fill must be a number or a list of numbers, got %s"):format(fname, torch.pformat(fill)), 4)
end

-- pad_image(image, padding[, fill=0, padding_mode="constant"])
function M.pad_image(img, padding, ...)
  local fname = "F.pad"
  local o = U.args(fname, {"fill", "padding_mode"}, nil, ...)
  local mode = o.padding_mode or "constant"
  if not MODES[mode] then
    error(("%s: padding_mode must be 'constant', 'edge', 'reflect' or 'symmetric', got %s"):format(fname,
      tostring(mode)), 2)
  end
  if not torch.is_tensor(img) or img:dim() < 2 then error(fname .. ": expected an image [..., C, H, W]", 2) end
  local l, r, t, b = parse_padding(fname, padding)
  local fill = fill_of(fname, o.fill)
  if type(fill) == "table" and mode ~= "constant" then
    error(("%s: padding_mode '%s' takes no per-channel fill"):format(fname, mode), 2)
  end
  if type(fill) == "table" and (img:dim() < 3 or img:size(-3) ~= #fill) then
    error(("%s: fill has %d values for %d channels"):format(fname, #fill, img:dim() >= 3 and img:size(-3) or 1), 2)
  end
  local x
  x, l, r, t, b = crop_negative(img, l, r, t, b)
  if not x then error(("%s: the padding crops the whole %dx%d image"):format(fname, img:size(-2), img:size(-1)), 2) end
  if l + r + t + b == 0 then return x end
  local h, w = x:size(-2), x:size(-1)
  if mode == "reflect" and (l >= w or r >= w or t >= h or b >= h) then
    error(("%s: reflect padding must be smaller than the image side (%dx%d), got left %d, top %d, right %d, bottom %d")
      :format(fname, h, w, l, t, r, b), 2)
  end
  if mode ~= "constant" then
    return x:index_select(-1, axis_index(mode, w, l, r, x.device)):index_select(-2, axis_index(mode, h, t, b, x.device))
  end
  if type(fill) == "table" then
    local shp = {}
    for i = 1, x:dim() do shp[i] = 1 end
    shp[x:dim() - 2] = #fill
    fill = torch.tensor(fill, {device = x.device}):to(x.dtype):reshape(shp)
  end
  return place(x, t, l, h + t + b, w + l + r, fill)
end
M.pad_video = M.pad_image

-- pad_mask(mask, padding[, fill=0, padding_mode="constant"])
function M.pad_mask(mask, padding, ...)
  local o = U.args("F.pad", {"fill", "padding_mode"}, nil, ...)
  if type(o.fill) == "table" then error("F.pad: a mask takes one fill value, not a list", 2) end
  if not torch.is_tensor(mask) or mask:dim() < 2 then error("F.pad: expected a mask [..., H, W]", 2) end
  if mask:dim() < 3 then return M.pad_image(mask:unsqueeze(1), padding, o.fill, o.padding_mode):squeeze(1) end
  return M.pad_image(mask, padding, o.fill, o.padding_mode)
end

local function constant_only(fname, mode, what)
  if mode ~= nil and mode ~= "constant" then
    error(("%s: padding_mode '%s' is not supported with %s (only constant)"):format(fname, tostring(mode), what), 4)
  end
end

-- pad_bounding_boxes(boxes, format, canvas_size, padding[,
-- padding_mode="constant"]) -> boxes moved by (left, top) and clamped, new
-- canvas_size
function M.pad_bounding_boxes(boxes, format, canvas_size, padding, padding_mode)
  local fname = "F.pad_bounding_boxes"
  constant_only(fname, padding_mode, "bounding boxes")
  local l, r, t, b = parse_padding(fname, padding)
  local fmt = format:upper()
  local add = fmt == "XYXY" and {l, t, l, t} or {l, t, 0, 0}
  local moved = boxes + torch.tensor(add, {dtype = boxes.dtype, device = boxes.device})
  local cs = {canvas_size[1] + t + b, canvas_size[2] + l + r}
  return meta._clamp_boxes(moved, fmt, cs), cs
end

-- pad_keypoints(keypoints, canvas_size, padding[, padding_mode]) ->
-- keypoints moved by (left, top), new canvas_size
function M.pad_keypoints(kp, canvas_size, padding, padding_mode)
  local fname = "F.pad_keypoints"
  constant_only(fname, padding_mode, "keypoints")
  local l, r, t, b = parse_padding(fname, padding)
  local moved = kp + torch.tensor({l, t}, {dtype = kp.dtype, device = kp.device})
  return moved, {canvas_size[1] + t + b, canvas_size[2] + l + r}
end

D.define(M, "pad")
D.register("pad", "Image", M.pad_image)
D.register("pad", "Video", M.pad_video)
D.register("pad", "Mask", M.pad_mask)
D.register("pad", "BoundingBoxes", function(bx, padding, ...)
  local o = U.args("F.pad", {"fill", "padding_mode"}, nil, ...)
  local out, cs = M.pad_bounding_boxes(bx, bx.format, bx.canvas_size, padding, o.padding_mode)
  return out, {canvas_size = cs}
end)
D.register("pad", "KeyPoints", function(k, padding, ...)
  local o = U.args("F.pad", {"fill", "padding_mode"}, nil, ...)
  local out, cs = M.pad_keypoints(k, k.canvas_size, padding, o.padding_mode)
  return out, {canvas_size = cs}
end)

-- a flip as a gather with a reversed arange (as fast as flip here, and
-- replayed by torch.compile)
local function flip_image(fname, dim)
  return function(img)
    if not torch.is_tensor(img) or img:dim() < 2 then error(fname .. ": expected an image or mask [..., H, W]", 2) end
    local n = img:size(dim)
    return img:index_select(dim, torch.arange(n, 0, -1, {dtype = torch.int64, device = img.device}))
  end
end

M.horizontal_flip_image = flip_image("F.horizontal_flip", -1)
M.horizontal_flip_video, M.horizontal_flip_mask = M.horizontal_flip_image, M.horizontal_flip_image
M.vertical_flip_image = flip_image("F.vertical_flip", -2)
M.vertical_flip_video, M.vertical_flip_mask = M.vertical_flip_image, M.vertical_flip_image

-- flip_boxes(boxes, format, extent, first): boxes mirrored along the axis
-- whose coordinates start at column `first` (1: x, 2: y) on a canvas side
-- of `extent`: x -> extent - x (corners swap)
local function flip_boxes(boxes, format, extent, first)
  local fmt = format:upper()
  local c = {}
  for i = 1, 4 do c[i] = boxes:narrow(-1, i, 1) end
  if fmt == "XYXY" then
    c[first], c[first + 2] = -c[first + 2] + extent, -c[first] + extent
  elseif fmt == "XYWH" then
    c[first] = -(c[first] + c[first + 2]) + extent
  else
    c[first] = -c[first] + extent
  end
  return torch.cat(c, -1):to(boxes.dtype)
end

-- horizontal_flip_bounding_boxes(boxes, format, canvas_size): x -> W - x
function M.horizontal_flip_bounding_boxes(boxes, format, canvas_size)
  return flip_boxes(boxes, format, canvas_size[2], 1)
end
-- vertical_flip_bounding_boxes(boxes, format, canvas_size): y -> H - y
function M.vertical_flip_bounding_boxes(boxes, format, canvas_size)
  return flip_boxes(boxes, format, canvas_size[1], 2)
end

-- flip_points(kp, extent, col): the coordinate col (1: x, 2: y) mirrored as
-- torchvision's keypoints: v -> (extent - 1) - v
local function flip_points(kp, extent, col)
  local a, b = kp:narrow(-1, 1, 1), kp:narrow(-1, 2, 1)
  if col == 1 then a = -a + (extent - 1) else b = -b + (extent - 1) end
  return torch.cat({a, b}, -1):to(kp.dtype)
end

function M.horizontal_flip_keypoints(kp, canvas_size) return flip_points(kp, canvas_size[2], 1) end
function M.vertical_flip_keypoints(kp, canvas_size) return flip_points(kp, canvas_size[1], 2) end

for _, dir in ipairs({"horizontal", "vertical"}) do
  local name = dir .. "_flip"
  D.define(M, name)
  D.register(name, "Image", M[name .. "_image"])
  D.register(name, "Video", M[name .. "_video"])
  D.register(name, "Mask", M[name .. "_mask"])
  D.register(name, "BoundingBoxes", function(b) return M[name .. "_bounding_boxes"](b, b.format, b.canvas_size) end)
  D.register(name, "KeyPoints", function(k) return M[name .. "_keypoints"](k, k.canvas_size) end)
end
-- hflip and vflip: torchvision's short names of the same functionals
M.hflip, M.vflip = M.horizontal_flip, M.vertical_flip

return M
