-- torch.vision.transforms.v2.functional._resize_crop -- resize, crop,
-- center_crop, resized_crop, five_crop and ten_crop for images, videos,
-- masks, boxes and keypoints, and InterpolationMode. Images are resampled
-- by the engine op torch._image_resize (separable, antialiased as
-- torchvision 0.26; uint8 stays uint8, rounded); masks always by nearest;
-- boxes and keypoints move geometrically. Crop offsets are 0-based pixels.
local torch = require "torch"
local U = require "torch.nn.util"
local tv = require "torch.vision.tv_tensors"
local D = require "torch.vision.transforms.v2.functional._dispatch"
local meta = require "torch.vision.transforms.v2.functional._meta"
local P = require "torch.vision.transforms.v2.functional._pad_flip"

local M = {}

-- InterpolationMode: the constants are the mode names, so strings and
-- constants are interchangeable. BOX, HAMMING, LANCZOS exist (as in
-- torchvision) but tensors cannot use them.
local IM = {NEAREST = "nearest", NEAREST_EXACT = "nearest-exact", BILINEAR = "bilinear", BICUBIC = "bicubic",
  BOX = "box", HAMMING = "hamming", LANCZOS = "lanczos"}
M.InterpolationMode = IM

local TENSOR_MODES = {nearest = true, ["nearest-exact"] = true, bilinear = true, bicubic = true}
local PIL_INTS = {[0] = "nearest", [1] = "lanczos", [2] = "bilinear", [3] = "bicubic", [4] = "box", [5] = "hamming"}

-- interp(fname, v): the mode name of v (a name, a constant, a PIL integer;
-- nil: bilinear), or an error naming fname and v
local function interp(fname, v)
  if v == nil then return "bilinear" end
  if math.type(v) == "integer" and PIL_INTS[v] then v = PIL_INTS[v] end
  local m = type(v) == "string" and v:lower() or nil
  if m and TENSOR_MODES[m] then return m end
  if m == "box" or m == "hamming" or m == "lanczos" then
    error(("%s: interpolation '%s' is only for PIL images; tensors take nearest, nearest-exact, bilinear or bicubic")
      :format(fname, m), 4)
  end
  error(("%s: unknown interpolation %s (nearest, nearest-exact, bilinear, bicubic)"):format(fname, torch.pformat(v)), 4)
end
M._interp = interp

-- image(fname, x): x must be an image tensor [..., C, H, W] with pixels
local function image(fname, x)
  if not torch.is_tensor(x) or x:dim() < 3 then
    error(("%s: expected an image [..., C, H, W], got %s"):format(fname,
      torch.is_tensor(x) and "shape " .. torch.pformat(x.shape) or type(x)), 4)
  end
  if x:size(-1) == 0 or x:size(-2) == 0 then
    error(("%s: the image has no pixels (shape %s)"):format(fname, torch.pformat(x.shape)), 4)
  end
end

local function int_list(fname, what, v, n)
  if math.type(v) == "integer" then v = {v} end
  if type(v) ~= "table" or #v < 1 or #v > n then
    error(("%s: %s must be an integer or a list of %s integers, got %s"):format(fname, what,
      n == 1 and "1" or "1 or " .. n, torch.pformat(v)), 4)
  end
  for i = 1, #v do
    if math.type(v[i]) ~= "integer" or v[i] < 1 then
      error(("%s: %s entries must be positive integers, got %s"):format(fname, what, tostring(v[i])), 4)
    end
  end
  return v
end

