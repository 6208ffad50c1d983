-- torch.vision.models._utils -- what the model families share: 0-based
-- Sequential containers (torchvision's state_dict keys), channel rounding,
-- the options of a builder and loading `weights=` from a safetensors file.
-- Never downloads anything.
local torch = require "torch"
local nn = require "torch.nn"
local misc = require "torch.vision.ops.misc"

local M = {}

-- seq{m1, m2, ...} -> nn.Sequential whose children are named "0", "1", ...
function M.seq(list)
  local s = nn.Sequential()
  for _, m in ipairs(list) do misc._seq_add(s, m) end
  return s
end

M.add = misc._seq_add

-- make_divisible(v, divisor[, min_value=divisor]): v rounded to the nearest
-- multiple of divisor, never below min_value nor more than 10% below v.
function M.make_divisible(v, divisor, min_value)
  min_value = min_value or divisor
  local new_v = math.max(min_value, math.floor(v + divisor / 2) // divisor * divisor)
  if new_v < 0.9 * v then new_v = new_v + divisor end
  return math.tointeger(new_v) or new_v
end

-- round(v): v rounded to the nearest integer, halves to even (Python's round).
function M.round(v)
  local f = math.floor(v)
  local d = v - f
  if d > 0.5 or (d == 0.5 and f % 2 == 1) then f = f + 1 end
  return math.tointeger(f) or f
end

-- options(fname, opts, names[, defaults, fixed]) -> a copy of opts (a
-- table or nil) with defaults filled in; names (space-separated) lists the
-- valid keys besides weights and progress. fixed: values the builder sets
-- (resnext50_32x4d's groups); giving another value is an error.
function M.options(fname, opts, names, defaults, fixed)
  if opts ~= nil and (type(opts) ~= "table" or getmetatable(opts) ~= nil) then
    error(("%s: expected an options table like {num_classes=10}, got %s"):format(fname, type(opts)), 3)
  end
  opts = opts or {}
  torch._check_options(fname, opts, "weights progress " .. names)
  local o = {}
  for k, v in pairs(defaults or {}) do o[k] = v end
  for k, v in pairs(opts) do o[k] = v end
  for k, v in pairs(fixed or {}) do
    if opts[k] ~= nil and opts[k] ~= v then
      error(("%s: %s is fixed to %s by this builder, got %s"):format(fname, k, tostring(v), tostring(opts[k])), 3)
    end
    o[k] = v
  end
  return o
end

-- nn_args(fname, names, defaults, ...): optional arguments positionally or
-- in one trailing options table (torch.nn.util's args).
M.nn_args = require("torch.nn.util").args

-- check_image(name, x[, channels]): x must be a floating N x C x H x W tensor
-- (C = channels when given).
function M.check_image(name, x, channels)
  if not torch.is_tensor(x) then error(("%s: expected an image batch tensor, got %s"):format(name, type(x)), 3) end
  local ok = x:dim() == 4 and x:is_floating_point() and (channels == nil or x:size(2) == channels)
  if not ok then
    local s = {}
    for i = 1, x:dim() do s[i] = tostring(x:size(i)) end
    error(("%s: expected a floating (N, %s, H, W) image batch, got %s of shape %s"):format(name,
          channels and tostring(channels) or "C", tostring(x.dtype), #s > 0 and table.concat(s, "x") or "scalar"), 3)
  end
end

-- positive(fname, what, v): v must be a positive integer.
function M.positive(fname, what, v)
  if math.type(v) ~= "integer" or v < 1 then
    error(("%s: %s must be a positive integer, got %s"):format(fname, what, tostring(v)), 3)
  end
  return v
end

local function file_exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

-- load_weights(fname, model, weights): weights is the path of a safetensors
-- file (or a name -> tensor table) holding exactly the model's state_dict
-- keys and shapes; loads it strictly into model (errors name missing and
-- unexpected keys and shape mismatches). Returns model.
function M.load_weights(fname, model, weights)
  if weights == nil or weights == false then return model end
  local sd = weights
  if type(weights) == "string" then
    if not file_exists(weights) then
      error(("%s: weights file '%s' not found (weights= takes the path of a safetensors file; nothing is "
             .. "downloaded)"):format(fname, weights), 3)
    end
    local ok, r = pcall(torch.load, weights)
    if not ok then error(("%s: cannot read weights '%s': %s"):format(fname, weights, tostring(r)), 3) end
    sd = r
  elseif type(weights) ~= "table" then
    error(("%s: weights must be the path of a safetensors file or a state_dict table, got %s"):format(fname,
          type(weights)), 3)
  end
  local ok, err = pcall(model.load_state_dict, model, sd, {strict = true})
  if not ok then
    error(("%s: weights %s do not fit the model: %s"):format(fname, type(weights) == "string" and "'" .. weights
          .. "'" or "table", tostring(err)), 3)
  end
  return model
end

-- conv_init(m): torchvision's default initialisation of a CNN's layers:
-- convolutions kaiming_normal_ (fan_out), norms weight 1 bias 0, linear
-- layers N(0, 0.01) (linear_std given) or left as constructed.
function M.conv_init(model, linear_std)
  for _, m in ipairs(model:modules()) do
    local name = m:_get_name()
    if name == "Conv2d" then
      nn.init.kaiming_normal_(m.weight, {mode = "fan_out", nonlinearity = "relu"})
      if m.bias ~= nil then nn.init.zeros_(m.bias) end
    elseif name == "BatchNorm2d" or name == "GroupNorm" then
      nn.init.ones_(m.weight)
      nn.init.zeros_(m.bias)
    elseif name == "Linear" and linear_std then
      nn.init.normal_(m.weight, 0, linear_std)
      nn.init.zeros_(m.bias)
    end
  end
end

return M
