-- torch.vision.transforms.v2.functional._color -- the color ops of
-- torchvision's v2.functional: brightness, contrast, saturation, hue,
-- gamma, sharpness, autocontrast, equalize, invert, posterize, solarize,
-- grayscale and channel permutation, on images [..., C, H, W] and videos
-- [..., T, C, H, W] of uint8 or floating dtype, on any device. Everything is
-- built from engine ops (no per-pixel Lua), so the ops run on CUDA and
-- compile with torch.compile. Masks, boxes and keypoints have no kernel here:
-- transforms pass them through. The blend-based kernels also take per-image
-- factors as [N, 1, 1, 1] tensors (ColorJitter's per_sample).
local torch = require "torch"
local D = require "torch.vision.transforms.v2.functional._dispatch"
local C = require "torch.vision.transforms.v2.functional._common"

local M = {}

local max_value, check_image, check_channels = C.max_value, C.check_image, C.check_channels

-- factor(fname, what, v): v as a non-negative number, or a tensor of factors
local function factor(fname, what, v)
  if torch.is_tensor(v) then return v end
  if type(v) ~= "number" or v < 0 or v ~= v then
    error(("%s: %s must be a non-negative number, got %s"):format(fname, what, tostring(v)), 4)
  end
  return v
end

-- cast(out, dtype): a float result clamped to [0, bound] back in an image
-- dtype (integers truncate, as torchvision's .to)
local function cast(out, dtype)
  out = out:clamp(0, max_value(dtype))
  if out.dtype ~= dtype then out = out:to(dtype) end
  return out
end

-- blend(a, b, ratio): a * ratio + b * (1 - ratio), clamped, in a's dtype;
-- ratio a number or a tensor that broadcasts against a
local function blend(a, b, ratio)
  local out = a * ratio + b * (1 - ratio)
  return cast(out, a.dtype)
end
M._blend = blend

-- gray(image): the luma plane [..., 1, H, W] in a floating dtype (uint8
-- input gives float32), ITU-R 601-2 weights as torchvision
local function gray(image)
  local r, g, b = image:select(-3, 1), image:select(-3, 2), image:select(-3, 3)
  return (r * 0.2989 + g * 0.587 + b * 0.114):unsqueeze(-3)
end

-- gray_floor(image): the luma plane, rounded down for integer images (what
-- torchvision blends saturation and contrast against)
local function gray_floor(image)
  local l = gray(image)
  if not image:is_floating_point() then l = l:floor() end
  return l
end

local function expand_channels(x, n)
  local s = x.shape
  s[#s - 2] = n
  return x:expand(s)
end

-- rgb_to_grayscale_image(image[, num_output_channels=1])
function M.rgb_to_grayscale_image(image, num_output_channels)
  local fname = "F.rgb_to_grayscale"
  if type(num_output_channels) == "table" then
    num_output_channels = torch._check_options(fname, num_output_channels, "num_output_channels").num_output_channels
  end
  num_output_channels = num_output_channels or 1
  if num_output_channels ~= 1 and num_output_channels ~= 3 then
    error(("%s: num_output_channels must be 1 or 3, got %s"):format(fname, tostring(num_output_channels)), 2)
  end
  check_image(fname, image)
  local c = image:size(-3)
  if c == 1 then
    if num_output_channels == 1 then return image:clone() end
    return expand_channels(image, 3):contiguous()
  end
  check_channels(fname, image)
  local l = gray(image)
  if l.dtype ~= image.dtype then l = l:to(image.dtype) end
  if num_output_channels == 3 then l = expand_channels(l, 3):contiguous() end
  return l
end

-- grayscale_to_rgb_image(image): 1-channel images repeated to 3 channels
function M.grayscale_to_rgb_image(image)
  check_image("F.grayscale_to_rgb", image)
  if image:size(-3) >= 3 then return image end
  return M.rgb_to_grayscale_image(image, 3)
end

-- The fused kernel torch._vision.color_jitter runs brightness, contrast,
-- saturation and hue (in any order, per-image factors) in one pass per
-- image, with the arithmetic of the plain ops below. It takes CPU uint8 and
-- float32 RGB images that no gradient flows through, outside
-- torch.compile (which records plain ops); M._fused = false turns it (and
-- the compiled hue and the equalize kernel below) off, so tests can compare
-- with the plain ops.
M._fused = true

-- fusable(image): the fused kernel takes image
local function fusable(image)
  return M._fused and not image.is_cuda and (image.dtype == torch.uint8 or image.dtype == torch.float32)
    and image:dim() >= 3 and image:size(-3) == 3 and image:numel() > 0
    and not (image.requires_grad and torch.is_grad_enabled()) and not C.compiling()
end

-- _jitter(image, factors, order): image [..., 3, H, W] (a plain tensor)
-- through the fused kernel, or nil when it does not take the image.
-- factors: {brightness, contrast, saturation, hue} numbers (nil: unused),
-- or [N, 4] per image; order: the step codes (1 brightness, 2 contrast, 3
-- saturation, 4 hue) in the order they run, or [N, K] int64 per image (0:
-- no step); N images [3, H, W] in image
function M._jitter(image, factors, order)
  if not fusable(image) then return nil end
  local shape = image.shape
  local x = image:reshape(-1, 3, shape[#shape - 1], shape[#shape])
  local n = x:size(1)
  if not torch.is_tensor(factors) then
    factors = torch.tensor({{factors[1] or 0, factors[2] or 0, factors[3] or 0, factors[4] or 0}},
      {dtype = torch.float64}):expand(n, 4)
  end
  if not torch.is_tensor(order) then order = torch.tensor({order}, {dtype = torch.int64}):expand(n, #order) end
  return torch._vision.color_jitter(x, factors, order):view(shape)
end

-- one(image, code, f): the single step code with number factor f through
-- the fused kernel, or nil
local function one(image, code, f)
  if type(f) ~= "number" then return nil end
  local factors = {}
  factors[code] = f
  return M._jitter(image, factors, {code})
end

-- adjust_brightness_image(image, brightness_factor)
function M.adjust_brightness_image(image, f)
  local fname = "F.adjust_brightness"
  f = factor(fname, "brightness_factor", f)
  check_channels(fname, image)
  return one(image, 1, f) or cast(image * f, image.dtype)
end

-- adjust_saturation_image(image, saturation_factor): blend with the gray
-- image; 1-channel images come back unchanged
function M.adjust_saturation_image(image, f)
  local fname = "F.adjust_saturation"
  f = factor(fname, "saturation_factor", f)
  if check_channels(fname, image) == 1 then return image end
  return one(image, 3, f) or blend(image, gray_floor(image), f)
end

-- adjust_contrast_image(image, contrast_factor): blend with the mean of
-- the gray image (per image)
function M.adjust_contrast_image(image, f)
  local fname = "F.adjust_contrast"
  f = factor(fname, "contrast_factor", f)
  local c = check_channels(fname, image)
  local fused = one(image, 2, f)
  if fused then return fused end
  local g
  if c == 3 then
    g = gray_floor(image)
  else
    g = image:is_floating_point() and image or image:to(torch.float32)
  end
  local mean = g:mean({-3, -2, -1}, true)
  return blend(image, mean, f)
end

-- adjust_sharpness_image(image, sharpness_factor): blend with the image
-- smoothed by the 3x3 kernel [1 1 1; 1 5 1; 1 1 1] / 13 (rounded for
-- integer images); the one-pixel border keeps its values
function M.adjust_sharpness_image(image, f)
  local fname = "F.adjust_sharpness"
  f = factor(fname, "sharpness_factor", f)
  local c = check_channels(fname, image)
  local h, w = image:size(-2), image:size(-1)
  if image:numel() == 0 or h <= 2 or w <= 2 then return image end
  local shape = image.shape
  local fp = image:is_floating_point()
  local x = image:reshape(-1, c, h, w)
  x = fp and x or x:to(torch.float32)
  local k = torch.full({c, 1, 3, 3}, 1 / 13, {dtype = x.dtype, device = x.device})
  local blurred = torch.nn.functional.conv2d(x, k, {groups = c, padding = 1}) + x * (4 / 13)
  if not fp then blurred = blurred:round() end
  local rows = torch.arange(h, {device = x.device}):view(h, 1)
  local cols = torch.arange(w, {device = x.device}):view(1, w)
  local inner = rows:ge(1):logical_and(rows:lt(h - 1)):logical_and(cols:ge(1)):logical_and(cols:lt(w - 1))
  local out = torch.where(inner, x + (blurred - x) * (1 - f), x)
  return cast(out, image.dtype):reshape(shape)
end

-- rgb_to_hsv(x): float RGB [..., 3, H, W] in [0, 1] to HSV (all in [0, 1])
local function rgb_to_hsv(x)
  local maxc, minc = x:amax(-3), x:amin(-3)
  local eqc = maxc:eq(minc)
  local range = maxc - minc
  local ones = torch.ones_like(maxc)
  local s = range / torch.where(eqc, ones, maxc)
  local div = torch.where(eqc, ones, range):unsqueeze(-3)
  local d = (maxc:unsqueeze(-3) - x) / div
  local rc, gc, bc = d:select(-3, 1), d:select(-3, 2), d:select(-3, 3)
  local r, g = x:select(-3, 1), x:select(-3, 2)
  local h = torch.where(maxc:eq(r), bc - gc, torch.where(maxc:eq(g), rc + 2 - bc, gc + 4 - rc))
  h = torch.fmod(h * (1 / 6) + 1, 1)
  return h, s, maxc
end

-- hsv_to_rgb(h, s, v): planes [..., H, W] back to RGB [..., 3, H, W]. In
-- sector i = 0..5 of the hue, r takes (v, q, p, p, t, v)[i], and g and b
-- the same sequence at i + 4 and i + 2 (mod 6): one where chain over a
-- channel dim (no lookup table, so torch.compile replays it)
local function hsv_to_rgb(h, s, v)
  local h6 = h * 6
  local i = h6:floor()
  local f = h6 - i
  local sxf = s * f
  local q = ((1 - sxf) * v):clamp(0, 1):unsqueeze(-3)
  local t = ((sxf + (1 - s)) * v):clamp(0, 1):unsqueeze(-3)
  local p = ((1 - s) * v):clamp(0, 1):unsqueeze(-3)
  local shift = (torch.arange(3, {dtype = i.dtype, device = i.device}) * 4):view(3, 1, 1)
  local j = torch.remainder(i:unsqueeze(-3) + shift, 6)
  local vv = v:unsqueeze(-3)
  return torch.where(j:eq(0):logical_or(j:eq(5)), vv, torch.where(j:eq(1), q, torch.where(j:eq(4), t, p)))
end

local function check_hue(fname, f)
  if torch.is_tensor(f) then return f end
  if type(f) ~= "number" or not (f >= -0.5 and f <= 0.5) then
    error(("%s: hue_factor (%s) is not in [-0.5, 0.5]"):format(fname, tostring(f)), 4)
  end
  return f
end

-- hue(image, f): the hue turned through HSV in float32 (f a number, or
-- per-image factors [N, 1, 1, 1])
local function hue(image, f)
  local x = C.to_dtype_image(image, torch.float32, true)
  local h, s, v = rgb_to_hsv(x)
  if torch.is_tensor(f) then f = f:select(-3, 1) end -- against h [N, H, W]
  h = torch.remainder(h + f, 1)
  return C.to_dtype_image(hsv_to_rgb(h, s, v), image.dtype, true)
end

-- The per-pixel chain of hue is some 40 elementwise ops: eager callers
-- with a number factor get the fused kernel above, or where it does not
-- apply (CUDA) the chain compiled by torch.compile into one kernel (per
-- dtype, rank and device; MOONTORCH_JIT=0 or M._fused = false: plain ops;
-- per-image factor tensors measured faster as plain ops)
local compiled = {}
local function hue_fast(image, f)
  if not M._fused or C.compiling() or type(f) ~= "number" then return hue(image, f) end
  local fused = one(image, 4, f)
  if fused then return fused end
  local key = ("%s|%d|%s|%s"):format(tostring(image.dtype), image:dim(), tostring(image.device), type(f))
  local c = compiled[key]
  if not c then
    c = torch.compile(hue)
    compiled[key] = c
  end
  return c(image, f)
end

-- adjust_hue_image(image, hue_factor): the hue turned by hue_factor (in
-- [-0.5, 0.5]) through HSV in float32, as torchvision
function M.adjust_hue_image(image, f)
  local fname = "F.adjust_hue"
  f = check_hue(fname, f)
  if check_channels(fname, image) == 1 or image:numel() == 0 then return image end
  return hue_fast(image, f)
end

-- adjust_gamma_image(image, gamma[, gain=1]): gain * image ^ gamma on the
-- [0, 1] scale, clamped
function M.adjust_gamma_image(image, gamma, gain)
  local fname = "F.adjust_gamma"
  if type(gain) == "table" then gain = torch._check_options(fname, gain, "gain").gain end
  gain = gain or 1
  if type(gamma) ~= "number" or gamma < 0 then
    error(("%s: gamma should be a non-negative real number, got %s"):format(fname, tostring(gamma)), 2)
  end
  if type(gain) ~= "number" then error(("%s: gain must be a number, got %s"):format(fname, type(gain)), 2) end
  check_image(fname, image)
  local x = image:is_floating_point() and image or C.to_dtype_image(image, torch.float32, true)
  local out = x:pow(gamma)
  if gain ~= 1 then out = out * gain end
  return C.to_dtype_image(out:clamp(0, 1), image.dtype, true)
end

-- posterize_image(image, bits): keep the top bits of each value (floats:
-- floor to 2^bits levels)
function M.posterize_image(image, bits)
  local fname = "F.posterize"
  if math.type(bits) ~= "integer" or bits < 0 or bits > 8 then
    error(("%s: bits must be an integer in [0, 8], got %s"):format(fname, tostring(bits)), 2)
  end
  check_image(fname, image)
  if image:is_floating_point() then
    local levels = 1 << bits
    return (image * levels):floor():clamp(0, levels - 1) * (1 / levels)
  end
  local nbits = C.num_value_bits(image.dtype)
  if bits >= nbits then return image end
  local mask = ((1 << bits) - 1) << (nbits - bits)
  return image:bitwise_and(mask)
end

-- invert_image(image): bound - image
function M.invert_image(image)
  check_image("F.invert", image)
  if image:is_floating_point() then return 1 - image end
  if image.dtype == torch.uint8 then return image:bitwise_not() end
  return ((1 << C.num_value_bits(image.dtype)) - 1 - image):to(image.dtype)
end

-- solarize_image(image, threshold): values >= threshold inverted
function M.solarize_image(image, threshold)
  local fname = "F.solarize"
  check_image(fname, image)
  if type(threshold) ~= "number" or threshold > max_value(image.dtype) then
    error(("%s: threshold should be a number no larger than the maximum value of %s (%s), got %s"):format(
      fname, tostring(image.dtype), max_value(image.dtype), tostring(threshold)), 2)
  end
  return torch.where(image:ge(threshold), M.invert_image(image), image)
end

-- autocontrast_image(image): each channel stretched to [0, bound]
-- (channels of one value are left as they are)
function M.autocontrast_image(image)
  local fname = "F.autocontrast"
  check_channels(fname, image)
  if image:numel() == 0 then return image end
  local bound = max_value(image.dtype)
  local x = image:is_floating_point() and image or image:to(torch.float32)
  local lo, hi = x:amin({-2, -1}, true), x:amax({-2, -1}, true)
  local eq = hi:eq(lo)
  local inv_scale = torch.where(eq, torch.ones_like(lo), (hi - lo) * (1 / bound))
  lo = torch.where(eq, torch.zeros_like(lo), lo)
  return ((x - lo) / inv_scale):clamp(0, bound):to(image.dtype)
end

-- cumsum256(hist): the running sums along the last dim (256 bins); under
-- torch.compile as a product with a triangular matrix of ones, which the
-- JIT replays (exact: float64 holds counts to 2^53)
local function cumsum256(hist)
  if not C.compiling() then return hist:cumsum(-1) end
  local a = torch.arange(256, {device = hist.device})
  local tri = a:view(256, 1):le(a:view(1, 256)):to(torch.float64)
  return hist:to(torch.float64):matmul(tri):to(torch.int64)
end

-- equalize_uint8(image): per-channel histogram equalization of a uint8
-- image [..., H, W] with PIL's lookup table (torchvision's rule): step =
-- (pixels outside the last non-empty bin) // 255, lut[k] = (cum[k-1] +
-- step // 2) // step; channels with step 0 come back unchanged
local function equalize_uint8(image)
  local shape = image.shape
  local flat = image:flatten(-2):to(torch.int64)
  local n = flat:size(-1)
  local hshape = flat.shape
  hshape[#hshape] = 256
  local dev = image.device
  local hist, pos
  if C.compiling() then -- ops the JIT replays
    hist = torch.zeros(hshape, {dtype = torch.int64, device = dev})
    hist = hist:scatter_add(-1, flat + 1, torch.ones(1, {dtype = torch.int64, device = dev}):expand_as(flat))
  else -- one index_add over all planes (flat positions plane * 256 + value), much faster
    local planes = flat:numel() // n
    local base = (torch.arange(planes, {device = dev}) * 256 + 1):view(planes, 1)
    pos = (flat:reshape(planes, n) + base):flatten()
    hist = torch.zeros(planes * 256, {dtype = torch.int64, device = dev})
    hist = hist:index_add(1, pos, torch.ones(1, {dtype = torch.int64, device = dev}):expand(pos:numel()))
    hist = hist:view(hshape)
  end
  local cum = cumsum256(hist)
  local bins = torch.arange(256, {device = dev})
  local last = (hist:gt(0):to(torch.int64) * bins):amax(-1, true) -- the last non-empty bin (0-based)
  local step = torch.floor_divide(hist:gather(-1, last + 1):neg() + n, 255)
  local valid = step:ne(0)
  step = step:clamp(1)
  -- lut[k] from cum[k - 1] = cum[k] - hist[k] (lut[0] is 0)
  local lut = torch.floor_divide(cum - hist + torch.floor_divide(step, 2), step):clamp(0, 255):to(torch.uint8)
  local eq
  if pos then eq = lut:flatten():index_select(1, pos):view(flat.shape)
  else eq = lut:gather(-1, flat + 1) end
  return torch.where(valid, eq, image:flatten(-2)):view(shape)
end

-- equalize_image(image): histogram equalization per channel (float images
-- through uint8, as torchvision 0.26); on the CPU in one engine kernel
-- (torch._vision.image_equalize, the same integer arithmetic)
function M.equalize_image(image)
  check_image("F.equalize", image)
  if image:numel() == 0 then return image end
  local u = C.to_dtype_image(image, torch.uint8, true)
  local fused = M._fused and not u.is_cuda and not C.compiling()
  return C.to_dtype_image(fused and torch._vision.image_equalize(u) or equalize_uint8(u), image.dtype, true)
end

-- permute_channels_image(image, permutation): the channels reordered; the
-- permutation lists 1-based channel indices (output channel k is input
-- channel permutation[k])
function M.permute_channels_image(image, permutation)
  local fname = "F.permute_channels"
  check_image(fname, image)
  local c = image:size(-3)
  local perm = torch.is_tensor(permutation) and permutation:totable() or permutation
  if type(perm) ~= "table" or #perm ~= c then
    error(("%s: the permutation must list %d channel indices (one per channel), got %s"):format(
      fname, c, torch.pformat(perm)), 2)
  end
  for _, k in ipairs(perm) do
    if math.type(k) ~= "integer" or k < 1 or k > c then
      error(("%s: channel indices are 1-based integers in [1, %d], got %s"):format(fname, c, tostring(k)), 2)
    end
  end
  if image:numel() == 0 then return image end
  return image:index_select(image:dim() - 2, C.vec(perm, torch.int64, image.device))
end

-- the functionals, their per-kind kernels (image and video share one) and
-- torchvision's aliases
local OPS = {"rgb_to_grayscale", "grayscale_to_rgb", "adjust_brightness", "adjust_saturation", "adjust_contrast",
  "adjust_sharpness", "adjust_hue", "adjust_gamma", "posterize", "invert", "solarize", "autocontrast", "equalize",
  "permute_channels"}
for _, name in ipairs(OPS) do
  local k = M[name .. "_image"]
  M[name .. "_video"] = k
  D.define(M, name)
  D.register(name, "Image", k)
  D.register(name, "Video", k)
end

-- to_grayscale(inpt[, num_output_channels=1]): rgb_to_grayscale
M.to_grayscale = M.rgb_to_grayscale

return M
