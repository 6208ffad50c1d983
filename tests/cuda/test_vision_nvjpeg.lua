-- tests/cuda/test_vision_nvjpeg.lua -- torch.vision.io.decode_jpeg(...,
-- {device='cuda'}) through nvJPEG (domains/vision/jpeg_cuda.c): real photos
-- (skimage's JPEGs as shipped, and its PNG photos encoded here at quality
-- 90 and 75) against the CPU decode (libjpeg-turbo) in every mode the GPU
-- path has; lists decoded as batches (mixed sizes, gray and color); EXIF
-- orientation; one error per kind of bad input, after which decoding still
-- works; memory returns to the allocator. Skips without a GPU, and (with a
-- note) where nvJPEG is not installed.
--
-- Tolerance: both decoders are exact JPEG decoders up to rounding, but not
-- the same arithmetic: libjpeg-turbo's islow integer IDCT and nvJPEG's IDCT
-- round differently (a level or two on some samples), and for 4:2:0 color
-- the chroma upsampling differs (libjpeg's "fancy" triangle filter; nvJPEG
-- interpolates its own way), which moves R and B by more only at sharp color
-- edges. So: GRAY (luma alone: the IDCT difference) mean |d| < 0.5 and max
-- <= 4; color mean |d| < 1, at most 5% of samples off by more than 4 (the
-- astronaut photo at quality 90, all flag and suit edges, measured 3.2% on
-- an H200 with nvJPEG 13), and max <= 48 (a swapped channel or a wrong plane
-- would be off by ~100).

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; nvJPEG tests skipped\n")
  return
end
local vio = torch.vision.io
local version, why = vio._nvjpeg_version()
if not version then
  io.write("note: " .. why .. "; nvJPEG tests skipped\n")
  return
