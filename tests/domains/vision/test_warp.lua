-- tests/domains/vision/test_warp.lua -- torch.vision.transforms.v2's warps
-- (functional/_warp*.lua, _warp.lua): affine, rotate, perspective and
-- elastic on images, videos, masks, boxes and keypoints, against
-- torchvision (tests/ref/vision_warp.lua from 0.14's tensor kernels;
-- tests/ref/vision_warp_v2.lua from 0.26 when present) and closed-form
-- geometry; the transform classes' parameter ranges and joint application.

local tv = torch.vision.tv_tensors
local v2 = torch.vision.transforms.v2
local F = v2.functional

-- gen_image(shape, seed, dtype): as gen_image in tests/ref/gen_vision_warp.py
local function hashes(n, seed)
  local h = {}
  for k = 0, n - 1 do h[k + 1] = (k * 2654435761 + seed * 40503 + 12345) % 4294967296 end
  return h
end

local function gen_image(shape, seed, dtype)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local h = hashes(n, seed)
  if dtype == torch.uint8 then
    for i = 1, n do h[i] = h[i] // 16777216 end
    return torch.tensor(h, {dtype = torch.uint8}):reshape(shape)
  end
  for i = 1, n do h[i] = h[i] / 4294967296 end
  return torch.tensor(h, {dtype = torch.float64}):to(dtype):reshape(shape)
end

local function gen_disp(h, w, seed, amp)
  local v = gen_image({1, h, w, 2}, seed, torch.float64)
  return ((v * 2 - 1) * amp):to(torch.float32)
end

local DT = {uint8 = torch.uint8, float32 = torch.float32, float64 = torch.float64}

