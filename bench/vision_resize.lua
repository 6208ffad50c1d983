-- bench/vision_resize.lua -- torch.vision's resize (the engine op behind
-- F.resize: separable, antialiased) on uint8 and float images: bilinear and
-- bicubic, 3x512x512 -> 224x224, 3x1024x768 -> shorter side 256, a batch
-- 16x3x256x256 -> 128; and RandomResizedCrop(224) + RandomHorizontalFlip
-- on a batch of 16 uint8 256x256 images, per_sample (one batched kernel)
-- and as a per-image loop. CUDA rows (device ms) only with a GPU. Peer:
-- bench/peers/vision_resize.py (torchvision's F.resize, antialias=True).
-- The row filter "cuda" runs the CUDA rows alone.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local F = torch.vision.transforms.v2.functional
local v2 = torch.vision.transforms.v2
local only = arg and arg[1]
local function want(name)
  return not only or only == "all" or only == name or (only == "cuda" and name:find("^resize_cuda_") ~= nil)
end

local function image(shape, dt)
  torch.manual_seed(0)
  local x = torch.rand(shape) * 255
  return dt == "u8" and x:to(torch.uint8) or x
end

local cases = {
  {"512_224", {3, 512, 512}, {224, 224}, 20},
  {"1024x768_256", {3, 1024, 768}, 256, 10},
  {"b16_256_128", {16, 3, 256, 256}, 128, 5},
}

for _, dev in ipairs({"cpu", "cuda"}) do
  if dev == "cpu" or torch.cuda.is_available() then
    for _, c in ipairs(cases) do
      local tag, shape, size, n = table.unpack(c)
      for _, dt in ipairs({"u8", "f32"}) do
        for _, mode in ipairs({"bilinear", "bicubic"}) do
          local name = ("resize_%s%s_%s_%s"):format(dev == "cuda" and "cuda_" or "", mode, dt, tag)
          if want(name) then
            local x = image(shape, dt):to(dev)
            local fn = function() local _ <close> = F.resize(x, size, mode, false, true) end
            if dev == "cuda" then
              B.report(name, B.cuda_ms(fn, 20) / 1e3)
            else
              B.report(name, B.time(fn, n))
            end
          end
        end
      end
    end
  end
end

local batch = image({16, 3, 256, 256}, "u8")
if want("rrc_flip_b16_per_sample") then
  local t = v2.Compose({v2.RandomResizedCrop(224, {per_sample = true}), v2.RandomHorizontalFlip({per_sample = true})})
  B.report("rrc_flip_b16_per_sample", B.time(function() local _ = t(batch) end, 5))
end
if want("rrc_flip_b16_loop") then
  local t = v2.Compose({v2.RandomResizedCrop(224), v2.RandomHorizontalFlip()})
  B.report("rrc_flip_b16_loop", B.time(function()
    for i = 1, 16 do local _ = t(batch[i]) end
  end, 5))
end
