-- torch.vision.transforms.v2._utils -- what transforms share: flattening a
-- sample (any nesting of Lua tables around tensors and other values) into
-- its leaves and back, which leaves a transform touches, and the sizes of
-- the images, masks and boxes in a sample.
local torch = require "torch"
local tv = require "torch.vision.tv_tensors"

local U = {}

-- A table is a container of the sample (walked) unless it has a metatable
-- (a module, a class instance: a leaf).
local function is_container(v) return type(v) == "table" and getmetatable(v) == nil end

-- Keys of a container in a fixed order: 1..n, then the other keys sorted
-- by their string forms.
local function keys_of(t)
  local ks, n = {}, #t
  for i = 1, n do ks[i] = i end
  local rest = {}
  for k in pairs(t) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then rest[#rest + 1] = k end
  end
  table.sort(rest, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(rest) do ks[#ks + 1] = k end
  return ks
end

-- flatten(sample): the list of leaves and a spec that unflatten uses to
-- rebuild the same structure
function U.flatten(sample)
  local flat = {}
  local function walk(v)
    if not is_container(v) then
      flat[#flat + 1] = v
      return {leaf = true}
    end
    local spec = {keys = keys_of(v), children = {}}
    for i, k in ipairs(spec.keys) do spec.children[i] = walk(v[k]) end
    return spec
  end
  local spec = walk(sample)
  flat.n = #flat
  return flat, spec
end

-- unflatten(flat, spec): the structure of spec with flat's leaves
function U.unflatten(flat, spec)
  local pos = 0
  local function build(s)
    if s.leaf then
      pos = pos + 1
      return flat[pos]
    end
    local t = {}
    for i, k in ipairs(s.keys) do t[k] = build(s.children[i]) end
    return t
  end
  return build(spec)
end

-- needs_transform(flat, types): for each leaf, whether a transform acting
-- on the kinds in types (a set of kind names, "tensor" for plain tensors)
-- touches it: tv_tensors of those kinds, and the first plain tensor when
-- the sample holds no Image or Video (torchvision's rule: that tensor is
-- the image; other plain tensors pass through)
function U.needs_transform(flat, types)
  local pure_is_image = true
  for i = 1, flat.n do
    local k = tv.kind(flat[i])
    if k == "Image" or k == "Video" then pure_is_image = false end
  end
  local needs = {}
  for i = 1, flat.n do
    local x, need = flat[i], false
    if torch.is_tensor(x) then
      local k = tv.kind(x)
      if k then
        need = types[k] == true
      elseif types.tensor and pure_is_image then
        need, pure_is_image = true, false
      end
    end
    needs[i] = need
  end
  return needs
end

-- selected(flat, needs[, skip]): the leaves needs marks (but skip), as a
-- list with its count n (what make_params and _check_inputs see)
function U.selected(flat, needs, skip)
  local out = {n = 0}
  for i = 1, flat.n do
    if needs[i] and not rawequal(flat[i], skip) then out.n = out.n + 1; out[out.n] = flat[i] end
  end
  return out
end

-- is_image_like(x): an Image, a Video or a plain tensor
local function is_image_like(x)
  local k = tv.kind(x)
  return k == "Image" or k == "Video" or (k == nil and torch.is_tensor(x))
end
U.is_image_like = is_image_like

-- get_size(x): {H, W} of an image, video or mask (its last two dims) or the
-- canvas of boxes and keypoints
function U.get_size(x)
  local k = tv.kind(x)
  if k == "BoundingBoxes" or k == "KeyPoints" then
    local cs = x.canvas_size
    return {cs[1], cs[2]}
  end
  if x:dim() < 2 then
    error(("transforms: expected an image of at least 2 dims, got shape %s"):format(torch.pformat(x.shape)), 3)
  end
  return {x:size(-2), x:size(-1)}
end

-- query_size(flat, fname): the {H, W} every image, mask, box and keypoint
-- set of the sample shares (an error naming fname when they differ or when
-- there is none)
function U.query_size(flat, fname)
  local size
  for i = 1, flat.n do
    local x = flat[i]
    if torch.is_tensor(x) and (tv.kind(x) or is_image_like(x)) then
      local s = U.get_size(x)
      if size and (size[1] ~= s[1] or size[2] ~= s[2]) then
        error(("%s: the sample holds images, masks or boxes of different sizes: %dx%d and %dx%d"):format(
          fname, size[1], size[2], s[1], s[2]), 4)
      end
      size = s
    end
  end
  if not size then error(fname .. ": no image, video, mask, bounding boxes or keypoints in the sample", 4) end
  return size
end

-- query_chw(flat, fname): {C, H, W} of the images and videos of the sample
function U.query_chw(flat, fname)
  local chw
  for i = 1, flat.n do
    local x = flat[i]
    if torch.is_tensor(x) and is_image_like(x) then
      if x:dim() < 3 then
        error(("%s: expected images of shape [..., C, H, W], got %s"):format(fname, torch.pformat(x.shape)), 4)
      end
      local s = {x:size(-3), x:size(-2), x:size(-1)}
      if chw and (chw[1] ~= s[1] or chw[2] ~= s[2] or chw[3] ~= s[3]) then
        error(("%s: the sample holds images of different sizes"):format(fname), 4)
      end
      chw = s
    end
  end
  if not chw then error(fname .. ": no image or video in the sample", 4) end
  return chw
end

-- has_any(flat, kinds...): whether some leaf is of one of the kinds
-- ("tensor" for a plain tensor)
function U.has_any(flat, ...)
  for i = 1, flat.n do
    local x = flat[i]
    if torch.is_tensor(x) then
      local k = tv.kind(x) or "tensor"
      for _, want in ipairs({...}) do
        if k == want then return true end
      end
    end
  end
  return false
end

return U
