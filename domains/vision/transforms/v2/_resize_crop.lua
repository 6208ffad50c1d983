-- torch.vision.transforms.v2._resize_crop -- the resizing and cropping
-- transforms: Resize, RandomResize, RandomShortestSize, ScaleJitter,
-- RandomResizedCrop, RandomCrop, CenterCrop, FiveCrop, TenCrop, and
-- InterpolationMode. One draw per sample moves the image, its masks
-- (nearest), boxes and keypoints together. RandomResizedCrop and RandomCrop
-- take {per_sample=true}: each image of a batch gets its own crop, all
-- resampled in one kernel (torch._image_crop_resize).
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local G = require "torch.vision.transforms.v2._geom_util"
local Fr = require "torch.vision.transforms.v2.functional._resize_crop"
local Fp = require "torch.vision.transforms.v2.functional._pad_flip"
local Uu = require "torch.vision.transforms.v2._utils"
local tv = require "torch.vision.tv_tensors"

local Transform = T.Transform
local M = {InterpolationMode = Fr.InterpolationMode}

local function interp_opt(cls, v) return Fr._interp("v2." .. cls, v) end

local function aa_opt(cls, v)
  if v == nil then return true end
  if type(v) ~= "boolean" then error(("v2.%s: antialias must be a boolean, got %s"):format(cls, torch.pformat(v)), 4) end
  return v
end

local function resize_repr(self)
  return ("size=%s, interpolation=%s, antialias=%s"):format(torch.pformat(self.size), self.interpolation,
    tostring(self.antialias))
end

-- Resize(size[, interpolation=BILINEAR, max_size, antialias=true])
M.Resize = Transform:extend("Resize")
M.Resize.__prefix = "v2."
function M.Resize:__init(size, ...)
  local o = G.args("Resize", {"interpolation", "max_size", "antialias"}, nil, ...)
  if size ~= nil and size ~= false then
    if math.type(size) == "integer" then size = {size} end
    Fr._output_size("v2.Resize", {1, 1}, size, nil)
  elseif not o.max_size then
    error("v2.Resize: size can be nil only when max_size is given", 3)
  end
  self.size, self.max_size = size or false, o.max_size or false
  self.interpolation, self.antialias = interp_opt("Resize", o.interpolation), aa_opt("Resize", o.antialias)
end
function M.Resize:transform(inpt, params)
  return self:_call_kernel("resize", inpt, self.size or nil, self.interpolation, self.max_size, self.antialias)
end
M.Resize.extra_repr = resize_repr

-- RandomResize(min_size, max_size[, interpolation, antialias]): the shorter
-- side drawn uniformly from [min_size, max_size)
M.RandomResize = Transform:extend("RandomResize")
M.RandomResize.__prefix = "v2."
function M.RandomResize:__init(min_size, max_size, ...)
  local o = G.args("RandomResize", {"interpolation", "antialias"}, nil, ...)
  if math.type(min_size) ~= "integer" or math.type(max_size) ~= "integer" or min_size < 1 or max_size <= min_size then
    error(("v2.RandomResize: need integers 1 <= min_size < max_size, got %s and %s"):format(tostring(min_size),
      tostring(max_size)), 3)
  end
  self.min_size, self.max_size = min_size, max_size
  self.interpolation, self.antialias = interp_opt("RandomResize", o.interpolation), aa_opt("RandomResize", o.antialias)
end
function M.RandomResize:make_params(flat)
  return {size = {torch.randint(self.min_size, self.max_size, {1}):item()}}
end
function M.RandomResize:transform(inpt, p)
  return self:_call_kernel("resize", inpt, p.size, self.interpolation, nil, self.antialias)
end

-- RandomShortestSize(min_size[, max_size, interpolation, antialias]): the
-- shorter side one of min_size (a list or an integer), the longer capped
-- at max_size
M.RandomShortestSize = Transform:extend("RandomShortestSize")
M.RandomShortestSize.__prefix = "v2."
function M.RandomShortestSize:__init(min_size, ...)
  local o = G.args("RandomShortestSize", {"max_size", "interpolation", "antialias"}, nil, ...)
  if math.type(min_size) == "integer" then min_size = {min_size} end
  if type(min_size) ~= "table" or #min_size == 0 then
    error("v2.RandomShortestSize: min_size must be an integer or a list of integers", 3)
  end
  self.min_size, self.max_size = min_size, o.max_size or false
  self.interpolation = interp_opt("RandomShortestSize", o.interpolation)
  self.antialias = aa_opt("RandomShortestSize", o.antialias)
