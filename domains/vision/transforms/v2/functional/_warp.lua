-- torch.vision.transforms.v2.functional._warp -- the geometric warps as
-- torchvision.transforms.v2.functional: affine, rotate, perspective and
-- elastic (alias elastic_transform), each with kernels for images, videos,
-- masks (nearest, never interpolated), bounding boxes (the enclosing box
-- of the moved corners, clamped to the canvas) and keypoints (moved
-- exactly). The geometry and the grid sampling live in _warp_geom.lua.
-- Coordinates are pixels, 0-based and continuous; angles in degrees.
local torch = require "torch"
local U = require "torch.nn.util"
local D = require "torch.vision.transforms.v2.functional._dispatch"
local G = require "torch.vision.transforms.v2.functional._warp_geom"
local B = require "torch.vision.transforms.v2.functional._warp_boxes"
local S = require "torch.vision.transforms.v2.functional._warp_sample"

local F = {}

local function args(fname, names, defaults, ...) return U.args(fname, names, defaults, ...) end

local function required(fname, o, names)
  for _, n in ipairs(names) do
    if o[n] == nil then error(("%s: missing argument '%s'"):format(fname, n), 0) end
  end
end

-- image_checks(fname, img, mode, fill): the image's C, H, W after checking
-- it, the interpolation mode and the fill
local function image_checks(fname, img, mode, fill)
  if not torch.is_tensor(img) then error(("%s: expected a tensor image, got %s"):format(fname, type(img)), 0) end
  local C, H, W = G.check_image(fname, img)
  if C == 0 or H == 0 or W == 0 then
    error(("%s: the image has no pixels (shape %s)"):format(fname, torch.pformat(img.shape)), 0)
  end
  return G.interpolation(fname, mode), G.check_fill(fname, fill, C), H, W
end


-- centered(center, w, h): a pixel center relative to the image center
-- ({0, 0} when absent)
local function centered(center, w, h)
  if not center then return {0.0, 0.0} end
  return {center[1] - 0.5 * w, center[2] - 0.5 * h}
end

-- as_mask(fname, mask, fn): fn applied to mask as a [.., 1, H, W] image
-- (masks of 2 dims get a channel dim; bool masks warp as uint8)
local function as_mask(fname, mask, fn)
  if not torch.is_tensor(mask) or mask:dim() < 2 then
    error(("%s: expected a mask [..., H, W]"):format(fname), 0)
  end
  local squeeze = mask:dim() < 3
  local m = squeeze and mask:unsqueeze(1) or mask
  local is_bool = m.dtype == torch.bool
  if is_bool then m = m:to(torch.uint8) end
  local out = fn(m)
  if is_bool then out = out:bool() end
  if squeeze then out = out:squeeze(1) end
  return out
end

-- ---- affine ----

local AFFINE = {"angle", "translate", "scale", "shear", "interpolation", "fill", "center"}

local function affine_image(fname, img, o)
  required(fname, o, {"angle", "translate", "scale", "shear"})
  local mode, fill, H, W = image_checks(fname, img, o.interpolation or "nearest", o.fill)
  local angle, translate, scale, shear, center = G.affine_args(fname, o.angle, o.translate, o.scale, o.shear, o.center)
  local m = G.affine_matrix(centered(center, W, H), angle, translate, scale, shear)
  return S.warp(img, {m = m, w = W, h = H, ow = W, oh = H}, mode, fill)
end

-- affine_image(image, angle, translate, scale, shear[, interpolation="nearest", fill=nil, center=nil])
function F.affine_image(image, ...)
  return affine_image("F.affine_image", image, args("F.affine_image", AFFINE, nil, ...))
end

function F.affine_video(video, ...)
  return affine_image("F.affine_video", video, args("F.affine_video", AFFINE, nil, ...))
end

local AFFINE_MASK = {"angle", "translate", "scale", "shear", "fill", "center"}

