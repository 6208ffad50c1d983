-- torch.audio.functional._masking -- SpecAugment's masks (torchaudio 2.x):
-- mask_along_axis (one band for the whole batch) and mask_along_axis_iid
-- (a band per item of the leading dims), along frequency (axis dim-1) or
-- time (axis dim) of a spectrogram [..., freq, time]. Axes are 1-based.
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}
local P = "torch.audio.functional."

-- The largest mask width: mask_param, or at most p of the axis when p < 1.
local function mask_width(mask_param, p, len)
  if p == 1.0 then return mask_param end
  return math.min(mask_param, math.floor(len * p))
end

-- Checks shared by both: the axis (one of the last two), p and mask_param;
-- returns the width.
local function check(fname, specgram, mask_param, mask_value, axis, p, min_dim)
  if not torch.is_tensor(specgram) then error(("%s: specgram must be a tensor, got %s"):format(fname, type(specgram)), 3) end
  local dim = specgram:dim()
  if dim < min_dim then
    error(("%s: the spectrogram must have at least %d dimensions, got %d"):format(fname, min_dim, dim), 3)
  end
  if axis ~= dim - 1 and axis ~= dim then
    error(("%s: only frequency and time masking are supported (axis %d or %d for a %d-d spectrogram), got %s")
      :format(fname, dim - 1, dim, dim, tostring(axis)), 3)
  end
  if math.type(mask_param) ~= "integer" or mask_param < 0 then
    error(("%s: mask_param must be a non-negative integer, got %s"):format(fname, tostring(mask_param)), 3)
  end
  if type(mask_value) ~= "number" and not torch.is_tensor(mask_value) then
    error(("%s: mask_value must be a number, got %s"):format(fname, type(mask_value)), 3)
  end
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("%s: p must be in [0, 1], got %s"):format(fname, tostring(p)), 3)
  end
  return mask_width(mask_param, p, specgram:size(axis))
end

-- mask_along_axis(specgram, mask_param, mask_value, axis[, p=1.0]): one
-- band [v0, v0 + v) with v ~ U(0, width), v0 ~ U(0, size - v), the same for
-- every item
function F.mask_along_axis(specgram, mask_param, mask_value, axis, ...)
  local fname = P .. "mask_along_axis"
  local o = U.args(fname, {"p"}, {p = 1.0}, ...)
  local width = check(fname, specgram, mask_param, mask_value, axis, o.p, 2)
  if width < 1 then return specgram end
  local len = specgram:size(axis)
  local value = torch.rand(1):item() * width
  local min_value = torch.rand(1):item() * (len - value)
  local start = math.floor(min_value)
  local stop = start + math.floor(value)
  local pos = torch.arange(0, len, {device = specgram.device})
  local mask = pos:ge(start):logical_and(pos:lt(stop))
  if axis == specgram:dim() - 1 then mask = mask:unsqueeze(-1) end
  return specgram:masked_fill(mask, mask_value)
end

-- mask_along_axis_iid(specgram, mask_param, mask_value, axis[, p=1.0]):
-- a band drawn for each item of the dims before the last two
function F.mask_along_axis_iid(specgram, mask_param, mask_value, axis, ...)
  local fname = P .. "mask_along_axis_iid"
  local o = U.args(fname, {"p"}, {p = 1.0}, ...)
  local width = check(fname, specgram, mask_param, mask_value, axis, o.p, 3)
  if width < 1 then return specgram end
  local dim, len = specgram:dim(), specgram:size(axis)
  local lead = {}
  for i = 1, dim - 2 do lead[i] = specgram:size(i) end
  local opts = {dtype = specgram.dtype, device = specgram.device}
  local value = torch.rand(lead, opts) * width
  local min_value = torch.rand(lead, opts) * (len - value)
  local start = min_value:floor():unsqueeze(-1):unsqueeze(-1)
  local stop = start + value:floor():unsqueeze(-1):unsqueeze(-1)
  local pos = torch.arange(0, len, opts)
  local mask = pos:ge(start):logical_and(pos:lt(stop))
  local t = specgram:transpose(axis, -1)
  return t:masked_fill(mask, mask_value):transpose(axis, -1)
end

return U.public_table(F, P)
