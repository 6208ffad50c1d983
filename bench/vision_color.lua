-- bench/vision_color.lua -- torch.vision.transforms.v2's color ops in an
-- input pipeline: ColorJitter(0.4, 0.4, 0.4, 0.1) on one uint8 / float32
-- 3x224x224 image and on a batch of 64 (a loop of per-image calls, and one
-- per_sample call drawing per-image factors; the peer is torchvision's
-- per-image loop in both rows), ToDtype(scale) + Normalize, equalize and
-- gaussian_blur. Peer: bench/peers/vision_color.py.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local v2 = torch.vision.transforms.v2
local F2 = v2.functional
local only = arg and arg[1]
local function want(name) return not only or only == name end

torch.manual_seed(0)
local img_f = torch.rand(3, 224, 224)
local img_u = (img_f * 255):floor():to(torch.uint8)
local bat_f = torch.rand(64, 3, 224, 224)
local bat_u = (bat_f * 255):floor():to(torch.uint8)
local cj = v2.ColorJitter(0.4, 0.4, 0.4, 0.1)
local cjp = v2.ColorJitter(0.4, 0.4, 0.4, 0.1, {per_sample = true})

local function loop(t, b) return function() for i = 1, b:size(1) do local _ = t(b[i]) end end end

local rows = {
  {"cj_u8_img", function() local _ = cj(img_u) end, 20},
  {"cj_f32_img", function() local _ = cj(img_f) end, 20},
  {"cj_u8_b64_loop", loop(cj, bat_u), 1},
  {"cj_u8_b64_per_sample", function() local _ = cjp(bat_u) end, 1},
  {"cj_f32_b64_loop", loop(cj, bat_f), 1},
  {"cj_f32_b64_per_sample", function() local _ = cjp(bat_f) end, 1},
  {"todtype_normalize_img", function()
    local _ = F2.normalize(F2.to_dtype(img_u, torch.float32, true), {0.485, 0.456, 0.406}, {0.229, 0.224, 0.225})
  end, 50},
  {"todtype_normalize_b64", function()
    local _ = F2.normalize(F2.to_dtype(bat_u, torch.float32, true), {0.485, 0.456, 0.406}, {0.229, 0.224, 0.225})
  end, 2},
  {"equalize_u8_img", function() local _ = F2.equalize(img_u) end, 20},
  {"equalize_u8_b64", function() local _ = F2.equalize(bat_u) end, 1},
  {"gaussian_blur_f32_img", function() local _ = F2.gaussian_blur(img_f, 9, 2.0) end, 20},
  {"gaussian_blur_u8_b64", function() local _ = F2.gaussian_blur(bat_u, 5, 1.5) end, 1},
}

for _, r in ipairs(rows) do
  if want(r[1]) then B.report(r[1], B.time(r[2], r[3], r[3] == 1 and 3 or 5)) end
end
