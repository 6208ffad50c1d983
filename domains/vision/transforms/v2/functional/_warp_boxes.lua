-- torch.vision.transforms.v2.functional._warp_boxes -- bounding boxes and
-- keypoints under the warps of functional/_warp.lua, as torchvision's
-- kernels: points move exactly; a box becomes the enclosing box of its four
-- moved corners, clamped to the canvas ([0, W] x [0, H]); integer boxes
-- and points are computed in float32 and truncated back. Keypoints are not
-- clamped (torchvision leaves them where they land).
local torch = require "torch"
local G = require "torch.vision.transforms.v2.functional._warp_geom"

local B = {}

local FORMATS = {XYXY = true, XYWH = true, CXCYWH = true}

-- canvas(fname, cs): cs checked as {H, W} integers
function B.canvas(fname, cs)
  if type(cs) ~= "table" or math.type(cs[1]) ~= "integer" or math.type(cs[2]) ~= "integer" then
    error(("%s: canvas_size should be {height, width} (integers), got %s"):format(fname, torch.pformat(cs)), 0)
  end
  return {cs[1], cs[2]}
end

local function check_boxes(fname, boxes, format, cs)
  if not torch.is_tensor(boxes) or boxes:dim() < 1 or boxes:size(-1) ~= 4 then
    error(("%s: expected boxes [..., 4], got %s"):format(fname,
      torch.is_tensor(boxes) and torch.pformat(boxes.shape) or type(boxes)), 0)
  end
  local f = type(format) == "string" and format:upper() or nil
  if not FORMATS[f] then
    error(("%s: format should be XYXY, XYWH or CXCYWH, got %s"):format(fname, tostring(format)), 0)
  end
  return f, B.canvas(fname, cs)
end

local function check_points(fname, kp, cs)
  if not torch.is_tensor(kp) or kp:dim() < 1 or kp:size(-1) ~= 2 then
    error(("%s: expected keypoints [..., 2], got %s"):format(fname,
      torch.is_tensor(kp) and torch.pformat(kp.shape) or type(kp)), 0)
  end
  return B.canvas(fname, cs)
end

-- to_xyxy(b, format), from_xyxy(b, format): [K, 4] boxes converted
-- (integer CXCYWH boxes as torchvision: x1 = cx - ceil(w / 2), x2 = x1 + w)
local function to_xyxy(b, format)
  if format == "XYXY" then return b end
  local p, s = b:narrow(2, 1, 2), b:narrow(2, 3, 2)
  if format == "XYWH" then return torch.cat({p, p + s}, 2) end
  if not b:is_floating_point() then
    local lo = p - s:div(-2, {rounding_mode = "floor"}):abs()
    return torch.cat({lo, lo + s}, 2)
  end
  return torch.cat({p - s * 0.5, p + s * 0.5}, 2)
end

local function from_xyxy(b, format)
  if format == "XYXY" then return b end
  local lo, hi = b:narrow(2, 1, 2), b:narrow(2, 3, 2)
  if format == "XYWH" then return torch.cat({lo, hi - lo}, 2) end
  if not b:is_floating_point() then
    local wh = hi - lo
    return torch.cat({(lo * 2 + wh):div(2, {rounding_mode = "floor"}), wh}, 2)
  end
  return torch.cat({(lo + hi) * 0.5, hi - lo}, 2)
end

-- corners(xyxy): the x and y [K, 4] of the corners (x1, y1), (x2, y1),
-- (x2, y2), (x1, y2) of the boxes
local function corners(b)
  local x1, y1, x2, y2 = b:narrow(2, 1, 1), b:narrow(2, 2, 1), b:narrow(2, 3, 1), b:narrow(2, 4, 1)
  return torch.cat({x1, x2, x2, x1}, 2), torch.cat({y1, y1, y2, y2}, 2)
end

-- enclose(x, y, cs): the boxes [K, 4] enclosing the corners, clamped to cs
local function enclose(x, y, cs)
  local out = torch.stack({x:amin(2), y:amin(2), x:amax(2), y:amax(2)}, 2)
  return B.clamp(out, cs)
end

-- clamp(xyxy, cs): x coordinates clamped to [0, W], y to [0, H]
function B.clamp(b, cs)
  local x = b:index_select(2, torch.tensor({1, 3}, {device = b.device})):clamp(0, cs[2])
  local y = b:index_select(2, torch.tensor({2, 4}, {device = b.device})):clamp(0, cs[1])
  return torch.stack({x:select(2, 1), y:select(2, 1), x:select(2, 2), y:select(2, 2)}, 2)
