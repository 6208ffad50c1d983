-- torch.vision.transforms.v2._misc -- torchvision's v2 Identity, Lambda,
-- LinearTransformation, Normalize, GaussianBlur (per_sample: a sigma per
-- image, one grouped convolution), GaussianNoise, ToDtype and
-- ConvertImageDtype.
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local U = require "torch.vision.transforms.v2._utils"
local S = require "torch.vision.transforms.v2._sample"
local FM = require "torch.vision.transforms.v2.functional._misc"
local tv = require "torch.vision.tv_tensors"

local Transform = T.Transform
local M = {}

local IMAGE_TYPES = {Image = true, Video = true, tensor = true}

-- Identity(): the sample unchanged
M.Identity = Transform:extend("Identity")
function M.Identity:forward(...) return ... end

-- Lambda(fn, types...): fn applied to every leaf of the sample whose kind
-- is among types (tv_tensors kind names, "tensor" for any tensor, or Lua
-- type names such as "number"); no types: every leaf
M.Lambda = Transform:extend("Lambda")
function M.Lambda:__init(fn, ...)
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    error(("v2.Lambda: the argument should be callable, got %s"):format(type(fn)), 3)
  end
  self.lambd, self.types = fn, {...}
end
function M.Lambda:_matches(x)
  if #self.types == 0 then return true end
  for _, t in ipairs(self.types) do
    if t == type(x) or (torch.is_tensor(x) and (t == "tensor" or t == tv.kind(x))) then return true end
  end
  return false
end
function M.Lambda:_apply(sample)
  local flat, spec = U.flatten(sample)
  local out = {n = flat.n}
  for i = 1, flat.n do out[i] = self:_matches(flat[i]) and self.lambd(flat[i]) or flat[i] end
  return U.unflatten(out, spec)
end
function M.Lambda:extra_repr()
  return #self.types > 0 and ("types=" .. table.concat(self.types, ", ")) or ""
end

-- LinearTransformation(transformation_matrix, mean_vector): each image
-- flattened (C*H*W), centered by mean_vector and multiplied by the matrix
M.LinearTransformation = Transform:extend("LinearTransformation")
M.LinearTransformation._transformed_types = IMAGE_TYPES
function M.LinearTransformation:__init(m, mean)
  local cls = "v2.LinearTransformation"
  if not torch.is_tensor(m) or not torch.is_tensor(mean) then error(cls .. ": expected two tensors", 3) end
  if m:dim() ~= 2 or m:size(1) ~= m:size(2) then
    error(("%s: transformation_matrix should be square, got shape %s"):format(cls, torch.pformat(m.shape)), 3)
  end
  if mean:dim() ~= 1 or mean:size(1) ~= m:size(1) then
    error(("%s: mean_vector should have the same length %d as any one of the dimensions of the"
      .. " transformation_matrix, got shape %s"):format(cls, m:size(1), torch.pformat(mean.shape)), 3)
  end
  if tostring(m.device) ~= tostring(mean.device) or m.dtype ~= mean.dtype then
    error(("%s: transformation_matrix and mean_vector must share device and dtype (%s %s vs %s %s)"):format(cls,
      tostring(m.device), tostring(m.dtype), tostring(mean.device), tostring(mean.dtype)), 3)
  end
  self.transformation_matrix, self.mean_vector = m, mean
end
function M.LinearTransformation:transform(inpt)
  local cls = "v2.LinearTransformation"
  if inpt:dim() < 3 then error(cls .. ": expected images [..., C, H, W]", 4) end
  local n = inpt:size(-3) * inpt:size(-2) * inpt:size(-1)
  if n ~= self.transformation_matrix:size(1) then
    error(("%s: input tensor and transformation matrix have incompatible shape: [%d x %d x %d] != %d"):format(cls,
      inpt:size(-3), inpt:size(-2), inpt:size(-1), self.transformation_matrix:size(1)), 4)
  end
  if tostring(inpt.device) ~= tostring(self.mean_vector.device) then
    error(("%s: input on %s, transformation on %s"):format(cls, tostring(inpt.device),
      tostring(self.mean_vector.device)), 4)
  end
  local flat = inpt:reshape(-1, n) - self.mean_vector
  local out = flat:mm(self.transformation_matrix:to(flat.dtype)):reshape(inpt.shape)
  return tv.kind(inpt) and tv.wrap(out, {like = inpt}) or out
end