end
function M.RandomShortestSize:make_params(flat)
  local h, w = table.unpack(Uu.query_size(flat, "v2.RandomShortestSize"))
  local s = self.min_size[torch.randint(1, #self.min_size + 1, {1}):item()]
  local r = s / math.min(h, w)
  if self.max_size then r = math.min(r, self.max_size / math.max(h, w)) end
  return {size = {math.floor(h * r), math.floor(w * r)}}
end
function M.RandomShortestSize:transform(inpt, p)
  return self:_call_kernel("resize", inpt, p.size, self.interpolation, nil, self.antialias)
end

-- ScaleJitter(target_size[, scale_range={0.1, 2.0}, interpolation,
-- antialias]): scaled to fit target_size times a uniform factor
M.ScaleJitter = Transform:extend("ScaleJitter")
M.ScaleJitter.__prefix = "v2."
function M.ScaleJitter:__init(target_size, ...)
  local o = G.args("ScaleJitter", {"scale_range", "interpolation", "antialias"}, {scale_range = {0.1, 2.0}}, ...)
  self.target_size = G.size_hw("ScaleJitter", "target_size", target_size)
  self.scale_range = G.pair("ScaleJitter", "scale_range", o.scale_range)
  self.interpolation, self.antialias = interp_opt("ScaleJitter", o.interpolation), aa_opt("ScaleJitter", o.antialias)
end
function M.ScaleJitter:make_params(flat)
  local h, w = table.unpack(Uu.query_size(flat, "v2.ScaleJitter"))
  local lo, hi = self.scale_range[1], self.scale_range[2]
  local scale = lo + torch.rand(1):item() * (hi - lo)
  local r = math.min(self.target_size[2] / w, self.target_size[1] / h) * scale
  return {size = {math.floor(h * r), math.floor(w * r)}}
end
M.ScaleJitter.transform = M.RandomShortestSize.transform

-- the crop of torchvision's RandomResizedCrop for an h x w canvas: up to 10
-- draws of area (scale) and log-uniform aspect (ratio), else the central
-- crop clamped to the ratio range
local function rrc_draw(scale, ratio, h, w)
  local area = h * w
  local lr1, lr2 = math.log(ratio[1]), math.log(ratio[2])
  for _ = 1, 10 do
    local target = area * (scale[1] + torch.rand(1):item() * (scale[2] - scale[1]))
    local aspect = math.exp(lr1 + torch.rand(1):item() * (lr2 - lr1))
    local cw = Fr._pyround(math.sqrt(target * aspect))
    local ch = Fr._pyround(math.sqrt(target / aspect))
    if cw > 0 and cw <= w and ch > 0 and ch <= h then
      local top = torch.randint(0, h - ch + 1, {1}):item()
      local left = torch.randint(0, w - cw + 1, {1}):item()
      return {top = top, left = left, height = ch, width = cw}
    end
  end
  local in_ratio = w / h
  local cw, ch
  if in_ratio < math.min(ratio[1], ratio[2]) then
    cw = w
    ch = Fr._pyround(cw / math.min(ratio[1], ratio[2]))
  elseif in_ratio > math.max(ratio[1], ratio[2]) then
    ch = h
    cw = Fr._pyround(ch * math.max(ratio[1], ratio[2]))
  else
    cw, ch = w, h
  end
  return {top = (h - ch) // 2, left = (w - cw) // 2, height = ch, width = cw}
end

local batched = G.batched

-- RandomResizedCrop(size[, scale={0.08, 1}, ratio={3/4, 4/3},
-- interpolation=BILINEAR, antialias=true, {per_sample=}])
M.RandomResizedCrop = Transform:extend("RandomResizedCrop")
M.RandomResizedCrop.__prefix = "v2."
function M.RandomResizedCrop:__init(size, ...)
  local o = G.args("RandomResizedCrop", {"scale", "ratio", "interpolation", "antialias", "per_sample"},
    {scale = {0.08, 1.0}, ratio = {3 / 4, 4 / 3}}, ...)
  self.size = G.size_hw("RandomResizedCrop", "size", size)
  self.scale = G.pair("RandomResizedCrop", "scale", o.scale)
  self.ratio = G.pair("RandomResizedCrop", "ratio", o.ratio)
  self.interpolation = interp_opt("RandomResizedCrop", o.interpolation)
  self.antialias = aa_opt("RandomResizedCrop", o.antialias)
  self.per_sample = o.per_sample == true
end
-- _draw(h, w): one crop for an h x w canvas
function M.RandomResizedCrop:_draw(h, w) return rrc_draw(self.scale, self.ratio, h, w) end
function M.RandomResizedCrop:make_params(flat)
  local hw = Uu.query_size(flat, "v2.RandomResizedCrop")
  if not self.per_sample then return self:_draw(hw[1], hw[2]) end
  local list = {}
  for i = 1, G.per_sample_batch("RandomResizedCrop", flat) do list[i] = self:_draw(hw[1], hw[2]) end
  return {list = list}
end
function M.RandomResizedCrop:transform(inpt, p)
  if p.list then return batched(inpt, p.list, self.size[1], self.size[2], self.interpolation, self.antialias) end
  return self:_call_kernel("resized_crop", inpt, p.top, p.left, p.height, p.width, self.size, self.interpolation,
    self.antialias)
end
function M.RandomResizedCrop:extra_repr()
  return ("size=%s, scale=%s, ratio=%s, interpolation=%s, antialias=%s%s"):format(torch.pformat(self.size),
    torch.pformat(self.scale), torch.pformat(self.ratio), self.interpolation, tostring(self.antialias),
    self.per_sample and ", per_sample=true" or "")
end

-- padding_ltrb(cls, p): a padding option as {left, top, right, bottom}
local function padding_ltrb(cls, p)
  local l, r, t, b = Fp._parse_padding("v2." .. cls, p)
  return {l, t, r, b}
end

-- RandomCrop(size[, padding, pad_if_needed=false, fill=0,
-- padding_mode="constant", {per_sample=}])
M.RandomCrop = Transform:extend("RandomCrop")
M.RandomCrop.__prefix = "v2."
function M.RandomCrop:__init(size, ...)
  local cls = "RandomCrop"
  local o = G.args(cls, {"padding", "pad_if_needed", "fill", "padding_mode", "per_sample"}, nil, ...)
  self.size = G.size_hw(cls, "size", size)
  self.padding = (o.padding ~= nil and o.padding ~= false) and padding_ltrb(cls, o.padding) or false
  self.pad_if_needed = o.pad_if_needed == true
  self.fill = G.check_fill(cls, o.fill or 0)
  self.padding_mode = o.padding_mode or "constant"
  if not ({constant = true, edge = true, reflect = true, symmetric = true})[self.padding_mode] then
    error(("v2.RandomCrop: padding_mode must be 'constant', 'edge', 'reflect' or 'symmetric', got %s"):format(
      tostring(self.padding_mode)), 3)
  end
  self.per_sample = o.per_sample == true
end
-- _offsets(ph, pw): the crop's top and left in the padded canvas
function M.RandomCrop:_offsets(ph, pw)
  local ch, cw = self.size[1], self.size[2]
  local top = ph > ch and torch.randint(0, ph - ch + 1, {1}):item() or 0
  local left = pw > cw and torch.randint(0, pw - cw + 1, {1}):item() or 0
  return top, left
end
function M.RandomCrop:make_params(flat)
  local h, w = table.unpack(Uu.query_size(flat, "v2.RandomCrop"))
  local pad = self.padding and {table.unpack(self.padding)} or {0, 0, 0, 0}
  local ph, pw = h + pad[2] + pad[4], w + pad[1] + pad[3]
  local ch, cw = self.size[1], self.size[2]
  if self.pad_if_needed then
    if ph < ch then
      local d = ch - ph
      pad[2], pad[4], ph = pad[2] + d, pad[4] + d, ph + 2 * d
    end
    if pw < cw then
      local d = cw - pw
      pad[1], pad[3], pw = pad[1] + d, pad[3] + d, pw + 2 * d
    end
  end
  if ph < ch or pw < cw then
    error(("v2.RandomCrop: the crop %dx%d is larger than the (padded) input %dx%d"):format(ch, cw, ph, pw), 4)
  end
  local p = {needs_pad = pad[1] ~= 0 or pad[2] ~= 0 or pad[3] ~= 0 or pad[4] ~= 0, padding = pad,
    height = ch, width = cw}
  if self.per_sample then
    p.list = {}
    for i = 1, G.per_sample_batch("RandomCrop", flat) do
      local top, left = self:_offsets(ph, pw)
      p.list[i] = {top = top, left = left, height = ch, width = cw}
    end
    return p
  end
  p.top, p.left = self:_offsets(ph, pw)
  p.needs_crop = ph > ch or pw > cw
  return p
end
function M.RandomCrop:transform(inpt, p)
  if p.needs_pad then
    inpt = self:_call_kernel("pad", inpt, p.padding, G.fill_for(self.fill, inpt), self.padding_mode)
  end
  if p.list then return batched(inpt, p.list, p.height, p.width, "nearest", false) end
  if p.needs_crop then inpt = self:_call_kernel("crop", inpt, p.top, p.left, p.height, p.width) end
  return inpt
end
function M.RandomCrop:extra_repr()
  return ("size=%s, padding=%s, pad_if_needed=%s, padding_mode=%s%s"):format(torch.pformat(self.size),
    self.padding and torch.pformat(self.padding) or "nil", tostring(self.pad_if_needed), self.padding_mode,
    self.per_sample and ", per_sample=true" or "")
end

-- CenterCrop(size)
M.CenterCrop = Transform:extend("CenterCrop")
M.CenterCrop.__prefix = "v2."
function M.CenterCrop:__init(size) self.size = G.size_hw("CenterCrop", "size", size) end
function M.CenterCrop:transform(inpt) return self:_call_kernel("center_crop", inpt, self.size) end
function M.CenterCrop:extra_repr() return "size=" .. torch.pformat(self.size) end

-- FiveCrop(size) / TenCrop(size[, vertical_flip=false]): the image becomes a
-- list of crops; samples with boxes or masks are refused, as torchvision
local function refuse_non_images(cls, flat)
  if Uu.has_any(flat, "BoundingBoxes", "Mask", "KeyPoints") then
    error(("v2.%s: bounding boxes, masks and keypoints are not supported (it makes a list of crops)"):format(cls), 4)
  end
end

M.FiveCrop = Transform:extend("FiveCrop")
M.FiveCrop.__prefix = "v2."
function M.FiveCrop:__init(size) self.size = G.size_hw("FiveCrop", "size", size) end
function M.FiveCrop:_check_inputs(flat) refuse_non_images("FiveCrop", flat) end
function M.FiveCrop:transform(inpt) return self:_call_kernel("five_crop", inpt, self.size) end
function M.FiveCrop:extra_repr() return "size=" .. torch.pformat(self.size) end

M.TenCrop = Transform:extend("TenCrop")
M.TenCrop.__prefix = "v2."
function M.TenCrop:__init(size, vertical_flip)
  if type(vertical_flip) == "table" then
    vertical_flip = torch._check_options("v2.TenCrop", vertical_flip, "vertical_flip").vertical_flip
  end
  self.size, self.vertical_flip = G.size_hw("TenCrop", "size", size), vertical_flip == true
end
function M.TenCrop:_check_inputs(flat) refuse_non_images("TenCrop", flat) end
function M.TenCrop:transform(inpt) return self:_call_kernel("ten_crop", inpt, self.size, self.vertical_flip) end
function M.TenCrop:extra_repr()
  return ("size=%s, vertical_flip=%s"):format(torch.pformat(self.size), tostring(self.vertical_flip))
end

-- every geometry transform checks that the parts of a sample share one size
function M.Resize:_check_inputs(flat) G.same_size("Resize", flat) end
function M.RandomResize:_check_inputs(flat) G.same_size("RandomResize", flat) end
function M.RandomShortestSize:_check_inputs(flat) G.same_size("RandomShortestSize", flat) end
function M.ScaleJitter:_check_inputs(flat) G.same_size("ScaleJitter", flat) end
function M.RandomResizedCrop:_check_inputs(flat) G.same_size("RandomResizedCrop", flat) end
function M.RandomCrop:_check_inputs(flat) G.same_size("RandomCrop", flat) end
function M.CenterCrop:_check_inputs(flat) G.same_size("CenterCrop", flat) end

return M
