-- tests/cuda/test_vision_warp.lua -- torch.vision.transforms.v2's warps
-- (affine, rotate, perspective, elastic and their transform classes, with
-- and without per_sample) on CUDA against the same calls on the CPU, for
-- images (uint8, float32, float64, float16), masks, boxes and keypoints.
-- Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU warp tests skipped\n")
  return
end
torch.set_default_device("cpu") -- inputs and draws are made on the CPU, copies sent up

local tv = torch.vision.tv_tensors
local v2 = torch.vision.transforms.v2
local F = v2.functional

local function image(shape, dt)
  torch.manual_seed(1)
  local x = torch.rand(shape)
  if dt == torch.uint8 then return (x * 255):round():to(torch.uint8) end
  return x:to(dt)
end

-- same(g, c, dt, what): a CUDA result equal to the CPU's (uint8: within one
-- level on < 1% of the pixels; nearest sampling may break x.5 ties the
-- other way on a few pixels)
local function same(g, c, dt, what)
  check(g.is_cuda, what .. ": on cuda")
  check_eq(g.dtype, c.dtype, what .. ": dtype")
  check_eq(g:size(), c:size(), what .. ": shape")
  local diff = (g:cpu():double() - c:double()):abs()
  if dt == torch.uint8 or dt == torch.int64 then
    check(diff:gt(1):double():mean():item() < 0.01, what .. ": values differ")
  else
    local tol = dt == torch.float16 and 2e-2 or 1e-4
    check(diff:gt(tol):double():mean():item() < 0.01, what .. ": max difference " .. diff:max():item())
  end
end

-- cu(x): x on CUDA, keeping its tv_tensor kind and metadata
local function cu(x) return tv.wrap(x:cuda(), {like = x}) end

local SP = {{0, 0}, {30, 0}, {30, 22}, {0, 22}}
local EP = {{3, 1}, {28, 4}, {26, 21}, {2, 19}}
local D = (torch.rand(1, 23, 31, 2) - 0.5) * 0.2
local OPS = {
  affine = function(x, o) return F.affine(x, 30, {2, -1}, 0.9, {10, 5}, o) end,
  rotate = function(x, o) return F.rotate(x, 37, o) end,
  rotate_expand = function(x, o) o = o or {}; o.expand = true; return F.rotate(x, 37, o) end,
  rotate_90 = function(x, o) return F.rotate(x, 90, o) end,
  perspective = function(x, o) return F.perspective(x, SP, EP, o) end,
  elastic = function(x, o) return F.elastic(x, D, o) end,
}
local NAMES = {"affine", "rotate", "rotate_expand", "rotate_90", "perspective", "elastic"}

test("warps of images on CUDA equal the CPU's", function()
  for _, dt in ipairs({torch.uint8, torch.float32, torch.float64, torch.float16}) do
    local x = image({2, 3, 23, 31}, dt)
    for _, name in ipairs(NAMES) do
      for _, o in ipairs({{}, {interpolation = "bilinear", fill = {0.2, 0.5, 0.7}}, {fill = 3}}) do
        local c = OPS[name](x, {interpolation = o.interpolation, fill = o.fill})
        local g = OPS[name](x:cuda(), {interpolation = o.interpolation, fill = o.fill})
        same(g, c, dt, name .. " " .. tostring(dt))
      end
    end
  end
end)

test("masks, boxes and keypoints on CUDA equal the CPU's", function()
  local mask = tv.Mask((image({23, 31}, torch.float32) * 5):floor():to(torch.uint8))
  local boxes = tv.BoundingBoxes({{1, 2, 9, 11}, {0, 0, 31, 23}, {5.5, 3.25, 12, 14.5}},
    {format = "XYXY", canvas_size = {23, 31}})
  local ib = tv.BoundingBoxes({{1, 2, 8, 9}, {12, 11, 3, 4}}, {format = "XYWH", canvas_size = {23, 31}})
  local kp = tv.KeyPoints({{0, 0}, {30, 22}, {4.5, 7.25}}, {canvas_size = {23, 31}})
  for _, name in ipairs(NAMES) do
    for _, x in ipairs({mask, boxes, ib, kp}) do
      local c = OPS[name](x)
      local g = OPS[name](cu(x))
      check_eq(tv.kind(g), tv.kind(x))
      same(g, c, x.dtype, name .. " " .. tv.kind(x))
      if c.canvas_size then check_eq(g.canvas_size, c.canvas_size) end
    end
  end
end)

test("transform classes on CUDA: one draw, and per_sample batches, equal the CPU's", function()
  local batch = image({4, 3, 23, 31}, torch.float32)
  local masks = tv.Mask((image({4, 23, 31}, torch.float32) * 5):floor():to(torch.uint8))
  local ts = {
    function(ps) return v2.RandomRotation(40, "bilinear", {per_sample = ps}) end,
    function(ps) return v2.RandomAffine(30, {0.1, 0.1}, {0.8, 1.2}, 10, "bilinear", {fill = 0.5, per_sample = ps}) end,
    function(ps) return v2.RandomPerspective(0.5, 0.7, {per_sample = ps}) end,
    function(ps) return v2.ElasticTransform(20, 2, {per_sample = ps}) end,
  }
  for _, mk in ipairs(ts) do
    for _, ps in ipairs({false, true}) do
      local t = mk(ps)
      torch.manual_seed(5)
      local ci, cm = t(batch, masks)
      torch.manual_seed(5)
      local gi, gm = t(batch:cuda(), cu(masks))
      same(gi, ci, torch.float32, t:_get_name() .. " image")
      same(gm, cm, torch.uint8, t:_get_name() .. " mask")
    end
  end
end)

test("compiled warps on CUDA equal eager ones", function()
  local x = image({2, 3, 23, 31}, torch.float32):cuda()
  for _, name in ipairs({"affine", "rotate", "perspective"}) do
    local fn = function(y) return OPS[name](y, {interpolation = "bilinear", fill = 0.5}) end
    local cf = torch.compile(fn)
    cf(x)
    same(cf(x), fn(x):cpu(), torch.float32, "compiled " .. name)
  end
end)
