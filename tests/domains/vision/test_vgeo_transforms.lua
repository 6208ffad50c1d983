-- tests/domains/vision/test_vgeo_transforms.lua -- the geometry transform
-- classes of torch.vision.transforms.v2 (resize, crops, pads, flips, box
-- and detection transforms): drawn parameters within torchvision's ranges,
-- one draw applied jointly to image, mask and boxes, p = 0 / 1, batches,
-- per_sample draws against per-image functionals, and the errors.

local v2 = torch.vision.transforms.v2
local F = v2.functional
local tv = torch.vision.tv_tensors

-- an image whose pixel (y, x) holds y * W + x in every channel (float64)
local function coords(c, h, w)
  return torch.arange(0, h * w, {dtype = torch.float64}):reshape(1, h, w):expand(c, h, w):contiguous()
end

test("RandomResizedCrop: drawn crops lie in the canvas with area and aspect in range", function()
  local t = v2.RandomResizedCrop(8, {scale = {0.2, 0.6}, ratio = {0.5, 2.0}})
  torch.manual_seed(3)
  for _ = 1, 200 do
    local p = t:_draw(40, 60)
    check(p.top >= 0 and p.left >= 0 and p.top + p.height <= 40 and p.left + p.width <= 60, "inside")
    local area = p.height * p.width / (40 * 60)
    check(area > 0.2 * 0.8 and area < 0.6 * 1.25, "area " .. area)
    local ar = p.width / p.height
    check(ar > 0.5 * 0.8 and ar < 2.0 * 1.25, "aspect " .. ar)
  end
  -- no draw fits (a tall strip with wide ratios): the central fallback crop
  local f = v2.RandomResizedCrop(4, {scale = {0.9, 1.0}, ratio = {4.0, 5.0}})
  local p = f:_draw(100, 10)
  check_eq({p.top, p.left, p.height, p.width}, {49, 0, 2, 10})
end)

test("RandomResizedCrop applies one draw to image, mask and boxes", function()
  local img = tv.Image(coords(2, 30, 40))
  local mask = tv.Mask(coords(1, 30, 40)[1]:long())
  local boxes = tv.BoundingBoxes({{4, 6, 20, 18}}, {format = "XYXY", canvas_size = {30, 40}, dtype = torch.float64})
  local t = v2.RandomResizedCrop({12, 16}, {interpolation = "nearest"})
  for seed = 1, 5 do
    torch.manual_seed(seed)
    local out = t({img = img, mask = mask, boxes = boxes})
    torch.manual_seed(seed)
    local p = t:make_params({n = 1, img})
    check_close(out.img[1], out.mask:double())
    check_close(out.img, F.resized_crop(img, p.top, p.left, p.height, p.width, {12, 16}, "nearest"))
    local want = F.resized_crop(boxes, p.top, p.left, p.height, p.width, {12, 16})
    check_close(out.boxes, want)
    check_eq(out.boxes.canvas_size, {12, 16})
  end
end)

test("flips move boxes with the image: p = 1 always, p = 0 never", function()
  local img = torch.zeros(1, 10, 16)
  img:narrow(2, 3, 4):narrow(3, 2, 5):fill_(1)
  local boxes = tv.BoundingBoxes({{1, 2, 6, 6}}, {format = "XYXY", canvas_size = {10, 16}})
  local h = v2.RandomHorizontalFlip(1.0)
  local fi, fb = h(img, boxes)
  local b = fb[1]:totable()
  check_eq(b, {10, 2, 15, 6})
  check_eq(fi:narrow(2, b[2] + 1, b[4] - b[2]):narrow(3, b[1] + 1, b[3] - b[1]):sum():item(), 20.0)
  check_eq(fi:sum():item(), 20.0)
  local vi, vb = v2.RandomVerticalFlip({p = 1})(img, boxes)
  check_eq(vb[1]:totable(), {1, 4, 6, 8})
  check_eq(vi:narrow(2, 5, 4):narrow(3, 2, 5):sum():item(), 20.0)
  local zi, zb = v2.RandomHorizontalFlip(0)(img, boxes)
  check(zi == img and zb == boxes)
end)

test("one draw per call for a batch: every image gets the same crop", function()
  local x = torch.rand(3, 2, 20, 24)
  local t = v2.RandomCrop(10)
  torch.manual_seed(4)
  local y = t(x)
  for i = 1, 3 do
    torch.manual_seed(4)
    check_close(y[i], t(x[i]))
  end
end)