local function affine_mask(fname, mask, o)
  o.interpolation = "nearest"
  return as_mask(fname, mask, function(m) return affine_image(fname, m, o) end)
end

-- affine_mask(mask, angle, translate, scale, shear[, fill=nil, center=nil])
function F.affine_mask(mask, ...) return affine_mask("F.affine_mask", mask, args("F.affine_mask", AFFINE_MASK, nil, ...)) end

local AFFINE_BOXES = {"format", "canvas_size", "angle", "translate", "scale", "shear", "center"}

local function affine_boxes(fname, boxes, o, expand)
  required(fname, o, {"angle", "translate", "scale", "shear"})
  local angle, translate, scale, shear, center = G.affine_args(fname, o.angle, o.translate, o.scale, o.shear, o.center)
  return B.affine(fname, boxes, o.format, o.canvas_size, {angle, translate, scale, shear, center}, expand)
end

-- affine_bounding_boxes(boxes, format, canvas_size, angle, translate, scale, shear[, center=nil])
function F.affine_bounding_boxes(boxes, ...)
  local o = args("F.affine_bounding_boxes", AFFINE_BOXES, nil, ...)
  return (affine_boxes("F.affine_bounding_boxes", boxes, o, false))
end

local AFFINE_KP = {"canvas_size", "angle", "translate", "scale", "shear", "center"}

local function affine_keypoints(fname, kp, o, expand)
  required(fname, o, {"angle", "translate", "scale", "shear"})
  local angle, translate, scale, shear, center = G.affine_args(fname, o.angle, o.translate, o.scale, o.shear, o.center)
  return B.affine_points(fname, kp, o.canvas_size, {angle, translate, scale, shear, center}, expand)
end

-- affine_keypoints(keypoints, canvas_size, angle, translate, scale, shear[, center=nil]) -> keypoints, canvas_size
function F.affine_keypoints(kp, ...)
  return affine_keypoints("F.affine_keypoints", kp, args("F.affine_keypoints", AFFINE_KP, nil, ...), false)
end

D.define(F, "affine")
D.register("affine", "Image", function(x, ...) return affine_image("F.affine", x, args("F.affine", AFFINE, nil, ...)) end)
D.register("affine", "Video", function(x, ...) return affine_image("F.affine", x, args("F.affine", AFFINE, nil, ...)) end)
D.register("affine", "Mask", function(x, ...) return affine_mask("F.affine", x, args("F.affine", AFFINE, nil, ...)) end)
D.register("affine", "BoundingBoxes", function(x, ...)
  local o = args("F.affine", AFFINE, nil, ...)
  o.format, o.canvas_size = x.format, x.canvas_size
  return affine_boxes("F.affine", x, o, false)
end)
D.register("affine", "KeyPoints", function(x, ...)
  local o = args("F.affine", AFFINE, nil, ...)
  o.canvas_size = x.canvas_size
  return affine_keypoints("F.affine", x, o, false)
end)

-- ---- rotate ----

local ROTATE = {"angle", "interpolation", "expand", "center", "fill"}

-- rot90_fast(img, angle, expand): the rotation by a multiple of 90 degrees
-- about the image center as an exact transposition (nil when it is not one)
local function rot90_fast(img, angle, expand)
  if angle == 0 then return img:clone() end
  if angle == 180 then return torch.rot90(img, 2, {-2, -1}) end
  if expand or img:size(-1) == img:size(-2) then
    if angle == 90 then return torch.rot90(img, 1, {-2, -1}) end
    if angle == 270 then return torch.rot90(img, 3, {-2, -1}) end
  end
  return nil
end

