-- torch.vision.tv_tensors -- tensors that say what they hold, as
-- torchvision.tv_tensors: Image, Video, Mask, BoundingBoxes (with format and
-- canvas_size) and KeyPoints (with canvas_size). A tv_tensor is an ordinary
-- tensor (a view of the data it was made from) carrying attributes
-- (torch._attrs): `b.format`, `b.canvas_size` read like fields, and the
-- transforms of torch.vision.transforms.v2 dispatch on its kind. Results of
-- plain tensor ops are plain tensors, as in torchvision; tv_tensors.wrap
-- gives a result the kind and metadata of another. A plain tensor in a
-- sample is taken as an image.
local torch = require "torch"

local tv = {}

-- torchvision.tv_tensors.BoundingBoxFormat: the box layouts (coordinates in
-- pixels, 0-based, continuous: x grows to the right, y downwards)
tv.BoundingBoxFormat = {XYXY = "XYXY", XYWH = "XYWH", CXCYWH = "CXCYWH"}

local KINDS = {Image = true, Video = true, Mask = true, BoundingBoxes = true, KeyPoints = true}

-- kind(x): "Image", "Video", "Mask", "BoundingBoxes" or "KeyPoints" for a
-- tv_tensor, nil for a plain tensor or anything else
function tv.kind(x)
  if not torch.is_tensor(x) then return nil end
  local a = torch._attrs(x)
  return a and a.kind
end

-- is_pure_tensor(x): a tensor that is no tv_tensor
function tv.is_pure_tensor(x) return torch.is_tensor(x) and tv.kind(x) == nil end

