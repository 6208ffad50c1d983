-- bench/vision_warp.lua -- the v2 warps of torch.vision on 3x224x224
-- images: F.affine (nearest, torchvision's default) and F.rotate
-- (bilinear) on uint8 and float32, one image and a batch of 32; and a batch
-- of 32 float32 images each warped by its own random affine map:
-- RandomAffine{per_sample=true} (one batched sampling) and a loop of
-- F.affine over the images. Peer: bench/peers/vision_warp.py (torchvision's
-- tensor functionals; its per-image loop for both per-sample rows).
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local v2 = torch.vision.transforms.v2
local F = v2.functional
local only = arg and arg[1]
local function want(name) return not only or only == name end

torch.manual_seed(0)
for _, dt in ipairs({{"u8", torch.uint8}, {"f32", torch.float32}}) do
  for _, n in ipairs({1, 32}) do
    local x = (torch.rand(n, 3, 224, 224) * 255):to(dt[2])
    if n == 1 then x = x[1] end
    local reps = n == 1 and 20 or 2
    local name = ("warp_affine_%s_%d"):format(dt[1], n)
    if want(name) then
      B.report(name, B.time(function() local _ = F.affine(x, 30, {2, -1}, 0.9, {10, 5}) end, reps))
    end
    name = ("warp_rotate_%s_%d"):format(dt[1], n)
    if want(name) then
      B.report(name, B.time(function() local _ = F.rotate(x, 30, "bilinear") end, reps))
    end
  end
end

local batch = torch.rand(32, 3, 224, 224)
if want("warp_per_sample_affine_32") then
  local t = v2.RandomAffine(30, {0.1, 0.1}, {0.8, 1.2}, 10, "bilinear", {per_sample = true})
  B.report("warp_per_sample_affine_32", B.time(function() local _ = t(batch) end, 2))
end
if want("warp_loop_affine_32") then
  B.report("warp_loop_affine_32", B.time(function()
    for i = 1, 32 do
      local a = torch.rand(4):totable()
      local _ = F.affine(batch[i], a[1] * 60 - 30, {math.floor(a[2] * 44 - 22), math.floor(a[3] * 44 - 22)},
        0.8 + 0.4 * a[4], {10 * a[1] - 5, 0}, "bilinear", 0)
    end
  end, 2))
end