local function rotate_image(fname, img, o)
  required(fname, o, {"angle"})
  local mode, fill, H, W = image_checks(fname, img, o.interpolation or "nearest", o.fill)
  if type(o.angle) ~= "number" then error(("%s: angle should be a number, got %s"):format(fname, type(o.angle)), 0) end
  local angle = o.angle % 360
  local center = o.center and G.number_list(fname, "center", o.center, 2) or nil
  local expand = o.expand == true
  if not center then
    local fast = rot90_fast(img, angle, expand)
    if fast then return fast end
  end
  local m = G.affine_matrix(centered(center, W, H), -angle, {0.0, 0.0}, 1.0, {0.0, 0.0})
  local ow, oh = W, H
  if expand then ow, oh = G.affine_output_size(m, W, H) end
  return S.warp(img, {m = m, w = W, h = H, ow = ow, oh = oh}, mode, fill)
end

-- rotate_image(image, angle[, interpolation="nearest", expand=false, center=nil, fill=nil])
function F.rotate_image(image, ...)
  return rotate_image("F.rotate_image", image, args("F.rotate_image", ROTATE, nil, ...))
end

function F.rotate_video(video, ...)
  return rotate_image("F.rotate_video", video, args("F.rotate_video", ROTATE, nil, ...))
end

local ROTATE_MASK = {"angle", "expand", "center", "fill"}

local function rotate_mask(fname, mask, o)
  o.interpolation = "nearest"
  return as_mask(fname, mask, function(m) return rotate_image(fname, m, o) end)
end

-- rotate_mask(mask, angle[, expand=false, center=nil, fill=nil])
function F.rotate_mask(mask, ...) return rotate_mask("F.rotate_mask", mask, args("F.rotate_mask", ROTATE_MASK, nil, ...)) end

-- the rotation as the affine map of boxes and points (angle negated: rotate
-- turns counter-clockwise, affine clockwise)
local function rotate_params(fname, o)
  required(fname, o, {"angle"})
  if type(o.angle) ~= "number" then error(("%s: angle should be a number, got %s"):format(fname, type(o.angle)), 0) end
  local center = o.center and G.number_list(fname, "center", o.center, 2) or nil
  return {-o.angle + 0.0, {0.0, 0.0}, 1.0, {0.0, 0.0}, center}
end

local ROTATE_BOXES = {"format", "canvas_size", "angle", "expand", "center"}

-- rotate_bounding_boxes(boxes, format, canvas_size, angle[, expand=false, center=nil]) -> boxes, canvas_size
function F.rotate_bounding_boxes(boxes, ...)
  local fname = "F.rotate_bounding_boxes"
  local o = args(fname, ROTATE_BOXES, nil, ...)
  return B.affine(fname, boxes, o.format, o.canvas_size, rotate_params(fname, o), o.expand == true)
end

local ROTATE_KP = {"canvas_size", "angle", "expand", "center"}

-- rotate_keypoints(keypoints, canvas_size, angle[, expand=false, center=nil]) -> keypoints, canvas_size
function F.rotate_keypoints(kp, ...)
  local fname = "F.rotate_keypoints"
  local o = args(fname, ROTATE_KP, nil, ...)
  return B.affine_points(fname, kp, o.canvas_size, rotate_params(fname, o), o.expand == true)
end

-- boxes and keypoints report their canvas when expand changes it
local function with_canvas(out, cs, x)
  local old = x.canvas_size
  if cs[1] == old[1] and cs[2] == old[2] then return out end
  return out, {canvas_size = cs}
end

D.define(F, "rotate")
D.register("rotate", "Image", function(x, ...) return rotate_image("F.rotate", x, args("F.rotate", ROTATE, nil, ...)) end)
D.register("rotate", "Video", function(x, ...) return rotate_image("F.rotate", x, args("F.rotate", ROTATE, nil, ...)) end)
D.register("rotate", "Mask", function(x, ...) return rotate_mask("F.rotate", x, args("F.rotate", ROTATE, nil, ...)) end)
D.register("rotate", "BoundingBoxes", function(x, ...)
  local o = args("F.rotate", ROTATE, nil, ...)
  local out, cs = B.affine("F.rotate", x, x.format, x.canvas_size, rotate_params("F.rotate", o), o.expand == true)
  return with_canvas(out, cs, x)
end)
D.register("rotate", "KeyPoints", function(x, ...)
  local o = args("F.rotate", ROTATE, nil, ...)
  local out, cs = B.affine_points("F.rotate", x, x.canvas_size, rotate_params("F.rotate", o), o.expand == true)
  return with_canvas(out, cs, x)
end)

