-- torch.vision.transforms.v2._color -- the color transforms of
-- torchvision's v2: ColorJitter, RandomPhotometricDistort,
-- RandomChannelPermutation, Grayscale, RandomGrayscale, RandomInvert,
-- RandomPosterize, RandomSolarize, RandomAdjustSharpness,
-- RandomAutocontrast, RandomEqualize. Masks, boxes and keypoints pass
-- through. With {per_sample=true} each image of a batch gets its own draw
-- (coin, factors, op order), applied in batched ops, never a loop over
-- images. ColorJitter runs in one fused kernel on CPU images.
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local U = require "torch.vision.transforms.v2._utils"
local S = require "torch.vision.transforms.v2._sample"
local D = require "torch.vision.transforms.v2.functional._dispatch"
local tv = require "torch.vision.tv_tensors"

local Transform, RandomTransform = T.Transform, T.RandomTransform
local M = {}

local function F() return require "torch.vision.transforms.v2.functional" end
local FC = require "torch.vision.transforms.v2.functional._color"

-- jitter_range(cls, name, v, center, lo, hi, clip): torchvision's check of
-- a ColorJitter argument: a number r gives [center - r, center + r] (the
-- low end clipped at 0 when clip), a pair is taken as it is; nil when
-- v is nil/false or the range is the point center
local function jitter_range(cls, name, v, center, lo, hi, clip)
  if v == nil or v == false then return nil end
  local r
  if type(v) == "number" then
    if v < 0 then error(("v2.%s: if %s is a single number, it must be non negative, got %s"):format(cls, name, v), 4) end
    r = {center - v, center + v}
    if clip then r[1] = math.max(r[1], 0) end
  elseif type(v) == "table" and #v == 2 and type(v[1]) == "number" and type(v[2]) == "number" then
    r = {v[1], v[2]}
  else
    error(("v2.%s: %s=%s should be a single number or a list of two numbers"):format(cls, name, torch.pformat(v)), 4)
  end
  if not (lo <= r[1] and r[1] <= r[2] and r[2] <= hi) then
    error(("v2.%s: %s values should be between %s and %s, got {%s, %s}"):format(cls, name, lo, hi, r[1], r[2]), 4)
  end
  if r[1] == center and r[2] == center then return nil end
  return r
end

local function fmt_range(r) return r and ("(%g, %g)"):format(r[1], r[2]) or "None" end

-- ColorJitter([brightness, contrast, saturation, hue, {per_sample=}])
M.ColorJitter = Transform:extend("ColorJitter")
local JITTER = {"adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue"}
local JKEYS = {"brightness", "contrast", "saturation", "hue"}

function M.ColorJitter:__init(...)
  local o = S.args("v2.ColorJitter", {"brightness", "contrast", "saturation", "hue", "per_sample"}, {}, ...)
  local inf = math.huge
  self.brightness = jitter_range("ColorJitter", "brightness", o.brightness, 1, 0, inf, true)
  self.contrast = jitter_range("ColorJitter", "contrast", o.contrast, 1, 0, inf, true)
  self.saturation = jitter_range("ColorJitter", "saturation", o.saturation, 1, 0, inf, true)
  self.hue = jitter_range("ColorJitter", "hue", o.hue, 0, -0.5, 0.5, false)
  self.per_sample = S.flag("v2.ColorJitter", "per_sample", o.per_sample)
end

-- one draw: fn_idx = randperm(4) (the order of the four ops, 1-based),
-- then the factors in the order brightness, contrast, saturation, hue;
-- per_sample: an order per image and [n] tensors of factors
function M.ColorJitter:make_params(flat)
  if self.per_sample then return self:_per_sample_params(flat) end
  local p = {fn_idx = torch.randperm(4):totable()}
  for i, key in ipairs(JKEYS) do
    local r = self[key]
    if r then p[JITTER[i]] = S.uniform(r[1], r[2]) end
  end
  return p
end

function M.ColorJitter:_per_sample_params(flat)
  local n = S.batch_count(flat, "v2.ColorJitter")
  local order = torch.rand(n, 4):argsort(2)
  local p = {per_sample = n, order = order}
  for i, key in ipairs(JKEYS) do
    local r = self[key]
    if r then p[JITTER[i]] = torch.empty(n):uniform_(r[1], r[2]) end
  end
  return p
