-- torch.vision.transforms.v2._warp_batch -- per-sample draws of the random
-- warps (_warp.lua with {per_sample=true}): for a batch [N, ...] of images,
-- videos and masks, N independent parameter draws as tensors, N sampling
-- grids built in one batched op and one grid sampling for the whole batch.
-- Also the elastic displacement field (gaussian-blurred uniform noise, as
-- torchvision draws it), which the one-draw path shares.
local torch = require "torch"
local nnF = require "torch.nn.functional"
local tv = require "torch.vision.tv_tensors"
local VU = require "torch.vision.transforms.v2._utils"
local G = require "torch.vision.transforms.v2.functional._warp_geom"
local S = require "torch.vision.transforms.v2.functional._warp_sample"

local WB = {}

-- round_half_even(x): x rounded to an integer, ties to even (Python's round)
function WB.round_half_even(x)
  local f = math.floor(x)
  local r = x - f
  if r > 0.5 or (r == 0.5 and f % 2 == 1) then f = f + 1 end
  return math.tointeger(f) or f
end

-- batch_size(self, flat): N, the first dim shared by the batch's images,
-- videos, masks and keypoints [N, ..., 2] (an error for boxes, whose rows
-- do not say which image they belong to, and for unbatched images)
function WB.batch_size(self, flat)
  local cls = "v2." .. self:_get_name()
  local n
  for i = 1, flat.n do
    local x = flat[i]
    local k = tv.kind(x)
    if k == "BoundingBoxes" then
      error(("%s: per_sample=true supports batches of images, videos, masks and keypoints, not %s"):format(cls, k), 0)
    end
    if torch.is_tensor(x) then
      local min_dim = (k == "Mask" or k == "KeyPoints") and 3 or 4
      if x:dim() < min_dim then
        error(("%s: per_sample=true needs a batch [N, ...] (an image batch is [N, C, H, W]), got %s %s"):format(
          cls, k or "image", torch.pformat(x.shape)), 0)
      end
      if n and x:size(1) ~= n then
        error(("%s: per_sample=true: the batch holds %d and %d samples"):format(cls, n, x:size(1)), 0)
      end
      n = x:size(1)
    end
  end
  if not n then error(cls .. ": per_sample=true: no image, video or mask in the sample", 0) end
  return n
end

-- uniform(n, a, b): n draws from U(a, b) as a float64 tensor
local function uniform(n, a, b) return torch.rand(n, {dtype = torch.float64}) * (b - a) + a end

local function zeros(n) return torch.zeros(n, {dtype = torch.float64}) end

-- centered(self, h, w): the transform's center relative to the image center
local function centered(self, h, w)
  if not self.center then return 0.0, 0.0 end
  return self.center[1] - 0.5 * w, self.center[2] - 0.5 * h
end

function WB.rotation_params(self, flat)
  local n = WB.batch_size(self, flat)
  local h, w = table.unpack(VU.query_size(flat, "v2.RandomRotation"))
  local angle = uniform(n, self.degrees[1], self.degrees[2])
  local cx, cy = centered(self, h, w)
  local theta = G.affine_theta(-angle, zeros(n), zeros(n), zeros(n) + 1, zeros(n), zeros(n), cx, cy)
  return {batch = true, n = n, angle = angle, theta = theta}
end

function WB.affine_params(self, flat)
  local n = WB.batch_size(self, flat)
  local h, w = table.unpack(VU.query_size(flat, "v2.RandomAffine"))
  local p = {batch = true, n = n, angle = uniform(n, self.degrees[1], self.degrees[2])}
  if self.translate then
    local mx, my = self.translate[1] * w, self.translate[2] * h
    p.tx, p.ty = uniform(n, -mx, mx):round(), uniform(n, -my, my):round()
  else
    p.tx, p.ty = zeros(n), zeros(n)
  end
  p.scale = self.scale and uniform(n, self.scale[1], self.scale[2]) or zeros(n) + 1
  p.shx, p.shy = zeros(n), zeros(n)
  if self.shear then
    p.shx = uniform(n, self.shear[1], self.shear[2])
    if #self.shear == 4 then p.shy = uniform(n, self.shear[3], self.shear[4]) end
  end
  local cx, cy = centered(self, h, w)
  p.theta = G.affine_theta(p.angle, p.tx, p.ty, p.scale, p.shx, p.shy, cx, cy)
  return p
end

function WB.perspective_params(self, flat)
  local n = WB.batch_size(self, flat)
  local h, w = table.unpack(VU.query_size(flat, "v2.RandomPerspective"))
  local W = require "torch.vision.transforms.v2._warp"
  local rows = {}
  for i = 1, n do
    local sp, ep = W._perspective_points(h, w, self.distortion_scale)
    rows[i] = G.perspective_coeffs("v2.RandomPerspective", sp, ep)
  end
  local apply = torch.rand(n, {dtype = torch.float64}):lt(self.p)
  return {batch = true, n = n, coefficients = torch.tensor(rows, {dtype = torch.float64}), apply = apply}
end

-- blur(x, k, sx, sy): x [N, 1, H, W] blurred by the k x k gaussian of
-- standard deviations sx (along W) and sy (along H), reflect-padded, as
-- torchvision's gaussian_blur (its separable factors)
local function kernel1d(k, sigma)
  local x = torch.arange(k, {dtype = torch.float32}) - (k - 1) * 0.5
  local pdf = (-(x / sigma):pow(2) * 0.5):exp()
  return pdf / pdf:sum()
end

local function blur(x, k, sx, sy)
  local p = k // 2
  x = nnF.pad(x, {p, p, p, p}, "reflect")
  x = nnF.conv2d(x, kernel1d(k, sx):view(1, 1, 1, k))
  return nnF.conv2d(x, kernel1d(k, sy):view(1, 1, k, 1))
end

-- displacement(n, h, w, alpha, sigma): n displacement fields [n, h, w, 2]
-- (float32): uniform noise in [-1, 1) per direction, blurred with the
-- gaussian of sigma (kernel size int(8 sigma + 1), made odd) and scaled
-- by alpha / size, as torchvision's ElasticTransform draws them
function WB.displacement(n, h, w, alpha, sigma)
  local function one(a, size)
    local d = torch.rand(n, 1, h, w) * 2 - 1
    if sigma[1] > 0 then
      local k = math.floor(8 * sigma[1] + 1)
      if k % 2 == 0 then k = k + 1 end
      if k // 2 >= h or k // 2 >= w then
        error(("v2.ElasticTransform: the blur kernel (%d pixels for sigma %g) needs an image larger than %dx%d")
          :format(k, sigma[1], h, w), 0)
      end
      d = blur(d, k, sigma[1], sigma[2])
    end
    return d * (a / size)
  end
  local dx, dy = one(alpha[1], h), one(alpha[2], w)
  return torch.cat({dx, dy}, 2):permute(1, 3, 4, 2):contiguous()
end

-- spec(params, dtype, device, h, w): the warps of the draws (see
-- _warp_sample.lua's warp)
local function spec(params, dtype, device, h, w)
  if params.theta then return {theta = params.theta, w = w, h = h, ow = w, oh = h} end
  if params.coefficients then return {coeffs = params.coefficients, ow = w, oh = h} end
  return {grid = G.identity_grid(h, w, dtype, device) + params.displacement:to({dtype = dtype, device = device})}
end

-- forward_points(params, pts, cs): the points pts [N, K, 2] (float) moved
-- by draw i of the affine or perspective params (the inverse maps of the
-- images), each sample by its own
local function forward_points(params, pts, cs)
  local dt, dev = pts.dtype, pts.device
  local x, y = pts:select(3, 1), pts:select(3, 2)
  local function col(t, j) return t:select(2, j):to({dtype = dt, device = dev}):unsqueeze(2) end
  if params.theta then
    -- x_in - c = A (x_out - c) + t  =>  x_out = A^-1 (x_in - c - t) + c
    local th = params.theta:reshape(-1, 6)
    local a, b, tx, c, d, ty = col(th, 1), col(th, 2), col(th, 3), col(th, 4), col(th, 5), col(th, 6)
    local det = a * d - b * c
    local u, v = x - (0.5 * cs[2]) - tx, y - (0.5 * cs[1]) - ty
    return torch.stack({(d * u - b * v) / det + 0.5 * cs[2], (a * v - c * u) / det + 0.5 * cs[1]}, 3)
  end
  local k = params.coefficients
  local function K(j) return col(k, j) end
  local den = K(1) * K(5) - K(2) * K(4)
  local inv = {(K(5) - K(6) * K(8)) / den, (K(3) * K(8) - K(2)) / den, (K(2) * K(6) - K(3) * K(5)) / den,
    (K(6) * K(7) - K(4)) / den, (K(1) - K(3) * K(7)) / den, (K(3) * K(4) - K(1) * K(6)) / den,
    (K(4) * K(8) - K(5) * K(7)) / den, (K(2) * K(7) - K(1) * K(8)) / den}
  local q = x * inv[7] + y * inv[8] + 1
  return torch.stack({(x * inv[1] + y * inv[2] + inv[3]) / q, (x * inv[4] + y * inv[5] + inv[6]) / q}, 3)
end

-- apply_points(self, kp, params): keypoints [N, ..., 2] with sample i moved
-- by draw i (not clamped, as torchvision's keypoint kernels)
local function apply_points(self, kp, params)
  local cs = kp.canvas_size
  local n = params.n
  local pts = (kp:is_floating_point() and kp or kp:float()):reshape(n, -1, 2)
  local out
  if params.displacement then
    local Bx = require "torch.vision.transforms.v2.functional._warp_boxes"
    local rows = {}
    for i = 1, n do
      rows[i] = Bx.elastic_points("v2." .. self:_get_name(), pts[i], cs, params.displacement:narrow(1, i, 1))
    end
    out = torch.stack(rows, 1)
  else
    out = forward_points(params, pts, cs)
    if params.apply then out = torch.where(params.apply:to(out.device):view(n, 1, 1), out, pts) end
  end
  out = out:reshape(kp.shape)
  if out.dtype ~= kp.dtype then out = out:to(kp.dtype) end
  return tv.wrap(out, {like = kp})
end

-- apply(self, inpt, params): the batch inpt with sample i warped by draw i
function WB.apply(self, inpt, params)
  local k = tv.kind(inpt)
  if k == "KeyPoints" then return apply_points(self, inpt, params) end
  local cls = "v2." .. self:_get_name()
  local W = require "torch.vision.transforms.v2._warp"
  local fill = W._get_fill(self.fill, inpt)
  local x, mode = inpt, self.interpolation
  local squeeze = false
  if k == "Mask" then
    mode = "nearest"
    if x:dim() == 3 then x, squeeze = x:unsqueeze(2), true end
  end
  local is_bool = x.dtype == torch.bool
  if is_bool then x = x:to(torch.uint8) end
  local C, H, Wd = G.check_image(cls, x)
  local fl = G.check_fill(cls, fill, C)
  local out = S.warp(x, spec(params, G.grid_dtype(x), x.device, H, Wd), mode, fl)
  if params.apply then
    local shape = {params.n}
    for _ = 2, x:dim() do shape[#shape + 1] = 1 end
    out = torch.where(params.apply:to(x.device):view(shape), out, x)
  end
  if is_bool then out = out:bool() end
  if squeeze then out = out:squeeze(2) end
  return k and tv.wrap(out, {like = inpt}) or out
end

return WB