-- output_size(fname, canvas, size, max_size) -> new H, new W, as
-- torchvision: an integer (or {n}) is the shorter side (the longer one
-- scaled, truncated; capped at max_size), {h, w} is exact, nil/false with
-- max_size makes the longer side max_size
local function output_size(fname, canvas, size, max_size)
  if max_size == false then max_size = nil end
  if max_size ~= nil and (math.type(max_size) ~= "integer" or max_size < 1) then
    error(("%s: max_size must be a positive integer, got %s"):format(fname, tostring(max_size)), 4)
  end
  local h, w = canvas[1], canvas[2]
  local short, long = w, h
  if w > h then short, long = h, w end
  local ns, nl
  if size == nil or size == false then
    if not max_size then error(fname .. ": size can be nil only when max_size is given", 4) end
    ns, nl = math.floor(max_size * short / long), max_size
  else
    size = int_list(fname, "size", size, 2)
    if #size == 2 then
      if max_size then
        error(fname .. ": max_size is only for a size that is the shorter side (an integer or a list of one)", 4)
      end
      return size[1], size[2]
    end
    ns, nl = size[1], math.floor(size[1] * long / short)
    if max_size then
      if max_size <= size[1] then
        error(("%s: max_size (%d) must be larger than the requested shorter side (%d)"):format(fname, max_size,
          size[1]), 4)
      end
      if nl > max_size then ns, nl = math.floor(max_size * ns / nl), max_size end
    end
  end
  if w <= h then return nl, ns end
  return ns, nl
end
M._output_size = output_size

local INTS = {[torch.int8] = true, [torch.int16] = true, [torch.int32] = true, [torch.int64] = true}

-- resample(x, nh, nw, mode, aa): the engine's resize; integer images other
-- than uint8 go through float32 and are rounded back, as torchvision
local function resample(fname, x, nh, nw, mode, aa)
  local dt = x.dtype
  if dt == torch.uint8 or x:is_floating_point() then return torch._image_resize(x, nh, nw, mode, aa) end
  if dt == torch.bool then return torch._image_resize(x:to(torch.uint8), nh, nw, mode, false):to(dt) end
  if not INTS[dt] then error(("%s: unsupported image dtype %s"):format(fname, tostring(dt)), 4) end
  local y = torch._image_resize(x:to(dt == torch.int64 and torch.float64 or torch.float32), nh, nw, mode, aa)
  return y:round():to(dt)
end

local RESIZE_ARGS = {"interpolation", "max_size", "antialias"}

