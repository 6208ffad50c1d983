-- tests/domains/vision/test_utils.lua -- torch.vision.utils against
-- torchvision 0.14 (tests/ref/gen_vision_utils.py -> vision_utils.lua):
-- make_grid exactly, save_image's file pixel for pixel, box outlines and
-- fills and segmentation masks pixel for pixel (PIL's rasterization),
-- keypoint disks and wide lines too (disks of radius >= 10 up to a few
-- edge pixels; counts printed); label text, visibility and errors by their properties.
cpu_only("image drawing")

local U = torch.vision.utils
local R = ref("vision_utils")

local function gen(shape, seed)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local k = torch.arange(0, n, {dtype = torch.int64})
  return ((k * 37 + 11 * seed) % 101 - 50):float():div(32):view(table.unpack(shape))
end

local function img(c, h, w, seed)
  local y = torch.arange(0, h):view(1, h, 1)
  local x = torch.arange(0, w):view(1, 1, w)
  local k = torch.arange(0, c):view(c, 1, 1)
  return ((x * 7 + y * 13 + k * 50 + seed) % 256):to(torch.uint8)
end

local function unhex(s, shape)
  local t = {}
  for i = 1, #s, 2 do t[#t + 1] = tonumber(s:sub(i, i + 1), 16) end
  return torch.tensor(t, {dtype = torch.uint8}):view(table.unpack(shape))
end

-- the number of pixels (x, y) where a and b differ in some channel
local function differing(a, b) return a:ne(b):any(1):sum():item() end

test("make_grid matches torchvision exactly (batches, lists, gray, normalize, value_range, scale_each)", function()
  for _, c in ipairs(R.make_grid) do
    local x
    if c.list then
      x = {}
      for k, l in ipairs(c.list) do x[k] = gen({l[1], l[2], l[3]}, l[4]) end
    else
      x = gen(c.shape, c.seed)
    end
    local g = U.make_grid(x, c.opts)
    check_shape(g, c.out_shape)
    check_close(g, c.out, {atol = 1e-6, rtol = 1e-6})
  end
  -- positional options in torchvision's order
  local x = gen({5, 3, 4, 5}, 1)
  check(U.make_grid(x, 2, 1):equal(U.make_grid(x, {nrow = 2, padding = 1})), "positional nrow, padding")
end)

test("save_image writes the grid's bytes (x * 255 + 0.5, clamped) like torchvision", function()
  local x = (gen({3, 3, 4, 4}, 30) + 1.6) / 3.2
  local path = os.tmpname() .. ".png"
  U.save_image(x, path, {nrow = 2, padding = 1})
  local got = torch.vision.io.read_image(path)
  os.remove(path)
  check(got:equal(unhex(R.save_image.hex, R.save_image.shape)), "PNG pixels")
  local jpg = os.tmpname() .. ".jpg"
  U.save_image(x, jpg, "jpeg", {nrow = 2, padding = 1})
  local j = torch.vision.io.read_image(jpg)
  os.remove(jpg)
  check_shape(j, R.save_image.shape)
  check((j:float() - got:float()):abs():mean():item() < 20, "the JPEG resembles the PNG")
  check_error(function() U.save_image(x, "/tmp/x.gif") end, "save_image: unsupported format 'gif'")
  check_error(function() U.save_image(x, "/tmp/noext") end, "save_image: cannot tell the format")
  check_error(function() U.save_image(x, 3) end, "save_image: fp must be a file path")
  check_error(function() U.save_image(x, "/tmp/x.png", {nrows = 2}) end, "nrows")
end)

test("draw_bounding_boxes without labels: PIL's pixels exactly (outlines, widths, fills, clipping, palette, gray)", function()
  for _, c in ipairs(R.boxes) do
    local base = c.gray and img(1, 10, 12, 9) or img(3, 24, 32, 5)
    local out = U.draw_bounding_boxes(base, torch.tensor(c.boxes, {dtype = torch.float32}), c.opts)
    local want = unhex(c.hex, {3, base:size(2), base:size(3)})
    check_shape(out, {3, base:size(2), base:size(3)})
    check_eq(differing(out, want), 0, c.name .. ": pixels that differ from torchvision's")
  end
end)

test("draw_segmentation_masks matches torchvision exactly", function()
  local base = img(3, 16, 20, 40)
  local yy = torch.arange(0, 16):view(16, 1)
  local xx = torch.arange(0, 20):view(1, 20)
  local m1 = ((xx - 6):pow(2) + (yy - 7):pow(2)):lt(30)
  local m2 = ((xx + yy) % 5):eq(0)
  local m3 = xx:gt(12):expand(16, 20)
  local masks = torch.stack({m1, m2, m3})
  for _, c in ipairs(R.masks) do
    local ms = c.n == 1 and masks:narrow(1, 1, 1) or masks
    local out = U.draw_segmentation_masks(base, ms, c.opts)
    check_eq(out.dtype, torch.uint8)
    check_eq(differing(out, unhex(c.hex, {3, 16, 20})), 0, c.name)
  end
  check(U.draw_segmentation_masks(base, m1, {colors = "red"}):equal(
    U.draw_segmentation_masks(base, m1:unsqueeze(1), {colors = {"red"}})), "an H x W mask")
end)

test("draw_keypoints: disks and wide lines as PIL draws them", function()
  local base = img(3, 40, 48, 70)
  local kps = torch.tensor(R.keypoints.kps, {dtype = torch.float32})
  local report = {}
  for _, c in ipairs(R.keypoints.cases) do
    local out = U.draw_keypoints(base, kps, c.opts)
    local want = unhex(c.hex, {3, 40, 48})
    local drawn = want:ne(base):any(1):sum():item()
    local diff = differing(out, want)
    report[#report + 1] = ("%s %d/%d"):format(c.name, diff, drawn)
    -- PIL's disks of radius 10 and more differ from ours in a few edge pixels
    local allowed = (c.opts.radius or 2) >= 10 and drawn * 0.05 or 0
    check(diff <= allowed, ("%s: %d of %d drawn pixels differ"):format(c.name, diff, drawn))
  end
  io.write("  draw_keypoints pixels differing from PIL's (differing/drawn): ", table.concat(report, ", "), "\n")
end)

test("draw_keypoints: visibility hides points and their connections", function()
  local base = img(3, 40, 48, 70)
  local kps = torch.tensor(R.keypoints.kps, {dtype = torch.float32})
  local conn = {{1, 2}, {2, 3}, {3, 4}}
  local vis = torch.tensor({{true, true, false, true}, {true, true, true, true}})
  local out = U.draw_keypoints(base, kps, {connectivity = conn, colors = "red", visibility = vis})
  -- closed form: instance 1 without point 3 (so only 1-2), instance 2 whole
  local a = U.draw_keypoints(base, kps:narrow(1, 1, 1):index_select(2, torch.tensor({1, 2, 4})),
    {connectivity = {{1, 2}}, colors = "red"})
  local b = U.draw_keypoints(a, kps:narrow(1, 2, 1), {connectivity = conn, colors = "red"})
  check(out:equal(b), "same as drawing the visible points only")
  check_error(function() U.draw_keypoints(base, kps, {visibility = torch.ones(2, 3):bool()}) end,
    "draw_keypoints: visibility must be an N x K tensor (2x4)")
end)

test("labels: text in the label color at the box's corner (Cairo), nothing outside the box's area", function()
  local base = torch.zeros(3, 60, 120, {dtype = torch.uint8})
  local boxes = torch.tensor({{5, 5, 110, 50}})
  local plain = U.draw_bounding_boxes(base, boxes, {colors = "white"})
  local text = U.draw_bounding_boxes(base, boxes, {colors = "white", labels = {"Hello"}, label_colors = "red",
    font_size = 14})
  local changed = text:ne(plain):any(1)
  local n = changed:sum():item()
  check(n > 20, "the label drew pixels (" .. n .. ")")
  local ys, xs = changed:nonzero():select(2, 1), changed:nonzero():select(2, 2)
  check(ys:min():item() >= 7 and xs:min():item() >= 7, "below and right of (x0 + width + 1, y0 + width + 1)")
  check(ys:max():item() < 7 + 20, "one line of text")
  check_eq(text[2]:masked_select(changed):max():item(), 0, "red text: no green")
  check(text[1]:masked_select(changed):max():item() > 200, "red text")
  local big = U.draw_bounding_boxes(base, boxes, {colors = "white", labels = {"Hello"}, font_size = 28})
  check(big:ne(plain):any(1):sum():item() > 2 * n, "font_size scales the text")
  local ttf = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
  if io.open(ttf) then
    local f = U.draw_bounding_boxes(base, boxes, {labels = {"Hi"}, font = ttf, font_size = 20, colors = "white"})
    check(f:ne(plain):any(1):sum():item() > 20, "a font file")
  end
end)

test("draw_* take float images in [0, 1] and give floats back", function()
  local base = img(3, 24, 32, 5)
  local f = base:float():div(255)
  local boxes = torch.tensor({{2, 3, 10, 12}})
  local out = U.draw_bounding_boxes(f, boxes, {colors = "red"})
  check_eq(out.dtype, torch.float32)
  check_close(out, U.draw_bounding_boxes(base, boxes, {colors = "red"}):float():div(255), {atol = 1e-6})
end)

test("drawing: clear errors for bad input", function()
  local base = img(3, 24, 32, 5)
  local boxes = torch.tensor({{2, 3, 10, 12}})
  check_error(function() U.draw_bounding_boxes(base:int(), boxes) end, "draw_bounding_boxes: the image must be uint8")
  check_error(function() U.draw_bounding_boxes(base:unsqueeze(1), boxes) end, "pass one C x H x W image, not a batch")
  check_error(function() U.draw_bounding_boxes(img(2, 4, 4, 0), boxes) end, "the image must have 1 or 3 channels, got 2")
  check_error(function() U.draw_bounding_boxes(base, torch.tensor({{10, 3, 2, 12}})) end, "xmin <= xmax")
  check_error(function() U.draw_bounding_boxes(base, torch.ones(3)) end, "boxes must be a K x 4 tensor")
  check_error(function() U.draw_bounding_boxes(base, boxes, {labels = {"a", "b"}}) end, "2 labels for 1 boxes")
  check_error(function() U.draw_bounding_boxes(base, boxes, {colors = "nocolor"}) end, "unknown color 'nocolor'")
  check_error(function() U.draw_bounding_boxes(base, boxes, {colors = {300, 0, 0}}) end, "integers 0..255")
  check_error(function() U.draw_bounding_boxes(base, torch.ones(2, 4), {colors = {"red"}}) end, "1 colors for 2 boxes")
  check_error(function() U.draw_bounding_boxes(base, boxes, {widht = 2}) end, "widht")
  check_error(function() U.draw_segmentation_masks(base, torch.ones(24, 32)) end, "masks must be bool")
  check_error(function() U.draw_segmentation_masks(base, torch.ones(3, 5):bool()) end, "do not fit the image")
  check_error(function() U.draw_segmentation_masks(img(1, 24, 32, 0), torch.ones(24, 32):bool()) end,
    "must have 3 channels")
  check_error(function() U.draw_segmentation_masks(base, torch.ones(24, 32):bool(), {alpha = 2}) end,
    "alpha must be a number in [0, 1]")
  check_error(function() U.draw_keypoints(base, torch.ones(2, 2)) end, "keypoints must be N x K x 2")
  check_error(function() U.draw_keypoints(base, torch.ones(1, 2, 2), {connectivity = {{1, 3}}}) end,
    "1-based keypoint indices in 1..2")
  check_error(function() U.make_grid({}) end, "make_grid: expected a tensor or a non-empty list")
  check_error(function() U.make_grid({torch.ones(3, 2, 2), torch.ones(3, 2, 3)}) end, "image 2 is 3x2x3")
  check_error(function() U.make_grid(torch.ones(2, 2, 2, 2, 2)) end, "expected images of 2, 3 or 4 dims")
  check_error(function() U.make_grid(torch.ones(2, 3, 2, 2), {nrow = 0}) end, "nrow must be a positive integer")
  check_error(function() U.draw_bounding_boxes(base, torch.tensor({{0, 0, 0 / 0, 3}})) end, "boxes must be finite")
  check_error(function() U.draw_keypoints(base, torch.tensor({{{math.huge, 3}}})) end, "keypoints must be finite")
  -- far-away coordinates, huge radii and widths are clipped, not slow
  local t0 = torch.time()
  local far = U.draw_keypoints(base, torch.tensor({{{-1e12, 3}, {1e12, 20}, {10, 10}}}),
    {connectivity = {{1, 2}, {2, 3}}, colors = "red", radius = 1000000, width = 7})
  check(far[1]:eq(255):all():item(), "a disk of radius 1e6 covers the picture")
  U.draw_bounding_boxes(base, torch.tensor({{-1e15, -1e15, 1e15, 1e15}}), {width = 1000000000, fill = true})
  check(torch.time() - t0 < 1, "drawn in well under a second")
  -- nothing to draw: the image comes back
  check(U.draw_bounding_boxes(base, torch.zeros(0, 4)):equal(base), "no boxes")
end)

test("draw_segmentation_masks on a float image blends in float", function()
  local base = img(3, 6, 7, 3):float():div(255)
  local m = torch.zeros(6, 7):bool()
  m[{2, {2, 4}}] = true
  local out = U.draw_segmentation_masks(base, m, {alpha = 0.25, colors = {"#ff8000"}})
  check_eq(out.dtype, torch.float32)
  local want = base:clone()
  local c = torch.tensor({1, 128 / 255, 0}):view(3, 1)
  want[{{}, 2, {2, 4}}] = base[{{}, 2, {2, 4}}] * 0.75 + c * 0.25
  check_close(out, want, {atol = 1e-6})
end)