end

-- groups(order, n): groups[k][op], the 1-based indices of the images whose
-- k-th op is op (order [n, 4])
local function groups(order, n)
  local ot = order:totable()
  local gs = {}
  for k = 1, 4 do
    local g = {}
    for i = 1, n do
      local op = ot[i][k]
      g[op] = g[op] or {}
      g[op][#g[op] + 1] = i
    end
    gs[k] = g
  end
  return gs
end

-- fused(inpt, factors, order): an image or video through the fused kernel
-- (functional._color's _jitter), its kind kept; nil where it does not apply
local function fused(inpt, factors, order)
  local x = tv.kind(inpt) and F().to_pure_tensor(inpt) or inpt
  local y = FC._jitter(x, factors, order)
  return y and (tv.kind(inpt) and tv.wrap(y, {like = inpt}) or y)
end

-- one draw: the steps with a factor, in the drawn order, in the fused
-- kernel where it applies, else one functional after another
function M.ColorJitter:transform(inpt, params)
  if params.per_sample then return self:_transform_per_sample(inpt, params) end
  if not D.kernel("adjust_brightness", inpt) then return inpt end
  local order, factors = {}, {}
  for i, name in ipairs(JITTER) do factors[i] = params[name] end
  for _, id in ipairs(params.fn_idx) do
    if factors[id] then order[#order + 1] = id end
  end
  if #order == 0 then return inpt end
  local y = fused(inpt, factors, order)
  if y then return y end
  local out = inpt
  for _, id in ipairs(params.fn_idx) do
    local f = params[JITTER[id]]
    if f then out = self:_call_kernel(JITTER[id], out, f) end
  end
  return out
end

-- per_sample in the fused kernel: row i of the factors and orders for
-- image i (each frame of video i), the steps without a factor coded 0
local function fused_per_sample(inpt, params)
  local n = params.per_sample
  if inpt:dim() < 3 or inpt:numel() == 0 then return nil end
  local frames = inpt:numel() // (n * inpt:size(-3) * inpt:size(-2) * inpt:size(-1))
  if frames * n * inpt:size(-3) * inpt:size(-2) * inpt:size(-1) ~= inpt:numel() then return nil end
  local factors, order = torch.zeros(n, 4, {dtype = torch.float64}), params.order
  for i, name in ipairs(JITTER) do
    local f = params[name]
    if f then factors:select(2, i):copy_(f) else order = order:masked_fill(order:eq(i), 0) end
  end
  if frames ~= 1 then
    factors = factors:view(n, 1, 4):expand(n, frames, 4):reshape(n * frames, 4)
    order = order:view(n, 1, 4):expand(n, frames, 4):reshape(n * frames, 4)
  end
  return fused(inpt, factors, order)
end

-- per_sample: the fused kernel, or else step k applies, to each group of
-- images whose k-th op is op, that op with their factors (index_select,
-- kernel, index_copy)
function M.ColorJitter:_transform_per_sample(inpt, params)
  if not D.kernel("adjust_brightness", inpt) then return inpt end
  local y = fused_per_sample(inpt, params)
  if y then return y end
  local n = params.per_sample
  local x = torch.is_tensor(inpt) and inpt:view(inpt.shape) or inpt
  if tv.kind(x) then x = F().to_pure_tensor(x) end
  local shape = x.shape
  local lead = S.lead(inpt)
  local rest = {n}
  for d = lead + 1, #shape do rest[#rest + 1] = shape[d] end
  x = x:reshape(rest)
  local fshape = {-1}
  for _ = 2, #rest do fshape[#fshape + 1] = 1 end
  local Fn = F()
  local gs = groups(params.order, n)
  for k = 1, 4 do
    for op, ids in pairs(gs[k]) do
      local f = params[JITTER[op]]
      if f then
        local kernel = Fn[JITTER[op] .. "_image"]
        if #ids == n then
          x = kernel(x, f:to(x.device):view(fshape))
        else
          local idx = torch.tensor(ids, {dtype = torch.int64, device = x.device})
          local sub = kernel(x:index_select(1, idx), f:to(x.device):index_select(1, idx):view(fshape))
          x = x:index_copy(1, idx, sub)
        end
      end
    end
  end
  x = x:reshape(shape)
  return tv.kind(inpt) and tv.wrap(x, {like = inpt}) or x
end

function M.ColorJitter:extra_repr()
  return ("brightness=%s, contrast=%s, saturation=%s, hue=%s"):format(fmt_range(self.brightness),
    fmt_range(self.contrast), fmt_range(self.saturation), fmt_range(self.hue))
end

-- RandomPhotometricDistort([brightness={0.875, 1.125}, contrast={0.5, 1.5},
-- saturation={0.5, 1.5}, hue={-0.05, 0.05}, p=0.5]): each of the four
-- jitters and a channel shuffle applied with probability p, contrast
-- before or after saturation and hue at random (SSD's distortion)
M.RandomPhotometricDistort = Transform:extend("RandomPhotometricDistort")

function M.RandomPhotometricDistort:__init(...)
  local cls = "RandomPhotometricDistort"
  local o = S.args("v2." .. cls, {"brightness", "contrast", "saturation", "hue", "p"},
    {brightness = {0.875, 1.125}, contrast = {0.5, 1.5}, saturation = {0.5, 1.5}, hue = {-0.05, 0.05}, p = 0.5}, ...)
  local inf = math.huge
  self.brightness = jitter_range(cls, "brightness", o.brightness, 1, 0, inf, true)
  self.contrast = jitter_range(cls, "contrast", o.contrast, 1, 0, inf, true)
  self.saturation = jitter_range(cls, "saturation", o.saturation, 1, 0, inf, true)
  self.hue = jitter_range(cls, "hue", o.hue, 0, -0.5, 0.5, false)
  if type(o.p) ~= "number" or o.p < 0 or o.p > 1 then
    error(("v2.%s: p should be a number in [0, 1], got %s"):format(cls, tostring(o.p)), 3)
  end
  self.p = o.p
end

function M.RandomPhotometricDistort:make_params(flat)
  local c = U.query_chw(flat, "v2.RandomPhotometricDistort")[1]
  local p = {}
  for i, key in ipairs(JKEYS) do
    local r = self[key]
    if torch.rand(1):item() < self.p and r then p[JITTER[i]] = S.uniform(r[1], r[2]) end
  end
  p.contrast_before = torch.rand(1):item() < 0.5
  if torch.rand(1):item() < self.p then p.permutation = torch.randperm(c):totable() end
  return p
end

-- the drawn steps (contrast before or after saturation and hue) in the
-- fused kernel where it applies, then the channel shuffle
function M.RandomPhotometricDistort:transform(inpt, p)
  if not D.kernel("adjust_brightness", inpt) then return inpt end
  local factors, order = {}, {}
  for i, name in ipairs(JITTER) do factors[i] = p[name] end
  for _, id in ipairs(p.contrast_before and {1, 2, 3, 4} or {1, 3, 4, 2}) do
    if factors[id] then order[#order + 1] = id end
  end
  local x = #order > 0 and fused(inpt, factors, order)
  if x then
    if p.permutation then x = self:_call_kernel("permute_channels", x, p.permutation) end
    return x
  end
  x = inpt
  if p.adjust_brightness then x = self:_call_kernel("adjust_brightness", x, p.adjust_brightness) end
  if p.adjust_contrast and p.contrast_before then x = self:_call_kernel("adjust_contrast", x, p.adjust_contrast) end
  if p.adjust_saturation then x = self:_call_kernel("adjust_saturation", x, p.adjust_saturation) end
  if p.adjust_hue then x = self:_call_kernel("adjust_hue", x, p.adjust_hue) end
  if p.adjust_contrast and not p.contrast_before then x = self:_call_kernel("adjust_contrast", x, p.adjust_contrast) end
  if p.permutation then x = self:_call_kernel("permute_channels", x, p.permutation) end
  return x
end

-- RandomChannelPermutation(): the channels in a random order
M.RandomChannelPermutation = Transform:extend("RandomChannelPermutation")
function M.RandomChannelPermutation:make_params(flat)
  local c = U.query_chw(flat, "v2.RandomChannelPermutation")[1]
  return {permutation = torch.randperm(c):totable()}
end
function M.RandomChannelPermutation:transform(inpt, p) return self:_call_kernel("permute_channels", inpt, p.permutation) end

-- Grayscale([num_output_channels=1])
M.Grayscale = Transform:extend("Grayscale")
function M.Grayscale:__init(...)
  local o = S.args("v2.Grayscale", {"num_output_channels"}, {num_output_channels = 1}, ...)
  if o.num_output_channels ~= 1 and o.num_output_channels ~= 3 then
    error(("v2.Grayscale: num_output_channels must be 1 or 3, got %s"):format(tostring(o.num_output_channels)), 3)
  end
  self.num_output_channels = o.num_output_channels
end
function M.Grayscale:transform(inpt)
  return self:_call_kernel("rgb_to_grayscale", inpt, self.num_output_channels)
end
function M.Grayscale:extra_repr() return "num_output_channels=" .. self.num_output_channels end

-- random_class(name, fname, init, args): a RandomTransform applying the
-- functional fname (with args(self)) with probability p; per_sample gives
-- each image its own coin
local function random_class(name, fname, names, defaults, check, args)
  local cls = RandomTransform:extend(name)
  function cls:__init(...)
    local o = S.args("v2." .. name, names, defaults, ...)
    RandomTransform.__init(self, o.p)
    if check then check(self, o) end
    self.per_sample = S.flag("v2." .. name, "per_sample", o.per_sample)
  end
  function cls:forward(...) return S.coin_forward(self, T, ...) end
  function cls:make_params(flat)
    local p = {}
    if self.per_sample then p.coins = S.coins(self, flat) end
    if self._extra_params then self:_extra_params(flat, p) end
    return p
  end
  function cls:transform(inpt, p)
    return S.select(self, p, inpt, self:_call_kernel(fname, inpt, args(self, p)))
  end
  return cls
end

-- RandomGrayscale([p=0.1, {per_sample=}]): grayscale with as many channels
-- as the input
M.RandomGrayscale = random_class("RandomGrayscale", "rgb_to_grayscale", {"p", "per_sample"}, {p = 0.1}, nil,
  function(_, p) return p.channels end)
function M.RandomGrayscale:_extra_params(flat, p) p.channels = U.query_chw(flat, "v2.RandomGrayscale")[1] end

-- RandomInvert([p=0.5, {per_sample=}])
M.RandomInvert = random_class("RandomInvert", "invert", {"p", "per_sample"}, {}, nil, function() end)

-- RandomPosterize(bits[, p=0.5, {per_sample=}])
M.RandomPosterize = random_class("RandomPosterize", "posterize", {"bits", "p", "per_sample"}, {}, function(self, o)
  if math.type(o.bits) ~= "integer" or o.bits < 0 or o.bits > 8 then
    error(("v2.RandomPosterize: bits must be an integer in [0, 8], got %s"):format(tostring(o.bits)), 4)
  end
  self.bits = o.bits
end, function(self) return self.bits end)

-- RandomSolarize(threshold[, p=0.5, {per_sample=}])
M.RandomSolarize = random_class("RandomSolarize", "solarize", {"threshold", "p", "per_sample"}, {}, function(self, o)
  if type(o.threshold) ~= "number" then
    error(("v2.RandomSolarize: threshold must be a number, got %s"):format(tostring(o.threshold)), 4)
  end
  self.threshold = o.threshold
end, function(self) return self.threshold end)

-- RandomAdjustSharpness(sharpness_factor[, p=0.5, {per_sample=}])
M.RandomAdjustSharpness = random_class("RandomAdjustSharpness", "adjust_sharpness",
  {"sharpness_factor", "p", "per_sample"}, {}, function(self, o)
  if type(o.sharpness_factor) ~= "number" or o.sharpness_factor < 0 then
    error(("v2.RandomAdjustSharpness: sharpness_factor must be a non-negative number, got %s"):format(
      tostring(o.sharpness_factor)), 4)
  end
  self.sharpness_factor = o.sharpness_factor
end, function(self) return self.sharpness_factor end)

-- RandomAutocontrast([p=0.5, {per_sample=}])
M.RandomAutocontrast = random_class("RandomAutocontrast", "autocontrast", {"p", "per_sample"}, {}, nil, function() end)

-- RandomEqualize([p=0.5, {per_sample=}])
M.RandomEqualize = random_class("RandomEqualize", "equalize", {"p", "per_sample"}, {}, nil, function() end)

return M
