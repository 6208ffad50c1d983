-- torch.vision.transforms.v2._container -- transforms made of transforms:
-- Compose, RandomApply, RandomChoice, RandomOrder. Their parts may be
-- transforms or any function of the sample.
local torch = require "torch"
local T = require "torch.vision.transforms.v2._transform"

local Transform = T.Transform
local M = {}

local function check_list(cls, ts)
  if type(ts) ~= "table" or getmetatable(ts) ~= nil then
    error(("v2.%s: expected a list of transforms, got %s"):format(cls, type(ts)), 4)
  end
  for i, t in ipairs(ts) do
    local mt = type(t) == "table" and getmetatable(t)
    if type(t) ~= "function" and not (mt and mt.__call) then
      error(("v2.%s: transforms[%d] is a %s, not a transform or a function"):format(cls, i, type(t)), 4)
    end
  end
  return ts
end

-- run(ts, order, ...): the sample (as forward's arguments) through the
-- transforms ts[order[1]], ts[order[2]], ...
local function run(ts, order, ...)
  local n = select("#", ...)
  if n <= 1 then
    local x = ...
    for _, i in ipairs(order) do x = ts[i](x) end
    return x
  end
  local args = table.pack(...)
  for _, i in ipairs(order) do args = table.pack(ts[i](table.unpack(args, 1, n))) end
  return table.unpack(args, 1, n)
end

local function in_order(n)
  local o = {}
  for i = 1, n do o[i] = i end
  return o
end

-- the parts, one per line (Module:_repr indents them)
local function repr_list(self)
  local parts = {}
  for _, t in ipairs(self.transforms) do parts[#parts + 1] = tostring(t) end
  return table.concat(parts, "\n")
end

-- Compose(transforms): applies them in order
M.Compose = Transform:extend("Compose")
function M.Compose:__init(transforms)
  if type(transforms) == "table" and #transforms == 0 and next(transforms) == nil then
    error("v2.Compose: pass at least one transform", 3)
  end
  self.transforms = check_list("Compose", transforms)
end
function M.Compose:forward(...) return run(self.transforms, in_order(#self.transforms), ...) end
M.Compose.extra_repr = repr_list

-- RandomApply(transforms[, p=0.5]): applies all of them with probability p
M.RandomApply = Transform:extend("RandomApply")
function M.RandomApply:__init(transforms, p)
  if type(p) == "table" then p = torch._check_options("v2.RandomApply", p, "p").p end
  if p == nil then p = 0.5 end
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("v2.RandomApply: p should be a number in [0, 1], got %s"):format(tostring(p)), 3)
  end
  self.transforms, self.p = check_list("RandomApply", transforms), p
end
function M.RandomApply:forward(...)
  if torch.rand(1):item() >= self.p then return ... end
  return run(self.transforms, in_order(#self.transforms), ...)
end
function M.RandomApply:extra_repr() return ("p=%s\n%s"):format(self.p, repr_list(self)) end

-- RandomChoice(transforms[, p]): applies one of them, picked with the
-- weights p (default: all equal)
M.RandomChoice = Transform:extend("RandomChoice")
function M.RandomChoice:__init(transforms, p)
  if type(p) == "table" and p.p ~= nil then p = torch._check_options("v2.RandomChoice", p, "p").p end
  check_list("RandomChoice", transforms)
  if #transforms == 0 then error("v2.RandomChoice: pass at least one transform", 3) end
  p = p or {}
  if #p == 0 then
    for i = 1, #transforms do p[i] = 1 end
  end
  if #p ~= #transforms then
    error(("v2.RandomChoice: the number of probabilities (%d) does not match the number of transforms (%d)"):format(
      #p, #transforms), 3)
  end
  local sum = 0
  for _, w in ipairs(p) do
    if type(w) ~= "number" or w < 0 then error("v2.RandomChoice: probabilities must be numbers >= 0", 3) end
    sum = sum + w
  end
  if sum <= 0 then error("v2.RandomChoice: the probabilities sum to 0", 3) end
  local norm = {}
  for i, w in ipairs(p) do norm[i] = w / sum end
  self.transforms, self.p = transforms, norm
end
function M.RandomChoice:forward(...)
  local i = torch.multinomial(torch.tensor(self.p, {dtype = torch.float64}), 1):item()
  return run(self.transforms, {i}, ...)
end

-- RandomOrder(transforms): applies all of them in a random order
M.RandomOrder = Transform:extend("RandomOrder")
function M.RandomOrder:__init(transforms) self.transforms = check_list("RandomOrder", transforms) end
function M.RandomOrder:forward(...)
  local order = torch.randperm(#self.transforms):totable()
  return run(self.transforms, order, ...)
end
M.RandomOrder.extra_repr = repr_list

return M
