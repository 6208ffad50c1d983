-- tests/domains/vision/test_tv_tensors.lua -- torch.vision.tv_tensors
-- (kinds and metadata as attributes, wrap, printing) and the v2 transform
-- machinery (domains/vision/transforms/v2/: sample flattening, which leaves
-- a transform touches, one draw per sample, the containers), checked
-- against torchvision's documented rules.

local tv = torch.vision.tv_tensors
local v2 = torch.vision.transforms.v2
local U = require "torch.vision.transforms.v2._utils"

test("tv_tensors carry their kind and metadata; ops give plain tensors", function()
  local b = tv.BoundingBoxes({{1, 2, 3, 4}, {0, 0, 5, 5}}, {format = "xywh", canvas_size = {10, 12}})
  check_eq(tv.kind(b), "BoundingBoxes")
  check_eq(b.format, "XYWH")
  check_eq(b.canvas_size, {10, 12})
  check_shape(b, {2, 4})
  check_eq(tv.kind(b + 1), nil)
  check(tv.is_pure_tensor(b * 2) and not tv.is_pure_tensor(b))
  local one = tv.BoundingBoxes({1, 2, 3, 4}, {format = tv.BoundingBoxFormat.CXCYWH, canvas_size = {4, 4}})
  check_shape(one, {1, 4})
  local img = tv.Image(torch.zeros(5, 6))
  check_shape(img, {1, 5, 6})
  check_eq(tv.kind(img), "Image")
  check_shape(tv.Mask(torch.zeros(5, 6)), {5, 6})
  check_shape(tv.Video(torch.zeros(2, 3, 5, 6)), {2, 3, 5, 6})
  check_shape(tv.KeyPoints({3, 4}, {canvas_size = {8, 8}}), {1, 2})
  check_eq(tostring(b):match("^BoundingBoxes%(") ~= nil, true)
  check(tostring(b):find("format=XYWH, canvas_size={10, 12}", 1, true))
end)

test("tv_tensors view their data and convert on request", function()
  local x = torch.zeros(2, 3, 4)
  local img = tv.Image(x)
  img[1][1][1] = 7
  check_eq(x[1][1][1]:item(), 7)
  check_eq(tv.kind(x), nil) -- the source stays plain
  local f = tv.Image(torch.zeros(3, 2, 2, {dtype = torch.uint8}), {dtype = torch.float32})
  check_eq(f.dtype, torch.float32)
  local w = tv.wrap(torch.ones(1, 4), {like = tv.BoundingBoxes({0, 0, 1, 1}, {format = "XYXY", canvas_size = {3, 3}}),
    canvas_size = {6, 6}})
  check_eq(w.format, "XYXY")
  check_eq(w.canvas_size, {6, 6})
  check_eq(tv.kind(tv.wrap(torch.ones(2), {like = torch.ones(2)})), nil)
end)

test("tv_tensors reject bad input", function()
  check_error(function() tv.BoundingBoxes({{1, 2, 3}}, {format = "XYXY", canvas_size = {4, 4}}) end, "N x 4")
  check_error(function() tv.BoundingBoxes({1, 2, 3, 4}, {format = "XYZ", canvas_size = {4, 4}}) end,
    "format must be one of")
  check_error(function() tv.BoundingBoxes({1, 2, 3, 4}, {format = "XYXY"}) end, "required")
  check_error(function() tv.BoundingBoxes({1, 2, 3, 4}, {format = "XYXY", canvas_size = {4.5, 4}}) end,
    "canvas_size")
  check_error(function() tv.Image(torch.zeros(3)) end, "at least 2 dims")
  check_error(function() tv.Image(torch.zeros(3, 3), {dtyp = torch.float32}) end, "dtype")
  check_error(function() tv.KeyPoints(torch.zeros(3, 3), {canvas_size = {4, 4}}) end, "[..., 2]")
end)

test("samples flatten to leaves and rebuild", function()
  local img, lbl = torch.zeros(1, 2, 2), torch.tensor({3})
  local sample = {img, {boxes = lbl, name = "x", list = {1, 2}}, 5}
  local flat, spec = U.flatten(sample)
  check_eq(flat.n, 6)
  check(flat[1] == img)
  local out = U.unflatten(flat, spec)
  check(out[1] == img and out[2].boxes == lbl and out[2].name == "x" and out[3] == 5)
  check_eq(out[2].list, {1, 2})
end)

