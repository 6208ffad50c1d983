-- torch.vision.transforms.v2._augment -- torchvision's v2 RandomErasing
-- (per_sample: a rectangle per image, one masked fill), MixUp and CutMix
-- (on a batch of images and its labels: 1-based class indices, or
-- one-hot/probability rows) and JPEG. Boxes, masks and keypoints pass
-- RandomErasing unchanged; MixUp and CutMix refuse them, as torchvision.
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local U = require "torch.vision.transforms.v2._utils"
local S = require "torch.vision.transforms.v2._sample"
local FA = require "torch.vision.transforms.v2.functional._augment"
local tv = require "torch.vision.tv_tensors"

local Transform = T.Transform
local M = {}

local function kind_wrap(out, like) return tv.kind(like) and tv.wrap(out, {like = like}) or out end

-- pyround(x): x rounded half to even (Python's round)
local function pyround(x)
  local f = math.floor(x)
  local d = x - f
  if d > 0.5 then return f + 1 elseif d < 0.5 then return f end
  return f % 2 == 0 and f or f + 1
end

local function range2(cls, what, v)
  if type(v) ~= "table" or #v ~= 2 or type(v[1]) ~= "number" or type(v[2]) ~= "number" then
    error(("v2.%s: %s should be a list of two numbers, got %s"):format(cls, what, torch.pformat(v)), 4)
  end
  return {v[1], v[2]}
end

-- RandomErasing([p=0.5, scale={0.02, 0.33}, ratio={0.3, 3.3}, value=0,
-- inplace=false, {per_sample=}]): with probability p, a rectangle of
-- area fraction in scale and aspect ratio in ratio set to value (a number,
-- one per channel, or "random": normal noise)
M.RandomErasing = T.RandomTransform:extend("RandomErasing")
function M.RandomErasing:__init(...)
  local cls = "RandomErasing"
  local o = S.args("v2." .. cls, {"p", "scale", "ratio", "value", "inplace", "per_sample"},
    {p = 0.5, scale = {0.02, 0.33}, ratio = {0.3, 3.3}, value = 0, inplace = false}, ...)
  T.RandomTransform.__init(self, o.p)
  local v = o.value
  if type(v) == "string" then
    if v ~= "random" then error("v2.RandomErasing: if value is a string, it should be 'random'", 3) end
    self.value = false
  elseif type(v) == "number" then
    self.value = {v}
  elseif type(v) == "table" and #v > 0 then
    self.value = v
  else
    error(("v2.RandomErasing: value should be a number, a list of numbers or 'random', got %s"):format(
      tostring(v)), 3)
  end
  self.scale, self.ratio = range2(cls, "scale", o.scale), range2(cls, "ratio", o.ratio)
  if self.scale[1] < 0 or self.scale[2] > 1 then error("v2.RandomErasing: scale should be between 0 and 1", 3) end
  self.inplace = o.inplace == true
  self.per_sample = S.flag("v2." .. cls, "per_sample", o.per_sample)
  self._log_ratio = {math.log(self.ratio[1]), math.log(self.ratio[2])}
end

function M.RandomErasing:forward(...) return S.coin_forward(self, T, ...) end

function M.RandomErasing:_check_value(c)
  if self.value and #self.value ~= 1 and #self.value ~= c then
    error(("v2.RandomErasing: if value is a list, it should have either a single value or %d (number of input"
      .. " channels), got %d"):format(c, #self.value), 5)
  end
end

-- one rectangle: ten tries of (area, log aspect ratio) until it fits
function M.RandomErasing:make_params(flat)
  local chw = U.query_chw(flat, "v2.RandomErasing")
  local c, H, W = chw[1], chw[2], chw[3]
  self:_check_value(c)
  if self.per_sample then return self:_per_sample_params(flat, c, H, W) end
  local area = H * W
  for _ = 1, 10 do
    local ea = area * S.uniform(self.scale[1], self.scale[2])
    local ar = math.exp(S.uniform(self._log_ratio[1], self._log_ratio[2]))
    local h, w = pyround(math.sqrt(ea * ar)), pyround(math.sqrt(ea / ar))
    if h < H and w < W then
      local v
      if self.value then v = torch.tensor(self.value, {dtype = torch.float32}):view(-1, 1, 1)
      else v = torch.randn(c, h, w) end
      local i = torch.randint(0, H - h + 1, {1}):item()
      local j = torch.randint(0, W - w + 1, {1}):item()
      return {i = i, j = j, h = h, w = w, v = v}
    end
  end
  return {}
end

-- per_sample: the ten tries of all images at once; an image whose coin
-- failed or whose tries all failed gets an empty rectangle
function M.RandomErasing:_per_sample_params(flat, c, H, W)
  local n = S.batch_count(flat, "v2.RandomErasing")
  local ea = torch.empty(n, 10, {dtype = torch.float64}):uniform_(self.scale[1], self.scale[2]) * (H * W)
  local ar = torch.empty(n, 10, {dtype = torch.float64}):uniform_(self._log_ratio[1], self._log_ratio[2]):exp()
  local h, w = (ea * ar):sqrt():round(), (ea / ar):sqrt():round()
  local ok = h:lt(H):logical_and(w:lt(W))
  local first = ok:to(torch.int64):argmax(2, true) -- the first success (1-based)
  local any = ok:any(2)
  local coin = torch.rand(n):lt(self.p):logical_and(any)
  h = torch.where(coin, h:gather(2, first):squeeze(2), 0)
  w = torch.where(coin, w:gather(2, first):squeeze(2), 0)
  local i = (torch.rand(n, {dtype = torch.float64}) * (H - h + 1)):floor()
  local j = (torch.rand(n, {dtype = torch.float64}) * (W - w + 1)):floor()
  return {per_sample = n, i = i, j = j, h = h, w = w}
end

function M.RandomErasing:transform(inpt, p)
  local kind = tv.kind(inpt)
  if kind and kind ~= "Image" and kind ~= "Video" then return inpt end
  if p.per_sample then return self:_erase_per_sample(inpt, p) end
  if not p.v then return inpt end
  return self:_call_kernel("erase", inpt, p.i, p.j, p.h, p.w, p.v, self.inplace)
end

-- one where over a [n, 1, H, W] mask of the images' rectangles
function M.RandomErasing:_erase_per_sample(inpt, p)
  local H, W = inpt:size(-2), inpt:size(-1)
  local dev = inpt.device
  local function col(t) return S.per_image(t, inpt, "v2.RandomErasing") end
  local rows = torch.arange(H, {dtype = torch.float64, device = dev}):view(H, 1)
  local cols = torch.arange(W, {dtype = torch.float64, device = dev}):view(1, W)
  local i, j, h, w = col(p.i), col(p.j), col(p.h), col(p.w)
  local mask = rows:ge(i):logical_and(rows:lt(i + h)):logical_and(cols:ge(j)):logical_and(cols:lt(j + w))
  local v
  if self.value then
    v = torch.tensor(self.value, {dtype = torch.float32, device = dev}):view(-1, 1, 1):to(inpt.dtype)
  else
    v = torch.randn(inpt.shape, {device = dev}):to(inpt.dtype)
  end
  local out = torch.where(mask, v, inpt)
  if self.inplace then
    inpt:copy_(out)
    return inpt
  end
  return kind_wrap(out, inpt)
end

-- gamma(a): one Gamma(a, 1) draw (Marsaglia and Tsang; a < 1 through a + 1)
local function gamma(a)
  if a < 1 then return gamma(a + 1) * torch.rand(1, {dtype = torch.float64}):item() ^ (1 / a) end
  local d = a - 1 / 3
  local c = 1 / math.sqrt(9 * d)
  while true do
    local x = torch.randn(1, {dtype = torch.float64}):item()
    local v = (1 + c * x) ^ 3
    if v > 0 then
      local u = torch.rand(1, {dtype = torch.float64}):item()
      if math.log(u) < 0.5 * x * x + d - d * v + d * math.log(v) then return d * v end
    end
  end
end

-- beta(a): one Beta(a, a) draw
local function beta(a)
  local x, y = gamma(a), gamma(a)
  return x / (x + y)
end
M._beta, M._gamma = beta, gamma

-- the labels of a sample: the second element of a list, or the value of
-- the key "labels" (any case), else of the first key holding "label"
local function default_labels(sample)
  local s = sample
  if type(s) == "table" and getmetatable(s) == nil and s[1] ~= nil then s = s[2] end
  if torch.is_tensor(s) then return s end
  if type(s) ~= "table" or getmetatable(s) ~= nil then return nil end
  local keys = {}
  for k in pairs(s) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do if k:lower() == "labels" then return s[k] end end
  for _, k in ipairs(keys) do if k:lower():find("label", 1, true) then return s[k] end end
  return nil
end

local Base = Transform:extend("_BaseMixUpCutMix")

function Base:__init(...)
  local cls = "v2." .. self:_get_name()
  local o = S.args(cls, {"alpha", "num_classes", "labels_getter"}, {alpha = 1.0, labels_getter = "default"}, ...)
  if type(o.alpha) ~= "number" or o.alpha <= 0 then
    error(("%s: alpha must be a positive number, got %s"):format(cls, tostring(o.alpha)), 3)
  end
  if o.num_classes ~= nil and o.num_classes ~= false and (math.type(o.num_classes) ~= "integer" or o.num_classes < 1) then
    error(("%s: num_classes must be a positive integer, got %s"):format(cls, tostring(o.num_classes)), 3)
  end
  local g = o.labels_getter
  if g == "default" then g = default_labels
  elseif type(g) ~= "function" then
    error(("%s: labels_getter must be \"default\" or a function of the sample, got %s"):format(cls, tostring(g)), 3)
  end
  self.alpha, self.num_classes, self._labels_getter = o.alpha, o.num_classes or nil, g
end

-- mix_label(label, lam): one-hot (1-based indices) rows mixed with the
-- rows of the batch rolled by one
function Base:_mix_label(label, lam)
  local cls = "v2." .. self:_get_name()
  if label:dim() == 1 then
    if not self.num_classes then error(cls .. ": num_classes must be given when the labels are class indices", 4) end
    if label:is_floating_point() then error(cls .. ": class index labels must be integers", 4) end
    local lo, hi = label:min():item(), label:max():item()
    if lo < 1 or hi > self.num_classes then
      error(("%s: labels are 1-based class indices in [1, %d], got values in [%d, %d]"):format(cls, self.num_classes,
        lo, hi), 4)
    end
    label = torch.nn.functional.one_hot(label:to(torch.int64), self.num_classes)
  end
  if not label:is_floating_point() then label = label:float() end
  return label:roll(1, 1) * (1 - lam) + label * lam
end

function Base:_check_batch(inpt, n)
  local cls = "v2." .. self:_get_name()
  local want = tv.kind(inpt) == "Video" and 5 or 4
  if inpt:dim() ~= want then
    error(("%s: expected a batched input with %d dims, got %d (shape %s)"):format(cls, want, inpt:dim(),
      torch.pformat(inpt.shape)), 5)
  end
  if inpt:size(1) ~= n then
    error(("%s: the batch size of the image or video does not match the batch size of the labels: %d ~= %d"):format(
      cls, inpt:size(1), n), 5)
  end
end

function Base:forward(...)
  local cls = "v2." .. self:_get_name()
  local sample = select("#", ...) == 1 and (...) or table.pack(...)
  local flat, spec = U.flatten(sample)
  if U.has_any(flat, "BoundingBoxes", "Mask", "KeyPoints") then
    error(cls .. ": does not support bounding boxes, keypoints and masks", 2)
  end
  local labels = self._labels_getter(sample)
  if not torch.is_tensor(labels) then error(cls .. ": the labels must be a tensor, got " .. type(labels), 2) end
  if labels:dim() ~= 1 and labels:dim() ~= 2 then
    error(("%s: labels should be class indices of shape (batch_size) or probabilities of shape (batch_size,"
      .. " num_classes), got shape %s"):format(cls, torch.pformat(labels.shape)), 2)
  end
  if labels:dim() == 2 and self.num_classes and labels:size(2) ~= self.num_classes then
    error(("%s: labels have %d columns but num_classes is %d"):format(cls, labels:size(2), self.num_classes), 2)
  end
  local needs = U.needs_transform(flat, {Image = true, Video = true, tensor = true})
  local params = self:make_params(U.selected(flat, needs, labels))
  params.batch_size = labels:size(1)
  local out = {n = flat.n}
  for i = 1, flat.n do
    local x = flat[i]
    if rawequal(x, labels) then out[i] = self:_mix_label(x, params.lam)
    elseif needs[i] then
      self:_check_batch(x, params.batch_size)
      out[i] = kind_wrap(self:_mix(x, params), x)
    else out[i] = x end
  end
  local res = U.unflatten(out, spec)
  if select("#", ...) == 1 then return res end
  return table.unpack(res, 1, select("#", ...))
end

function Base:extra_repr() return ("alpha=%s, num_classes=%s"):format(self.alpha, tostring(self.num_classes)) end

-- MixUp({alpha=1, num_classes=, labels_getter="default"}): the batch mixed
-- with itself rolled by one, lam ~ Beta(alpha, alpha)
M.MixUp = Base:extend("MixUp")
function M.MixUp:make_params() return {lam = beta(self.alpha)} end
function M.MixUp:_mix(x, p)
  local out = x:roll(1, 1) * (1 - p.lam) + x * p.lam
  return out.dtype == x.dtype and out or out:to(x.dtype)
end

-- CutMix({alpha=1, num_classes=, labels_getter="default"}): a box of
-- area fraction about 1 - lam pasted from the batch rolled by one; the
-- labels mix by the box's true area
M.CutMix = Base:extend("CutMix")
function M.CutMix:make_params(flat)
  local lam = beta(self.alpha)
  local size = U.query_size(flat, "v2.CutMix")
  local H, W = size[1], size[2]
  local rx = torch.randint(0, W, {1}):item()
  local ry = torch.randint(0, H, {1}):item()
  local r = 0.5 * math.sqrt(1 - lam)
  local rw, rh = math.floor(r * W), math.floor(r * H)
  local x1, y1 = math.max(rx - rw, 0), math.max(ry - rh, 0)
  local x2, y2 = math.min(rx + rw, W), math.min(ry + rh, H)
  return {box = {x1, y1, x2, y2}, lam = 1 - (x2 - x1) * (y2 - y1) / (W * H)}
end
function M.CutMix:_mix(x, p)
  local b = p.box
  local H, W = x:size(-2), x:size(-1)
  local mask = FA._rect_mask(H, W, b[2], b[1], b[4] - b[2], b[3] - b[1], x.device)
  return torch.where(mask, x:roll(1, 1), x)
end

-- JPEG(quality): a JPEG round trip at a quality drawn from [lo, hi] (an
-- integer: that quality)
M.JPEG = Transform:extend("JPEG")
function M.JPEG:__init(quality)
  local q = quality
  if math.type(q) == "integer" then q = {q, q} end
  if type(q) ~= "table" or #q ~= 2 or math.type(q[1]) ~= "integer" or math.type(q[2]) ~= "integer"
    or not (1 <= q[1] and q[1] <= q[2] and q[2] <= 100) then
    error(("v2.JPEG: quality must be an integer from 1 to 100 or a range {lo, hi} of them, got %s"):format(
      torch.pformat(quality)), 3)
  end
  self.quality = q
end
function M.JPEG:make_params() return {quality = torch.randint(self.quality[1], self.quality[2] + 1, {1}):item()} end
function M.JPEG:transform(inpt, p) return self:_call_kernel("jpeg", inpt, p.quality) end
function M.JPEG:extra_repr() return ("quality=(%d, %d)"):format(self.quality[1], self.quality[2]) end

return M