test("per_sample RandomResizedCrop = a loop of F.resized_crop with the same crops (uint8 within 1 level)", function()
  for _, dt in ipairs({torch.uint8, torch.float32}) do
    for _, mode in ipairs({"bilinear", "bicubic"}) do
      local x = (torch.rand(6, 3, 48, 64) * 255):to(dt)
      local t = v2.RandomResizedCrop({20, 24}, {interpolation = mode, per_sample = true})
      torch.manual_seed(7)
      local y = t(x)
      check_shape(y, {6, 3, 20, 24})
      torch.manual_seed(7)
      local distinct = {}
      for i = 1, 6 do
        local p = t:_draw(48, 64)
        distinct[("%d,%d,%d,%d"):format(p.top, p.left, p.height, p.width)] = true
        local want = F.resized_crop(x[i], p.top, p.left, p.height, p.width, {20, 24}, mode)
        check_close(y[i]:double(), want:double(), {atol = dt == torch.uint8 and 1 or 1e-5})
      end
      local n = 0
      for _ in pairs(distinct) do n = n + 1 end
      check(n > 1, "the images got different crops")
    end
  end
end)

test("per_sample RandomResizedCrop moves a batch of masks with the images (nearest)", function()
  local x = tv.Image(coords(1, 30, 40):unsqueeze(1):expand(4, 1, 30, 40):contiguous())
  local m = tv.Mask(coords(1, 30, 40):long():expand(4, 30, 40):contiguous())
  local out = v2.RandomResizedCrop(10, {interpolation = "nearest", per_sample = true})({x, m})
  check_close(out[1]:squeeze(2), out[2]:double())
  check_eq(tv.kind(out[2]), "Mask")
  check_eq(out[2].dtype, torch.int64)
end)

test("per_sample RandomCrop (with padding) = per-image pad and crop", function()
  local x = torch.rand(5, 3, 12, 14)
  local t = v2.RandomCrop({10, 11}, {padding = {2, 1}, fill = 0.5, per_sample = true})
  torch.manual_seed(9)
  local y = t(x)
  torch.manual_seed(9)
  for i = 1, 5 do
    local top, left = t:_offsets(14, 18)
    check_close(y[i], F.crop(F.pad(x[i], {2, 1}, 0.5), top, left, 10, 11))
  end
end)

test("per_sample flips: each image flipped or not by its own coin, masks with their image", function()
  local x = tv.Image(torch.rand(64, 2, 5, 6))
  local m = tv.Mask((x[{{}, 1}] * 10):long())
  torch.manual_seed(11)
  local y, ym = v2.RandomHorizontalFlip({per_sample = true})(x, m)
  local flipped = 0
  for i = 1, 64 do
    local same = y[i]:equal(x[i])
    local fl = y[i]:equal(x[i]:flip(-1))
    check(same or fl, "image " .. i)
    if fl then flipped = flipped + 1 end
    check(ym[i]:equal(fl and m[i]:flip(-1) or m[i]), "mask " .. i)
  end
  check(flipped > 10 and flipped < 54, "flipped " .. flipped)
  local v = v2.RandomVerticalFlip({p = 1, per_sample = true})(x)
  check_close(v, x:flip(-2))
  check_error(function()
    v2.RandomHorizontalFlip({per_sample = true})(x, tv.BoundingBoxes({{1, 1, 2, 2}}, {format = "XYXY", canvas_size = {5, 6}}))
  end, "not BoundingBoxes")
  check_error(function() v2.RandomHorizontalFlip({per_sample = true})(torch.rand(2, 5, 6)) end, "needs a batch")
end)

test("RandomCrop: pad_if_needed, padding modes, too-large crops", function()
  local x = torch.rand(3, 6, 7)
  local y = v2.RandomCrop({10, 9}, {pad_if_needed = true})(x)
  check_shape(y, {3, 10, 9})
  local c = v2.RandomCrop(6, {padding = 2, padding_mode = "reflect"})(x)
  check_shape(c, {3, 6, 6})
  check_error(function() v2.RandomCrop(8)(x) end, "larger than the (padded) input")
  check_error(function() v2.RandomCrop(4, {padding_mode = "wrap"}) end, "padding_mode must be")
  check_error(function() v2.RandomCrop(4, {paddin = 2}) end, "padding")
end)