test("the first plain tensor is the image unless the sample holds an Image", function()
  local a, b = torch.zeros(1, 2, 2), torch.zeros(1, 2, 2)
  local all = {Image = true, Video = true, Mask = true, BoundingBoxes = true, KeyPoints = true, tensor = true}
  local flat = U.flatten({a, b})
  check_eq(U.needs_transform(flat, all), {true, false})
  flat = U.flatten({a, tv.Image(b)})
  check_eq(U.needs_transform(flat, all), {false, true})
  flat = U.flatten({a, tv.Mask(b)})
  check_eq(U.needs_transform(flat, {Mask = true}), {false, true})
end)

test("query_size finds the common size and refuses mixed ones", function()
  local flat = U.flatten({tv.Image(torch.zeros(3, 4, 5)), tv.BoundingBoxes({0, 0, 1, 1},
    {format = "XYXY", canvas_size = {4, 5}}), tv.Mask(torch.zeros(4, 5))})
  check_eq(U.query_size(flat, "T"), {4, 5})
  check_eq(U.query_chw(flat, "T"), {3, 4, 5})
  flat = U.flatten({tv.Image(torch.zeros(3, 4, 5)), tv.Mask(torch.zeros(4, 6))})
  check_error(function() U.query_size(flat, "T") end, "different sizes")
end)

-- A transform that records its draws: one make_params per call, applied
-- to each leaf it touches.
local Count = v2.Transform:extend("Count")
function Count:__init() self.draws = 0 end
function Count:make_params(flat)
  self.draws = self.draws + 1
  return {add = self.draws, n = flat.n}
end
function Count:transform(inpt, params) return inpt + params.add end

test("one draw per call, applied to every handled leaf; structure kept", function()
  local t = Count()
  local img, mask = tv.Image(torch.zeros(1, 2, 2)), tv.Mask(torch.zeros(2, 2))
  local out = t({image = img, mask = mask, label = 3})
  check_eq(t.draws, 1)
  check_eq(out.image:sum():item(), 4)
  check_eq(out.mask:sum():item(), 4)
  check_eq(out.label, 3)
  local x, y = t(torch.zeros(2), torch.zeros(3)) -- several arguments: a tuple, the first plain tensor only
  check_eq(t.draws, 2)
  check_eq(x:sum():item(), 4)
  check_eq(y:sum():item(), 0)
end)

test("Compose, RandomApply, RandomChoice, RandomOrder", function()
  local dbl = function(x) return x * 2 end
  local inc = function(x) return x + 1 end
  check_close(v2.Compose({dbl, inc})(torch.ones(2)), {3, 3})
  check_close(v2.Compose({inc, dbl})(torch.ones(2)), {4, 4})
  local a, b = v2.Compose({function(x, y) return x * 2, y .. "!" end})(torch.ones(1), "l")
  check_close(a, {2})
  check_eq(b, "l!")
  check_close(v2.RandomApply({dbl}, 1)(torch.ones(1)), {2})
  check_close(v2.RandomApply({dbl}, 0)(torch.ones(1)), {1})
  check_close(v2.RandomChoice({dbl, inc}, {0, 1})(torch.ones(1)), {2})
  check_close(v2.RandomChoice({dbl, inc}, {1, 0})(torch.ones(1)), {2})
  -- RandomChoice with equal weights picks both over many draws
  torch.manual_seed(0)
  local seen, add5 = {}, function(x) return x + 5 end
  for _ = 1, 40 do seen[v2.RandomChoice({dbl, add5})(torch.ones(1)):item()] = true end
  check(seen[2] and seen[6])
  -- RandomOrder: both orders appear
  local orders = {}
  for _ = 1, 40 do orders[v2.RandomOrder({dbl, inc})(torch.ones(1)):item()] = true end
  check(orders[3] and orders[4])
  -- RandomApply's p is a frequency
  local hits = 0
  for _ = 1, 400 do hits = hits + (v2.RandomApply({dbl}, 0.25)(torch.ones(1)):item() == 2 and 1 or 0) end
  check(hits > 60 and hits < 140, "RandomApply p=0.25 applied " .. hits .. " of 400 times")
  check_error(function() v2.Compose({3}) end, "transforms[1]")
  check_error(function() v2.RandomApply({dbl}, 2) end, "p should be")
  check_error(function() v2.RandomChoice({dbl, inc}, {1}) end, "does not match")
end)