-- ---- perspective ----

local PERSP = {"startpoints", "endpoints", "interpolation", "fill", "coefficients"}

local function perspective_image(fname, img, o)
  local mode, fill, H, W = image_checks(fname, img, o.interpolation or "bilinear", o.fill)
  local c = G.coefficients(fname, o.startpoints, o.endpoints, o.coefficients)
  return S.warp(img, {c = c, ow = W, oh = H}, mode, fill)
end

-- perspective_image(image, startpoints, endpoints[, interpolation="bilinear", fill=nil, coefficients=nil])
function F.perspective_image(image, ...)
  return perspective_image("F.perspective_image", image, args("F.perspective_image", PERSP, nil, ...))
end

function F.perspective_video(video, ...)
  return perspective_image("F.perspective_video", video, args("F.perspective_video", PERSP, nil, ...))
end

local PERSP_MASK = {"startpoints", "endpoints", "fill", "coefficients"}

local function perspective_mask(fname, mask, o)
  o.interpolation = "nearest"
  return as_mask(fname, mask, function(m) return perspective_image(fname, m, o) end)
end

-- perspective_mask(mask, startpoints, endpoints[, fill=nil, coefficients=nil])
function F.perspective_mask(mask, ...)
  return perspective_mask("F.perspective_mask", mask, args("F.perspective_mask", PERSP_MASK, nil, ...))
end

local PERSP_BOXES = {"format", "canvas_size", "startpoints", "endpoints", "coefficients"}

-- perspective_bounding_boxes(boxes, format, canvas_size, startpoints, endpoints[, coefficients=nil])
function F.perspective_bounding_boxes(boxes, ...)
  local fname = "F.perspective_bounding_boxes"
  local o = args(fname, PERSP_BOXES, nil, ...)
  local c = G.coefficients(fname, o.startpoints, o.endpoints, o.coefficients)
  return B.perspective(fname, boxes, o.format, o.canvas_size, c)
end

local PERSP_KP = {"canvas_size", "startpoints", "endpoints", "coefficients"}

-- perspective_keypoints(keypoints, canvas_size, startpoints, endpoints[, coefficients=nil])
function F.perspective_keypoints(kp, ...)
  local fname = "F.perspective_keypoints"
  local o = args(fname, PERSP_KP, nil, ...)
  local c = G.coefficients(fname, o.startpoints, o.endpoints, o.coefficients)
  return B.perspective_points(fname, kp, o.canvas_size, c)
end

D.define(F, "perspective")
D.register("perspective", "Image", function(x, ...)
  return perspective_image("F.perspective", x, args("F.perspective", PERSP, nil, ...))
end)
D.register("perspective", "Video", function(x, ...)
  return perspective_image("F.perspective", x, args("F.perspective", PERSP, nil, ...))
end)
D.register("perspective", "Mask", function(x, ...)
  return perspective_mask("F.perspective", x, args("F.perspective", PERSP, nil, ...))
end)
D.register("perspective", "BoundingBoxes", function(x, ...)
  local o = args("F.perspective", PERSP, nil, ...)
  local c = G.coefficients("F.perspective", o.startpoints, o.endpoints, o.coefficients)
  return B.perspective("F.perspective", x, x.format, x.canvas_size, c)
end)
D.register("perspective", "KeyPoints", function(x, ...)
  local o = args("F.perspective", PERSP, nil, ...)
  local c = G.coefficients("F.perspective", o.startpoints, o.endpoints, o.coefficients)
  return B.perspective_points("F.perspective", x, x.canvas_size, c)
end)

-- ---- elastic ----

local ELASTIC = {"displacement", "interpolation", "fill"}