-- resize_image(image, size[, interpolation=BILINEAR, max_size, antialias=true])
function M.resize_image(img, size, ...)
  local fname = "F.resize"
  local o = U.args(fname, RESIZE_ARGS, nil, ...)
  image(fname, img)
  local mode = interp(fname, o.interpolation)
  local aa = o.antialias ~= false and (mode == "bilinear" or mode == "bicubic")
  local nh, nw = output_size(fname, {img:size(-2), img:size(-1)}, size, o.max_size)
  if nh == img:size(-2) and nw == img:size(-1) then return img end
  if img:numel() == 0 then
    local s = img.shape
    s[#s - 1], s[#s] = nh, nw
    return torch.empty(s, {dtype = img.dtype, device = img.device})
  end
  return resample(fname, img, nh, nw, mode, aa)
end
M.resize_video = M.resize_image

-- with_channel(mask, fn): fn applied to mask seen as [..., C, H, W] (a
-- 2-D mask gets a channel dim for the call)
local function with_channel(fname, m, fn)
  if not torch.is_tensor(m) or m:dim() < 2 then
    error(("%s: expected a mask [..., H, W], got %s"):format(fname,
      torch.is_tensor(m) and "shape " .. torch.pformat(m.shape) or type(m)), 4)
  end
  if m:dim() < 3 then return fn(m:unsqueeze(1)):squeeze(1) end
  return fn(m)
end
M._with_channel = with_channel

-- resize_mask(mask, size[, max_size]): nearest, never interpolated
function M.resize_mask(mask, size, ...)
  local o = U.args("F.resize_mask", {"max_size"}, nil, ...)
  return with_channel("F.resize_mask", mask, function(m)
    return M.resize_image(m, size, "nearest", o.max_size, false)
  end)
end

-- resize_bounding_boxes(boxes, canvas_size, size[, max_size]) -> boxes,
-- new canvas_size (the coordinates scaled; integer boxes truncated)
function M.resize_bounding_boxes(boxes, canvas_size, size, ...)
  local fname = "F.resize_bounding_boxes"
  local o = U.args(fname, {"max_size", "format"}, nil, ...)
  local nh, nw = output_size(fname, canvas_size, size, o.max_size)
  if nh == canvas_size[1] and nw == canvas_size[2] then return boxes, {nh, nw} end
  local rw, rh = nw / canvas_size[2], nh / canvas_size[1]
  local r = torch.tensor({rw, rh, rw, rh}, {dtype = torch.float32, device = boxes.device})
  return (boxes * r):to(boxes.dtype), {nh, nw}
end

-- resize_keypoints(keypoints, size, canvas_size[, max_size]) -> keypoints,
-- new canvas_size
function M.resize_keypoints(kp, size, canvas_size, ...)
  local fname = "F.resize_keypoints"
  local o = U.args(fname, {"max_size"}, nil, ...)
  local nh, nw = output_size(fname, canvas_size, size, o.max_size)
  if nh == canvas_size[1] and nw == canvas_size[2] then return kp, {nh, nw} end
  local r = torch.tensor({nw / canvas_size[2], nh / canvas_size[1]}, {dtype = torch.float32, device = kp.device})
  return (kp * r):to(kp.dtype), {nh, nw}
end

D.define(M, "resize")
D.register("resize", "Image", M.resize_image)
D.register("resize", "Video", M.resize_video)
D.register("resize", "Mask", function(m, size, ...)
  local o = U.args("F.resize", RESIZE_ARGS, nil, ...)
  return M.resize_mask(m, size, o.max_size)
end)
D.register("resize", "BoundingBoxes", function(b, size, ...)
  local o = U.args("F.resize", RESIZE_ARGS, nil, ...)
  local out, cs = M.resize_bounding_boxes(b, b.canvas_size, size, o.max_size)
  return out, {canvas_size = cs}
end)
D.register("resize", "KeyPoints", function(k, size, ...)
  local o = U.args("F.resize", RESIZE_ARGS, nil, ...)
  local out, cs = M.resize_keypoints(k, size, k.canvas_size, o.max_size)
  return out, {canvas_size = cs}
end)

local function check_box(fname, top, left, height, width)
  for _, v in ipairs({top, left}) do
    if math.type(v) ~= "integer" then error(("%s: top and left must be integers, got %s"):format(fname, torch.pformat(v)), 4) end
  end
  for _, v in ipairs({height, width}) do
    if math.type(v) ~= "integer" or v < 1 then
      error(("%s: height and width must be positive integers, got %s"):format(fname, torch.pformat(v)), 4)
    end
  end
end

-- crop_image(image, top, left, height, width): the window, as a view when
-- inside the image, else zero-padded where it leaves the image
function M.crop_image(img, top, left, height, width)
  local fname = "F.crop"
  if not torch.is_tensor(img) or img:dim() < 2 then error(fname .. ": expected an image [..., H, W]", 2) end
  check_box(fname, top, left, height, width)
  local h, w = img:size(-2), img:size(-1)
  local bottom, right = top + height, left + width
  if top >= 0 and left >= 0 and bottom <= h and right <= w then
    return img:narrow(-2, top + 1, height):narrow(-1, left + 1, width)
  end
  return P._place(img, -top, -left, height, width, 0)
end
M.crop_video = M.crop_image

function M.crop_mask(mask, top, left, height, width)
  return with_channel("F.crop_mask", mask, function(m) return M.crop_image(m, top, left, height, width) end)
end

-- crop_bounding_boxes(boxes, format, top, left, height, width) -> boxes
-- moved by (-left, -top) and clamped to the new canvas, {height, width}
function M.crop_bounding_boxes(boxes, format, top, left, height, width)
  local fmt = format:upper()
  local sub = fmt == "XYXY" and {left, top, left, top} or {left, top, 0, 0}
  local moved = boxes - torch.tensor(sub, {dtype = boxes.dtype, device = boxes.device})
  return meta._clamp_boxes(moved, fmt, {height, width}), {height, width}
end

-- crop_keypoints(keypoints, top, left, height, width) -> keypoints moved by
-- (-left, -top), {height, width}
function M.crop_keypoints(kp, top, left, height, width)
  return kp - torch.tensor({left, top}, {dtype = kp.dtype, device = kp.device}), {height, width}
end

D.define(M, "crop")
D.register("crop", "Image", M.crop_image)
D.register("crop", "Video", M.crop_video)
D.register("crop", "Mask", M.crop_mask)
D.register("crop", "BoundingBoxes", function(b, top, left, height, width)
  check_box("F.crop", top, left, height, width)
  local out, cs = M.crop_bounding_boxes(b, b.format, top, left, height, width)
  return out, {canvas_size = cs}
end)
D.register("crop", "KeyPoints", function(k, top, left, height, width)
  check_box("F.crop", top, left, height, width)
  local out, cs = M.crop_keypoints(k, top, left, height, width)
  return out, {canvas_size = cs}
end)

-- Python's round (half to even), for torchvision's crop anchors
local function pyround(v)
  local f = math.floor(v)
  local d = v - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then return f + 1 end
  return f
end
M._pyround = pyround

local function crop_size(fname, size)
  size = int_list(fname, "output_size", size, 2)
  return size[1], size[#size]
end

local function anchors(ch, cw, h, w) return pyround((h - ch) / 2), pyround((w - cw) / 2) end

-- center_crop_image(image, output_size): the centred window (zero-padded
-- when larger than the image, as torchvision)
function M.center_crop_image(img, output_size)
  local fname = "F.center_crop"
  image(fname, img)
  local ch, cw = crop_size(fname, output_size)
  local h, w = img:size(-2), img:size(-1)
  if ch > h or cw > w then
    local pl, pt = cw > w and (cw - w) // 2 or 0, ch > h and (ch - h) // 2 or 0
    local pr, pb = cw > w and (cw - w + 1) // 2 or 0, ch > h and (ch - h + 1) // 2 or 0
    img = P.pad_image(img, {pl, pt, pr, pb})
    h, w = img:size(-2), img:size(-1)
    if ch == h and cw == w then return img end
  end
  local top, left = anchors(ch, cw, h, w)
  return img:narrow(-2, top + 1, ch):narrow(-1, left + 1, cw)
end
M.center_crop_video = M.center_crop_image

function M.center_crop_mask(mask, output_size)
  return with_channel("F.center_crop_mask", mask, function(m) return M.center_crop_image(m, output_size) end)
end

-- center_crop_bounding_boxes(boxes, format, canvas_size, output_size) ->
-- boxes, {h, w}
function M.center_crop_bounding_boxes(boxes, format, canvas_size, output_size)
  local ch, cw = crop_size("F.center_crop_bounding_boxes", output_size)
  local top, left = anchors(ch, cw, canvas_size[1], canvas_size[2])
  return M.crop_bounding_boxes(boxes, format, top, left, ch, cw)
end

-- center_crop_keypoints(keypoints, canvas_size, output_size) -> keypoints, {h, w}
function M.center_crop_keypoints(kp, canvas_size, output_size)
  local ch, cw = crop_size("F.center_crop_keypoints", output_size)
  local top, left = anchors(ch, cw, canvas_size[1], canvas_size[2])
  return M.crop_keypoints(kp, top, left, ch, cw)
end

D.define(M, "center_crop")
D.register("center_crop", "Image", M.center_crop_image)
D.register("center_crop", "Video", M.center_crop_video)
D.register("center_crop", "Mask", M.center_crop_mask)
D.register("center_crop", "BoundingBoxes", function(b, output_size)
  local out, cs = M.center_crop_bounding_boxes(b, b.format, b.canvas_size, output_size)
  return out, {canvas_size = cs}
end)
D.register("center_crop", "KeyPoints", function(k, output_size)
  local out, cs = M.center_crop_keypoints(k, k.canvas_size, output_size)
  return out, {canvas_size = cs}
end)

local RC_ARGS = {"interpolation", "antialias"}

-- resized_crop_image(image, top, left, height, width, size[,
-- interpolation=BILINEAR, antialias=true]): crop, then resize
function M.resized_crop_image(img, top, left, height, width, size, ...)
  local o = U.args("F.resized_crop", RC_ARGS, nil, ...)
  return M.resize_image(M.crop_image(img, top, left, height, width), size, o.interpolation, nil, o.antialias)
end
M.resized_crop_video = M.resized_crop_image

function M.resized_crop_mask(mask, top, left, height, width, size)
  return M.resize_mask(M.crop_mask(mask, top, left, height, width), size)
end

-- resized_crop_bounding_boxes(boxes, format, top, left, height, width,
-- size) -> boxes, new canvas_size
function M.resized_crop_bounding_boxes(boxes, format, top, left, height, width, size)
  local b, cs = M.crop_bounding_boxes(boxes, format, top, left, height, width)
  return M.resize_bounding_boxes(b, cs, size)
end

function M.resized_crop_keypoints(kp, top, left, height, width, size)
  local k, cs = M.crop_keypoints(kp, top, left, height, width)
  return M.resize_keypoints(k, size, cs)
end

D.define(M, "resized_crop")
D.register("resized_crop", "Image", M.resized_crop_image)
D.register("resized_crop", "Video", M.resized_crop_video)
D.register("resized_crop", "Mask", function(m, top, left, height, width, size)
  return M.resized_crop_mask(m, top, left, height, width, size)
end)
D.register("resized_crop", "BoundingBoxes", function(b, top, left, height, width, size)
  check_box("F.resized_crop", top, left, height, width)
  local out, cs = M.resized_crop_bounding_boxes(b, b.format, top, left, height, width, size)
  return out, {canvas_size = cs}
end)
D.register("resized_crop", "KeyPoints", function(k, top, left, height, width, size)
  check_box("F.resized_crop", top, left, height, width)
  local out, cs = M.resized_crop_keypoints(k, top, left, height, width, size)
  return out, {canvas_size = cs}
end)

-- five_crop_image(image, size) -> {top-left, top-right, bottom-left,
-- bottom-right, center}
function M.five_crop_image(img, size)
  local fname = "F.five_crop"
  image(fname, img)
  local ch, cw = crop_size(fname, size)
  local h, w = img:size(-2), img:size(-1)
  if ch > h or cw > w then
    error(("%s: the crop %dx%d is larger than the image %dx%d"):format(fname, ch, cw, h, w), 2)
  end
  return {M.crop_image(img, 0, 0, ch, cw), M.crop_image(img, 0, w - cw, ch, cw), M.crop_image(img, h - ch, 0, ch, cw),
    M.crop_image(img, h - ch, w - cw, ch, cw), M.center_crop_image(img, {ch, cw})}
end
M.five_crop_video = M.five_crop_image

-- ten_crop_image(image, size[, vertical_flip=false]) -> the five crops of
-- the image, then the five of its flip (horizontal unless vertical_flip)
function M.ten_crop_image(img, size, ...)
  local o = U.args("F.ten_crop", {"vertical_flip"}, nil, ...)
  local a = M.five_crop_image(img, size)
  local flipped = o.vertical_flip and P.vertical_flip_image(img) or P.horizontal_flip_image(img)
  local b = M.five_crop_image(flipped, size)
  for i = 1, 5 do a[5 + i] = b[i] end
  return a
end
M.ten_crop_video = M.ten_crop_image

-- five_crop and ten_crop give a list: rewrap each crop as the input's kind
for _, name in ipairs({"five_crop", "ten_crop"}) do
  local kernel = M[name .. "_image"]
  D.define(M, name)
  local function each(x, ...)
    local list = kernel(x, ...)
    if tv.kind(x) then
      for i, t in ipairs(list) do list[i] = tv.wrap(t, {like = x}) end
    end
    return list
  end
  D.register(name, "Image", each)
  D.register(name, "Video", each)
end

return M