-- The printed form: "BoundingBoxes([...], format=XYXY, canvas_size={4, 6})".
local function repr(x, text)
  local a = torch._attrs(x)
  local body = text:match("^tensor%((.*)%)$") or text
  local pad = (" "):rep(#a.kind - #"tensor")
  body = body:gsub("\n", "\n" .. pad)
  local extra = ""
  if a.format then extra = extra .. ", format=" .. a.format end
  if a.canvas_size then extra = extra .. (", canvas_size={%d, %d}"):format(a.canvas_size[1], a.canvas_size[2]) end
  return a.kind .. "(" .. body .. extra .. ")"
end

-- (a module field, so that DataLoader worker processes can send it back by name)
tv._repr = repr

-- Canvas sizes are {height, width} of positive integers.
local function check_canvas(fname, cs)
  if type(cs) ~= "table" or math.type(cs[1]) ~= "integer" or math.type(cs[2]) ~= "integer" or cs[1] < 0
    or cs[2] < 0 then
    error(("%s: canvas_size must be {height, width} (integers), got %s"):format(fname, torch.pformat(cs)), 3)
  end
  return {cs[1], cs[2]}
end

local function check_format(fname, f)
  local up = type(f) == "string" and f:upper() or nil
  if not tv.BoundingBoxFormat[up] then
    error(("%s: format must be one of XYXY, XYWH, CXCYWH, got %s"):format(fname, tostring(f)), 3)
  end
  return up
end

-- as_tensor(fname, data, opts): data (a tensor, or numbers in nested tables)
-- as a tensor converted by opts' dtype, device and requires_grad
local function as_tensor(fname, data, opts)
  local t
  if torch.is_tensor(data) then
    t = data
  elseif type(data) == "table" or type(data) == "number" then
    t = torch.tensor(data)
  else
    error(("%s: expected a tensor or a table of numbers, got %s"):format(fname, type(data)), 3)
  end
  if opts.dtype or opts.device then t = t:to({dtype = opts.dtype, device = opts.device}) end
  if opts.requires_grad ~= nil then t = t:detach():requires_grad_(opts.requires_grad) end
  return t
end

-- make(t, attrs): a new tensor object viewing t's data, carrying attrs
local function make(t, attrs)
  local v = t:view(t.shape)
  attrs.__repr = repr
  return torch._attrs(v, attrs)
end

-- Image(data[, {dtype=, device=, requires_grad=}]): a [..., C, H, W] image
-- (a 2-D H x W input gets a channel dim, as torchvision)
function tv.Image(data, opts)
  opts = torch._check_options("tv_tensors.Image", opts or {}, "dtype device requires_grad")
  local t = as_tensor("tv_tensors.Image", data, opts)
  if t:dim() < 2 then
    error(("tv_tensors.Image: expected at least 2 dims (H, W), got shape %s"):format(torch.pformat(t.shape)), 2)
  end
  if t:dim() == 2 then t = t:unsqueeze(1) end
  return make(t, {kind = "Image"})
end

-- Video(data[, opts]): a [..., T, C, H, W] video
function tv.Video(data, opts)
  opts = torch._check_options("tv_tensors.Video", opts or {}, "dtype device requires_grad")
  local t = as_tensor("tv_tensors.Video", data, opts)
  if t:dim() < 4 then
    error(("tv_tensors.Video: expected at least 4 dims (T, C, H, W), got shape %s"):format(torch.pformat(t.shape)), 2)
  end
  return make(t, {kind = "Video"})
end

-- Mask(data[, opts]): a [..., H, W] segmentation or detection mask
function tv.Mask(data, opts)
  opts = torch._check_options("tv_tensors.Mask", opts or {}, "dtype device requires_grad")
  local t = as_tensor("tv_tensors.Mask", data, opts)
  if t:dim() < 2 then
    error(("tv_tensors.Mask: expected at least 2 dims (H, W), got shape %s"):format(torch.pformat(t.shape)), 2)
  end
  return make(t, {kind = "Mask"})
end

-- BoundingBoxes(data, {format=, canvas_size={H, W}, dtype=, device=,
-- requires_grad=}): N x 4 boxes (a single box of 4 numbers becomes 1 x 4)
function tv.BoundingBoxes(data, opts)
  local fname = "tv_tensors.BoundingBoxes"
  opts = torch._check_options(fname, opts or {}, "format canvas_size dtype device requires_grad")
  if opts.format == nil or opts.canvas_size == nil then
    error(fname .. ": format= and canvas_size= are required", 2)
  end
  local t = as_tensor(fname, data, opts)
  if t:dim() == 1 then t = t:unsqueeze(1) end
  if t:dim() ~= 2 or t:size(2) ~= 4 then
    error(("%s: expected N x 4 boxes, got shape %s"):format(fname, torch.pformat(t.shape)), 2)
  end
  return make(t, {kind = "BoundingBoxes", format = check_format(fname, opts.format),
    canvas_size = check_canvas(fname, opts.canvas_size)})
end

-- KeyPoints(data, {canvas_size={H, W}, ...}): [..., 2] points (x, y); a
-- single point of 2 numbers becomes 1 x 2
function tv.KeyPoints(data, opts)
  local fname = "tv_tensors.KeyPoints"
  opts = torch._check_options(fname, opts or {}, "canvas_size dtype device requires_grad")
  if opts.canvas_size == nil then error(fname .. ": canvas_size= is required", 2) end
  local t = as_tensor(fname, data, opts)
  if t:dim() == 1 then t = t:unsqueeze(1) end
  if t:dim() < 2 or t:size(-1) ~= 2 then
    error(("%s: expected [..., 2] points, got shape %s"):format(fname, torch.pformat(t.shape)), 2)
  end
  return make(t, {kind = "KeyPoints", canvas_size = check_canvas(fname, opts.canvas_size)})
end

-- wrap(t, {like=x[, format=, canvas_size=]}): t as a tv_tensor of x's kind
-- and metadata (overridden by the options); t plain when x is plain
function tv.wrap(t, opts)
  opts = torch._check_options("tv_tensors.wrap", opts or {}, "like format canvas_size")
  local a = torch.is_tensor(opts.like) and torch._attrs(opts.like)
  if not a then return t end
  local attrs = {kind = a.kind, format = a.format, canvas_size = a.canvas_size}
  if opts.format ~= nil then attrs.format = check_format("tv_tensors.wrap", opts.format) end
  if opts.canvas_size ~= nil then attrs.canvas_size = check_canvas("tv_tensors.wrap", opts.canvas_size) end
  return make(t, attrs)
end

-- the kinds, for the transforms' dispatch
tv._KINDS = KINDS

return tv
