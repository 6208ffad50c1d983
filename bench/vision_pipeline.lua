-- bench/vision_pipeline.lua -- an ImageNet-style input pipeline: JPEG files
-- in class folders read by ImageFolder, decoded and transformed in the
-- DataLoader's worker processes: RandomResizedCrop(224) +
-- RandomHorizontalFlip + ColorJitter(0.4, 0.4, 0.4, 0.1) + ToDtype(float32,
-- scale) + Normalize, batches of 32, 2 workers; images per second over a
-- pass of the files.
--   pipeline_image: every transform per image, as torchvision users write it
--   pipeline_batch: the crop per image, the rest on the collated batch with
--                   per_sample=true (each image its own draws), also in the
--                   workers (collate_fn)
-- The files (256 JPEGs of 300-640 pixels made from python3-skimage's
-- photos, or from noise without it) are written once to
-- $TMPDIR/moontorch_bench_pipeline by whichever side runs first.
-- Peer: bench/peers/vision_pipeline.py.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local data = require "torch.utils.data"
local vision = require "torch.vision"
local v2 = vision.transforms.v2
local only = arg and arg[1]
local function want(name) return not only or only == name end

local ROOT = (os.getenv("TMPDIR") or "/tmp") .. "/moontorch_bench_pipeline"
local NFILES, WORKERS, BATCH = 256, 2, 32
local MEAN, STD = {0.485, 0.456, 0.406}, {0.229, 0.224, 0.225}

-- writes the JPEG files once (a marker file says they are complete)
local function make_files()
  local marker = io.open(ROOT .. "/done")
  if marker then marker:close() return end
  os.execute("mkdir -p '" .. ROOT .. "'")
  local photos = {}
  for _, n in ipairs({"astronaut.png", "chelsea.png", "coffee.png", "rocket.jpg", "motorcycle_left.png"}) do
    local p = "/usr/lib/python3/dist-packages/skimage/data/" .. n
    local f = io.open(p)
    if f then f:close() photos[#photos + 1] = vision.io.read_image(p, vision.io.ImageReadMode.RGB) end
  end
  torch.manual_seed(0)
  if #photos == 0 then photos[1] = torch.randint(0, 256, {3, 700, 700}, {dtype = torch.uint8}) end
  for i = 0, NFILES - 1 do
    local src = photos[i % #photos + 1]
    local h, w = src:size(2), src:size(3)
    local ch, cw = math.min(h, 300 + (i * 37) % 340), math.min(w, 300 + (i * 53) % 340)
    local top, left = (i * 17) % (h - ch + 1), (i * 29) % (w - cw + 1)
    local crop = src:narrow(2, top + 1, ch):narrow(3, left + 1, cw):contiguous()
    local dir = ("%s/class%d"):format(ROOT, i % 4)
    os.execute("mkdir -p '" .. dir .. "'")
    vision.io.write_jpeg(crop, ("%s/img%04d.jpg"):format(dir, i), 90)
  end
  io.open(ROOT .. "/done", "w"):close()
end

-- images per second of one pass over the loader (after a warm-up pass)
local function rate(loader)
  local function pass()
    local n = 0
    for b in loader:iter() do n = n + b[1]:size(1) end
    return n
  end
  pass()
  local t0 = torch.time()
  local n = pass()
  return (torch.time() - t0) / n
end

make_files()
local jitter = {0.4, 0.4, 0.4, 0.1}
if want("pipeline_image") then
  torch.manual_seed(0)
  local ds = vision.datasets.ImageFolder(ROOT, {transform = v2.Compose({v2.RandomResizedCrop(224),
    v2.RandomHorizontalFlip(), v2.ColorJitter(table.unpack(jitter)), v2.ToDtype(torch.float32, {scale = true}),
    v2.Normalize(MEAN, STD)})})
  local secs = rate(data.DataLoader(ds, {batch_size = BATCH, shuffle = true, num_workers = WORKERS}))
  B.report("pipeline_image", secs, 1 / secs, "images/s")
end
if want("pipeline_batch") then
  torch.manual_seed(0)
  local ds = vision.datasets.ImageFolder(ROOT, {transform = v2.RandomResizedCrop(224)})
  local batch_t = v2.Compose({v2.RandomHorizontalFlip({per_sample = true}),
    v2.ColorJitter(jitter[1], jitter[2], jitter[3], jitter[4], {per_sample = true}),
    v2.ToDtype(torch.float32, {scale = true}), v2.Normalize(MEAN, STD)})
  -- the batch transforms run in the workers too, on the collated batch
  local function collate(samples)
    local b = data.default_collate(samples)
    return {batch_t(b[1]), b[2]}
  end
  local secs = rate(data.DataLoader(ds, {batch_size = BATCH, shuffle = true, num_workers = WORKERS,
    collate_fn = collate}))
  B.report("pipeline_batch", secs, 1 / secs, "images/s")
end
