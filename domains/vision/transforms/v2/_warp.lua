-- torch.vision.transforms.v2._warp -- the random warps as torchvision's v2
-- classes: RandomRotation, RandomAffine, RandomPerspective and
-- ElasticTransform. One draw per call moves the image, its masks, boxes and
-- keypoints together (functional/_warp.lua's kernels). With
-- {per_sample=true} a batch [N, ...] of images, videos, masks and
-- keypoints gets N independent draws, applied in one batched grid sampling
-- (_warp_batch.lua); boxes are not batched that way.
local torch = require "torch"
local U = require "torch.nn.util"
local tv = require "torch.vision.tv_tensors"
local T = require "torch.vision.transforms.v2._transform"
local VU = require "torch.vision.transforms.v2._utils"
local G = require "torch.vision.transforms.v2.functional._warp_geom"
local WB = require "torch.vision.transforms.v2._warp_batch"

local Transform, RandomTransform = T.Transform, T.RandomTransform
local M = {}

-- uniform(a, b): one draw from U(a, b)
local function uniform(a, b) return a + (b - a) * torch.rand(1, {dtype = torch.float64}):item() end

-- setup_angle(cls, name, v, sizes): a number d >= 0 as {-d, d}, or a list of
-- one of the allowed lengths (torchvision's _setup_angle)
local function setup_angle(cls, name, v, sizes)
  if type(v) == "number" then
    if v < 0 then error(("v2.%s: if %s is a single number, it must be positive, got %s"):format(cls, name, v), 0) end
    return {-v + 0.0, v + 0.0}
  end
  if type(v) == "table" and sizes[#v] then return G.number_list("v2." .. cls, name, v, #v) end
  local lens = {}
  for n in pairs(sizes) do lens[#lens + 1] = n end
  table.sort(lens)
  error(("v2.%s: %s should be a number or a list of %s numbers, got %s"):format(cls, name,
    table.concat(lens, " or "), torch.pformat(v)), 0)
end

-- setup_fill(cls, fill): the fill per kind: {kind = value} from a number, a
-- list (one value per channel), false (none) or a table of kind names
-- ("Image", "Video", "Mask", "tensor" for plain tensors, "others")
local FILL_KEYS = {Image = true, Video = true, Mask = true, BoundingBoxes = true, KeyPoints = true, tensor = true,
  others = true}
local function setup_fill(cls, fill)
  if fill == nil then fill = 0 end
  if type(fill) == "table" and U.is_options(fill) then
    for k in pairs(fill) do
      if not FILL_KEYS[k] then
        error(("v2.%s: fill keys are kind names (Image, Video, Mask, tensor, others), got '%s'"):format(cls,
          tostring(k)), 0)
      end
    end
    return fill
  end
  if fill ~= false and type(fill) ~= "number" and type(fill) ~= "table" then
    error(("v2.%s: fill should be a number, a list of numbers or a table per kind, got %s"):format(cls,
      type(fill)), 0)
  end
  return {others = fill}
end

-- get_fill(fills, inpt): the fill for inpt's kind (false when none)
local function get_fill(fills, inpt)
  local f = fills[tv.kind(inpt) or "tensor"]
  if f == nil then f = fills.others end
  if f == nil then f = false end
  return f
end
M._get_fill = get_fill

-- leading(cls, first, names, ...): the required first argument and the
-- parsed optional ones, also when everything comes in one options table
-- (v2.RandomAffine{degrees = 10, scale = {0.9, 1.1}})
local function leading(cls, first, names, ...)
  if U.is_options(first) and select("#", ...) == 0 then
    local all = {"degrees"}
    for _, n in ipairs(names) do all[#all + 1] = n end
    torch._check_options("v2." .. cls, first, all)
    local rest = {}
    for k, v in pairs(first) do if k ~= "degrees" then rest[k] = v end end
    if first.degrees == nil then error(("v2.%s: missing argument 'degrees'"):format(cls), 0) end
    return first.degrees, U.args("v2." .. cls, names, nil, rest)
  end
  return first, U.args("v2." .. cls, names, nil, ...)
end

-- common options: interpolation checked, per_sample a boolean
local function setup_common(self, cls, o, default_mode)
  self.interpolation = G.interpolation("v2." .. cls, o.interpolation or default_mode)
  self.fill = setup_fill(cls, o.fill)
  self.per_sample = o.per_sample == true
end

local function setup_center(cls, center)
  if center == nil or center == false then return false end
  return G.number_list("v2." .. cls, "center", center, 2)
end

-- ---- RandomRotation ----

M.RandomRotation = Transform:extend("RandomRotation")

-- RandomRotation(degrees[, interpolation="nearest", expand=false, center=nil, fill=0, {per_sample=false}])
function M.RandomRotation:__init(degrees, ...)
  local cls = "RandomRotation"
  local o
  degrees, o = leading(cls, degrees, {"interpolation", "expand", "center", "fill", "per_sample"}, ...)
  self.degrees = setup_angle(cls, "degrees", degrees, {[2] = true})
  setup_common(self, cls, o, "nearest")
  self.expand, self.center = o.expand == true, setup_center(cls, o.center)
  if self.per_sample and self.expand then
    error("v2.RandomRotation: per_sample=true needs expand=false (the images of a batch share one size)", 0)
  end
end

function M.RandomRotation:make_params(flat)
  VU.query_size(flat, "v2.RandomRotation") -- (images, masks and boxes of one size)
  if self.per_sample then return WB.rotation_params(self, flat) end
  return {angle = uniform(self.degrees[1], self.degrees[2])}
end

function M.RandomRotation:transform(inpt, params)
  if params.batch then return WB.apply(self, inpt, params) end
  return self:_call_kernel("rotate", inpt, params.angle, self.interpolation, self.expand, self.center,
    get_fill(self.fill, inpt))
end

function M.RandomRotation:extra_repr()
  return ("degrees={%g, %g}, interpolation=%s, expand=%s"):format(self.degrees[1], self.degrees[2],
    self.interpolation, tostring(self.expand))
end

-- ---- RandomAffine ----

M.RandomAffine = Transform:extend("RandomAffine")

local function setup_range(cls, name, v, lo, hi)
  if v == nil or v == false then return false end
  v = G.number_list("v2." .. cls, name, v, 2)
  for _, x in ipairs(v) do
    if (lo and x < lo) or (hi and x > hi) then
      error(("v2.%s: %s values should be in [%s, %s], got %s"):format(cls, name, lo or "-inf", hi or "inf",
        torch.pformat(v)), 0)
    end
  end
  return v
end

-- RandomAffine(degrees[, translate=nil, scale=nil, shear=nil, interpolation="nearest", fill=0, center=nil,
-- {per_sample=false}])
function M.RandomAffine:__init(degrees, ...)
  local cls = "RandomAffine"
  local o
  degrees, o = leading(cls, degrees, {"translate", "scale", "shear", "interpolation", "fill", "center", "per_sample"},
    ...)
  self.degrees = setup_angle(cls, "degrees", degrees, {[2] = true})
  self.translate = setup_range(cls, "translate", o.translate, 0, 1)
  self.scale = setup_range(cls, "scale", o.scale, 0)
  if self.scale and (self.scale[1] <= 0 or self.scale[2] <= 0) then
    error(("v2.RandomAffine: scale values should be positive, got %s"):format(torch.pformat(self.scale)), 0)
  end
  self.shear = (o.shear ~= nil and o.shear ~= false) and setup_angle(cls, "shear", o.shear, {[2] = true, [4] = true})
    or false
  setup_common(self, cls, o, "nearest")
  self.center = setup_center(cls, o.center)
end

-- the torchvision draw for a canvas of height h and width w
function M.RandomAffine:make_params(flat)
  if self.per_sample then return WB.affine_params(self, flat) end
  local h, w = table.unpack(VU.query_size(flat, "v2.RandomAffine"))
  local angle = uniform(self.degrees[1], self.degrees[2])
  local translate = {0, 0}
  if self.translate then
    local mx, my = self.translate[1] * w, self.translate[2] * h
    translate = {WB.round_half_even(uniform(-mx, mx)), WB.round_half_even(uniform(-my, my))}
  end
  local scale = self.scale and uniform(self.scale[1], self.scale[2]) or 1.0
  local shear = {0.0, 0.0}
  if self.shear then
    shear[1] = uniform(self.shear[1], self.shear[2])
    if #self.shear == 4 then shear[2] = uniform(self.shear[3], self.shear[4]) end
  end
  return {angle = angle, translate = translate, scale = scale, shear = shear}
end

function M.RandomAffine:transform(inpt, params)
  if params.batch then return WB.apply(self, inpt, params) end
  return self:_call_kernel("affine", inpt, params.angle, params.translate, params.scale, params.shear,
    self.interpolation, get_fill(self.fill, inpt), self.center)
end

function M.RandomAffine:extra_repr()
  return ("degrees={%g, %g}, interpolation=%s"):format(self.degrees[1], self.degrees[2], self.interpolation)
end

-- ---- RandomPerspective ----

M.RandomPerspective = RandomTransform:extend("RandomPerspective")

-- RandomPerspective([distortion_scale=0.5, p=0.5, interpolation="bilinear", fill=0, {per_sample=false}])
function M.RandomPerspective:__init(...)
  local cls = "RandomPerspective"
  local o = U.args("v2." .. cls, {"distortion_scale", "p", "interpolation", "fill", "per_sample"}, nil, ...)
  local d = o.distortion_scale
  if d == nil then d = 0.5 end
  if type(d) ~= "number" or d < 0 or d > 1 then
    error(("v2.RandomPerspective: distortion_scale should be a number in [0, 1], got %s"):format(tostring(d)), 0)
  end
  RandomTransform.__init(self, o.p)
  self.distortion_scale = d
  setup_common(self, cls, o, "bilinear")
end

-- endpoints(h, w, d): torchvision's draw of the moved corners
function M._perspective_points(h, w, d)
  local hh, hw = h // 2, w // 2
  local bh, bw = math.floor(d * hh) + 1, math.floor(d * hw) + 1
  local function ri(lo, hi) return torch.randint(lo, hi, {1}):item() end
  local tl = {ri(0, bw), ri(0, bh)}
  local tr = {ri(w - bw, w), ri(0, bh)}
  local br = {ri(w - bw, w), ri(h - bh, h)}
  local bl = {ri(0, bw), ri(h - bh, h)}
  return {{0, 0}, {w - 1, 0}, {w - 1, h - 1}, {0, h - 1}}, {tl, tr, br, bl}
end

function M.RandomPerspective:make_params(flat)
  if self.per_sample then return WB.perspective_params(self, flat) end
  local h, w = table.unpack(VU.query_size(flat, "v2.RandomPerspective"))
  local sp, ep = M._perspective_points(h, w, self.distortion_scale)
  return {coefficients = G.perspective_coeffs("v2.RandomPerspective", sp, ep), startpoints = sp, endpoints = ep}
end

function M.RandomPerspective:transform(inpt, params)
  if params.batch then return WB.apply(self, inpt, params) end
  return self:_call_kernel("perspective", inpt, false, false, self.interpolation, get_fill(self.fill, inpt),
    params.coefficients)
end

-- per_sample draws one coin per image (in make_params), not one per call
function M.RandomPerspective:forward(...)
  if self.per_sample then return Transform.forward(self, ...) end
  return RandomTransform.forward(self, ...)
end

function M.RandomPerspective:extra_repr()
  return ("p=%s, distortion_scale=%s, interpolation=%s"):format(self.p, self.distortion_scale, self.interpolation)
end

-- ---- ElasticTransform ----

M.ElasticTransform = Transform:extend("ElasticTransform")

local function number_or_pair(cls, name, v)
  if type(v) == "number" then return {v + 0.0, v + 0.0} end
  if type(v) == "table" and #v == 1 then return G.number_list("v2." .. cls, name, {v[1], v[1]}, 2) end
  return G.number_list("v2." .. cls, name, v, 2)
end

-- ElasticTransform([alpha=50, sigma=5, interpolation="bilinear", fill=0, {per_sample=false}])
function M.ElasticTransform:__init(...)
  local cls = "ElasticTransform"
  local o = U.args("v2." .. cls, {"alpha", "sigma", "interpolation", "fill", "per_sample"}, {alpha = 50.0, sigma = 5.0},
    ...)
  self.alpha = number_or_pair(cls, "alpha", o.alpha)
  self.sigma = number_or_pair(cls, "sigma", o.sigma)
  setup_common(self, cls, o, "bilinear")
end

function M.ElasticTransform:make_params(flat)
  local h, w = table.unpack(VU.query_size(flat, "v2.ElasticTransform"))
  local n = self.per_sample and WB.batch_size(self, flat) or 1
  local d = WB.displacement(n, h, w, self.alpha, self.sigma)
  if self.per_sample then return {batch = true, n = n, displacement = d} end
  return {displacement = d}
end

function M.ElasticTransform:transform(inpt, params)
  if params.batch then return WB.apply(self, inpt, params) end
  return self:_call_kernel("elastic", inpt, params.displacement, self.interpolation, get_fill(self.fill, inpt))
end

function M.ElasticTransform:extra_repr()
  return ("alpha={%g, %g}, sigma={%g, %g}, interpolation=%s"):format(self.alpha[1], self.alpha[2], self.sigma[1],
    self.sigma[2], self.interpolation)
end

return M
