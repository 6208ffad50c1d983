-- torch.vision.transforms.v2.functional._common -- what the color, misc
-- and augment kernels share: the value range of a dtype, input checks that
-- name the op, and to_dtype_image (the scaling conversion between integer
-- and floating images). No functional is defined here.
local torch = require "torch"

local C = {}

local MAX = {
  [torch.uint8] = 255, [torch.int8] = 127, [torch.int16] = 32767, [torch.int32] = 2147483647,
  [torch.int64] = math.maxinteger,
}
local BITS = {[torch.uint8] = 8, [torch.int8] = 7, [torch.int16] = 15, [torch.int32] = 31, [torch.int64] = 63}
if torch.uint16 then
  MAX[torch.uint16], BITS[torch.uint16] = 65535, 16
end

-- max_value(dtype): the largest value of an image of dtype (1 for floating
-- dtypes and bool)
function C.max_value(dtype) return MAX[dtype] or 1 end

-- num_value_bits(dtype): the bits holding an integer dtype's values
function C.num_value_bits(dtype)
  local b = BITS[dtype]
  if not b then error(("the number of value bits is only defined for integer dtypes, got %s"):format(tostring(dtype)), 3) end
  return b
end

-- check_image(fname, image): image is a non-empty tensor [..., C, H, W];
-- errors name fname (level: the caller of the kernel's caller)
function C.check_image(fname, image)
  if not torch.is_tensor(image) then
    error(("%s: expected an image tensor, got %s"):format(fname, type(image)), 3)
  end
  if image:dim() < 3 then
    error(("%s: expected an image of shape [..., C, H, W], got shape %s"):format(fname, torch.pformat(image.shape)), 3)
  end
  if image:numel() == 0 then
    error(("%s: the image is empty (shape %s)"):format(fname, torch.pformat(image.shape)), 3)
  end
  if image.dtype == torch.bool then error(fname .. ": bool images are not supported", 3) end
end

-- check_channels(fname, image): as check_image, and the image has 1 or 3
-- channels; returns the channel count
function C.check_channels(fname, image)
  C.check_image(fname, image)
  local c = image:size(-3)
  if c ~= 1 and c ~= 3 then
    error(("%s: images must have 1 or 3 channels, got %d (shape %s)"):format(fname, c, torch.pformat(image.shape)), 3)
  end
  return c
end

-- vec(values, dtype, device): a 1-D tensor of the Lua numbers values. Under
-- torch.compile it is built from arange and elementwise ops, which the JIT
-- replays (a tensor made by torch.tensor inside a compiled function is not)
function C.vec(values, dtype, device)
  if not torch.compiler.is_compiling() then return torch.tensor(values, {dtype = dtype, device = device}) end
  local a = torch.arange(#values, {device = device})
  local t = torch.zeros(#values, {dtype = dtype, device = device})
  for k, v in ipairs(values) do t = t + a:eq(k - 1):to(dtype) * v end
  return t
end

-- compiling(): inside a torch.compile capture
function C.compiling() return torch.compiler.is_compiling() end

local function is_float_dtype(dtype) return dtype.is_floating_point == true end
C.is_float_dtype = is_float_dtype

-- to_dtype_image(image, dtype, scale): image converted to dtype; with scale,
-- values move between the ranges [0, max] of integer dtypes and [0, 1] of
-- floating ones (float -> int multiplies by max + 1 - 1e-3 and truncates,
-- int -> float multiplies by 1 / max, int -> int shifts bits)
function C.to_dtype_image(image, dtype, scale)
  if image.dtype == dtype then return image end
  if not scale then return image:to(dtype) end
  local fin, fout = image:is_floating_point(), is_float_dtype(dtype)
  if fin then
    if fout then return image:to(dtype) end
    if (image.dtype == torch.float32 and (dtype == torch.int32 or dtype == torch.int64))
      or (image.dtype == torch.float64 and dtype == torch.int64) then
      error(("to_dtype: the conversion from %s to %s cannot be performed safely"):format(
        tostring(image.dtype), tostring(dtype)), 3)
    end
    if dtype == torch.bool then return image:to(dtype) end
    return (image * (C.max_value(dtype) + 1.0 - 1e-3)):to(dtype)
  end
  if fout then -- the scale in place on the fresh conversion (not under torch.compile, which records plain ops)
    local f = image:to(dtype)
    if C.compiling() then return f * (1.0 / C.max_value(image.dtype)) end
    return f:mul_(1.0 / C.max_value(image.dtype))
  end
  local bin, bout = C.num_value_bits(image.dtype), C.num_value_bits(dtype)
  if bin > bout then
    local q = torch.floor_divide(image, 1 << (bin - bout))
    return q:to(dtype)
  end
  return image:to(dtype) * (1 << (bout - bin))
end

return C
