-- torch.vision.transforms.v2._auto_augment -- torchvision's v2
-- AutoAugment (the learned IMAGENET, CIFAR10 and SVHN policies),
-- RandAugment, TrivialAugmentWide and AugMix: their op spaces, magnitude
-- bins and sampling. The color ops come from this branch's functionals; the
-- geometric ones (shear, translate, rotate) call F.affine and F.rotate of
-- torch.vision.transforms.v2.functional at run time. One image or video
-- (or a batch, which gets the same ops) per sample; boxes, masks and
-- keypoints are refused, as torchvision.
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local U = require "torch.vision.transforms.v2._utils"
local S = require "torch.vision.transforms.v2._sample"
local C = require "torch.vision.transforms.v2.functional._common"
local tv = require "torch.vision.tv_tensors"

local Transform = T.Transform
local M = {}

local function F() return require "torch.vision.transforms.v2.functional" end

-- torchvision.transforms.v2.AutoAugmentPolicy
M.AutoAugmentPolicy = {IMAGENET = "imagenet", CIFAR10 = "cifar10", SVHN = "svhn"}

-- the learned policies: pairs of {op, probability, magnitude bin (0-based)
-- or false}, from "AutoAugment: Learning Augmentation Strategies from Data"
local POLICIES = {
  imagenet = {
    {{"Posterize", 0.4, 8}, {"Rotate", 0.6, 9}},
    {{"Solarize", 0.6, 5}, {"AutoContrast", 0.6, false}},
    {{"Equalize", 0.8, false}, {"Equalize", 0.6, false}},
    {{"Posterize", 0.6, 7}, {"Posterize", 0.6, 6}},
    {{"Equalize", 0.4, false}, {"Solarize", 0.2, 4}},
    {{"Equalize", 0.4, false}, {"Rotate", 0.8, 8}},
    {{"Solarize", 0.6, 3}, {"Equalize", 0.6, false}},
    {{"Posterize", 0.8, 5}, {"Equalize", 1.0, false}},
    {{"Rotate", 0.2, 3}, {"Solarize", 0.6, 8}},
    {{"Equalize", 0.6, false}, {"Posterize", 0.4, 6}},
    {{"Rotate", 0.8, 8}, {"Color", 0.4, 0}},
    {{"Rotate", 0.4, 9}, {"Equalize", 0.6, false}},
    {{"Equalize", 0.0, false}, {"Equalize", 0.8, false}},
    {{"Invert", 0.6, false}, {"Equalize", 1.0, false}},
    {{"Color", 0.6, 4}, {"Contrast", 1.0, 8}},
    {{"Rotate", 0.8, 8}, {"Color", 1.0, 2}},
    {{"Color", 0.8, 8}, {"Solarize", 0.8, 7}},
    {{"Sharpness", 0.4, 7}, {"Invert", 0.6, false}},
    {{"ShearX", 0.6, 5}, {"Equalize", 1.0, false}},
    {{"Color", 0.4, 0}, {"Equalize", 0.6, false}},
    {{"Equalize", 0.4, false}, {"Solarize", 0.2, 4}},
    {{"Solarize", 0.6, 5}, {"AutoContrast", 0.6, false}},
    {{"Invert", 0.6, false}, {"Equalize", 1.0, false}},
    {{"Color", 0.6, 4}, {"Contrast", 1.0, 8}},
    {{"Equalize", 0.8, false}, {"Equalize", 0.6, false}},
  },
  cifar10 = {
    {{"Invert", 0.1, false}, {"Contrast", 0.2, 6}},
    {{"Rotate", 0.7, 2}, {"TranslateX", 0.3, 9}},
    {{"Sharpness", 0.8, 1}, {"Sharpness", 0.9, 3}},
    {{"ShearY", 0.5, 8}, {"TranslateY", 0.7, 9}},
    {{"AutoContrast", 0.5, false}, {"Equalize", 0.9, false}},
    {{"ShearY", 0.2, 7}, {"Posterize", 0.3, 7}},
    {{"Color", 0.4, 3}, {"Brightness", 0.6, 7}},
    {{"Sharpness", 0.3, 9}, {"Brightness", 0.7, 9}},
    {{"Equalize", 0.6, false}, {"Equalize", 0.5, false}},
    {{"Contrast", 0.6, 7}, {"Sharpness", 0.6, 5}},
    {{"Color", 0.7, 7}, {"TranslateX", 0.5, 8}},
    {{"Equalize", 0.3, false}, {"AutoContrast", 0.4, false}},
    {{"TranslateY", 0.4, 3}, {"Sharpness", 0.2, 6}},
    {{"Brightness", 0.9, 6}, {"Color", 0.2, 8}},
    {{"Solarize", 0.5, 2}, {"Invert", 0.0, false}},
    {{"Equalize", 0.2, false}, {"AutoContrast", 0.6, false}},
    {{"Equalize", 0.2, false}, {"Equalize", 0.6, false}},
    {{"Color", 0.9, 9}, {"Equalize", 0.6, false}},
    {{"AutoContrast", 0.8, false}, {"Solarize", 0.2, 8}},
    {{"Brightness", 0.1, 3}, {"Color", 0.7, 0}},
    {{"Solarize", 0.4, 5}, {"AutoContrast", 0.9, false}},
    {{"TranslateY", 0.9, 9}, {"TranslateY", 0.7, 9}},
    {{"AutoContrast", 0.9, false}, {"Solarize", 0.8, 3}},
    {{"Equalize", 0.8, false}, {"Invert", 0.1, false}},
    {{"TranslateY", 0.7, 9}, {"AutoContrast", 0.9, false}},
  },
  svhn = {
    {{"ShearX", 0.9, 4}, {"Invert", 0.2, false}},
    {{"ShearY", 0.9, 8}, {"Invert", 0.7, false}},
    {{"Equalize", 0.6, false}, {"Solarize", 0.6, 6}},
    {{"Invert", 0.9, false}, {"Equalize", 0.6, false}},
    {{"Equalize", 0.6, false}, {"Rotate", 0.9, 3}},
    {{"ShearX", 0.9, 4}, {"AutoContrast", 0.8, false}},
    {{"ShearY", 0.9, 8}, {"Invert", 0.4, false}},
    {{"ShearY", 0.9, 5}, {"Solarize", 0.2, 6}},
    {{"Invert", 0.9, false}, {"AutoContrast", 0.8, false}},
    {{"Equalize", 0.6, false}, {"Rotate", 0.9, 3}},
    {{"ShearX", 0.9, 4}, {"Solarize", 0.3, 3}},
    {{"ShearY", 0.8, 8}, {"Invert", 0.7, false}},
    {{"Equalize", 0.9, false}, {"TranslateY", 0.6, 6}},
    {{"Invert", 0.9, false}, {"Equalize", 0.6, false}},
    {{"Contrast", 0.3, 3}, {"Rotate", 0.8, 4}},
    {{"Invert", 0.8, false}, {"TranslateY", 0.0, 2}},
    {{"ShearY", 0.7, 6}, {"Solarize", 0.4, 8}},
    {{"Invert", 0.6, false}, {"Rotate", 0.8, 4}},
    {{"ShearY", 0.3, 7}, {"TranslateX", 0.9, 3}},
    {{"ShearX", 0.1, 6}, {"Invert", 0.6, false}},
    {{"Solarize", 0.7, 2}, {"TranslateY", 0.6, 7}},
    {{"ShearY", 0.8, 4}, {"Invert", 0.8, false}},
    {{"ShearX", 0.7, 9}, {"TranslateY", 0.8, 3}},
    {{"ShearY", 0.8, 5}, {"AutoContrast", 0.7, false}},
    {{"ShearX", 0.7, 2}, {"Invert", 0.1, false}},
  },
}

