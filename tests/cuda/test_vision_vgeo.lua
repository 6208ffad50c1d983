-- tests/cuda/test_vision_vgeo.lua -- torch.vision's geometry on CUDA: the
-- resize op (tensor/cuda/resize.cu: every mode, antialias on and off,
-- uint8/float16/float32/float64), its gradient (the adjoint's atomics), the
-- batched crop-and-resize, and the functionals and per_sample transforms,
-- against the CPU's results and torchvision's stored values
-- (tests/ref/vgeo.lua). Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; torch.vision geometry CUDA tests skipped\n")
  return
end

torch.set_default_device("cpu")
local F = torch.vision.transforms.v2.functional
local v2 = torch.vision.transforms.v2
local tv = torch.vision.tv_tensors

local function gen(shape, seed, dtype)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local vals = {}
  for k = 0, n - 1 do vals[k + 1] = (k * 7919 + seed * 104729) % 65521 % 256 end
  local t = torch.tensor(vals, {dtype = torch.float64}):reshape(shape)
  if dtype == "uint8" then return t:to(torch.uint8) end
  return (t / 256):to(dtype == "float32" and torch.float32 or torch.float64)
end

local function same(g, c, tol, what)
  check(g.is_cuda, what .. " stays on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  check_close(g:cpu():double(), c:double(), {atol = tol, rtol = 0})
end

test("resize on CUDA = on the CPU: every mode, antialias, dtype, up and down", function()
  local shapes = {{3, 19, 23}, {2, 3, 64, 80}, {1, 1, 5}}
  local sizes = {{7, 9}, {31, 45}, {13, 5}, {1, 1}}
  for _, dt in ipairs({"uint8", "float32", "float64"}) do
    for si, shape in ipairs(shapes) do
      local x = gen(shape, si, dt)
      local xc = x:cuda()
      for _, mode in ipairs({"nearest", "nearest-exact", "bilinear", "bicubic"}) do
        for _, aa in ipairs({true, false}) do
          for _, sz in ipairs(sizes) do
            local what = ("%s %s aa=%s %dx%d"):format(dt, mode, tostring(aa), sz[1], sz[2])
            same(torch._image_resize(xc, sz[1], sz[2], mode, aa), torch._image_resize(x, sz[1], sz[2], mode, aa),
              dt == "uint8" and 1 or 1e-5, what)
          end
        end
      end
    end
  end
  local h = gen({3, 20, 24}, 9, "float32"):half()
  same(torch._image_resize(h:cuda(), 9, 11, "bicubic", true), torch._image_resize(h, 9, 11, "bicubic", true), 2e-3, "half")
end)

test("resize's gradient on CUDA = on the CPU (float32 and float64)", function()
  for _, dt in ipairs({"float32", "float64"}) do
    for _, mode in ipairs({"bilinear", "bicubic", "nearest"}) do
      local x = gen({2, 3, 17, 13}, 3, dt)
      local g = gen({2, 3, 6, 29}, 4, dt)
      local gc = torch._backward.image_resize(g:cuda(), 17, 13, mode, true)
      same(gc, torch._backward.image_resize(g, 17, 13, mode, true), dt == "float32" and 1e-4 or 1e-10, mode)
      local xc = x:cuda():requires_grad_()
      torch._image_resize(xc, 6, 29, mode, true):mul(g:cuda()):sum():backward()
      same(xc.grad, torch._backward.image_resize(g, 17, 13, mode, true), dt == "float32" and 1e-4 or 1e-10, mode)
    end
  end
end)

test("crop_resize on CUDA = on the CPU (boxes on either device)", function()
  for _, dt in ipairs({"uint8", "float32"}) do
    local x = gen({4, 3, 40, 48}, 5, dt)
    local boxes = torch.tensor({{0, 0, 40, 48, 0, 0}, {3, 5, 19, 22, 1, 0}, {20, 2, 20, 7, 0, 1}, {1, 40, 4, 8, 1, 1}})
    for _, mode in ipairs({"bilinear", "bicubic", "nearest"}) do
      local want = torch._image_crop_resize(x, boxes, 16, 20, mode, true)
      same(torch._image_crop_resize(x:cuda(), boxes, 16, 20, mode, true), want, dt == "uint8" and 1 or 1e-5, mode)
      same(torch._image_crop_resize(x:cuda(), boxes:cuda(), 16, 20, mode, true), want, dt == "uint8" and 1 or 1e-5, mode)
    end
  end
end)

test("the functionals on CUDA give torchvision's stored values (tests/ref/vgeo.lua)", function()
  local R = ref("vgeo")
  local n = 0
  for name, c in pairs(R) do
    local x = gen(c.x[1], c.x[2], c.x[3]):cuda()
    local a = c.args
    local ys
    if a.op == "resize" then ys = {F.resize(x, a.size, a.mode, a.max_size, a.antialias)}
    elseif a.op == "crop" then ys = {F.crop(x, a.top, a.left, a.height, a.width)}
    elseif a.op == "center_crop" then ys = {F.center_crop(x, a.output_size)}
    elseif a.op == "resized_crop" then
      ys = {F.resized_crop(x, a.top, a.left, a.height, a.width, a.size, {interpolation = a.mode, antialias = a.antialias})}
    elseif a.op == "pad" then ys = {F.pad(x, a.padding, a.fill, a.padding_mode)}
    elseif a.op == "hflip" then ys = {F.hflip(x)}
    elseif a.op == "vflip" then ys = {F.vflip(x)}
    elseif a.op == "five_crop" then ys = F.five_crop(x, a.size)
    elseif a.op == "ten_crop" then ys = F.ten_crop(x, a.size, a.vertical_flip) end
    local flat = {}
    for _, y in ipairs(ys) do
      check(y.is_cuda, name .. " on cuda")
      for _, v in ipairs(y:cpu():contiguous():view(-1):double():totable()) do flat[#flat + 1] = v end
    end
    local diff = (torch.tensor(flat, {dtype = torch.float64}) - torch.tensor(c.y, {dtype = torch.float64})):abs():max()
    check(diff:item() <= (c.x[3] == "uint8" and 1 or 1e-5), name .. ": " .. diff:item())
    n = n + 1
  end
  check(n > 50)
end)

test("per_sample transforms on CUDA = on the CPU with the same draws", function()
  local x = (torch.rand(8, 3, 64, 80) * 255):to(torch.uint8)
  local m = tv.Mask((torch.rand(8, 64, 80) * 5):long())
  for _, t in ipairs({v2.RandomResizedCrop(32, {per_sample = true}), v2.RandomCrop(48, {padding = 4, per_sample = true}),
    v2.RandomHorizontalFlip({per_sample = true}), v2.RandomVerticalFlip({per_sample = true})}) do
    torch.manual_seed(3)
    local yc, mc = t(x, m)
    torch.manual_seed(3)
    local yg, mg = t(x:cuda(), tv.wrap(m:cuda(), {like = m}))
    same(yg, yc, 1, tostring(t))
    same(mg, mc, 0, tostring(t) .. " mask")
  end
end)

test("boxes and keypoints on CUDA follow the CPU", function()
  local b = tv.BoundingBoxes({{1, 2, 9, 8}, {10, 10, 14, 12.5}}, {format = "CXCYWH", canvas_size = {15, 20}})
  local bc = tv.BoundingBoxes(b:cuda(), {format = "CXCYWH", canvas_size = {15, 20}})
  for _, f in ipairs({function(t) return F.hflip(t) end, function(t) return F.resize(t, {8, 30}) end,
    function(t) return F.crop(t, 2, 3, 8, 10) end, function(t) return F.pad(t, {1, 2}) end,
    function(t) return F.convert_bounding_box_format(t, {new_format = "XYWH"}) end,
    function(t) return F.clamp_bounding_boxes(t) end}) do
    same(f(bc), f(b), 1e-6, "boxes")
  end
end)