test("Resize, RandomResize, RandomShortestSize, ScaleJitter, CenterCrop, Pad sizes", function()
  local img = tv.Image(torch.rand(3, 30, 40))
  local b = tv.BoundingBoxes({{4, 6, 20, 18}}, {format = "XYXY", canvas_size = {30, 40}})
  local ri, rb = v2.Resize(15)(img, b)
  check_shape(ri, {3, 15, 20})
  check_eq(rb.canvas_size, {15, 20})
  check_shape(v2.Resize({10, 12}, "bicubic", false, false)(img), {3, 10, 12})
  check_shape(v2.Resize(false, {max_size = 20})(img), {3, 15, 20})
  torch.manual_seed(2)
  for _ = 1, 20 do
    local s = v2.RandomResize(10, 20)(img)
    check(s:size(2) >= 10 and s:size(2) < 20)
    local r = v2.RandomShortestSize({12, 18}, 30)(img)
    check(r:size(2) == 12 or r:size(2) == 18 or r:size(3) == 30, "shortest " .. r:size(2))
    local j = v2.ScaleJitter({60, 60}, {scale_range = {0.5, 1.5}})(img)
    local scale = j:size(3) / 60
    check(scale >= 0.5 - 0.05 and scale <= 1.5, "jitter scale " .. scale)
  end
  local ci, cb = v2.CenterCrop(10)(img, b)
  check_shape(ci, {3, 10, 10})
  check_eq(cb[1]:totable(), {0, 0, 5, 8})
  local pi, pb = v2.Pad({1, 2, 3, 4}, {fill = {Image = 9, others = 0}})(img, b)
  check_shape(pi, {3, 36, 44})
  check_eq(pi[1][1][1]:item(), 9.0)
  check_eq(pb[1]:totable(), {5, 8, 21, 20})
  check_eq(#v2.FiveCrop(5)(img), 5)
  check_eq(#v2.TenCrop(5, true)(img), 10)
  check_error(function() v2.FiveCrop(5)(img, b) end, "not supported")
  check_error(function() v2.Resize(10, {per_sample = true}) end, "per_sample")
  check_error(function() v2.Resize(10, "area") end, "unknown interpolation area")
end)

test("RandomIoUCrop: a crop with some box's IoU above the drawn threshold; boxes outside zeroed", function()
  local img = tv.Image(torch.rand(3, 60, 80))
  local boxes = tv.BoundingBoxes({{5, 5, 30, 30}, {40, 20, 75, 55}, {60, 2, 64, 6}},
    {format = "XYXY", canvas_size = {60, 80}, dtype = torch.float32})
  local labels = torch.tensor({1, 2, 3})
  torch.manual_seed(5)
  local t = v2.RandomIoUCrop({sampler_options = {0.5}})
  for _ = 1, 5 do
    local out = t({image = img, boxes = boxes, labels = labels})
    local cs = out.boxes.canvas_size
    check_eq({out.image:size(2), out.image:size(3)}, cs)
    check(cs[1] >= 18 and cs[2] >= 24 and cs[1] <= 60 and cs[2] <= 80, "crop within the scale range")
    local ar = cs[2] / cs[1]
    check(ar >= 0.5 and ar <= 2.0, "aspect " .. ar)
    local s = v2.SanitizeBoundingBoxes()(out)
    check(s.boxes:size(1) >= 1 and s.boxes:size(1) == s.labels:size(1))
  end
  local same = v2.RandomIoUCrop({sampler_options = {1.0}})({image = img, boxes = boxes})
  check(same.image == img)
  check_error(function() v2.RandomIoUCrop()(img) end, "must hold an image and BoundingBoxes")
end)

test("RandomZoomOut: the image sits on a larger canvas at the boxes' offset", function()
  local img = tv.Image(coords(1, 10, 12) + 1)
  local boxes = tv.BoundingBoxes({{0, 0, 12, 10}}, {format = "XYXY", canvas_size = {10, 12}})
  torch.manual_seed(6)
  for _ = 1, 5 do
    local oi, ob = v2.RandomZoomOut({fill = 0, side_range = {1.5, 3.0}, p = 1})(img, boxes)
    local cs = ob.canvas_size
    check(cs[1] >= 15 and cs[1] <= 30 and cs[2] >= 18 and cs[2] <= 36, "canvas " .. cs[1] .. "x" .. cs[2])
    local b = ob[1]:totable()
    check_eq({b[3] - b[1], b[4] - b[2]}, {12, 10})
    check_close(oi:narrow(2, b[2] + 1, 10):narrow(3, b[1] + 1, 12), img)
    check_eq(oi:sum():item(), img:sum():item())
  end
  check(v2.RandomZoomOut({p = 0})(img) == img)
  check_error(function() v2.RandomZoomOut({side_range = {0.5, 2}}) end, "side_range must be within")
end)

test("SanitizeBoundingBoxes keeps 1-based labels and instance masks aligned with their boxes", function()
  local boxes = tv.BoundingBoxes({{0, 0, 5, 5}, {2, 2, 2.5, 9}, {1, 1, 4, 4}, {3, 3, 3, 8}},
    {format = "XYXY", canvas_size = {10, 10}})
  local masks = tv.Mask(torch.arange(1, 5):reshape(4, 1, 1):expand(4, 10, 10):contiguous())
  local sample = {image = torch.rand(3, 10, 10), boxes = boxes, masks = masks, labels = torch.tensor({7, 8, 9, 10})}
  local out = v2.SanitizeBoundingBoxes()(sample)
  check_eq(out.labels:totable(), {7, 9})
  check_eq(out.boxes:totable(), {{0, 0, 5, 5}, {1, 1, 4, 4}})
  check_eq(out.masks[{{}, 1, 1}]:totable(), {1, 3})
  check(out.image == sample.image)
  local img2, target = v2.SanitizeBoundingBoxes({min_area = 10})(sample.image, {boxes = boxes, class_labels = sample.labels})
  check_eq(target.class_labels:totable(), {7})
  local o3 = v2.SanitizeBoundingBoxes({labels_getter = false})({boxes = boxes})
  check_eq(o3.boxes:size(1), 2)
  local o4 = v2.SanitizeBoundingBoxes({labels_getter = function(s) return {s.a, s.b} end})(
    {boxes = boxes, a = torch.tensor({1, 2, 3, 4}), b = torch.tensor({5, 6, 7, 8})})
  check_eq(o4.b:totable(), {5, 7})
  check_error(function() v2.SanitizeBoundingBoxes()({boxes = boxes}) end, "could not find the labels")
  check_error(function() v2.SanitizeBoundingBoxes()({boxes = boxes, labels = torch.tensor({1, 2})}) end,
    "labels of 2 entries for 4 boxes")
  check_error(function() v2.SanitizeBoundingBoxes({min_size = 0}) end, "min_size must be a number >= 1")
end)

test("ClampBoundingBoxes, ClampKeyPoints, ConvertBoundingBoxFormat touch only their kind", function()
  local img = torch.rand(3, 10, 20)
  local b = tv.BoundingBoxes({{-2, 3, 25, 8}}, {format = "XYXY", canvas_size = {10, 20}})
  local k = tv.KeyPoints({{-1, 5}, {30, 12}}, {canvas_size = {10, 20}})
  local oi, ob, ok = v2.ClampBoundingBoxes()(img, b, k)
  check(oi == img and ok == k)
  check_eq(ob:totable(), {{0, 3, 20, 8}})
  check_eq(v2.ClampKeyPoints()(k):totable(), {{0, 5}, {19, 9}})
  local cb = v2.ConvertBoundingBoxFormat("CXCYWH")(b)
  check_eq(cb.format, "CXCYWH")
  check_eq(cb:totable(), {{11, 5, 27, 5}})
  check_error(function() v2.ConvertBoundingBoxFormat("XYZ") end, "format must be one of")
end)

test("a sample whose image, mask and boxes differ in size is an error naming the transform", function()
  local img = torch.rand(3, 20, 20)
  check_error(function() v2.Resize(10)(img, tv.Mask(torch.zeros(10, 10))) end, "v2.Resize: the sample's images")
  check_error(function()
    v2.RandomHorizontalFlip(1)(img, tv.BoundingBoxes({{1, 1, 2, 2}}, {format = "XYXY", canvas_size = {10, 10}}))
  end, "v2.RandomHorizontalFlip: the sample's images, masks and boxes differ in size: 20x20 and 10x10")
  check_error(function() v2.RandomResizedCrop(8)(img, tv.Mask(torch.zeros(20, 21))) end, "differ in size")
end)

test("InterpolationMode constants are the mode strings", function()
  check_eq(v2.InterpolationMode.BILINEAR, "bilinear")
  check_eq(v2.InterpolationMode.NEAREST_EXACT, "nearest-exact")
  check_eq(F.InterpolationMode.BICUBIC, "bicubic")
  local x = torch.rand(3, 9, 9)
  check_close(F.resize(x, 4, v2.InterpolationMode.BICUBIC), F.resize(x, 4, "bicubic"))
  check_close(F.resize(x, 4, 3), F.resize(x, 4, "bicubic"))
end)