-- check_displacement(fname, d, h, w, n): d must be a float tensor [n, h, w, 2]
-- (n = 1 unless given)
local function check_displacement(fname, d, h, w, n)
  if not torch.is_tensor(d) then
    error(("%s: displacement should be a tensor [1, H, W, 2], got %s"):format(fname, type(d)), 0)
  end
  local s = d.shape
  n = n or 1
  if #s ~= 4 or s[1] ~= n or s[2] ~= h or s[3] ~= w or s[4] ~= 2 then
    error(("%s: displacement should have shape {%d, %d, %d, 2}, got %s"):format(fname, n, h, w,
      torch.pformat(s)), 0)
  end
  if not d:is_floating_point() then error(("%s: displacement should be a float tensor"):format(fname), 0) end
end

local function elastic_image(fname, img, o)
  required(fname, o, {"displacement"})
  local mode, fill, H, W = image_checks(fname, img, o.interpolation or "bilinear", o.fill)
  check_displacement(fname, o.displacement, H, W)
  local dt = G.grid_dtype(img)
  local grid = G.identity_grid(H, W, dt, img.device) + o.displacement:to({dtype = dt, device = img.device})
  return S.warp(img, {grid = grid}, mode, fill)
end

-- elastic_image(image, displacement[, interpolation="bilinear", fill=nil])
function F.elastic_image(image, ...)
  return elastic_image("F.elastic_image", image, args("F.elastic_image", ELASTIC, nil, ...))
end

function F.elastic_video(video, ...)
  return elastic_image("F.elastic_video", video, args("F.elastic_video", ELASTIC, nil, ...))
end

local function elastic_mask(fname, mask, o)
  o.interpolation = "nearest"
  return as_mask(fname, mask, function(m) return elastic_image(fname, m, o) end)
end

-- elastic_mask(mask, displacement[, fill=nil])
function F.elastic_mask(mask, ...)
  return elastic_mask("F.elastic_mask", mask, args("F.elastic_mask", {"displacement", "fill"}, nil, ...))
end

-- elastic_bounding_boxes(boxes, format, canvas_size, displacement)
function F.elastic_bounding_boxes(boxes, format, canvas_size, displacement)
  local fname = "F.elastic_bounding_boxes"
  local cs = B.canvas(fname, canvas_size)
  check_displacement(fname, displacement, cs[1], cs[2])
  return B.elastic(fname, boxes, format, cs, displacement)
end

-- elastic_keypoints(keypoints, canvas_size, displacement)
function F.elastic_keypoints(kp, canvas_size, displacement)
  local fname = "F.elastic_keypoints"
  local cs = B.canvas(fname, canvas_size)
  check_displacement(fname, displacement, cs[1], cs[2])
  return B.elastic_points(fname, kp, cs, displacement)
end

D.define(F, "elastic")
D.register("elastic", "Image", function(x, ...)
  return elastic_image("F.elastic", x, args("F.elastic", ELASTIC, nil, ...))
end)
D.register("elastic", "Video", function(x, ...)
  return elastic_image("F.elastic", x, args("F.elastic", ELASTIC, nil, ...))
end)
D.register("elastic", "Mask", function(x, ...) return elastic_mask("F.elastic", x, args("F.elastic", ELASTIC, nil, ...)) end)
D.register("elastic", "BoundingBoxes", function(x, ...)
  local o = args("F.elastic", ELASTIC, nil, ...)
  required("F.elastic", o, {"displacement"})
  return F.elastic_bounding_boxes(x, x.format, x.canvas_size, o.displacement)
end)
D.register("elastic", "KeyPoints", function(x, ...)
  local o = args("F.elastic", ELASTIC, nil, ...)
  required("F.elastic", o, {"displacement"})
  return F.elastic_keypoints(x, x.canvas_size, o.displacement)
end)

-- elastic_transform: torchvision's other name of elastic
F.elastic_transform = F.elastic

return F