end
io.write(("note: nvJPEG %d.%d.%d\n"):format(version // 1000, version % 1000 // 10, version % 10))

local SK = "/usr/lib/python3/dist-packages/skimage/data/"
local function exists(p)
  local f = io.open(p, "rb")
  if f then f:close() end
  return f ~= nil
end

-- name -> JPEG bytes (a uint8 1-D CPU tensor)
local photos = {}
for _, f in ipairs{"rocket.jpg", "retina.jpg", "hubble_deep_field.jpg"} do
  if exists(SK .. f) then photos[#photos + 1] = {f, vio.read_file(SK .. f)} end
end
for _, f in ipairs{"astronaut.png", "chelsea.png", "coffee.png", "camera.png", "moon.png"} do
  if exists(SK .. f) then
    local img = vio.read_image(SK .. f)
    photos[#photos + 1] = {f .. "@90", vio.encode_jpeg(img, 90)}
    photos[#photos + 1] = {f .. "@75", vio.encode_jpeg(img, 75)}
  end
end
if #photos < 4 then -- no python3-skimage here: textured stand-ins (smooth color fields plus grain)
  io.write("note: skimage's sample photos are not installed here; synthetic textured images instead\n")
  torch.manual_seed(0)
  for i, hw in ipairs{{480, 640}, {333, 517}, {256, 256}} do
    local low = torch.rand(1, 3, hw[1] // 16, hw[2] // 16) * 255
    local img = torch.nn.functional.interpolate(low, {size = hw, mode = "bilinear"})[1] + torch.randn(3, hw[1], hw[2]) * 12
    img = img:clamp(0, 255):to(torch.uint8)
    photos[#photos + 1] = {"synthetic" .. i .. "@90", vio.encode_jpeg(img, 90)}
    photos[#photos + 1] = {"synthetic" .. i .. " gray@85", vio.encode_jpeg(img:narrow(1, 1, 1):contiguous(), 85)}
  end
end

local function diff_stats(gpu, cpu)
  local d = (gpu:cpu():int() - cpu:int()):abs():float()
  return d:mean():item(), d:max():item(), d:gt(4):float():mean():item()
end

-- checks a GPU decode against the CPU's, with the bounds of the header
local function check_close_to_cpu(gpu, cpu, gray, what)
  check(gpu.device.type == "cuda" and gpu.dtype == torch.uint8, what .. ": a uint8 CUDA tensor")
  check(gpu:is_contiguous(), what .. ": contiguous")
  check_eq(gpu.shape, cpu.shape, what .. ": shape")
  local mean, max, over4 = diff_stats(gpu, cpu)
  io.write(("  %-22s mean %.3f max %3d  >4: %.4f%%\n"):format(what, mean, max, over4 * 100))
  if gray then
    check(mean < 0.5 and max <= 4, ("%s: mean %.3f, max %d"):format(what, mean, max))
  else
    check(mean < 1 and over4 <= 0.05 and max <= 48, ("%s: mean %.3f, max %d, %.3f%% > 4"):format(what, mean, max,
      over4 * 100))
  end
end

test("decode_jpeg on CUDA matches the CPU decode of real photos in UNCHANGED, GRAY and RGB", function()
  for _, p in ipairs(photos) do
    local name, data = p[1], p[2]
    for _, mode in ipairs{"UNCHANGED", "GRAY", "RGB"} do
      local cpu = vio.decode_jpeg(data, mode)
      local gpu = vio.decode_jpeg(data, mode, "cuda")
      check_close_to_cpu(gpu, cpu, cpu:size(1) == 1, name .. " " .. mode)
    end
  end
end)

test("a list is decoded as a batch: mixed sizes, gray and color, same results as one by one", function()
  local list, cpus = {}, {}
  for i, p in ipairs(photos) do list[i], cpus[i] = p[2], vio.decode_jpeg(p[2]) end
  for _, mode in ipairs{"UNCHANGED", "RGB", "GRAY"} do
    local out = vio.decode_jpeg(list, {mode = mode, device = "cuda"})
    check(type(out) == "table" and #out == #list, "a list back")
    for i = 1, #list do
      local cpu = vio.decode_jpeg(list[i], mode)
      check_close_to_cpu(out[i], cpu, cpu:size(1) == 1, photos[i][1] .. " batched " .. mode)
    end
  end
  check_eq(#vio.decode_jpeg({}, {device = "cuda"}), 0, "an empty list")
  local one = vio.decode_jpeg({list[1]}, {device = "cuda:0"})
  check(#one == 1 and one[1]:cpu():eq(vio.decode_jpeg(list[1], {device = "cuda"}):cpu()):all():item(), "a list of one")
  -- batches of changing sizes reuse the states (re-initialised per size)
  for _, n in ipairs{3, 5, 3} do
    local sub = {}
    for i = 1, n do sub[i] = list[(i - 1) % #list + 1] end
    local out = vio.decode_jpeg(sub, {device = "cuda"})
    for i = 1, n do check_eq(out[i].shape, cpus[(i - 1) % #list + 1].shape, "batch of " .. n) end
  end
end)

-- inserts an APP1 Exif segment with orientation o after SOI
local function with_orientation(data, o)
  local tiff = "MM\0\42" .. string.pack(">I4I2", 8, 1) .. string.pack(">I2I2I4I2I2", 0x0112, 3, 1, o, 0)
      .. string.pack(">I4", 0)
  local app1 = "Exif\0\0" .. tiff
  local seg = "\xFF\xE1" .. string.pack(">I2", #app1 + 2) .. app1
  local head = {}
  for i = 1, #seg do head[i] = seg:byte(i) end
  return torch.cat({data:narrow(1, 1, 2), torch.tensor(head, {dtype = torch.uint8}), data:narrow(1, 3, data:numel() - 2)})
end

test("apply_exif_orientation turns CUDA decodes upright as the CPU path does (orientations 1..8)", function()
  local data = photos[1][2]
  for o = 1, 8 do
    local b = with_orientation(data, o)
    local cpu = vio.decode_jpeg(b, {apply_exif_orientation = true})
    local gpu = vio.decode_jpeg(b, {device = "cuda", apply_exif_orientation = true})
    check_close_to_cpu(gpu, cpu, false, "orientation " .. o)
    local plain = vio.decode_jpeg(b, {device = "cuda"})
    check_eq(plain.shape, vio.decode_jpeg(data).shape, "not applied by default")
    local batch = vio.decode_jpeg({data, b}, {device = "cuda", apply_exif_orientation = true})
    check_eq(batch[2].shape, cpu.shape, "in a batch")
  end
end)

test("bad input: an error naming the function and the image; decoding works afterwards", function()
  local good = photos[1][2]
  local notjpeg = torch.tensor({1, 2, 3, 4, 5, 6, 7, 8}, {dtype = torch.uint8})
  check_error(function() vio.decode_jpeg(notjpeg, {device = "cuda"}) end,
    "decode_jpeg: nvJPEG: image 1: not a JPEG file")
  check_error(function() vio.decode_jpeg({good, notjpeg}, {device = "cuda"}) end, "nvJPEG: image 2: not a JPEG file")
  local trunc = good:narrow(1, 1, 200):clone()
  local ok, err = pcall(vio.decode_jpeg, {good, trunc}, {device = "cuda"})
  if ok then
    io.write("  note: nvJPEG accepted a JPEG cut after 200 bytes\n")
  else
    check(tostring(err):find("decode_jpeg: nvJPEG:", 1, true), "names the function: " .. tostring(err))
  end
  local garbage = good:clone()
  garbage:narrow(1, 400, garbage:numel() - 400):fill_(0x5A)
  pcall(vio.decode_jpeg, garbage, {device = "cuda"}) -- an error or a picture of noise, never a crash
  check_error(function() vio.decode_jpeg(good, {device = "cuda", mode = "RGB_ALPHA"}) end,
    "mode must be UNCHANGED, GRAY or RGB on CUDA")
  check_error(function() vio.decode_jpeg(good:cuda(), {device = "cuda"}) end, "must be a 1-D uint8 CPU tensor")
  check_error(function() vio.decode_jpeg({good, 7}, {device = "cuda"}) end, "data[2] must be a 1-D uint8 CPU tensor")
  check_error(function() vio.decode_jpeg(good, {device = "cuda:99"}) end, "decode_jpeg")
  local img = vio.decode_jpeg(good, {device = "cuda"})
  check_close_to_cpu(img, vio.decode_jpeg(good), false, "after the errors")
end)

test("decoding on a side stream; memory goes back to the allocator", function()
  local data = photos[1][2]
  local s = torch.cuda.Stream()
  local prev = torch.cuda.current_stream()
  torch.cuda.set_stream(s)
  local img = vio.decode_jpeg(data, {device = "cuda"})
  torch.cuda.set_stream(prev)
  s:synchronize()
  check_close_to_cpu(img, vio.decode_jpeg(data), false, "side stream")
  img = nil
  collectgarbage()
  collectgarbage()
  torch.cuda.synchronize()
  local before = torch.cuda.memory_allocated()
  for _ = 1, 20 do
    local out = vio.decode_jpeg({data, data, data}, {device = "cuda"})
    out = nil -- luacheck: ignore
  end
  collectgarbage()
  collectgarbage()
  torch.cuda.synchronize()
  check_eq(torch.cuda.memory_allocated(), before, "no tensor memory kept")
end)