-- Normalize(mean, std[, inplace=false])
M.Normalize = Transform:extend("Normalize")
function M.Normalize:__init(mean, std, ...)
  local o = S.args("v2.Normalize", {"inplace"}, {inplace = false}, ...)
  if type(mean) == "number" then mean = {mean} end
  if type(std) == "number" then std = {std} end
  if type(mean) ~= "table" or type(std) ~= "table" then error("v2.Normalize: mean and std must be lists of numbers", 3) end
  self.mean, self.std, self.inplace = mean, std, o.inplace
end
function M.Normalize:transform(inpt)
  return self:_call_kernel("normalize", inpt, self.mean, self.std, self.inplace)
end
function M.Normalize:extra_repr()
  return ("mean=%s, std=%s, inplace=%s"):format(torch.pformat(self.mean), torch.pformat(self.std), self.inplace)
end

-- pair(cls, what, v): a number or a list of one or two numbers as two
local function pair(cls, what, v)
  if type(v) == "number" then return {v, v} end
  if type(v) == "table" and (#v == 1 or #v == 2) then return {v[1], v[2] or v[1]} end
  error(("v2.%s: %s should be a number or a list of one or two numbers, got %s"):format(cls, what, torch.pformat(v)), 4)
end

-- GaussianBlur(kernel_size[, sigma={0.1, 2.0}, {per_sample=}]): a blur
-- whose sigma is drawn from U(sigma) per call (per image with per_sample)
M.GaussianBlur = Transform:extend("GaussianBlur")
function M.GaussianBlur:__init(kernel_size, ...)
  local o = S.args("v2.GaussianBlur", {"sigma", "per_sample"}, {sigma = {0.1, 2.0}}, ...)
  local ks = pair("GaussianBlur", "kernel_size", kernel_size)
  for _, k in ipairs(ks) do
    if math.type(k) ~= "integer" or k <= 0 or k % 2 == 0 then
      error(("v2.GaussianBlur: kernel size value should be an odd and positive number, got %s"):format(
        torch.pformat(kernel_size)), 3)
    end
  end
  local s = pair("GaussianBlur", "sigma", o.sigma)
  if not (type(s[1]) == "number" and type(s[2]) == "number" and s[1] > 0 and s[1] <= s[2]) then
    error(("v2.GaussianBlur: sigma values should be positive and of the form {min, max}, got %s"):format(
      torch.pformat(o.sigma)), 3)
  end
  self.kernel_size, self.sigma = ks, s
  self.per_sample = S.flag("v2.GaussianBlur", "per_sample", o.per_sample)
end
function M.GaussianBlur:make_params(flat)
  if self.per_sample then
    return {sigmas = torch.empty(S.batch_count(flat, "v2.GaussianBlur")):uniform_(self.sigma[1], self.sigma[2])}
  end
  local s = S.uniform(self.sigma[1], self.sigma[2])
  return {sigma = {s, s}}
end
function M.GaussianBlur:transform(inpt, p)
  if p.sigmas then return self:_blur_per_sample(inpt, p.sigmas) end
  return self:_call_kernel("gaussian_blur", inpt, self.kernel_size, p.sigma)
end

-- taps(k, sigmas, dtype, device): [n, k] Gaussian taps, one row per sigma
local function taps(k, sigmas, dtype, device)
  local lim = (k - 1) / (2 * math.sqrt(2))
  local x = torch.linspace(-lim, lim, k, {dtype = dtype, device = device}):view(1, k)
  return (x / sigmas:to({dtype = dtype, device = device}):view(-1, 1)):pow(2):neg():softmax(2)
end

-- per_sample: the images as one [1, n*C, H, W] stack, each plane with the
-- taps of its image's sigma, in one grouped convolution per axis
function M.GaussianBlur:_blur_per_sample(inpt, sigmas)
  local k = tv.kind(inpt)
  if not (k == nil or k == "Image" or k == "Video") then return inpt end
  local fname = "v2.GaussianBlur"
  local shape = inpt.shape
  local c, h, w = inpt:size(-3), inpt:size(-2), inpt:size(-1)
  local per = inpt:numel() // (S.count(inpt) * c * h * w) -- frames per video
  local fp = inpt:is_floating_point()
  local x = inpt:reshape(1, -1, h, w)
  if not fp then x = x:to(torch.float32) end
  S.per_image(sigmas, inpt, fname) -- checks the image count
  local kx, ky = self.kernel_size[1], self.kernel_size[2]
  local planes = x:size(2)
  local function expand(t, kk, view)
    local n = t:size(1)
    return t:view(n, 1, kk):expand(n, per * c, kk):reshape(planes, 1, view[1], view[2])
  end
  local wx = expand(taps(kx, sigmas, x.dtype, x.device), kx, {1, kx})
  local wy = expand(taps(ky, sigmas, x.dtype, x.device), ky, {ky, 1})
  local out = FM._blur_planes(x, kx, ky, wx, wy):reshape(shape)
  if not fp then out = out:round():to(inpt.dtype) end
  return k and tv.wrap(out, {like = inpt}) or out
end
function M.GaussianBlur:extra_repr()
  return ("kernel_size=(%d, %d), sigma=(%g, %g)"):format(self.kernel_size[1], self.kernel_size[2], self.sigma[1],
    self.sigma[2])
end

-- GaussianNoise([mean=0, sigma=0.1, clip=true])
M.GaussianNoise = Transform:extend("GaussianNoise")
function M.GaussianNoise:__init(...)
  local o = S.args("v2.GaussianNoise", {"mean", "sigma", "clip"}, {mean = 0, sigma = 0.1, clip = true}, ...)
  if type(o.mean) ~= "number" or type(o.sigma) ~= "number" or o.sigma < 0 then
    error(("v2.GaussianNoise: mean must be a number and sigma a non-negative number, got %s, %s"):format(
      tostring(o.mean), tostring(o.sigma)), 3)
  end
  self.mean, self.sigma, self.clip = o.mean, o.sigma, o.clip
end
function M.GaussianNoise:transform(inpt)
  return self:_call_kernel("gaussian_noise", inpt, self.mean, self.sigma, self.clip)
end

local DTYPE_KEYS = {Image = true, Video = true, Mask = true, BoundingBoxes = true, KeyPoints = true, tensor = true,
  others = true}

local function is_dtype(d) return (type(d) == "userdata" or type(d) == "table") and d.is_floating_point ~= nil end

-- ToDtype(dtype[, scale=false]): dtype a torch dtype (images and videos
-- converted, the rest passes) or a table by kind {Image=, Video=, Mask=,
-- BoundingBoxes=, KeyPoints=, tensor= (plain tensors), others=}, false
-- meaning "leave as it is"
M.ToDtype = Transform:extend("ToDtype")
function M.ToDtype:__init(dtype, ...)
  local cls = "v2.ToDtype"
  if type(dtype) == "table" and getmetatable(dtype) == nil and (dtype.dtype ~= nil or dtype.scale ~= nil) then
    local o = torch._check_options(cls, dtype, "dtype scale")
    dtype = o.dtype
    self.scale = o.scale == true
  else
    self.scale = S.args(cls, {"scale"}, {scale = false}, ...).scale == true
  end
  if type(dtype) == "table" and not is_dtype(dtype) then
    for k, v in pairs(dtype) do
      if not DTYPE_KEYS[k] then
        error(("%s: unknown key '%s' in the dtype table (Image, Video, Mask, BoundingBoxes, KeyPoints, tensor,"
          .. " others)"):format(cls, tostring(k)), 3)
      end
      if v ~= false and not is_dtype(v) then error(("%s: dtype[%s] must be a dtype or false"):format(cls, k), 3) end
    end
  elseif not is_dtype(dtype) then
    error(("%s: dtype must be a torch dtype or a table of them by kind, got %s"):format(cls, tostring(dtype)), 3)
  end
  self.dtype = dtype
end
function M.ToDtype:transform(inpt)
  local kind = tv.kind(inpt) or "tensor"
  local dtype
  if is_dtype(self.dtype) then
    if not IMAGE_TYPES[kind] then return inpt end
    dtype = self.dtype
  elseif self.dtype[kind] ~= nil then
    dtype = self.dtype[kind]
  elseif self.dtype.others ~= nil then
    dtype = self.dtype.others
  else
    error(("v2.ToDtype: no dtype was given for %s inputs; add others=false to pass the rest through"):format(kind), 4)
  end
  if dtype == false then return inpt end
  return self:_call_kernel("to_dtype", inpt, dtype, self.scale)
end
function M.ToDtype:extra_repr() return ("dtype=%s, scale=%s"):format(torch.pformat(self.dtype), self.scale) end

-- ConvertImageDtype([dtype=torch.float32]): to_dtype with scale, images only
M.ConvertImageDtype = Transform:extend("ConvertImageDtype")
M.ConvertImageDtype._transformed_types = IMAGE_TYPES
function M.ConvertImageDtype:__init(...)
  local o = S.args("v2.ConvertImageDtype", {"dtype"}, {dtype = torch.float32}, ...)
  if not is_dtype(o.dtype) then error("v2.ConvertImageDtype: dtype must be a torch dtype", 3) end
  self.dtype = o.dtype
end
function M.ConvertImageDtype:transform(inpt) return self:_call_kernel("to_dtype", inpt, self.dtype, true) end

return M
