-- torch.vision.transforms.v2._transform -- the base of every v2 transform,
-- as torchvision's v2.Transform: an nn.Module whose forward takes a sample
-- (one value, or several arguments: a tensor, tv_tensors, and any nesting
-- of Lua tables holding them and other values), draws its random
-- parameters once (make_params) and applies them to every part of the
-- sample it handles (transform), so an image, its mask and its boxes move
-- together. The result has the sample's structure.
--
-- A transform class defines:
--   make_params(flat) -> params: the one random draw for the sample (flat
--     holds the sample's leaves, flat.n of them; only those it touches)
--   transform(inpt, params) -> output for one leaf; most call
--     self:_call_kernel(fname, inpt, ...) (torch.vision.transforms.v2.
--     functional's kernel of the leaf's kind; kinds without one pass)
--   _transformed_types: the set of kinds it touches (default: every tensor)
--   _check_inputs(flat): raises on samples it cannot handle
-- Random transforms with a probability p derive from RandomTransform.
--
-- Batches: a transform applies one draw to the whole batch [N, C, H, W];
-- with {per_sample=true} (where a transform supports it) every image of the
-- batch gets its own draw, applied in one batched kernel.
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.vision.transforms.v2._utils"
local D = require "torch.vision.transforms.v2.functional._dispatch"

local Transform = nn.Module:extend("Transform")
Transform.__prefix = "v2."

-- every tensor kind, and plain tensors
Transform._transformed_types = {Image = true, Video = true, Mask = true, BoundingBoxes = true, KeyPoints = true,
  tensor = true}

function Transform:__init() end

function Transform:_check_inputs(flat) end

function Transform:make_params(flat) return {} end

function Transform:transform(inpt, params)
  error(self:_get_name() .. ": transform is not implemented", 2)
end

-- _call_kernel(fname, inpt, ...): the functional fname's kernel for inpt's
-- kind; inputs of kinds it has none for come back unchanged
function Transform:_call_kernel(fname, inpt, ...) return D.call_or_pass(fname, inpt, ...) end

-- the sample of forward's arguments: the one argument, or all as a list
local function sample_of(...)
  local n = select("#", ...)
  if n == 1 then return (...), false end
  return table.pack(...), true
end

-- _apply(sample): the transformed sample (flatten, one draw, transform the
-- leaves it handles, rebuild)
function Transform:_apply(sample)
  local flat, spec = U.flatten(sample)
  local needs = U.needs_transform(flat, self._transformed_types)
  local handled = U.selected(flat, needs)
  self:_check_inputs(handled)
  local params = self:make_params(handled)
  local out = {n = flat.n}
  for i = 1, flat.n do
    out[i] = needs[i] and self:transform(flat[i], params) or flat[i]
  end
  return U.unflatten(out, spec)
end

function Transform:forward(...)
  local sample, multi = sample_of(...)
  local out = self:_apply(sample)
  if multi then return table.unpack(out, 1, select("#", ...)) end
  return out
end

-- RandomTransform: applied with probability p (default 0.5), one coin per
-- call (per image of a batch with per_sample, where supported)
local RandomTransform = Transform:extend("RandomTransform")

function RandomTransform:__init(p)
  if p == nil then p = 0.5 end
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("%s: p should be a number in [0, 1], got %s"):format(self:_get_name(), tostring(p)), 3)
  end
  self.p = p
end

function RandomTransform:forward(...)
  if self.p < 1 and torch.rand(1):item() >= self.p then return ... end
  return Transform.forward(self, ...)
end

function RandomTransform:extra_repr() return ("p=%s"):format(self.p) end

return {Transform = Transform, RandomTransform = RandomTransform}
