-- torch.vision.ops RoIAlign and RoIPool: modules holding roi_align's and
-- roi_pool's options, called as m(input, boxes).
local M = require "torch.nn.module"
local U = require "torch.nn.util"
local R = require "torch.vision.ops.roi"

local Module = M.Module
local C = {}

local RoIAlign = Module:extend("RoIAlign")
-- RoIAlign(output_size, spatial_scale, sampling_ratio[, aligned=false])
function RoIAlign:__init(output_size, spatial_scale, sampling_ratio, ...)
  local fname = "RoIAlign"
  R._pair(fname, output_size)
  if type(spatial_scale) ~= "number" or math.type(sampling_ratio) ~= "integer" then
    error(fname .. ": expected RoIAlign(output_size, spatial_scale, sampling_ratio[, aligned])", 2)
  end
  local o = U.args(fname, {"aligned"}, {aligned = false}, ...)
  self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned =
    output_size, spatial_scale, sampling_ratio, o.aligned == true
end
function RoIAlign:forward(input, boxes)
  return R.roi_align(input, boxes, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned)
end
function RoIAlign:extra_repr()
  return ("output_size=%s, spatial_scale=%s, sampling_ratio=%s, aligned=%s"):format(U.repr(self.output_size),
    U.repr(self.spatial_scale), U.repr(self.sampling_ratio), tostring(self.aligned))
end
C.RoIAlign = RoIAlign

local RoIPool = Module:extend("RoIPool")
-- RoIPool(output_size, spatial_scale)
function RoIPool:__init(output_size, spatial_scale)
  R._pair("RoIPool", output_size)
  if type(spatial_scale) ~= "number" then error("RoIPool: expected RoIPool(output_size, spatial_scale)", 2) end
  self.output_size, self.spatial_scale = output_size, spatial_scale
end
function RoIPool:forward(input, boxes) return R.roi_pool(input, boxes, self.output_size, self.spatial_scale) end
function RoIPool:extra_repr()
  return ("output_size=%s, spatial_scale=%s"):format(U.repr(self.output_size), U.repr(self.spatial_scale))
end
C.RoIPool = RoIPool

return C
