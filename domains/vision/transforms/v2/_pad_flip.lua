-- torch.vision.transforms.v2._pad_flip -- Pad, RandomHorizontalFlip and
-- RandomVerticalFlip. The flips take {per_sample=true}: every image (and
-- mask) of a batch [N, ...] gets its own coin, the chosen ones flipped by
-- one batched gather.
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"
local G = require "torch.vision.transforms.v2._geom_util"
local Fp = require "torch.vision.transforms.v2.functional._pad_flip"
local U = require "torch.vision.transforms.v2._utils"

local M = {}

-- Pad(padding[, fill=0, padding_mode="constant"])
M.Pad = T.Transform:extend("Pad")
function M.Pad:__init(padding, ...)
  local o = G.args("Pad", {"fill", "padding_mode"}, nil, ...)
  local l, r, t, b = Fp._parse_padding("v2.Pad", padding)
  self.padding = {l, t, r, b}
  self.fill = G.check_fill("Pad", o.fill or 0)
  self.padding_mode = o.padding_mode or "constant"
  if not ({constant = true, edge = true, reflect = true, symmetric = true})[self.padding_mode] then
    error(("v2.Pad: padding_mode must be 'constant', 'edge', 'reflect' or 'symmetric', got %s"):format(
      tostring(self.padding_mode)), 3)
  end
end
function M.Pad:transform(inpt)
  return self:_call_kernel("pad", inpt, self.padding, G.fill_for(self.fill, inpt), self.padding_mode)
end
function M.Pad:extra_repr()
  return ("padding=%s, padding_mode=%s"):format(torch.pformat(self.padding), self.padding_mode)
end

-- a random flip class: fname the functional, dim the flipped dim
local function flip_class(name, fname, dim)
  local C = T.RandomTransform:extend(name)
  function C:__init(p, opts)
    if type(p) == "table" then p, opts = nil, p end
    opts = torch._check_options("v2." .. name, opts or {}, "p per_sample")
    if opts.p ~= nil then p = opts.p end
    T.RandomTransform.__init(self, p)
    self.per_sample = opts.per_sample == true
  end
  function C:_check_inputs(flat) G.same_size(name, flat) end
  -- per_sample: coins[n] decides image n; one batched gather flips those
  -- images (torch._image_crop_resize with the flip flags, nearest 1:1)
  function C:make_params(flat)
    if not self.per_sample then return {} end
    local n = G.per_sample_batch(name, flat)
    return {n = n, coins = torch.rand(n):lt(self.p):totable()}
  end
  function C:transform(inpt, params)
    if not self.per_sample then return self:_call_kernel(fname, inpt) end
    if params.n == 0 then return inpt end
    local h, w, list = inpt:size(-2), inpt:size(-1), {}
    for k = 1, params.n do
      local c = params.coins[k]
      list[k] = {top = 0, left = 0, height = h, width = w, hflip = dim == -1 and c, vflip = dim == -2 and c}
    end
    return G.batched(inpt, list, h, w, "nearest", false)
  end
  -- per_sample draws a coin per image instead of one for the call
  function C:forward(...)
    if not self.per_sample then return T.RandomTransform.forward(self, ...) end
    return T.Transform.forward(self, ...)
  end
  function C:extra_repr() return ("p=%s%s"):format(self.p, self.per_sample and ", per_sample=true" or "") end
  return C
end

-- RandomHorizontalFlip([p=0.5, {per_sample=}]), RandomVerticalFlip(...)
M.RandomHorizontalFlip = flip_class("RandomHorizontalFlip", "horizontal_flip", -1)
M.RandomVerticalFlip = flip_class("RandomVerticalFlip", "vertical_flip", -2)

-- every geometry transform checks that the parts of a sample share one size
function M.Pad:_check_inputs(flat) G.same_size("Pad", flat) end

return M
