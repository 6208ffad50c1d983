-- torch.vision.transforms.v2.functional._misc -- normalize, gaussian_blur,
-- gaussian_noise, to_dtype and convert_image_dtype of torchvision's
-- v2.functional, from engine ops (they run on CUDA and compile). The blur is
-- separable: one depthwise pass along the rows, one along the columns, over
-- the image padded by reflection.
local torch = require "torch"
local D = require "torch.vision.transforms.v2.functional._dispatch"
local C = require "torch.vision.transforms.v2.functional._common"

local M = {}

local function nnF() return torch.nn.functional end

-- as_list(v): a number or a list of numbers as a list
local function as_list(fname, what, v)
  if torch.is_tensor(v) then v = v:totable() end
  if type(v) == "number" then return {v} end
  if type(v) ~= "table" or #v == 0 then
    error(("%s: %s must be a number or a list of numbers, got %s"):format(fname, what, tostring(v)), 4)
  end
  for _, x in ipairs(v) do
    if type(x) ~= "number" then error(("%s: %s must hold numbers, got %s"):format(fname, what, tostring(x)), 4) end
  end
  return v
end

-- normalize_image(image, mean, std[, inplace=false]): (image - mean) / std
-- per channel, for floating images
function M.normalize_image(image, mean, std, inplace)
  local fname = "F.normalize"
  if type(inplace) == "table" then inplace = torch._check_options(fname, inplace, "inplace").inplace end
  C.check_image(fname, image)
  if not image:is_floating_point() then
    error(("%s: the image must have a floating dtype, got %s"):format(fname, tostring(image.dtype)), 2)
  end
  mean, std = as_list(fname, "mean", mean), as_list(fname, "std", std)
  local c = image:size(-3)
  for _, v in ipairs({mean, std}) do
    if #v ~= 1 and #v ~= c then
      error(("%s: mean and std need 1 or %d (channels) values, got %d"):format(fname, c, #v), 2)
    end
  end
  for _, s in ipairs(std) do
    if s == 0 then error(fname .. ": std evaluated to zero, leading to division by zero", 2) end
  end
  local m = C.vec(mean, image.dtype, image.device):view(-1, 1, 1)
  local s = C.vec(std, image.dtype, image.device):view(-1, 1, 1)
  if inplace then return image:sub_(m):div_(s) end
  if C.compiling() or image.requires_grad then return (image - m) / s end
  return (image - m):div_(s) -- the division in place on the fresh difference
end

-- kernel1d(k, sigma, dtype, device): the normalised Gaussian of k taps
-- (exp(-x^2 / (2 sigma^2)) at x = -(k-1)/2 .. (k-1)/2)
local function kernel1d(k, sigma, dtype, device)
  local x = (torch.arange(k, {dtype = dtype, device = device}) - (k - 1) / 2) * (1 / math.sqrt(2))
  return (x / sigma):pow(2):neg():softmax(1)
end
M._kernel1d = kernel1d

-- blur_args(fname, kernel_size, sigma): {kx, ky} and {sx, sy} checked as
-- torchvision (sigma nil: 0.3 * ((k - 1) / 2 - 1) + 0.8 per axis)
local function blur_args(fname, kernel_size, sigma)
  local ks = kernel_size
  if math.type(ks) == "integer" then ks = {ks, ks} end
  if type(ks) ~= "table" or #ks ~= 2 then
    error(("%s: kernel_size must be an odd integer or two of them, got %s"):format(fname, torch.pformat(kernel_size)), 4)
  end
  for _, k in ipairs(ks) do
    if math.type(k) ~= "integer" or k % 2 == 0 or k < 0 then
      error(("%s: kernel_size should have odd and positive integers, got %s"):format(fname, torch.pformat(ks)), 4)
    end
  end
  local s
  if sigma == nil or sigma == false then
    s = {ks[1] * 0.15 + 0.35, ks[2] * 0.15 + 0.35}
  elseif type(sigma) == "number" then
    s = {sigma, sigma}
  elseif type(sigma) == "table" and (#sigma == 1 or #sigma == 2) then
    s = {sigma[1], sigma[2] or sigma[1]}
  else
    error(("%s: sigma must be a number or a list of one or two numbers, got %s"):format(fname, torch.pformat(sigma)), 4)
  end
  for _, v in ipairs(s) do
    if type(v) ~= "number" or v <= 0 then
      error(("%s: sigma should have positive values, got %s"):format(fname, torch.pformat(s)), 4)
    end
  end
  return ks, s
end

-- reflect_index(n, p, device): the 1-based indices of a reflect padding of
-- p on each side of a dim of size n (p < n)
local function reflect_index(n, p, device)
  local k = torch.arange(-p, n + p, {device = device})
  return (n - 1) - ((n - 1) - k:abs()):abs() + 1
end

-- reflect_pad(x, px, py): x [N, C, H, W] padded by reflection (under
-- torch.compile through index_select, which the JIT replays)
local function reflect_pad(x, px, py)
  if not C.compiling() then return nnF().pad(x, {px, px, py, py}, "reflect") end
  if px > 0 then x = x:index_select(4, reflect_index(x:size(4), px, x.device)) end
  if py > 0 then x = x:index_select(3, reflect_index(x:size(3), py, x.device)) end
  return x
end

-- blur_planes(x, kx, ky, wx, wy): x [N, C', H, W] (float) convolved with
-- the row taps wx [C', 1, 1, kx] and column taps wy [C', 1, ky, 1] over a
-- reflect padding
local function blur_planes(x, kx, ky, wx, wy)
  local F = nnF()
  local c = x:size(2)
  local h, w = x:size(3), x:size(4)
  local px, py = kx // 2, ky // 2
  if px >= w or py >= h then
    error(("F.gaussian_blur: kernel_size %dx%d is too large for an image of %dx%d (reflect padding needs"
      .. " half the kernel below the image size)"):format(kx, ky, h, w), 4)
  end
  x = reflect_pad(x, px, py)
  x = F.conv2d(x, wx, {groups = c})
  return F.conv2d(x, wy, {groups = c})
end
M._blur_planes = blur_planes

-- gaussian_blur_image(image, kernel_size[, sigma]): a Gaussian blur of
-- kernel_size {kx, ky} (x along the width) and sigma {sx, sy}
function M.gaussian_blur_image(image, kernel_size, sigma)
  local fname = "F.gaussian_blur"
  if type(sigma) == "table" and sigma.sigma ~= nil then sigma = torch._check_options(fname, sigma, "sigma").sigma end
  local ks, s = blur_args(fname, kernel_size, sigma)
  C.check_image(fname, image)
  local shape = image.shape
  local c, h, w = image:size(-3), image:size(-2), image:size(-1)
  local fp = image:is_floating_point()
  local x = image:reshape(-1, c, h, w)
  if not fp then x = x:to(torch.float32) end
  local wx = kernel1d(ks[1], s[1], x.dtype, x.device):view(1, 1, 1, ks[1]):expand(c, 1, 1, ks[1])
  local wy = kernel1d(ks[2], s[2], x.dtype, x.device):view(1, 1, ks[2], 1):expand(c, 1, ks[2], 1)
  local out = blur_planes(x, ks[1], ks[2], wx, wy):reshape(shape)
  if not fp then out = out:round():to(image.dtype) end
  return out
end

-- gaussian_noise_image(image[, mean=0, sigma=0.1, clip=true]): image plus
-- N(mean, sigma^2) noise (uint8: on the 0..255 scale, through int16)
function M.gaussian_noise_image(image, mean, sigma, clip)
  local fname = "F.gaussian_noise"
  if type(mean) == "table" then
    local o = torch._check_options(fname, mean, "mean sigma clip")
    mean, sigma, clip = o.mean, o.sigma, o.clip
  elseif type(sigma) == "table" then
    local o = torch._check_options(fname, sigma, "sigma clip")
    sigma, clip = o.sigma, o.clip
  elseif type(clip) == "table" then
    clip = torch._check_options(fname, clip, "clip").clip
  end
  mean, sigma = mean or 0, sigma or 0.1
  if clip == nil then clip = true end
  if type(mean) ~= "number" or type(sigma) ~= "number" or sigma < 0 then
    error(("%s: mean must be a number and sigma a non-negative number, got mean=%s sigma=%s"):format(
      fname, tostring(mean), tostring(sigma)), 2)
  end
  C.check_image(fname, image)
  if image:is_floating_point() then
    local out = image + (torch.randn_like(image) * sigma + mean)
    return clip and out:clamp(0, 1) or out
  elseif image.dtype == torch.uint8 then
    local noise = (torch.randn(image.shape, {device = image.device}) * (sigma * 255) + mean * 255):to(torch.int16)
    local out = image:to(torch.int16) + noise
    if clip then out = out:clamp(0, 255) end
    return out:to(torch.uint8)
  end
  error(("%s: the image must be uint8 or floating, got %s"):format(fname, tostring(image.dtype)), 2)
end

local function check_dtype(fname, dtype)
  if type(dtype) ~= "userdata" and type(dtype) ~= "table" or dtype.is_floating_point == nil then
    error(("%s: dtype must be a torch dtype (torch.float32, torch.uint8, ...), got %s"):format(fname, tostring(dtype)), 4)
  end
end

local function dtype_scale(fname, dtype, scale)
  if type(dtype) == "table" and getmetatable(dtype) == nil then
    local o = torch._check_options(fname, dtype, "dtype scale")
    dtype, scale = o.dtype, o.scale
  elseif type(scale) == "table" then
    scale = torch._check_options(fname, scale, "scale").scale
  end
  dtype = dtype or torch.float32
  check_dtype(fname, dtype)
  return dtype, scale == true
end

-- to_dtype_image(image[, dtype=torch.float32, scale=false]): image as dtype;
-- with scale, values move between integer [0, max] and floating [0, 1]
function M.to_dtype_image(image, dtype, scale)
  dtype, scale = dtype_scale("F.to_dtype", dtype, scale)
  if not torch.is_tensor(image) then error("F.to_dtype: expected a tensor, got " .. type(image), 2) end
  return C.to_dtype_image(image, dtype, scale)
end
M.to_dtype_video = M.to_dtype_image

-- masks, boxes and keypoints: a plain dtype conversion
local function to_dtype_plain(inpt, dtype, scale)
  dtype = dtype_scale("F.to_dtype", dtype, scale)
  return inpt:to(dtype)
end

-- convert_image_dtype(image[, dtype=torch.float32]): to_dtype with scale
function M.convert_image_dtype(image, dtype)
  if type(dtype) == "table" and getmetatable(dtype) == nil then
    dtype = torch._check_options("F.convert_image_dtype", dtype, "dtype").dtype
  end
  dtype = dtype or torch.float32
  check_dtype("F.convert_image_dtype", dtype)
  if not torch.is_tensor(image) then error("F.convert_image_dtype: expected a tensor, got " .. type(image), 2) end
  local out = C.to_dtype_image(image, dtype, true)
  return out
end

for _, name in ipairs({"normalize", "gaussian_blur", "gaussian_noise", "to_dtype"}) do
  local k = M[name .. "_image"]
  M[name .. "_video"] = M[name .. "_video"] or k
  D.define(M, name)
  D.register(name, "Image", k)
  D.register(name, "Video", k)
end
for _, kind in ipairs({"Mask", "BoundingBoxes", "KeyPoints"}) do D.register("to_dtype", kind, to_dtype_plain) end

return M