end

-- float_boxes(boxes, format): the boxes as [K, 4] XYXY of a float dtype
-- (float32 for integer boxes)
local function float_boxes(boxes, format)
  local b = boxes:is_floating_point() and boxes or boxes:float()
  return to_xyxy(b:reshape(-1, 4), format)
end

-- finish(out, boxes, format): out [K, 4] XYXY back in boxes' format, shape
-- and dtype (integers truncated)
local function finish(out, boxes, format)
  out = from_xyxy(out, format):reshape(boxes.shape)
  if out.dtype ~= boxes.dtype then out = out:to(boxes.dtype) end
  return out
end

-- map(m, x, y): the affine map m of points x, y (tensors)
local function map(m, x, y) return x * m[1] + y * m[2] + m[3], x * m[4] + y * m[5] + m[6] end

-- affine_setup(cs, p): the forward matrix of the affine parameters p =
-- {angle, translate, scale, shear, center} (center in pixels, default the
-- canvas center) and the center used
local function forward_matrix(cs, p)
  local center = p[5] or {cs[2] * 0.5, cs[1] * 0.5}
  return G.affine_matrix(center, p[1], p[2], p[3], p[4], false), center
end

-- expand_shift(m, cs, dtype): the top-left corner of the moved canvas (the
-- smallest x and y of its moved corners), computed in dtype's precision
local function expand_shift(m, cs, dtype)
  local r = G.rounder(dtype)
  local h, w = cs[1], cs[2]
  local sx, sy = math.huge, math.huge
  for _, p in ipairs({{0, 0}, {0, h}, {w, h}, {w, 0}}) do
    sx = math.min(sx, r(r(r(p[1] * r(m[1])) + r(p[2] * r(m[2]))) + r(m[3])))
    sy = math.min(sy, r(r(r(p[1] * r(m[4])) + r(p[2] * r(m[5]))) + r(m[6])))
  end
  return sx, sy
end

-- affine(fname, boxes, format, cs, p, expand): boxes moved by the affine
-- parameters p and the canvas after (grown to hold the whole moved image
-- when expand, with the boxes shifted into it)
function B.affine(fname, boxes, format, cs, p, expand)
  format, cs = check_boxes(fname, boxes, format, cs)
  if boxes:numel() == 0 then return boxes, cs end
  local b = float_boxes(boxes, format)
  local m, center = forward_matrix(cs, p)
  local x, y = map(m, corners(b))
  if expand then
    local sx, sy = expand_shift(m, cs, b.dtype)
    x, y = x - sx, y - sy
    local ow, oh = G.affine_output_size(G.affine_matrix(center, p[1], p[2], p[3], p[4]), cs[2], cs[1])
    cs = {oh, ow}
  end
  return finish(enclose(x, y, cs), boxes, format), cs
end

-- affine_points(fname, kp, cs, p, expand): keypoints moved by the affine
-- parameters p, and the canvas after
function B.affine_points(fname, kp, cs, p, expand)
  cs = check_points(fname, kp, cs)
  if kp:numel() == 0 then return kp, cs end
  local pts = (kp:is_floating_point() and kp or kp:float()):reshape(-1, 2)
  local m, center = forward_matrix(cs, p)
  local x, y = map(m, pts:select(2, 1), pts:select(2, 2))
  if expand then
    local sx, sy = expand_shift(m, cs, pts.dtype)
    x, y = x - sx, y - sy
    local ow, oh = G.affine_output_size(G.affine_matrix(center, p[1], p[2], p[3], p[4]), cs[2], cs[1])
    cs = {oh, ow}
  end
  local out = torch.stack({x, y}, 2):reshape(kp.shape)
  if out.dtype ~= kp.dtype then out = out:to(kp.dtype) end
  return out, cs
end

-- inverse_coeffs(fname, c): the perspective coefficients of the inverse
-- map (input -> output) of c
local function inverse_coeffs(fname, c)
  local den = c[1] * c[5] - c[2] * c[4]
  if den == 0 then
    error(("%s: the perspective coefficients %s cannot be inverted"):format(fname, torch.pformat(c)), 0)
  end
  return {(c[5] - c[6] * c[8]) / den, (-c[2] + c[3] * c[8]) / den, (c[2] * c[6] - c[3] * c[5]) / den,
    (-c[4] + c[6] * c[7]) / den, (c[1] - c[3] * c[7]) / den, (-c[1] * c[6] + c[3] * c[4]) / den,
    (-c[5] * c[7] + c[4] * c[8]) / den, (-c[1] * c[8] + c[2] * c[7]) / den}
