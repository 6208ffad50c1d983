-- torch.vision.ops RoI operators (torchvision.ops roi_align, roi_pool):
-- the public arguments over the engine ops torch._vision.roi_align and
-- roi_pool (tensor/roi.c; autograd and the JIT see them). Boxes are a K x 5
-- tensor (batch, x1, y1, x2, y2) whose batch column is the 1-based image
-- number, or a table of per-image L x 4 tensors (image k's boxes).
local torch = require "torch"
local U = require "torch.nn.util"

local R = {}
local V = torch._vision

-- output_size: an integer or {h, w}
local function pair(fname, v)
  if math.type(v) == "integer" then return v, v end
  if type(v) == "table" and #v == 2 and math.type(v[1]) == "integer" and math.type(v[2]) == "integer" then
    return v[1], v[2]
  end
  error(("%s: output_size must be an integer or a table {h, w} of integers, got %s"):format(fname, tostring(v)), 3)
end
R._pair = pair

-- The K x 5 rois of boxes (a tensor, or a table of L x 4 tensors) in x's dtype.
local function rois_of(fname, boxes, x)
  if torch.is_tensor(boxes) then
    if boxes:dim() ~= 2 or boxes:size(2) ~= 5 then
      error(("%s: a boxes tensor must be K x 5 (batch, x1, y1, x2, y2), got shape %s"):format(fname,
        table.concat(boxes.shape, "x")), 3)
    end
    return boxes:to(x.dtype)
  end
  if type(boxes) ~= "table" or #boxes == 0 then
    error(fname .. ": boxes must be a K x 5 tensor or a table of L x 4 tensors, one per image", 3)
  end
  local parts = {}
  for k, b in ipairs(boxes) do
    if not torch.is_tensor(b) or b:dim() ~= 2 or b:size(2) ~= 4 then
      error(("%s: boxes[%d] must be an L x 4 tensor"):format(fname, k), 3)
    end
    b = b:to(x.dtype)
    parts[k] = torch.cat({torch.full({b:size(1), 1}, k, {dtype = b.dtype, device = b.device}), b}, 2)
  end
  return torch.cat(parts, 1)
end
R._rois_of = rois_of

local function check_input(fname, x)
  if not torch.is_tensor(x) or x:dim() ~= 4 then error(fname .. ": input must be an N x C x H x W tensor", 3) end
end

-- roi_align(input, boxes, output_size[, spatial_scale=1, sampling_ratio=-1, aligned=false])
function R.roi_align(input, boxes, output_size, ...)
  local fname = "roi_align"
  check_input(fname, input)
  local ph, pw = pair(fname, output_size)
  local o = U.args(fname, {"spatial_scale", "sampling_ratio", "aligned"},
                   {spatial_scale = 1.0, sampling_ratio = -1, aligned = false}, ...)
  if math.type(o.sampling_ratio) ~= "integer" then error(fname .. ": sampling_ratio must be an integer", 2) end
  return V.roi_align(input, rois_of(fname, boxes, input), ph, pw, o.spatial_scale, o.sampling_ratio, o.aligned == true)
end

-- roi_pool(input, boxes, output_size[, spatial_scale=1])
function R.roi_pool(input, boxes, output_size, ...)
  local fname = "roi_pool"
  check_input(fname, input)
  local ph, pw = pair(fname, output_size)
  local o = U.args(fname, {"spatial_scale"}, {spatial_scale = 1.0}, ...)
  return (V.roi_pool(input, rois_of(fname, boxes, input), ph, pw, o.spatial_scale))
end

return R