-- magnitude bins: fn(num_bins, height, width) -> a 1-D tensor
local function lin(a, b) return function(n) return torch.linspace(a, b, n) end end
local function lin_w(f) return function(n, _, w) return torch.linspace(0, f * w, n) end end
local function lin_h(f) return function(n, h) return torch.linspace(0, f * h, n) end end
local function poster(top, div)
  return function(n) return (top - torch.arange(n) / ((n - 1) / div)):round():to(torch.int32) end
end

-- op spaces as ordered lists {name, bins or false, signed}
local AUTO_SPACE = {
  {"ShearX", lin(0, 0.3), true}, {"ShearY", lin(0, 0.3), true},
  {"TranslateX", lin_w(150 / 331), true}, {"TranslateY", lin_h(150 / 331), true},
  {"Rotate", lin(0, 30), true}, {"Brightness", lin(0, 0.9), true}, {"Color", lin(0, 0.9), true},
  {"Contrast", lin(0, 0.9), true}, {"Sharpness", lin(0, 0.9), true}, {"Posterize", poster(8, 4), false},
  {"Solarize", lin(1, 0), false}, {"AutoContrast", false, false}, {"Equalize", false, false},
  {"Invert", false, false},
}
local RAND_SPACE = {{"Identity", false, false}}
for i = 1, 13 do RAND_SPACE[#RAND_SPACE + 1] = AUTO_SPACE[i] end
local WIDE_SPACE = {
  {"Identity", false, false}, {"ShearX", lin(0, 0.99), true}, {"ShearY", lin(0, 0.99), true},
  {"TranslateX", lin(0, 32), true}, {"TranslateY", lin(0, 32), true}, {"Rotate", lin(0, 135), true},
  {"Brightness", lin(0, 0.99), true}, {"Color", lin(0, 0.99), true}, {"Contrast", lin(0, 0.99), true},
  {"Sharpness", lin(0, 0.99), true}, {"Posterize", poster(8, 6), false}, {"Solarize", lin(1, 0), false},
  {"AutoContrast", false, false}, {"Equalize", false, false},
}
local AUGMIX_PARTIAL = {
  {"ShearX", lin(0, 0.3), true}, {"ShearY", lin(0, 0.3), true},
  {"TranslateX", function(n, _, w) return torch.linspace(0, w / 3, n) end, true},
  {"TranslateY", function(n, h) return torch.linspace(0, h / 3, n) end, true},
  {"Rotate", lin(0, 30), true}, {"Posterize", poster(4, 4), false}, {"Solarize", lin(1, 0), false},
  {"AutoContrast", false, false}, {"Equalize", false, false},
}
local AUGMIX_ALL = {}
for _, e in ipairs(AUGMIX_PARTIAL) do AUGMIX_ALL[#AUGMIX_ALL + 1] = e end
for _, n in ipairs({"Brightness", "Color", "Contrast", "Sharpness"}) do
  AUGMIX_ALL[#AUGMIX_ALL + 1] = {n, lin(0, 0.9), true}
end
M._spaces = {auto = AUTO_SPACE, rand = RAND_SPACE, wide = WIDE_SPACE, augmix = AUGMIX_ALL,
  augmix_partial = AUGMIX_PARTIAL, policies = POLICIES}

local GEOMETRIC = {ShearX = true, ShearY = true, TranslateX = true, TranslateY = true, Rotate = true}

-- apply_op(img, name, magnitude, interpolation, fill): one op of the spaces
local function apply_op(img, name, mag, interpolation, fill)
  local f = F()
  local geo = {interpolation = interpolation, fill = fill}
  if name == "Identity" then return img
  elseif GEOMETRIC[name] and not (f.affine and f.rotate) then
    error(("auto augment: the op %s needs F.affine and F.rotate, which are not available"):format(name))
  elseif name == "ShearX" or name == "ShearY" then
    local deg = math.deg(math.atan(mag))
    local shear = name == "ShearX" and {deg, 0.0} or {0.0, deg}
    return f.affine(img, 0.0, {0, 0}, 1.0, shear, {interpolation = interpolation, fill = fill, center = {0, 0}})
  elseif name == "TranslateX" or name == "TranslateY" then
    local t = math.tointeger(mag >= 0 and math.floor(mag) or math.ceil(mag))
    local tr = name == "TranslateX" and {t, 0} or {0, t}
    return f.affine(img, 0.0, tr, 1.0, {0.0, 0.0}, geo)
  elseif name == "Rotate" then return f.rotate(img, mag, geo)
  elseif name == "Brightness" then return f.adjust_brightness(img, 1 + mag)
  elseif name == "Color" then return f.adjust_saturation(img, 1 + mag)
  elseif name == "Contrast" then return f.adjust_contrast(img, 1 + mag)
  elseif name == "Sharpness" then return f.adjust_sharpness(img, 1 + mag)
  elseif name == "Posterize" then return f.posterize(img, math.tointeger(mag >= 0 and math.floor(mag) or math.ceil(mag)))
  elseif name == "Solarize" then return f.solarize(img, C.max_value(img.dtype) * mag)
  elseif name == "AutoContrast" then return f.autocontrast(img)
  elseif name == "Equalize" then return f.equalize(img)
  elseif name == "Invert" then return f.invert(img)
  end
  error("auto augment: no op named " .. tostring(name))
end
M._apply_op = apply_op

-- magnitude(entry, num_bins, bin, h, w): the bin-th (0-based) magnitude of
-- an op, negated with probability 1/2 for signed ops; 0 for ops without
local function magnitude(entry, num_bins, bin, h, w)
  if not entry[2] then return 0.0 end
  local m = entry[2](num_bins, h, w)[bin + 1]:item()
  if entry[3] and torch.rand(1):item() <= 0.5 then m = -m end
  return m
end

local function random_item(space) return space[torch.randint(0, #space, {1}):item() + 1] end

local INTERP = {nearest = true, ["nearest-exact"] = true, nearest_exact = true, bilinear = true, bicubic = true,
  box = true, hamming = true, lanczos = true}

local Base = Transform:extend("_AutoAugmentBase")

-- common options: interpolation (a v2.InterpolationMode string), fill
function Base:_setup(cls, o, default_interp)
  local interp = o.interpolation or default_interp
  if type(interp) ~= "string" or not INTERP[interp:lower()] then
    error(("v2.%s: interpolation must be an InterpolationMode (\"nearest\", \"bilinear\", ...), got %s"):format(
      cls, tostring(interp)), 4)
  end
  self.interpolation = interp:lower()
  local fill = o.fill
  if fill ~= nil and fill ~= false and type(fill) ~= "number" and type(fill) ~= "table" then
    error(("v2.%s: fill must be a number or a list of numbers, got %s"):format(cls, tostring(fill)), 4)
  end
  self.fill = fill or nil
end

-- the sample's one image or video: its index among the leaves
function Base:_extract(sample)
  local cls = "v2." .. self:_get_name()
  local flat, spec = U.flatten(sample)
  local needs = U.needs_transform(flat, {Image = true, Video = true, tensor = true})
  local idx
  for i = 1, flat.n do
    local k = tv.kind(flat[i])
    if k == "BoundingBoxes" or k == "Mask" or k == "KeyPoints" then
      error(("%s: inputs of type %s are not supported"):format(cls, k), 3)
    end
    if needs[i] then
      if idx then
        error(cls .. ": auto augment transforms are only defined for a single image or video per sample", 3)
      end
      idx = i
    end
  end
  if not idx then error(cls .. ": found no image in the sample", 3) end
  local img = flat[idx]
  if img:dim() < 3 then
    error(("%s: expected an image [..., C, H, W], got shape %s"):format(cls, torch.pformat(img.shape)), 3)
  end
  return flat, spec, idx
end

function Base:forward(...)
  local n = select("#", ...)
  local sample = n == 1 and (...) or table.pack(...)
  local flat, spec, idx = self:_extract(sample)
  local img = flat[idx]
  local out = self:_augment(img, img:size(-2), img:size(-1))
  if tv.kind(img) and tv.kind(out) == nil then out = tv.wrap(out, {like = img}) end
  flat[idx] = out
  local res = U.unflatten(flat, spec)
  if n == 1 then return res end
  return table.unpack(res, 1, n)
end

-- AutoAugment([policy="imagenet", interpolation="nearest", fill])
M.AutoAugment = Base:extend("AutoAugment")
function M.AutoAugment:__init(...)
  local o = S.args("v2.AutoAugment", {"policy", "interpolation", "fill"}, {policy = "imagenet"}, ...)
  local pol = type(o.policy) == "string" and POLICIES[o.policy:lower()]
  if not pol then
    error(("v2.AutoAugment: policy must be one of AutoAugmentPolicy.IMAGENET, CIFAR10, SVHN, got %s"):format(
      tostring(o.policy)), 3)
  end
  self.policy, self._policies = o.policy:lower(), pol
  self:_setup("AutoAugment", o, "nearest")
end
local AUTO_INDEX = {}
for _, e in ipairs(AUTO_SPACE) do AUTO_INDEX[e[1]] = e end
function M.AutoAugment:_augment(img, h, w)
  local policy = self._policies[torch.randint(0, #self._policies, {1}):item() + 1]
  for _, step in ipairs(policy) do
    local name, prob, bin = step[1], step[2], step[3]
    if torch.rand(1):item() <= prob then
      local mag = bin and magnitude(AUTO_INDEX[name], 10, bin, h, w) or 0.0
      img = apply_op(img, name, mag, self.interpolation, self.fill)
    end
  end
  return img
end
function M.AutoAugment:extra_repr() return ("policy=%s, interpolation=%s"):format(self.policy, self.interpolation) end

-- RandAugment([num_ops=2, magnitude=9, num_magnitude_bins=31,
-- interpolation="nearest", fill])
M.RandAugment = Base:extend("RandAugment")
function M.RandAugment:__init(...)
  local cls = "v2.RandAugment"
  local o = S.args(cls, {"num_ops", "magnitude", "num_magnitude_bins", "interpolation", "fill"},
    {num_ops = 2, magnitude = 9, num_magnitude_bins = 31}, ...)
  if math.type(o.num_ops) ~= "integer" or o.num_ops < 0 then
    error(("%s: num_ops should be a non-negative integer, got %s"):format(cls, tostring(o.num_ops)), 3)
  end
  if math.type(o.num_magnitude_bins) ~= "integer" or o.num_magnitude_bins < 2 then
    error(("%s: num_magnitude_bins should be an integer >= 2, got %s"):format(cls, tostring(o.num_magnitude_bins)), 3)
  end
  if math.type(o.magnitude) ~= "integer" or o.magnitude < 0 or o.magnitude >= o.num_magnitude_bins then
    error(("%s: magnitude should be an integer in [0, num_magnitude_bins - 1 = %d], got %s"):format(cls,
      o.num_magnitude_bins - 1, tostring(o.magnitude)), 3)
  end
  self.num_ops, self.magnitude, self.num_magnitude_bins = o.num_ops, o.magnitude, o.num_magnitude_bins
  self:_setup("RandAugment", o, "nearest")
end
function M.RandAugment:_augment(img, h, w)
  for _ = 1, self.num_ops do
    local e = random_item(RAND_SPACE)
    img = apply_op(img, e[1], magnitude(e, self.num_magnitude_bins, self.magnitude, h, w), self.interpolation,
      self.fill)
  end
  return img
end
function M.RandAugment:extra_repr()
  return ("num_ops=%d, magnitude=%d, num_magnitude_bins=%d, interpolation=%s"):format(self.num_ops, self.magnitude,
    self.num_magnitude_bins, self.interpolation)
end

-- TrivialAugmentWide([num_magnitude_bins=31, interpolation="nearest", fill])
M.TrivialAugmentWide = Base:extend("TrivialAugmentWide")
function M.TrivialAugmentWide:__init(...)
  local cls = "v2.TrivialAugmentWide"
  local o = S.args(cls, {"num_magnitude_bins", "interpolation", "fill"}, {num_magnitude_bins = 31}, ...)
  if math.type(o.num_magnitude_bins) ~= "integer" or o.num_magnitude_bins < 2 then
    error(("%s: num_magnitude_bins should be an integer >= 2, got %s"):format(cls, tostring(o.num_magnitude_bins)), 3)
  end
  self.num_magnitude_bins = o.num_magnitude_bins
  self:_setup("TrivialAugmentWide", o, "nearest")
end
function M.TrivialAugmentWide:_augment(img, h, w)
  local e = random_item(WIDE_SPACE)
  local bin = e[2] and torch.randint(0, self.num_magnitude_bins, {1}):item() or 0
  return apply_op(img, e[1], magnitude(e, self.num_magnitude_bins, bin, h, w), self.interpolation, self.fill)
end
function M.TrivialAugmentWide:extra_repr()
  return ("num_magnitude_bins=%d, interpolation=%s"):format(self.num_magnitude_bins, self.interpolation)
end

-- dirichlet(alpha, k, n): [n, k] rows drawn from Dirichlet(alpha, ..., alpha)
local function dirichlet(alpha, k, n)
  local beta_gamma = require("torch.vision.transforms.v2._augment")._gamma
  local rows = {}
  for i = 1, n do
    local r, s = {}, 0
    for j = 1, k do r[j] = beta_gamma(alpha); s = s + r[j] end
    for j = 1, k do r[j] = r[j] / s end
    rows[i] = r
  end
  return torch.tensor(rows, {dtype = torch.float32})
end

-- AugMix([severity=3, mixture_width=3, chain_depth=-1, alpha=1, all_ops=true,
-- interpolation="bilinear", fill])
M.AugMix = Base:extend("AugMix")
function M.AugMix:__init(...)
  local cls = "v2.AugMix"
  local o = S.args(cls, {"severity", "mixture_width", "chain_depth", "alpha", "all_ops", "interpolation", "fill"},
    {severity = 3, mixture_width = 3, chain_depth = -1, alpha = 1.0, all_ops = true}, ...)
  if math.type(o.severity) ~= "integer" or o.severity < 1 or o.severity > 10 then
    error(("%s: the severity must be between [1, 10], got %s"):format(cls, tostring(o.severity)), 3)
  end
  if math.type(o.mixture_width) ~= "integer" or o.mixture_width < 1 then
    error(("%s: the mixture_width must be an integer >= 1, got %s"):format(cls, tostring(o.mixture_width)), 3)
  end
  if math.type(o.chain_depth) ~= "integer" then
    error(("%s: chain_depth must be an integer, got %s"):format(cls, tostring(o.chain_depth)), 3)
  end
  if type(o.alpha) ~= "number" or o.alpha <= 0 then
    error(("%s: alpha must be a positive number, got %s"):format(cls, tostring(o.alpha)), 3)
  end
  self.severity, self.mixture_width, self.chain_depth = o.severity, o.mixture_width, o.chain_depth
  self.alpha, self.all_ops = o.alpha, o.all_ops ~= false
  self:_setup("AugMix", o, "bilinear")
end

-- the image (a batch of them: each its own weights) mixed with
-- mixture_width chains of random ops, weights from Dirichlet draws
function M.AugMix:_augment(img, h, w)
  local space = self.all_ops and AUGMIX_ALL or AUGMIX_PARTIAL
  local shape = img.shape
  local want = tv.kind(img) == "Video" and 5 or 4
  local bshape = {}
  for _ = 1, math.max(want - #shape, 0) do bshape[#bshape + 1] = 1 end
  for _, s in ipairs(shape) do bshape[#bshape + 1] = s end
  local batch = img:reshape(bshape)
  local n = batch:size(1)
  local wshape = {n}
  for _ = 2, batch:dim() do wshape[#wshape + 1] = 1 end
  local m = dirichlet(self.alpha, 2, n):to(img.device)
  local weights = dirichlet(self.alpha, self.mixture_width, n):to(img.device) * m:select(2, 2):view(n, 1)
  local mix = m:select(2, 1):reshape(wshape) * batch
  for i = 1, self.mixture_width do
    local aug = batch
    local depth = self.chain_depth > 0 and self.chain_depth or torch.randint(1, 4, {1}):item()
    for _ = 1, depth do
      local e = random_item(space)
      local bin = e[2] and torch.randint(0, self.severity, {1}):item() or 0
      aug = apply_op(aug, e[1], magnitude(e, 10, bin, h, w), self.interpolation, self.fill)
    end
    mix = mix + weights:select(2, i):reshape(wshape) * aug
  end
  return mix:reshape(shape):to(img.dtype)
end
function M.AugMix:extra_repr()
  return ("severity=%d, mixture_width=%d, chain_depth=%d, alpha=%s, all_ops=%s, interpolation=%s"):format(
    self.severity, self.mixture_width, self.chain_depth, self.alpha, self.all_ops, self.interpolation)
end

return M