end

-- project(i, x, y): the points x, y under the perspective map i
local function project(i, x, y)
  local den = x * i[7] + y * i[8] + 1
  return (x * i[1] + y * i[2] + i[3]) / den, (x * i[4] + y * i[5] + i[6]) / den
end

-- perspective(fname, boxes, format, cs, c): boxes under the perspective
-- whose coefficients c map output pixels to input pixels
function B.perspective(fname, boxes, format, cs, c)
  format, cs = check_boxes(fname, boxes, format, cs)
  if boxes:numel() == 0 then return boxes end
  local inv = inverse_coeffs(fname, c)
  -- (torchvision converts the format before going to float here)
  local b = to_xyxy(boxes:reshape(-1, 4), format)
  b = b:is_floating_point() and b or b:float()
  local x, y = project(inv, corners(b))
  return finish(enclose(x, y, cs), boxes, format)
end

-- perspective_points(fname, kp, cs, c): keypoints under the perspective c
function B.perspective_points(fname, kp, cs, c)
  check_points(fname, kp, cs)
  if kp:numel() == 0 then return kp end
  local inv = inverse_coeffs(fname, c)
  local pts = (kp:is_floating_point() and kp or kp:float()):reshape(-1, 2)
  local x, y = project(inv, pts:select(2, 1), pts:select(2, 2))
  local out = torch.stack({x, y}, 2):reshape(kp.shape)
  if out.dtype ~= kp.dtype then out = out:to(kp.dtype) end
  return out
end

-- lookup(d, cs, ix, iy, dtype): where the pixels (ix, iy) (int64, clamped to
-- the canvas) come from under the displacement d, approximated as
-- torchvision does: the identity grid minus the displacement, in pixels
local function lookup(d, cs, ix, iy, dtype)
  local h, w = cs[1], cs[2]
  local inv = G.identity_grid(h, w, dtype, d.device) - d:to({dtype = dtype, device = d.device})
  local flat = inv:reshape(h * w, 2)
  local idx = iy:clamp(0, h - 1) * w + ix:clamp(0, w - 1) + 1
  local p = flat:index_select(1, idx:reshape(-1))
  local x = (p:select(2, 1) + 1) * (0.5 * w) - 0.5
  local y = (p:select(2, 2) + 1) * (0.5 * h) - 0.5
  return x:view(ix.shape), y:view(iy.shape)
end

-- elastic(fname, boxes, format, cs, d): boxes under the displacement field
-- d [1, H, W, 2]: the enclosing box of the moved corners (rounded up to
-- pixels first)
function B.elastic(fname, boxes, format, cs, d)
  format, cs = check_boxes(fname, boxes, format, cs)
  if boxes:numel() == 0 then return boxes end
  local dtype = boxes:is_floating_point() and boxes.dtype or torch.float32
  local b = to_xyxy(boxes:reshape(-1, 4), format)
  local x, y = corners(b)
  if b:is_floating_point() then x, y = x:ceil(), y:ceil() end
  x, y = lookup(d:to(boxes.device), cs, x:long(), y:long(), dtype)
  local out = torch.stack({x:amin(2), y:amin(2), x:amax(2), y:amax(2)}, 2):to(boxes.dtype)
  out = B.clamp(out, cs)
  return from_xyxy(out, format):reshape(boxes.shape)
end

-- elastic_points(fname, kp, cs, d): keypoints under the displacement d
-- (each point takes the displacement of the pixel it lies in)
function B.elastic_points(fname, kp, cs, d)
  check_points(fname, kp, cs)
  if kp:numel() == 0 then return kp end
  local dtype = kp:is_floating_point() and kp.dtype or torch.float32
  local pts = kp:reshape(-1, 2):long()
  local x, y = lookup(d:to(kp.device), cs, pts:select(2, 1), pts:select(2, 2), dtype)
  local out = torch.stack({x, y}, 2):reshape(kp.shape)
  if out.dtype ~= kp.dtype then out = out:to(kp.dtype) end
  return out
end

return B
