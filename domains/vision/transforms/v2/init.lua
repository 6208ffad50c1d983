-- torch.vision.transforms.v2 -- torchvision's transforms v2: classes that
-- take a sample (an image, or any nesting of tables holding images, videos,
-- masks, boxes, keypoints and other values), draw their random parameters
-- once and apply them to every part (masks with nearest interpolation,
-- boxes moved and clamped). `.functional` has the same ops as functions.
-- The families live in the files named below; this table gathers them.
local T = require "torch.vision.transforms.v2._transform"

local v2 = {Transform = T.Transform, RandomTransform = T.RandomTransform}

local FAMILIES = {
  "_container", -- Compose, RandomApply, RandomChoice, RandomOrder
  "_resize_crop", -- Resize, RandomResize, RandomShortestSize, ScaleJitter, RandomResizedCrop, RandomCrop, CenterCrop,
  -- FiveCrop, TenCrop, InterpolationMode
  "_pad_flip", -- Pad, RandomHorizontalFlip, RandomVerticalFlip
  "_meta", -- ConvertBoundingBoxFormat, ClampBoundingBoxes, ClampKeyPoints
  "_detection", -- RandomIoUCrop, RandomZoomOut, SanitizeBoundingBoxes
  "_misc", -- Identity, Lambda, LinearTransformation, Normalize, GaussianBlur, GaussianNoise, ToDtype, ...
  "_type_conversion", -- ToImage, ToPureTensor
  "_auto_augment", -- AutoAugment, RandAugment, TrivialAugmentWide, AugMix, AutoAugmentPolicy
  "_augment", -- RandomErasing, MixUp, CutMix, JPEG
  "_color", -- ColorJitter, RandomPhotometricDistort, Grayscale, RandomInvert, RandomEqualize, ...
  "_warp", -- RandomRotation, RandomAffine, RandomPerspective, ElasticTransform
}

for _, family in ipairs(FAMILIES) do
  for name, v in pairs(require("torch.vision.transforms.v2." .. family)) do
    if v2[name] ~= nil then error("torch.vision.transforms.v2: " .. name .. " defined twice") end
    v2[name] = v
  end
end

v2.functional = require "torch.vision.transforms.v2.functional"

return v2
