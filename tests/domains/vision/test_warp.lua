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
