-- torch.vision.transforms.v2.functional._augment -- erase and jpeg of
-- torchvision's v2.functional. erase's i, j (top, left) are 0-based pixel
-- coordinates as torchvision's; the rectangle is filled through a mask (one
-- where), so batches with one rectangle per image take the same path.
local torch = require "torch"
local D = require "torch.vision.transforms.v2.functional._dispatch"
local C = require "torch.vision.transforms.v2.functional._common"

local M = {}

-- rect_mask(H, W, i, j, h, w, device): bool [H, W], true inside rows
-- i..i+h-1 and columns j..j+w-1 (0-based)
local function rect_mask(H, W, i, j, h, w, device)
  local rows = torch.arange(H, {device = device})
  local cols = torch.arange(W, {device = device})
  local r = rows:ge(i):logical_and(rows:lt(i + h))
  local c = cols:ge(j):logical_and(cols:lt(j + w))
  return r:view(H, 1):logical_and(c:view(1, W))
end
M._rect_mask = rect_mask

-- erase_image(image, i, j, h, w, v[, inplace=false]): the h x w rectangle
-- at top i, left j (0-based) set to v (a tensor broadcasting to
-- [..., C, h, w], or a number)
function M.erase_image(image, i, j, h, w, v, inplace)
  local fname = "F.erase"
  if type(inplace) == "table" then inplace = torch._check_options(fname, inplace, "inplace").inplace end
  C.check_image(fname, image)
  for _, a in ipairs({i, j, h, w}) do
    if math.type(a) ~= "integer" or a < 0 then
      error(("%s: i, j, h, w must be non-negative integers, got %s, %s, %s, %s"):format(fname, tostring(i),
        tostring(j), tostring(h), tostring(w)), 2)
    end
  end
  local H, W = image:size(-2), image:size(-1)
  h, w = math.max(0, math.min(h, H - i)), math.max(0, math.min(w, W - j))
  if type(v) == "number" then v = torch.full({1}, v, {device = image.device}) end
  if not torch.is_tensor(v) then error(("%s: v must be a tensor or a number, got %s"):format(fname, type(v)), 2) end
  if h == 0 or w == 0 then return inplace and image or image:clone() end
  local shape = image.shape
  shape[#shape - 1], shape[#shape] = h, w
  local ok, vv = pcall(function() return v:to({dtype = image.dtype, device = image.device}):expand(shape) end)
  if not ok then
    error(("%s: v of shape %s does not broadcast to the erased region %s"):format(fname, torch.pformat(v.shape),
      torch.pformat(shape)), 2)
  end
  if inplace then
    image:narrow(-2, i + 1, h):narrow(-1, j + 1, w):copy_(vv)
    return image
  end
  local mask = rect_mask(H, W, i, j, h, w, image.device)
  if v:dim() < 2 or (v:size(-1) == 1 and v:size(-2) == 1) then
    -- a value per channel (or one value): broadcast under the mask
    local shp = image.shape
    shp[#shp - 1], shp[#shp] = 1, 1
    return torch.where(mask, vv:narrow(-2, 1, 1):narrow(-1, 1, 1):reshape(shp), image)
  end
  local full = torch.nn.functional.pad(vv, {j, W - j - w, i, H - i - h})
  return torch.where(mask, full, image)
end

-- jpeg_image(image, quality): the image after a JPEG round trip at
-- quality (1..100), image by image through torch.vision.io
function M.jpeg_image(image, quality)
  local fname = "F.jpeg"
  C.check_image(fname, image)
  if math.type(quality) ~= "integer" or quality < 1 or quality > 100 then
    error(("%s: quality must be an integer in [1, 100], got %s"):format(fname, tostring(quality)), 2)
  end
  if image.dtype ~= torch.uint8 then
    error(("%s: the image must be uint8, got %s"):format(fname, tostring(image.dtype)), 2)
  end
  local c = image:size(-3)
  if c ~= 1 and c ~= 3 then error(("%s: images must have 1 or 3 channels, got %d"):format(fname, c), 2) end
  local io = torch.vision.io
  local shape = image.shape
  local flat = image:reshape(-1, c, shape[#shape - 1], shape[#shape])
  local dev = image.device
  if tostring(dev) ~= "cpu" then flat = flat:cpu() end
  local outs = {}
  for k = 1, flat:size(1) do outs[k] = io.decode_jpeg(io.encode_jpeg(flat[k]:contiguous(), quality)) end
  local out = torch.stack(outs, 1):view(shape)
  if tostring(dev) ~= "cpu" then out = out:to(dev) end
  return out
end

for _, name in ipairs({"erase", "jpeg"}) do
  local k = M[name .. "_image"]
  M[name .. "_video"] = k
  D.define(M, name)
  D.register(name, "Image", k)
  D.register(name, "Video", k)
end

return M
