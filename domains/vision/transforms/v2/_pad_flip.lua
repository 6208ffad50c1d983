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
  function C:transform(inpt) return self:_call_kernel(fname, inpt) end
  function C:_check_inputs(flat) G.same_size(name, flat) end
  -- per_sample: coins[n] decides image n; one batched gather flips those
  -- images (torch._image_crop_resize with the flip flags, nearest 1:1)
  function C:_per_sample(sample)
    local flat, spec = U.flatten(sample)
    local needs = U.needs_transform(flat, self._transformed_types)
    local todo = {n = 0}
    for i = 1, flat.n do
      if needs[i] then todo.n = todo.n + 1; todo[todo.n] = flat[i] end
    end
    self:_check_inputs(todo)
    local n = G.per_sample_batch(name, todo)
    local coins = torch.rand(n):lt(self.p):totable()
    for i = 1, flat.n do
      local x = flat[i]
      if needs[i] and n > 0 then
        local h, w, list = x:size(-2), x:size(-1), {}
        for k = 1, n do
          list[k] = {top = 0, left = 0, height = h, width = w, hflip = dim == -1 and coins[k], vflip = dim == -2 and coins[k]}
        end
        flat[i] = G.batched(x, list, h, w, "nearest", false)
      end
    end
    return U.unflatten(flat, spec)
  end
  function C:forward(...)
    if not self.per_sample then return T.RandomTransform.forward(self, ...) end
    local n = select("#", ...)
    if n == 1 then return self:_per_sample((...)) end
    return table.unpack(self:_per_sample(table.pack(...)), 1, n)
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
