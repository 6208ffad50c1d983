-- torch.vision.transforms.v2._sample -- what the color, misc and augment
-- transforms share: argument parsing, uniform draws, and the per_sample
-- machinery (one draw per image of a batch, applied in batched ops: per-image
-- coins as a where, per-image factors as [N, 1, 1, 1] tensors). No
-- transform is defined here.
local torch = require "torch"
local tv = require "torch.vision.tv_tensors"
local NU = require "torch.nn.util"

local S = {}

S.args = NU.args

-- uniform(a, b): one draw from U(a, b) as a Lua number
function S.uniform(a, b) return torch.empty(1):uniform_(a, b):item() end

-- lead(x): the number of leading dims that index images of x (all but C, H,
-- W; for videos all but T, C, H, W)
function S.lead(x)
  local k = tv.kind(x) == "Video" and 4 or 3
  return math.max(0, x:dim() - k)
end

-- count(x): how many images (videos) x holds: the product of its leading dims
function S.count(x)
  local n = 1
  for d = 1, S.lead(x) do n = n * x:size(d) end
  return n
end

-- batch_count(flat, fname): the image count of the sample's first image
-- or video (per_sample draws that many)
function S.batch_count(flat, fname)
  local U = require "torch.vision.transforms.v2._utils"
  for i = 1, flat.n do
    if torch.is_tensor(flat[i]) and U.is_image_like(flat[i]) then return S.count(flat[i]) end
  end
  error(fname .. ": no image or video in the sample", 4)
end

-- per_image(t, x): the n values of t shaped to broadcast over x's images
-- ([lead..., 1, 1, 1]); errors when x holds another number of images
function S.per_image(t, x, fname)
  local n = S.count(x)
  if t:numel() ~= n then
    error(("%s: per_sample draws are for %d images, but an input holds %d (shape %s)"):format(fname, t:numel(), n,
      torch.pformat(x.shape)), 4)
  end
  local shape = {}
  local lead = S.lead(x)
  for d = 1, x:dim() do shape[d] = d <= lead and x:size(d) or 1 end
  return t:to(x.device):view(shape)
end

-- check_per_sample(fname, v): a boolean option
function S.flag(fname, what, v)
  if v == nil then return false end
  if type(v) ~= "boolean" then error(("%s: %s must be true or false, got %s"):format(fname, what, tostring(v)), 4) end
  return v
end

-- coin_forward(self, Transform, RandomTransform, ...): forward of a random
-- transform with probability p: per_sample draws one coin per image in
-- make_params (self:_coins) instead of one per call
function S.coin_forward(self, T, ...)
  if self.per_sample then return T.Transform.forward(self, ...) end
  return T.RandomTransform.forward(self, ...)
end

-- coins(self, flat): per_sample's coins, a bool [n] tensor (true: apply)
function S.coins(self, flat)
  local n = S.batch_count(flat, self:_get_name())
  return torch.rand(n):lt(self.p)
end

-- select(self, params, inpt, out): out where the image's coin fell, inpt
-- elsewhere (whole-call coins: out)
function S.select(self, params, inpt, out)
  if not params.coins then return out end
  if out == inpt then return inpt end
  local m = S.per_image(params.coins, inpt, self:_get_name())
  local r = torch.where(m, out, inpt)
  return tv.kind(inpt) and tv.wrap(r, {like = inpt}) or r
end

return S
