-- torch.vision.ops MultiScaleRoIAlign (torchvision.ops.poolers): RoI Align
-- over a feature pyramid, each box pooled from the level its size maps to
-- (Feature Pyramid Networks, eq. 1), as torchvision computes it: the levels'
-- scales are powers of 2 inferred from the feature and image sizes.
local torch = require "torch"
local M = require "torch.nn.module"
local U = require "torch.nn.util"
local B = require "torch.vision.ops.boxes"
local R = require "torch.vision.ops.roi"

local P = {}

-- 2^round(log2(feature size / image size)) of the first spatial dim, in
-- float32 as torchvision (round: half to even)
local function infer_scale(feature, size)
  local approx = feature:size(-2) / size[1]
  return 2.0 ^ torch.tensor(approx):log2():round():item()
end

-- The 0-based level of each box: floor(lvl0 + log2(sqrt(area) / s0) + eps)
-- clamped to [k_min, k_max], minus k_min.
local function map_levels(boxes, k_min, k_max, s0, lvl0)
  local areas = {}
  for k, b in ipairs(boxes) do areas[k] = B.box_area(b) end
  local s = torch.cat(areas, 1):sqrt()
  local lv = (torch.log2(s / s0) + lvl0 + torch.tensor(1e-6, {dtype = s.dtype})):floor()
  return lv:clamp(k_min, k_max):long() - k_min
end

local MultiScaleRoIAlign = M.Module:extend("MultiScaleRoIAlign")
-- MultiScaleRoIAlign(featmap_names, output_size, sampling_ratio[, {canonical_scale=224, canonical_level=4}])
function MultiScaleRoIAlign:__init(featmap_names, output_size, sampling_ratio, opts)
  local fname = "MultiScaleRoIAlign"
  if type(featmap_names) ~= "table" or #featmap_names == 0 then
    error(fname .. ": featmap_names must be a non-empty list of feature names", 2)
  end
  local h, w = R._pair(fname, output_size)
  if math.type(sampling_ratio) ~= "integer" then error(fname .. ": sampling_ratio must be an integer", 2) end
  if opts ~= nil and type(opts) ~= "table" then error(fname .. ": expected an options table after sampling_ratio", 2) end
  local o = U.check(fname, opts or {}, "canonical_scale canonical_level")
  o = {canonical_scale = o.canonical_scale or 224, canonical_level = o.canonical_level or 4}
  self.featmap_names, self.output_size, self.sampling_ratio = featmap_names, {h, w}, sampling_ratio
  self.canonical_scale, self.canonical_level = o.canonical_scale, o.canonical_level
end

-- forward(x, boxes, image_shapes): x maps names to N x C x H x W features
-- (levels in featmap_names' order, finest first), boxes a table of per-image
-- L x 4 xyxy boxes, image_shapes a table of {H, W}; K x C x h x w.
function MultiScaleRoIAlign:forward(x, boxes, image_shapes)
  local fname = "MultiScaleRoIAlign"
  if type(image_shapes) ~= "table" or #image_shapes == 0 then error(fname .. ": image_shapes must not be empty", 2) end
  local feats = {}
  for _, name in ipairs(self.featmap_names) do
    if x[name] == nil then error(("%s: no feature map named '%s' in x"):format(fname, tostring(name)), 2) end
    feats[#feats + 1] = x[name]
  end
  local mh, mw = 0, 0
  for _, s in ipairs(image_shapes) do mh, mw = math.max(mh, s[1]), math.max(mw, s[2]) end
  local scales = {}
  for k, f in ipairs(feats) do scales[k] = infer_scale(f, {mh, mw}) end
  local rois = R._rois_of(fname, boxes, feats[1])
  if #feats == 1 then
    return R.roi_align(feats[1], rois, self.output_size, scales[1], self.sampling_ratio)
  end
  local lmin = -torch.tensor(scales[1]):log2():item()
  local lmax = -torch.tensor(scales[#scales]):log2():item()
  local k_min, k_max = math.tointeger(lmin >= 0 and math.floor(lmin) or math.ceil(lmin)),
                       math.tointeger(lmax >= 0 and math.floor(lmax) or math.ceil(lmax))
  local levels = map_levels(boxes, k_min, k_max, self.canonical_scale, self.canonical_level)
  local f1 = feats[1]
  local result = torch.zeros({rois:size(1), f1:size(2), self.output_size[1], self.output_size[2]},
                             {dtype = f1.dtype, device = f1.device})
  for k, f in ipairs(feats) do
    local idx = levels:eq(k - 1):nonzero():reshape(-1)
    if idx:numel() > 0 then
      local part = R.roi_align(f, rois:index_select(1, idx), self.output_size, scales[k], self.sampling_ratio)
      result = result:index_copy(1, idx, part:to(result.dtype))
    end
  end
  return result
end

function MultiScaleRoIAlign:extra_repr()
  local names = {}
  for k, n in ipairs(self.featmap_names) do names[k] = U.repr(n) end
  return ("featmap_names={%s}, output_size=%s, sampling_ratio=%d"):format(table.concat(names, ", "),
    U.repr(self.output_size), self.sampling_ratio)
end
P.MultiScaleRoIAlign = MultiScaleRoIAlign

return P
