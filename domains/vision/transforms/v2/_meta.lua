-- torch.vision.transforms.v2._meta -- the box and keypoint bookkeeping
-- transforms: ConvertBoundingBoxFormat, ClampBoundingBoxes, ClampKeyPoints.
-- Other parts of the sample pass through.
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local Fm = require "torch.vision.transforms.v2.functional._meta"
local tv = require "torch.vision.tv_tensors"

local M = {}

-- ConvertBoundingBoxFormat(format)
M.ConvertBoundingBoxFormat = T.Transform:extend("ConvertBoundingBoxFormat")
M.ConvertBoundingBoxFormat._transformed_types = {BoundingBoxes = true}
function M.ConvertBoundingBoxFormat:__init(format)
  if type(format) == "table" then format = torch._check_options("v2.ConvertBoundingBoxFormat", format, "format").format end
  local up = type(format) == "string" and format:upper() or nil
  if not tv.BoundingBoxFormat[up] then
    error(("v2.ConvertBoundingBoxFormat: format must be one of XYXY, XYWH, CXCYWH, got %s"):format(torch.pformat(format)), 3)
  end
  self.format = up
end
function M.ConvertBoundingBoxFormat:transform(inpt)
  return Fm.convert_bounding_box_format(inpt, {new_format = self.format})
end
function M.ConvertBoundingBoxFormat:extra_repr() return "format=" .. self.format end

-- ClampBoundingBoxes([clamping_mode="auto"]): boxes clamped to their canvas
M.ClampBoundingBoxes = T.Transform:extend("ClampBoundingBoxes")
M.ClampBoundingBoxes._transformed_types = {BoundingBoxes = true}
function M.ClampBoundingBoxes:__init(clamping_mode)
  if type(clamping_mode) == "table" then
    clamping_mode = torch._check_options("v2.ClampBoundingBoxes", clamping_mode, "clamping_mode").clamping_mode
  end
  if clamping_mode == nil then clamping_mode = "auto" end
  if clamping_mode ~= false and clamping_mode ~= "soft" and clamping_mode ~= "hard" and clamping_mode ~= "auto" then
    error(("v2.ClampBoundingBoxes: clamping_mode must be 'soft', 'hard', 'auto' or false, got %s"):format(
      tostring(clamping_mode)), 3)
  end
  self.clamping_mode = clamping_mode
end
function M.ClampBoundingBoxes:transform(inpt)
  return Fm.clamp_bounding_boxes(inpt, {clamping_mode = self.clamping_mode})
end

-- ClampKeyPoints(): keypoints clamped to [0, W - 1] x [0, H - 1]
M.ClampKeyPoints = T.Transform:extend("ClampKeyPoints")
M.ClampKeyPoints._transformed_types = {KeyPoints = true}
function M.ClampKeyPoints:transform(inpt) return Fm.clamp_keypoints(inpt) end

return M
