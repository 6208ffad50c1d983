-- bench/vision_io.lua -- image decoding (torch.vision.io) in Mpix/s on the
-- same files as the peer: JPEGs of real photos (skimage's rocket, 640x427,
-- and retina, 1411x1411, as shipped; a 512x512 and a 2000x1500 image made
-- by encoding / tiling the astronaut photo at quality 90), PNGs of RGB
-- photos (astronaut, chelsea, coffee), of a gray photo (camera) and of a
-- palette image (green_palette), and read_image from a file. The files are
-- written to $TMPDIR/moontorch_bench_vision_io/ for the peer
-- (bench/peers/vision_io.py) to read. With a GPU: nvJPEG decode of one
-- 2000x1500 JPEG and of a batch of 64 512x512 JPEGs (device='cuda').
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local vio = torch.vision.io
local only = arg and arg[1]
local function want(name) return not only or only == name end

local SK = "/usr/lib/python3/dist-packages/skimage/data/"
local DIR = (os.getenv("TMPDIR") or "/tmp") .. "/moontorch_bench_vision_io/"
os.execute("mkdir -p " .. DIR)

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

-- the benchmark's files: copies of skimage's and the made JPEGs (without
-- python3-skimage, as on a bare GPU machine: a textured stand-in for the
-- astronaut, and the rows of the other files are skipped on both sides)
local function make_files()
  local astro
  if exists(SK .. "astronaut.png") then
    astro = vio.read_image(SK .. "astronaut.png", "RGB")
  else
    torch.manual_seed(0)
    local low = torch.rand(1, 3, 32, 32) * 255
    astro = torch.nn.functional.interpolate(low, {size = {512, 512}, mode = "bilinear"})[1] + torch.randn(3, 512, 512) * 12
    astro = astro:clamp(0, 255):to(torch.uint8)
  end
  vio.write_jpeg(astro, DIR .. "astro512.jpg", 90)
  local big = astro:tile(1, 3, 4):narrow(2, 1, 1500):narrow(3, 1, 2000):contiguous()
  vio.write_jpeg(big, DIR .. "astro2000x1500.jpg", 90)
  for _, f in ipairs{"rocket.jpg", "retina.jpg", "astronaut.png", "chelsea.png", "coffee.png", "camera.png",
                     "green_palette.png"} do
    if exists(SK .. f) then vio.write_file(DIR .. f, vio.read_file(SK .. f)) else os.remove(DIR .. f) end
  end
end
make_files()

-- name, file, decoder
local rows = {
  {"jpeg_astro512", "astro512.jpg", vio.decode_jpeg},
  {"jpeg_astro2000", "astro2000x1500.jpg", vio.decode_jpeg},
  {"jpeg_rocket", "rocket.jpg", vio.decode_jpeg},
  {"jpeg_retina", "retina.jpg", vio.decode_jpeg},
  {"png_astronaut", "astronaut.png", vio.decode_png},
  {"png_chelsea", "chelsea.png", vio.decode_png},
  {"png_coffee", "coffee.png", vio.decode_png},
  {"png_camera_gray", "camera.png", vio.decode_png},
  {"png_palette", "green_palette.png", vio.decode_png},
}

for _, r in ipairs(rows) do
  local name, file, dec = r[1], r[2], r[3]
  if want(name) and exists(DIR .. file) then
    local data = vio.read_file(DIR .. file)
    local img = dec(data)
    local mpix = img:size(2) * img:size(3) / 1e6
    local t = B.time(function() local _ <close> = dec(data) end, math.max(2, math.floor(0.05 / mpix)))
    B.report(name, t, mpix / t, "Mpix/s")
  end
end

if want("read_image_astro512") then
  local path = DIR .. "astro512.jpg"
  local t = B.time(function() local _ <close> = vio.read_image(path) end, 20)
  B.report("read_image_astro512", t, 512 * 512 / 1e6 / t, "Mpix/s")
end

-- nvJPEG: device time is host-driven (the Huffman stage runs on the CPU),
-- so wall-clock per call after a synchronize, like the peer
if torch.cuda.is_available() then
  local function wall(fn, n)
    return B.time(function() fn(); torch.cuda.synchronize() end, n)
  end
  if want("nvjpeg_astro2000") then
    local data = vio.read_file(DIR .. "astro2000x1500.jpg")
    local t = wall(function() vio.decode_jpeg(data, {device = "cuda"}) end, 10)
    B.report("nvjpeg_astro2000", t, 3.0 / t, "Mpix/s")
  end
  if want("nvjpeg_batch64") then
    local data = vio.read_file(DIR .. "astro512.jpg")
    local batch = {}
    for i = 1, 64 do batch[i] = data end
    local t = wall(function() vio.decode_jpeg(batch, {device = "cuda"}) end, 3)
    B.report("nvjpeg_batch64", t, 64 * 512 * 512 / 1e6 / t, "Mpix/s")
  end
end
