-- torch.vision.transforms.v2.functional -- the ops behind the v2
-- transforms as functions with fixed parameters (F.resize(img, {32, 32}),
-- F.hflip(boxes), ...). Each dispatches on its input's kind (_dispatch.lua):
-- a plain tensor or Image, a Video, a Mask, BoundingBoxes, KeyPoints; the
-- kernels for one kind are also public (F.resize_image, F.hflip_mask, ...).
-- The families live in the files named below; this table gathers them.
local D = require "torch.vision.transforms.v2.functional._dispatch"

local F = {}

local FAMILIES = {
  "_meta", -- get_size, get_dimensions, convert_bounding_box_format, clamps, sanitize_bounding_boxes
  "_pad_flip", -- pad, horizontal_flip / hflip, vertical_flip / vflip
  "_resize_crop", -- InterpolationMode, resize, crop, center_crop, resized_crop, five_crop, ten_crop
  "_color", -- adjust_*, autocontrast, equalize, invert, posterize, solarize, grayscale, permute_channels
  "_misc", -- normalize, gaussian_blur, gaussian_noise, to_dtype, convert_image_dtype
  "_augment", -- erase, jpeg
  "_type_conversion", -- to_image, to_pure_tensor
  "_warp", -- affine, rotate, perspective, elastic
}

for _, family in ipairs(FAMILIES) do
  for name, v in pairs(require("torch.vision.transforms.v2.functional." .. family)) do
    if F[name] ~= nil then error("torch.vision.transforms.v2.functional: " .. name .. " defined twice") end
    F[name] = v
  end
end

-- register_kernel(fname, kind, fn): fn(inpt, ...) becomes the kernel of the
-- functional fname for inputs of kind (a tv_tensors kind name), as
-- torchvision's register_kernel; for a kind of your own, tag the tensor with
-- torch._attrs and register under one of the kinds
F.register_kernel = function(fname, kind, fn)
  if type(fname) == "function" then
    for k, v in pairs(F) do
      if v == fname then fname = k break end
    end
  end
  if type(fname) ~= "string" or F[fname] == nil then
    error("F.register_kernel: expected a functional of torch.vision.transforms.v2.functional or its name", 2)
  end
  D.register(fname, kind, fn)
end

return F