-- run_case(c, dev): our result for a reference case
local function run_case(c, dev)
  local img = gen_image(c.shape, c.seed, DT[c.dtype]):to(dev or "cpu")
  if c.op == "affine" then
    return F.affine(img, c.angle, c.translate, c.scale, c.shear, c.interpolation or "nearest", c.fill or false,
      c.center or false)
  elseif c.op == "rotate" then
    return F.rotate(img, c.angle, {interpolation = c.interpolation, expand = c.expand, center = c.center,
      fill = c.fill})
  elseif c.op == "perspective" then
    return F.perspective(img, c.startpoints, c.endpoints, {interpolation = c.interpolation, fill = c.fill})
  end
  local d = gen_disp(c.shape[#c.shape - 1], c.shape[#c.shape], c.dseed, c.amp)
  return F.elastic(img, d, {interpolation = c.interpolation, fill = c.fill})
end

-- check_ref(got, c): within 1 level (uint8) or 1e-5 (float) of the
-- reference; with nearest sampling, a few pixels (< 1%) whose source
-- coordinate is a tie (x.5 up to rounding) may take the other neighbour
local function check_ref(got, c)
  check_shape(got, c.out_shape)
  check_eq(got.dtype, DT[c.dtype])
  local want = torch.tensor(c.out, {dtype = torch.float64}):view(c.out_shape)
  local diff = (got:double() - want):abs()
  local tol = c.dtype == "uint8" and 1 or 1e-5
  local nearest = c.interpolation == "nearest" or (c.interpolation == nil and (c.op == "affine" or c.op == "rotate"))
  local bad = diff:gt(tol):double():mean():item()
  if nearest then
    check(bad < 0.01, ("%.2f%% of the values differ"):format(bad * 100))
  else
    check(bad == 0, ("max difference %g"):format(diff:max():item()))
  end
  if c.dtype == "uint8" then check(diff:gt(0):double():mean():item() < 0.02, "too many pixels off by 1") end
end

local R = ref("vision_warp")
local names = {}
for k in pairs(R) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do
  test("torchvision reference: " .. name, function() check_ref(run_case(R[name]), R[name]) end)
end

test("perspective coefficients are solved as torchvision solves them", function()
  local G = require "torch.vision.transforms.v2.functional._warp_geom"
  local c = R.perspective_f32
  check_close(G.perspective_coeffs("t", c.startpoints, c.endpoints), c.coefficients, {atol = 1e-6, rtol = 1e-5})
  -- coefficients given directly give the same image
  local img = gen_image(c.shape, c.seed, torch.float32)
  check_close(F.perspective(img, false, false, {coefficients = c.coefficients}), c.out, {atol = 1e-5})
end)

-- ---- torchvision 0.26 (v2-only kernels), when its reference file is present ----

local has_v2, R2 = pcall(ref, "vision_warp_v2")
local BOXES_F = {{1.0, 2.0, 9.0, 11.0}, {0.0, 0.0, 19.0, 17.0}, {5.5, 3.25, 12.0, 14.5}, {14.0, 12.0, 18.5, 16.0}}
local BOXES_I = {{1, 2, 8, 9}, {0, 0, 19, 17}, {5, 3, 6, 10}, {12, 11, 3, 4}}
local POINTS = {{0.0, 0.0}, {18.0, 16.0}, {4.5, 7.25}, {10.0, 3.0}, {17.0, 1.0}}
local DT2 = {uint8 = torch.uint8, float32 = torch.float32, float64 = torch.float64, int64 = torch.int64}

-- v2_input(c): the input of a gen_vision_warp_v2.py case
local function v2_input(c)
  local dt = DT2[c.dtype]
  if c.kind == "BoundingBoxes" then
    return tv.BoundingBoxes(dt == torch.int64 and BOXES_I or BOXES_F, {format = c.format, canvas_size = c.canvas,
      dtype = dt})
  elseif c.kind == "KeyPoints" then
    return tv.KeyPoints(POINTS, {canvas_size = c.canvas, dtype = dt})
  end
  local x = gen_image(c.shape, c.seed, dt)
  if c.kind == "Mask" then return tv.Mask(x % 5) end
  return c.kind == "Video" and tv.Video(x) or tv.Image(x)
end

local function v2_call(c, x)
  local kw = c.kw or {}
  if c.op == "elastic" then
    return F.elastic(x, gen_disp(c.disp[1], c.disp[2], c.disp[3], c.disp[4]), kw)
  end
  return F[c.op](x, kw)
end

if has_v2 then
  local names2 = {}
  for k, c in pairs(R2) do
    if c.op then names2[#names2 + 1] = k end
  end
  table.sort(names2)
  for _, name in ipairs(names2) do
    test("torchvision 0.26 reference: " .. name, function()
      local c = R2[name]
      local x = v2_input(c)
      local y = v2_call(c, x)
      check_eq(tv.kind(y), c.kind)
      check_shape(y, c.out_shape)
      if c.out_canvas then check_eq(y.canvas_size, c.out_canvas) end
      if y.dtype == torch.uint8 or y.dtype == torch.int64 then
        local diff = (y:double() - torch.tensor(c.out, {dtype = torch.float64}):view(c.out_shape)):abs()
        -- masks are nearest-sampled (ties may pick the other neighbour);
        -- integer boxes are truncated floats (an ulp may cross an integer)
        check(diff:gt(1):double():mean():item() < 0.01, "values differ: max " .. diff:max():item())
      else
        check_close(y:double(), c.out, {atol = 1e-4, rtol = 1e-5})
      end
    end)
  end
end

-- ---- closed-form geometry of boxes and keypoints ----

-- fwd(p, angle, t, s, c): the point p rotated by angle (degrees; the y axis
-- points down) and scaled by s about c, then moved by t
local function fwd(p, angle, t, s, c)
  local r = math.rad(angle)
  local dx, dy = p[1] - c[1], p[2] - c[2]
  return {c[1] + t[1] + s * (math.cos(r) * dx - math.sin(r) * dy), c[2] + t[2] + s * (math.sin(r) * dx + math.cos(r) * dy)}
end

test("affine moves keypoints by rotation, scale and translation about the center", function()
  local kp = tv.KeyPoints(POINTS, {canvas_size = {17, 19}, dtype = torch.float64})
  local y = F.affine(kp, 30, {2, -1}, 0.9, {0, 0})
  local want = {}
  for i, p in ipairs(POINTS) do want[i] = fwd(p, 30, {2, -1}, 0.9, {9.5, 8.5}) end
  check_close(y, want, {atol = 1e-9})
  check_eq(y.canvas_size, {17, 19})
  -- an explicit center, and shear in x: x' = x - tan(shear) (y - cy)
  y = F.affine(kp, 0, {0, 0}, 1, {20, 0}, {center = {3, 4}})
  for i, p in ipairs(POINTS) do want[i] = {p[1] - math.tan(math.rad(20)) * (p[2] - 4), p[2]} end
  check_close(y, want, {atol = 1e-9})
  local out, cs = F.affine_keypoints(kp, {17, 19}, 10, {0, 0}, 1, 0)
  check_eq(cs, {17, 19})
  for i, p in ipairs(POINTS) do want[i] = fwd(p, 10, {0, 0}, 1, {9.5, 8.5}) end
  check_close(out, want, {atol = 1e-9})
end)

test("rotate turns counter-clockwise on screen; expand shifts points into the grown canvas", function()
  local kp = tv.KeyPoints({{19, 8.5}}, {canvas_size = {17, 19}, dtype = torch.float64})
  -- the middle of the right edge goes to the middle of the top edge
  check_close(F.rotate(kp, 90), {{9.5, 8.5 - 9.5}}, {atol = 1e-9})
  local y = F.rotate(kp, 90, {expand = true})
  check_eq(y.canvas_size, {19, 17})
  check_close(y, {{8.5, 0}}, {atol = 1e-9})
  -- the grown canvas is the one boxes get (torchvision 0.26 sizes both from
  -- the rotation about the canvas center; tests/ref/vision_warp_v2.lua)
  local box = tv.BoundingBoxes({0, 0, 1, 1}, {format = "XYXY", canvas_size = {17, 19}})
  for _, angle in ipairs({45, 30, -123}) do
    local _, cs = F.rotate_keypoints(kp, {17, 19}, angle, true)
    local _, bcs = F.rotate_bounding_boxes(box, "XYXY", {17, 19}, angle, true)
    check_eq(cs, bcs)
  end
end)

test("boxes become the enclosing box of their moved corners, clamped to the canvas", function()
  local b = tv.BoundingBoxes({{4, 4, 8, 6}}, {format = "XYXY", canvas_size = {12, 12}, dtype = torch.float64})
  local y = F.rotate(b, 90)
  -- corners about (6, 6): x' = 6 + (y - 6), y' = 6 - (x - 6)
  check_close(y, {{4, 4, 6, 8}}, {atol = 1e-9})
  y = F.affine(b, 45, {0, 0}, 1, {0, 0})
  local xs, ys = {}, {}
  for _, p in ipairs({{4, 4}, {8, 4}, {8, 6}, {4, 6}}) do
    local q = fwd(p, 45, {0, 0}, 1, {6, 6})
    xs[#xs + 1], ys[#ys + 1] = q[1], q[2]
  end
  check_close(y, {{math.min(table.unpack(xs)), math.min(table.unpack(ys)), math.max(table.unpack(xs)),
    math.max(table.unpack(ys))}}, {atol = 1e-9})
  -- moved partly off the canvas: clamped
  y = F.affine(b, 0, {-6, 7}, 1, {0, 0})
  check_close(y, {{0, 11, 2, 12}}, {atol = 1e-9})
  -- other formats convert through XYXY and back
  local bw = tv.BoundingBoxes({{4, 4, 4, 2}}, {format = "XYWH", canvas_size = {12, 12}, dtype = torch.float64})
  check_close(F.rotate(bw, 90), {{4, 4, 2, 4}}, {atol = 1e-9})
  local bc = tv.BoundingBoxes({{6, 5, 4, 2}}, {format = "CXCYWH", canvas_size = {12, 12}, dtype = torch.float64})
  check_close(F.rotate(bc, 90), {{5, 6, 2, 4}}, {atol = 1e-9})
  -- integer boxes keep their dtype
  local bi = tv.BoundingBoxes({{4, 4, 8, 6}}, {format = "XYXY", canvas_size = {12, 12}, dtype = torch.int64})
  local yi = F.rotate(bi, 90)
  check_eq(yi.dtype, torch.int64)
  check_close(yi, {{4, 4, 6, 8}}, {atol = 1})
end)

test("a box around a pixel moves with the pixel (rotate and affine, nearest)", function()
  local img = torch.zeros(1, 8, 8, {dtype = torch.uint8})
  img[1][2][3] = 255 -- row 1, column 2 (0-based)
  local b = tv.BoundingBoxes({{2, 1, 3, 2}}, {format = "XYXY", canvas_size = {8, 8}})
  for _, a in ipairs({90, 180, 270}) do
    local ri, rb = F.rotate(img, a), F.rotate(b, a)
    local nz = ri[1]:nonzero()
    check_eq(nz:size(1), 1)
    local r, c = nz[1][1]:item() - 1, nz[1][2]:item() - 1
    check_close(rb, {{c, r, c + 1, r + 1}}, {atol = 1e-5})
  end
  local ai, ab = F.affine(img, 0, {3, 2}, 1, 0), F.affine(b, 0, {3, 2}, 1, 0)
  local nz = ai[1]:nonzero()
  check_close(ab, {{nz[1][2]:item() - 1, nz[1][1]:item() - 1, nz[1][2]:item(), nz[1][1]:item()}})
end)

-- (torchvision sizes the boxes' canvas from the matrix about the pixel center
-- and the image's from the matrix about the image center: the two can differ
-- by one pixel after rounding; we keep its rule)
test("expanding rotation: the whole-canvas box fills the new canvas, as the image does", function()
  for _, a in ipairs({30, 45, 123, -70}) do
    local b = tv.BoundingBoxes({{0, 0, 19, 17}}, {format = "XYXY", canvas_size = {17, 19}, dtype = torch.float64})
    local img = torch.zeros(3, 17, 19)
    local rb, ri = F.rotate(b, a, {expand = true}), F.rotate(img, a, {expand = true})
    check(math.abs(rb.canvas_size[1] - ri:size(2)) <= 1 and math.abs(rb.canvas_size[2] - ri:size(3)) <= 1)
    local v = rb[1]:totable()
    check(v[1] < 1e-6 and v[2] < 1e-6, "box starts at the origin")
    check(math.abs(v[3] - ri:size(3)) < 2 and math.abs(v[4] - ri:size(2)) < 2, "box spans the canvas")
  end
end)

test("perspective maps startpoints onto endpoints (keypoints) and boxes enclose the moved corners", function()
  local sp = {{0, 0}, {18, 0}, {18, 16}, {0, 16}}
  local ep = {{2, 1}, {17, 3}, {15, 15}, {1, 13}}
  local kp = tv.KeyPoints(sp, {canvas_size = {17, 19}, dtype = torch.float64})
  check_close(F.perspective(kp, sp, ep), ep, {atol = 1e-4})
  check_close(F.perspective_keypoints(kp, {17, 19}, sp, ep), ep, {atol = 1e-4})
  local b = tv.BoundingBoxes({{0, 0, 18, 16}}, {format = "XYXY", canvas_size = {17, 19}, dtype = torch.float64})
  check_close(F.perspective(b, sp, ep), {{1, 1, 17, 15}}, {atol = 1e-4})
  check_close(F.perspective_bounding_boxes(b, "XYXY", {17, 19}, sp, ep), {{1, 1, 17, 15}}, {atol = 1e-4})
end)

test("elastic with no displacement keeps images, keypoints and (pixel-aligned) boxes", function()
  local d = torch.zeros(1, 9, 11, 2)
  local img = gen_image({3, 9, 11}, 3, torch.float32)
  check_close(F.elastic(img, d), img, {atol = 1e-5})
  local u8 = gen_image({3, 9, 11}, 4, torch.uint8)
  check_eq(F.elastic(u8, d, {interpolation = "nearest"}):totable(), u8:totable())
  local kp = tv.KeyPoints({{1, 2}, {10, 8}, {0, 0}}, {canvas_size = {9, 11}, dtype = torch.float32})
  check_close(F.elastic(kp, d), {{1, 2}, {10, 8}, {0, 0}}, {atol = 1e-5})
  local b = tv.BoundingBoxes({{1, 2, 5, 7}}, {format = "XYXY", canvas_size = {9, 11}, dtype = torch.float32})
  check_close(F.elastic(b, d), {{1, 2, 5, 7}}, {atol = 1e-5})
  -- float corners are rounded up to the pixel they touch first
  b = tv.BoundingBoxes({{0.5, 1.25, 5, 6.5}}, {format = "XYXY", canvas_size = {9, 11}, dtype = torch.float32})
  check_close(F.elastic(b, d), {{1, 2, 5, 7}}, {atol = 1e-5})
  -- a constant displacement of one pixel to the right moves the content left
  local shift = torch.zeros(1, 9, 11, 2)
  shift:select(4, 1):fill_(2 / 11)
  local moved = F.elastic(u8, shift, {interpolation = "nearest"})
  check_eq(moved:narrow(3, 1, 10):totable(), u8:narrow(3, 2, 10):totable())
end)

-- ---- kinds, batches, dtypes, errors ----

local SP = {{0, 0}, {18, 0}, {18, 16}, {0, 16}}
local EP = {{2, 1}, {17, 3}, {15, 15}, {1, 13}}

-- the four ops with fixed parameters, as functions of the input
local D40 = gen_disp(17, 19, 40, 0.2)
local OPS = {
  affine = function(x, o) return F.affine(x, 30, {2, -1}, 0.9, {10, 5}, o) end,
  rotate = function(x, o) return F.rotate(x, 37, o) end,
  rotate_expand = function(x, o) o = o or {}; o.expand = true; return F.rotate(x, 37, o) end,
  perspective = function(x, o) return F.perspective(x, SP, EP, o) end,
  elastic = function(x, o) return F.elastic(x, D40, o) end,
}
local OP_NAMES = {"affine", "rotate", "rotate_expand", "perspective", "elastic"}

test("masks are sampled with nearest: labels are never interpolated", function()
  local labels = gen_image({17, 19}, 5, torch.uint8) % 5
  for _, name in ipairs(OP_NAMES) do
    local m = OPS[name](tv.Mask(labels), {interpolation = "bilinear", fill = 0})
    check_eq(tv.kind(m), "Mask")
    check_eq(m.dtype, torch.uint8)
    check_eq(m:dim(), 2)
    check(m:gt(4):sum():item() == 0, name .. ": a label that was not in the mask")
    -- the mask kernel is the nearest image kernel
    local img = OPS[name](labels:unsqueeze(1), {interpolation = "nearest", fill = 0})
    check_eq(m:totable(), img:squeeze(1):totable(), name)
  end
  -- bool masks stay bool; 3-D masks keep their shape
  local bm = F.rotate(tv.Mask(labels:gt(2)), 30)
  check_eq(bm.dtype, torch.bool)
  check_shape(F.affine_mask(labels:view(1, 17, 19), 10, {0, 0}, 1, 0), {1, 17, 19})
  check_shape(F.rotate_mask(labels, 30, true), F.rotate(labels:view(1, 17, 19), 30, {expand = true}):squeeze(1).shape)
  check_eq(F.perspective_mask(labels, SP, EP):totable(), F.perspective(labels:view(1, 17, 19), SP, EP, "nearest")
    :squeeze(1):totable())
  check_eq(F.elastic_mask(labels, gen_disp(17, 19, 40, 0.2)):totable(),
    F.elastic(labels:view(1, 17, 19), gen_disp(17, 19, 40, 0.2), "nearest"):squeeze(1):totable())
end)

test("batches and videos: every image warps as it would alone", function()
  for _, dt in ipairs({torch.uint8, torch.float32}) do
    local batch = gen_image({2, 3, 3, 17, 19}, 6, dt)
    for _, name in ipairs(OP_NAMES) do
      local o = {interpolation = "bilinear", fill = {0.5, 0.25, 1}}
      local y = OPS[name](batch, o)
      check_eq(y:dim(), 5)
      for i = 1, 2 do
        for j = 1, 3 do check_close(y[i][j], OPS[name](batch[i][j], o), {atol = 1e-6}) end
      end
      local v = OPS[name](tv.Video(batch[1]), o)
      check_eq(tv.kind(v), "Video")
      check_close(v, y[1], {atol = 1e-6})
    end
  end
end)

test("float16 and float64 images keep their dtype and match float32", function()
  local img = gen_image({3, 17, 19}, 7, torch.float32)
  for _, name in ipairs(OP_NAMES) do
    local want = OPS[name](img, {interpolation = "bilinear"})
    local h = OPS[name](img:half(), {interpolation = "bilinear"})
    check_eq(h.dtype, torch.float16)
    check_close(h:float(), want, {atol = 2e-3})
    local d = OPS[name](img:double(), {interpolation = "bilinear"})
    check_eq(d.dtype, torch.float64)
    check_close(d:float(), want, {atol = 1e-5})
  end
end)

test("per-kind kernels have torchvision's signatures", function()
  local img = gen_image({3, 17, 19}, 8, torch.float32)
  check_close(F.affine_image(img, 30, {2, -1}, 0.9, {10, 5}), OPS.affine(img))
  check_close(F.affine_video(img:view(1, 3, 17, 19), 30, {2, -1}, 0.9, {10, 5}), OPS.affine(img):view(1, 3, 17, 19))
  check_close(F.rotate_image(img, 37, "bilinear", true), F.rotate(img, 37, {interpolation = "bilinear", expand = true}))
  check_close(F.rotate_video(img, 37), OPS.rotate(img))
  check_close(F.perspective_image(img, SP, EP), OPS.perspective(img))
  check_close(F.perspective_video(img, SP, EP, "nearest", 1), F.perspective(img, SP, EP, "nearest", 1))
  check_close(F.elastic_image(img, gen_disp(17, 19, 40, 0.2)), OPS.elastic(img))
  check_close(F.elastic_video(img, gen_disp(17, 19, 40, 0.2)), OPS.elastic(img))
  check(F.elastic_transform == F.elastic)
  local b = tv.BoundingBoxes(BOXES_F, {format = "XYXY", canvas_size = {17, 19}})
  check_close(F.affine_bounding_boxes(b, "XYXY", {17, 19}, 30, {2, -1}, 0.9, {10, 5}), OPS.affine(b))
  local rb, cs = F.rotate_bounding_boxes(b, "XYXY", {17, 19}, 37, true)
  local want = OPS.rotate_expand(b)
  check_close(rb, want)
  check_eq(cs, want.canvas_size)
  check_close(F.perspective_bounding_boxes(b, "XYXY", {17, 19}, SP, EP), OPS.perspective(b))
  check_close(F.elastic_bounding_boxes(b, "XYXY", {17, 19}, gen_disp(17, 19, 40, 0.2)), OPS.elastic(b))
  local kp = tv.KeyPoints(POINTS, {canvas_size = {17, 19}})
  check_close(F.elastic_keypoints(kp, {17, 19}, gen_disp(17, 19, 40, 0.2)), OPS.elastic(kp))
  -- PIL integer constants and InterpolationMode strings
  check_close(F.rotate(img, 37, 2), F.rotate(img, 37, "bilinear"))
  check_close(F.rotate(img, 37, 0), F.rotate(img, 37, "NEAREST"))
end)

test("bad arguments are errors naming the function and the values", function()
  local img = gen_image({3, 17, 19}, 9, torch.float32)
  check_error(function() F.rotate(img, 30, "bicubic") end, "F.rotate: interpolation mode 'bicubic' is not supported")
  check_error(function() F.rotate(img, 30, "cubic") end, "'cubic'")
  check_error(function() F.affine(img, 30, {1}, 1, 0) end, "translate should be a list of 2 numbers")
  check_error(function() F.affine(img, 30, {0, 0}, 0, 0) end, "scale should be a positive number, got 0")
  check_error(function() F.affine(img, 30, {0, 0}) end, "missing argument 'scale'")
  check_error(function() F.rotate(img, 30, {fill = {1, 2}}) end, "fill has 2 values")
  check_error(function() F.rotate(img, 30, {fil = 1}) end, "unknown option 'fil'")
  check_error(function() F.rotate(torch.zeros(3, 0, 5), 30) end, "F.rotate: the image has no pixels")
  check_error(function() F.rotate(torch.zeros(5, 5), 30) end, "expected an image [..., C, H, W]")
  check_error(function() F.rotate(torch.zeros(1, 5, 5, {dtype = torch.bool}), 30) end, "bool images")
  check_error(function() F.elastic(img, torch.zeros(1, 17, 18, 2)) end, "displacement should have shape {1, 17, 19, 2}")
  check_error(function() F.perspective(img, SP) end, "give startpoints and endpoints, or coefficients")
  check_error(function() F.perspective(img, SP, {{0, 0}, {1, 1}}) end, "endpoints should be 4 points")
  check_error(function() F.perspective(img, SP, {{0, 0}, {1, 1}, {2, 2}, {3, 3}}) end, "define no perspective")
  check_error(function() F.rotate_bounding_boxes(torch.zeros(2, 4), "XYZ", {5, 5}, 3) end, "format should be XYXY")
  check_error(function() F.affine_keypoints(torch.zeros(2, 3), {5, 5}, 3, {0, 0}, 1, 0) end, "expected keypoints")
  check_error(function() F.rotate("x", 3) end, "F.rotate: expected a tensor")
end)

test("empty batches and empty box sets pass through", function()
  check_shape(F.rotate(torch.zeros(0, 3, 5, 6), 30), {0, 3, 5, 6})
  local b = tv.BoundingBoxes(torch.zeros(0, 4), {format = "XYXY", canvas_size = {5, 6}})
  check_shape(F.rotate(b, 30, {expand = true}), {0, 4})
  check_shape(F.perspective(b, SP, EP), {0, 4})
end)

test("torch.compile of the functionals with fixed parameters gives the eager result", function()
  local img = gen_image({2, 3, 17, 19}, 10, torch.float32)
  local before = torch.compiler.stats().compiled_calls
  for _, name in ipairs(OP_NAMES) do
    local fn = function(x) return OPS[name](x, {interpolation = "bilinear", fill = 0.5}) end
    -- (the JIT finds tensors among the upvalues of fn itself, not of the functions it calls)
    if name == "elastic" then fn = function(x) return F.elastic(x, D40, {interpolation = "bilinear", fill = 0.5}) end end
    local cf = torch.compile(fn)
    local want = fn(img)
    check_close(cf(img), want, {atol = 1e-5})
    local img2 = gen_image({2, 3, 17, 19}, 11, torch.float32)
    check_close(cf(img2), fn(img2), {atol = 1e-5})
  end
  check(torch.compiler.stats().compiled_calls >= before + #OP_NAMES, "every function was compiled")
end)

-- ---- the transform classes ----

local function flat_of(...)
  local t = table.pack(...)
  return t
end

test("RandomRotation and RandomAffine draw their parameters in torchvision's ranges", function()
  torch.manual_seed(3)
  local img = torch.zeros(3, 20, 30)
  local rr = v2.RandomRotation(15)
  check_eq(rr.degrees, {-15.0, 15.0})
  for _ = 1, 50 do
    local a = rr:make_params(flat_of(img)).angle
    check(a >= -15 and a <= 15)
  end
  local ra = v2.RandomAffine({-5, 10}, {0.2, 0.1}, {0.5, 1.5}, {-3, 3, 4, 8})
  local seen_neg = false
  for _ = 1, 100 do
    local p = ra:make_params(flat_of(img))
    check(p.angle >= -5 and p.angle <= 10)
    check(math.type(p.translate[1]) == "integer" and math.abs(p.translate[1]) <= 6, "tx within 0.2 * 30")
    check(math.type(p.translate[2]) == "integer" and math.abs(p.translate[2]) <= 2, "ty within 0.1 * 20")
    seen_neg = seen_neg or p.translate[1] < 0
    check(p.scale >= 0.5 and p.scale <= 1.5)
    check(p.shear[1] >= -3 and p.shear[1] <= 3 and p.shear[2] >= 4 and p.shear[2] <= 8)
  end
  check(seen_neg, "translations in both directions")
  local p = v2.RandomAffine(0):make_params(flat_of(img))
  check_eq({p.translate, p.scale, p.shear}, {{0, 0}, 1.0, {0.0, 0.0}})
  p = v2.RandomAffine(0, false, false, 7):make_params(flat_of(img))
  check(math.abs(p.shear[1]) <= 7 and p.shear[2] == 0)
  -- everything in one options table
  local ta = v2.RandomAffine{degrees = 10, scale = {0.9, 1.1}, fill = 3}
  check_eq({ta.degrees, ta.scale, ta.fill.others}, {{-10.0, 10.0}, {0.9, 1.1}, 3})
  check_eq(v2.RandomRotation{degrees = {1, 2}, expand = true}.expand, true)
  check_error(function() v2.RandomRotation{expand = true} end, "missing argument 'degrees'")
  check_error(function() v2.RandomRotation(-3) end, "must be positive")
  check_error(function() v2.RandomAffine(3, {0.2, 1.5}) end, "translate values should be in [0, 1]")
  check_error(function() v2.RandomAffine(3, false, {0, 1}) end, "scale values should be positive")
  check_error(function() v2.RandomAffine(3, false, false, {1, 2, 3}) end, "shear should be a number or a list of 2 or 4")
  check_error(function() v2.RandomRotation(3, "bicubic") end, "v2.RandomRotation: interpolation mode 'bicubic'")
  check_error(function() v2.RandomRotation(3, {fill = {Imag = 1}}) end, "fill keys are kind names")
  check_error(function() v2.RandomRotation(3, {expnd = true}) end, "unknown option 'expnd'")
  for _, t in ipairs({v2.RandomRotation(3), v2.RandomAffine(3), v2.RandomPerspective(0.5, 1), v2.ElasticTransform()}) do
    check_error(function() t(torch.zeros(3, 30, 30), tv.Mask(torch.zeros(31, 30))) end, "of different sizes")
  end
end)

test("RandomPerspective moves each corner inward by at most distortion_scale of half the size", function()
  torch.manual_seed(4)
  local img = torch.zeros(3, 21, 30)
  local t = v2.RandomPerspective(0.6, 1.0)
  for _ = 1, 30 do
    local p = t:make_params(flat_of(img))
    local ep = p.endpoints
    local bw, bh = math.floor(0.6 * 15) + 1, math.floor(0.6 * 10) + 1
    check(ep[1][1] >= 0 and ep[1][1] < bw and ep[1][2] >= 0 and ep[1][2] < bh)
    check(ep[2][1] >= 30 - bw and ep[2][1] < 30 and ep[2][2] < bh)
    check(ep[3][1] >= 30 - bw and ep[3][2] >= 21 - bh and ep[3][2] < 21)
    check(ep[4][1] < bw and ep[4][2] >= 21 - bh)
    check_eq(p.startpoints, {{0, 0}, {29, 0}, {29, 20}, {0, 20}})
  end
  local x = gen_image({3, 21, 30}, 12, torch.float32)
  check_eq(v2.RandomPerspective(0.5, 0)(x), x) -- p = 0: unchanged
  check_error(function() v2.RandomPerspective(1.5) end, "distortion_scale should be a number in [0, 1]")
end)

test("ElasticTransform's displacement is blurred uniform noise scaled by alpha / size", function()
  local img = torch.zeros(3, 30, 26)
  -- no blur: uniform in [-alpha / H, alpha / H) and [-alpha / W, alpha / W)
  local t = v2.ElasticTransform(8, 0)
  local d = t:make_params(flat_of(img)).displacement
  check_shape(d, {1, 30, 26, 2})
  check(d:select(4, 1):abs():max():item() <= 8 / 30 and d:select(4, 2):abs():max():item() <= 8 / 26)
  check(d:select(4, 1):abs():max():item() > 0.2)
  -- blurred: the same noise through the 2-D gaussian of torchvision's definition
  torch.manual_seed(5)
  local e = v2.ElasticTransform({alpha = 10, sigma = 1.5}):make_params(flat_of(img)).displacement
  torch.manual_seed(5)
  local k = math.floor(8 * 1.5 + 1)
  k = k % 2 == 0 and k + 1 or k
  local w = {}
  local s = 0
  for i = 1, k do
    local x = i - 1 - (k - 1) / 2
    w[i] = math.exp(-0.5 * (x / 1.5) ^ 2)
    s = s + w[i]
  end
  local k1 = torch.tensor(w) / s
  local k2 = k1:view(k, 1) * k1:view(1, k)
  local function blurred(noise, scale)
    local padded = torch.nn.functional.pad(noise, {k // 2, k // 2, k // 2, k // 2}, "reflect")
    return torch.nn.functional.conv2d(padded, k2:view(1, 1, k, k)) * scale
  end
  local nx = torch.rand(1, 1, 30, 26) * 2 - 1
  local wantx = blurred(nx, 10 / 30)
  local ny = torch.rand(1, 1, 30, 26) * 2 - 1
  local wanty = blurred(ny, 10 / 26)
  check_close(e:select(4, 1), wantx:view(1, 30, 26), {atol = 1e-6})
  check_close(e:select(4, 2), wanty:view(1, 30, 26), {atol = 1e-6})
  check_error(function() v2.ElasticTransform(50, 5)(torch.zeros(3, 10, 10)) end, "needs an image larger than 10x10")
end)

test("one draw moves the image, its mask and its boxes together", function()
  local img = tv.Image(gen_image({3, 17, 19}, 13, torch.float32))
  local mask = tv.Mask(gen_image({17, 19}, 14, torch.uint8) % 5)
  local boxes = tv.BoundingBoxes(BOXES_F, {format = "XYXY", canvas_size = {17, 19}})
  local kp = tv.KeyPoints(POINTS, {canvas_size = {17, 19}})
  for _, t in ipairs({v2.RandomRotation(40, "bilinear"), v2.RandomAffine(30, {0.1, 0.1}, {0.8, 1.2}, 10),
    v2.RandomPerspective(0.5, 1, "bilinear", {fill = {Image = 0.5, Mask = 7}}), v2.ElasticTransform(30, 3)}) do
    torch.manual_seed(6)
    local out = t({image = img, target = {mask = mask, boxes = boxes, points = kp, label = 3}})
    torch.manual_seed(6)
    local p = t:make_params(flat_of(img, mask, boxes, kp))
    local name = t:_get_name()
    local fill = name == "RandomPerspective" and 0.5 or 0
    local mfill = name == "RandomPerspective" and 7 or 0
    local want_img, want_mask, want_boxes, want_kp
    if name == "RandomRotation" then
      want_img = F.rotate(img, p.angle, "bilinear", false, false, fill)
      want_mask, want_boxes, want_kp = F.rotate(mask, p.angle), F.rotate(boxes, p.angle), F.rotate(kp, p.angle)
    elseif name == "RandomAffine" then
      local args = {p.angle, p.translate, p.scale, p.shear}
      want_img = F.affine(img, args[1], args[2], args[3], args[4], "nearest", fill)
      want_mask = F.affine(mask, table.unpack(args))
      want_boxes, want_kp = F.affine(boxes, table.unpack(args)), F.affine(kp, table.unpack(args))
    elseif name == "RandomPerspective" then
      want_img = F.perspective(img, p.startpoints, p.endpoints, "bilinear", fill)
      want_mask = F.perspective(mask, p.startpoints, p.endpoints, {fill = mfill})
      want_boxes, want_kp = F.perspective(boxes, p.startpoints, p.endpoints), F.perspective(kp, p.startpoints, p.endpoints)
    else
      want_img = F.elastic(img, p.displacement, "bilinear", fill)
      want_mask = F.elastic(mask, p.displacement, {fill = mfill})
      want_boxes, want_kp = F.elastic(boxes, p.displacement), F.elastic(kp, p.displacement)
    end
    check_eq(out.target.label, 3)
    check_eq(tv.kind(out.image), "Image")
    check_close(out.image, want_img, {atol = 1e-6})
    check_eq(out.target.mask:totable(), want_mask:totable(), name)
    check_close(out.target.boxes, want_boxes, {atol = 1e-5})
    check_eq(out.target.boxes.canvas_size, {17, 19})
    check_close(out.target.points, want_kp, {atol = 1e-5})
  end
  -- expand grows the canvas of image, mask and boxes alike
  local out_img, out_mask, out_boxes = v2.RandomRotation({50, 50}, {expand = true})(img, mask, boxes)
  check_eq({out_img:size(2), out_img:size(3)}, {out_mask:size(1), out_mask:size(2)})
  check(math.abs(out_boxes.canvas_size[1] - out_img:size(2)) <= 1)
end)

test("without per_sample a batch shares one draw", function()
  local batch = gen_image({3, 3, 17, 19}, 15, torch.float32)
  torch.manual_seed(7)
  local t = v2.RandomAffine(30, {0.1, 0.1}, {0.8, 1.2}, 10, "bilinear")
  local out = t(batch)
  torch.manual_seed(7)
  local p = t:make_params(flat_of(batch))
  for i = 1, 3 do
    check_close(out[i], F.affine(batch[i], p.angle, p.translate, p.scale, p.shear, "bilinear", 0), {atol = 1e-6})
  end
end)

if has_v2 then
  test("torchvision 0.26 reference: transforms with fixed draws on a sample", function()
    local img = tv.Image(gen_image({3, 17, 19}, 50, torch.float32))
    local mask = tv.Mask(gen_image({17, 19}, 51, torch.uint8) % 5)
    local boxes = tv.BoundingBoxes(BOXES_F, {format = "XYXY", canvas_size = {17, 19}})
    local ts = {
      sample_random_affine = v2.RandomAffine({20, 20}, false, {1.1, 1.1}, {5, 5, 3, 3}, "bilinear",
        {fill = {Image = 0.5, Mask = 9}}),
      sample_random_rotation = v2.RandomRotation({30, 30}, "bilinear", true),
    }
    for name, t in pairs(ts) do
      local c = R2[name]
      local oi, om, ob = t(img, mask, boxes)
      check_shape(oi, c.image_shape)
      check_close(oi:double(), c.image, {atol = 1e-5})
      check_shape(om, c.mask_shape)
      local diff = (om:double() - torch.tensor(c.mask, {dtype = torch.float64}):view(c.mask_shape)):abs()
      check(diff:gt(0):double():mean():item() < 0.01)
      check_close(ob:double(), c.boxes, {atol = 1e-4})
      check_eq(ob.canvas_size, c.canvas)
    end
  end)
end

-- ---- per_sample ----

test("per_sample: each image of a batch gets its own draw, equal to the functional with it", function()
  local batch = gen_image({4, 3, 17, 19}, 16, torch.float32)
  local masks = tv.Mask(gen_image({4, 17, 19}, 17, torch.uint8) % 5)
  local cases = {
    v2.RandomRotation(40, "bilinear", {fill = {tensor = {0.2, 0.4, 0.6}, Mask = 3}, per_sample = true}),
    v2.RandomRotation(40, {center = {3, 5}, per_sample = true}),
    v2.RandomAffine(30, {0.2, 0.1}, {0.7, 1.3}, {-5, 5, -8, 8}, "bilinear", {fill = 0.5, per_sample = true}),
    v2.RandomPerspective(0.6, 0.5, "bilinear", {per_sample = true}),
    v2.ElasticTransform(20, 2, {per_sample = true}),
  }
  for ci, t in ipairs(cases) do
    torch.manual_seed(8 + ci)
    local out_img, out_mask = t(batch, masks)
    torch.manual_seed(8 + ci)
    local p = t:make_params(flat_of(batch, masks))
    check(p.batch and p.n == 4)
    local name = t:_get_name()
    local distinct = false
    for i = 1, 4 do
      local x, m = batch[i], masks[i]
      local get_fill = require("torch.vision.transforms.v2._warp")._get_fill
      local fill, mfill = get_fill(t.fill, batch), get_fill(t.fill, masks)
      local wi, wm
      if name == "RandomRotation" then
        local a = p.angle[i]:item()
        wi = F.rotate(x, a, t.interpolation, false, t.center, fill)
        wm = F.rotate_mask(m, a, false, t.center, mfill)
      elseif name == "RandomAffine" then
        local args = {p.angle[i]:item(), {p.tx[i]:item(), p.ty[i]:item()}, p.scale[i]:item(),
          {p.shx[i]:item(), p.shy[i]:item()}}
        wi = F.affine(x, args[1], args[2], args[3], args[4], t.interpolation, fill)
        wm = F.affine_mask(m, args[1], args[2], args[3], args[4], mfill)
        check(math.abs(args[2][1]) <= 0.2 * 19 + 0.5 and args[2][1] == math.floor(args[2][1]))
      elseif name == "RandomPerspective" then
        local c = p.coefficients[i]:totable()
        if p.apply[i]:item() then
          wi = F.perspective(x, false, false, t.interpolation, fill, c)
          wm = F.perspective_mask(m, false, false, mfill, c)
        else
          wi, wm = x, m
        end
      else
        local d = p.displacement:narrow(1, i, 1)
        wi = F.elastic(x, d, t.interpolation, fill)
        wm = F.elastic_mask(m, d, mfill)
      end
      check_close(out_img[i], wi, {atol = 1e-5})
      local mdiff = out_mask[i]:ne(wm):double():mean():item()
      check(mdiff < 0.01, name .. ": mask differs on " .. mdiff * 100 .. "% of pixels")
      if i > 1 and (out_img[i] - out_img[1]):abs():max():item() > 0 then distinct = true end
    end
    check_eq(tv.kind(out_mask), "Mask")
    check(distinct or name == "RandomPerspective", name .. ": the draws differ between images")
  end
end)

test("per_sample: uint8 batches, videos [N, T, C, H, W] and the probability per image", function()
  local batch = gen_image({3, 3, 17, 19}, 18, torch.uint8)
  local t = v2.RandomAffine(25, {per_sample = true})
  torch.manual_seed(20)
  local out = t(batch)
  torch.manual_seed(20)
  local p = t:make_params(flat_of(batch))
  for i = 1, 3 do
    local want = F.affine(batch[i], p.angle[i]:item(), {0, 0}, 1, 0, "nearest", 0)
    check(out[i]:ne(want):double():mean():item() < 0.01)
  end
  local video = tv.Video(gen_image({2, 4, 3, 11, 13}, 19, torch.float32))
  local rv = v2.RandomRotation(30, "bilinear", {per_sample = true})
  torch.manual_seed(21)
  local ov = rv(video)
  torch.manual_seed(21)
  local pv = rv:make_params(flat_of(video))
  check_eq(tv.kind(ov), "Video")
  for i = 1, 2 do check_close(ov[i], F.rotate(video[i], pv.angle[i]:item(), "bilinear", false, false, 0), {atol = 1e-5}) end
  -- p = 0 leaves every image, p = 1 none
  local imgs = gen_image({5, 3, 17, 19}, 22, torch.float32)
  check_close(v2.RandomPerspective(0.5, 0, {per_sample = true})(imgs), imgs)
  local moved = v2.RandomPerspective(0.5, 1, {per_sample = true})(imgs)
  for i = 1, 5 do check((moved[i] - imgs[i]):abs():max():item() > 0) end
end)

test("per_sample: unsupported inputs are clear errors", function()
  local batch = torch.zeros(2, 3, 8, 8)
  local boxes = tv.BoundingBoxes({{1, 1, 3, 3}}, {format = "XYXY", canvas_size = {8, 8}})
  check_error(function() v2.RandomRotation(10, {per_sample = true})(batch, boxes) end,
    "v2.RandomRotation: per_sample=true supports batches of images, videos, masks and keypoints, not BoundingBoxes")
  check_error(function() v2.RandomAffine(10, {per_sample = true})(torch.zeros(3, 8, 8)) end,
    "per_sample=true needs a batch [N, ...]")
  check_error(function() v2.RandomRotation(10, {expand = true, per_sample = true}) end, "needs expand=false")
  check_error(function() v2.RandomAffine(10, {per_sample = true})(batch, tv.Mask(torch.zeros(3, 8, 8))) end,
    "the batch holds 2 and 3 samples")
end)

-- ---- the two sampling paths ----

test("the CPU's C pass and the engine-op path (CUDA, autograd, compile) give the same values", function()
  local S = require "torch.vision.transforms.v2.functional._warp_sample"
  local function both(fn)
    S._use_c = true
    local a = fn()
    S._use_c = false
    local ok, b = pcall(fn)
    S._use_c = true
    if not ok then error(b, 0) end
    return a, b
  end
  for _, dt in ipairs({torch.uint8, torch.float32, torch.float64, torch.float16}) do
    local x = gen_image({2, 3, 17, 19}, 23, dt)
    for _, name in ipairs(OP_NAMES) do
      for _, o in ipairs({{}, {interpolation = "bilinear"}, {interpolation = "bilinear", fill = {9, 0.5, 200}},
        {interpolation = "nearest", fill = 3}}) do
        local a, b = both(function() return OPS[name](x, {interpolation = o.interpolation, fill = o.fill}) end)
        check_eq(a.dtype, b.dtype)
        local diff = (a:double() - b:double()):abs()
        -- (float: relative to the values blended, up to the fill of 200)
        local tol = dt == torch.uint8 and 1 or dt == torch.float16 and 0.2 or 1e-5 * (1 + (o.fill and 200 or 0))
        check(diff:gt(tol):double():mean():item() < 0.005, name .. " " .. tostring(dt) .. ": paths differ")
      end
    end
  end
  -- per_sample batches go through both paths too
  local batch = gen_image({3, 3, 17, 19}, 24, torch.float32)
  for _, t in ipairs({v2.RandomAffine(30, {0.1, 0.1}, {0.8, 1.2}, 10, "bilinear", {per_sample = true}),
    v2.RandomPerspective(0.5, 1, {fill = 0.3, per_sample = true})}) do
    local a, b = both(function() torch.manual_seed(9); return t(batch) end)
    check_close(a, b, {atol = 1e-5})
  end
end)

-- random_warps(seed): a list of {name, fn(x)} warps with random parameters,
-- fills and modes (affine, rotate with and without expand, perspective,
-- elastic)
local function random_warps(seed)
  torch.manual_seed(seed)
  local function u(a, b) return a + (b - a) * torch.rand(1):item() end
  local list = {}
  for k = 1, 6 do
    local o = {interpolation = k % 2 == 0 and "bilinear" or "nearest"}
    if k % 3 ~= 0 then o.fill = k % 3 == 1 and {u(0, 255), u(0, 1), u(0, 9)} or u(0, 200) end
    local ang, tr, sc, sh = u(-180, 180), {u(-10, 10), u(-10, 10)}, u(0.5, 1.5), {u(-20, 20), u(-20, 20)}
    local ep = {{u(0, 6), u(0, 6)}, {u(20, 30), u(0, 6)}, {u(20, 30), u(20, 30)}, {u(0, 6), u(20, 30)}}
    list[#list + 1] = {"affine", function(x) return F.affine(x, ang, tr, sc, sh, o.interpolation, o.fill) end}
    list[#list + 1] = {"rotate", function(x) return F.rotate(x, ang, {interpolation = o.interpolation,
      expand = k > 3, fill = o.fill}) end}
    list[#list + 1] = {"perspective", function(x) return F.perspective(x, SP, ep, o) end}
    local amp = u(0.05, 0.5)
    list[#list + 1] = {"elastic", function(x) return F.elastic(x, gen_disp(x:size(-2), x:size(-1), 41, amp), o) end}
  end
  return list
end

test("the C pass's vector path gives the values of its scalar reference loop", function()
  local S = require "torch.vision.transforms.v2.functional._warp_sample"
  for _, dt in ipairs({torch.uint8, torch.float32}) do
    for _, shape in ipairs({{2, 3, 40, 40}, {3, 3, 33, 47}}) do
      local x = gen_image(shape, 31, dt)
      for _, w in ipairs(random_warps(7)) do
        local a = w[2](x)
        S._c_ref = true
        local ok, b = pcall(w[2], x)
        S._c_ref = false
        if not ok then error(b, 0) end
        -- (both do the same float32 operations in the same order: equal to the
        -- bit with GCC 12 at -O2. The sanitizer build (-O1, MOONTORCH_ASAN)
        -- fuses multiply-adds differently in the two files: a position moved
        -- by an ulp can move a border tap of small weight in or out, measured
        -- up to 2e-3 on values in [0, 1]; a wrong tap or weight moves far
        -- more. The fast path itself is held to torchvision's values above.)
        local diff = (a:double() - b:double()):abs():max():item()
        local range = math.max(1, x:double():abs():max():item())
        local tol = os.getenv("MOONTORCH_ASAN") and (dt == torch.uint8 and 2 or 1e-2 * range)
          or (dt == torch.uint8 and 1 or 1e-5 * range)
        check(diff <= tol, w[1] .. " " .. tostring(dt) .. ": the paths differ by up to " .. diff)
      end
    end
  end
end)

test("a batch is sampled as its images one by one", function()
  for _, dt in ipairs({torch.uint8, torch.float32, torch.float64}) do
    local x = gen_image({4, 3, 29, 37}, 32, dt)
    for _, w in ipairs(random_warps(8)) do
      local all = w[2](x)
      for i = 1, 4 do check_eq(all[i]:totable(), w[2](x[i]):totable(), w[1] .. " " .. tostring(dt)) end
    end
  end
end)

test("gradients flow through the image warps (finite differences)", function()
  local x = gen_image({1, 5, 6}, 25, torch.float64):requires_grad_()
  local fns = {
    function(t) return F.affine(t, 20, {0.5, -1}, 1.1, {5, 0}, "bilinear", 0.3) end,
    function(t) return F.perspective(t, {{0, 0}, {5, 0}, {5, 4}, {0, 4}}, {{1, 0}, {5, 1}, {4, 4}, {0, 3}}) end,
  }
  for _, fn in ipairs(fns) do
    local w = gen_image({1, 5, 6}, 26, torch.float64)
    local y = (fn(x) * w):sum()
    local g = torch.autograd.grad({y}, {x})[1]
    for _, k in ipairs({8, 15, 22}) do
      local xp, xm = x:detach():clone(), x:detach():clone()
      xp:view(-1)[k] = xp:view(-1)[k]:item() + 1e-6
      xm:view(-1)[k] = xm:view(-1)[k]:item() - 1e-6
      local fd = ((fn(xp) * w):sum():item() - (fn(xm) * w):sum():item()) / 2e-6
      check(math.abs(fd - g:view(-1)[k]:item()) < 1e-5, "gradient " .. k)
    end
  end
end)

test("per_sample: keypoints [N, K, 2] move with their own image's draw", function()
  local batch = gen_image({3, 3, 17, 19}, 27, torch.float32)
  local pts = torch.tensor({POINTS, POINTS, POINTS}, {dtype = torch.float64})
  local kp = tv.KeyPoints(pts, {canvas_size = {17, 19}})
  local ts = {v2.RandomRotation(40, {per_sample = true}), v2.RandomRotation(40, {center = {3, 4}, per_sample = true}),
    v2.RandomAffine(30, {0.2, 0.1}, {0.7, 1.3}, {-5, 5, -8, 8}, {per_sample = true}),
    v2.RandomPerspective(0.6, 0.5, {per_sample = true}), v2.ElasticTransform(20, 2, {per_sample = true})}
  for _, t in ipairs(ts) do
    torch.manual_seed(30)
    local _, out = t(batch, kp)
    torch.manual_seed(30)
    local p = t:make_params(flat_of(batch, kp))
    check_eq(tv.kind(out), "KeyPoints")
    check_shape(out, {3, 5, 2})
    local name = t:_get_name()
    for i = 1, 3 do
      local ki = tv.KeyPoints(pts[i], {canvas_size = {17, 19}})
      local want
      if name == "RandomRotation" then
        want = F.rotate(ki, p.angle[i]:item(), {center = t.center})
      elseif name == "RandomAffine" then
        want = F.affine(ki, p.angle[i]:item(), {p.tx[i]:item(), p.ty[i]:item()}, p.scale[i]:item(),
          {p.shx[i]:item(), p.shy[i]:item()})
      elseif name == "RandomPerspective" then
        want = p.apply[i]:item() and F.perspective(ki, false, false, {coefficients = p.coefficients[i]:totable()}) or ki
      else
        want = F.elastic(ki, p.displacement:narrow(1, i, 1))
      end
      check_close(out[i], want, {atol = 1e-4})
    end
  end
end)
