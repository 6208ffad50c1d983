-- torch.vision.transforms.v2._type_conversion -- ToImage (a plain tensor or
-- an H x W x C table to a tv_tensors.Image) and ToPureTensor (tv_tensors
-- back to plain tensors), as torchvision's v2.
local T = require "torch.vision.transforms.v2._transform"
local FT = require "torch.vision.transforms.v2.functional._type_conversion"

local M = {}

-- ToImage(): the sample's image (a plain tensor) as an Image
M.ToImage = T.Transform:extend("ToImage")
M.ToImage._transformed_types = {tensor = true}
function M.ToImage:transform(inpt) return FT.to_image(inpt) end

-- ToPureTensor(): every tv_tensor of the sample as a plain tensor
M.ToPureTensor = T.Transform:extend("ToPureTensor")
M.ToPureTensor._transformed_types = {Image = true, Video = true, Mask = true, BoundingBoxes = true, KeyPoints = true}
function M.ToPureTensor:transform(inpt) return FT.to_pure_tensor(inpt) end

return M
