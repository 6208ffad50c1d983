-- torch.nn.initializers -- nn.init: in-place initialisation of parameters
-- (PyTorch's torch.nn.init, same formulas and defaults), run under no_grad
-- with torch's RNG. Exposed as nn.init (this file is not named init.lua
-- because lua/torch/nn/init.lua is the nn package itself).
local torch = require "torch"
local U = require "torch.nn.util"

local I = {}

local function ng(fn) return torch.no_grad(fn) end

-- calculate_gain(nonlinearity[, param]): the recommended gain (PyTorch's table).
function I.calculate_gain(nonlinearity, param)
  local linear = {linear = 1, conv1d = 1, conv2d = 1, conv3d = 1, conv_transpose1d = 1, conv_transpose2d = 1,
                  conv_transpose3d = 1, sigmoid = 1}
  if linear[nonlinearity] then return 1 end
  if nonlinearity == "tanh" then return 5.0 / 3 end
  if nonlinearity == "relu" then return math.sqrt(2.0) end
  if nonlinearity == "leaky_relu" then
    local slope = param == nil and 0.01 or param
    if type(slope) ~= "number" then error("calculate_gain: negative_slope " .. tostring(slope) .. " is not a number", 2) end
    return math.sqrt(2.0 / (1 + slope * slope))
  end
  if nonlinearity == "selu" then return 3.0 / 4 end
  error("calculate_gain: unsupported nonlinearity " .. tostring(nonlinearity), 2)
end

-- fan_in, fan_out of a weight (dims: out, in, kernel...), as PyTorch computes them.
function I._calculate_fan_in_and_fan_out(t)
  local s = t:size()
  if #s < 2 then
    error("nn.init: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions (shape "
          .. U.shape_str(t) .. ")", 3)
  end
  local rf = 1
  for i = 3, #s do rf = rf * s[i] end
  return s[2] * rf, s[1] * rf
end

local function fan(t, mode)
  local fi, fo = I._calculate_fan_in_and_fan_out(t)
  if mode == "fan_in" then return fi elseif mode == "fan_out" then return fo end
  error("nn.init: mode must be 'fan_in' or 'fan_out', got " .. tostring(mode), 3)
end

function I.uniform_(t, a, b)
  local o = U.args("nn.init.uniform_", {"a", "b"}, {a = 0.0, b = 1.0}, a, b)
  return ng(function() t:uniform_(o.a, o.b) return t end)
end

function I.normal_(t, mean, std)
  local o = U.args("nn.init.normal_", {"mean", "std"}, {mean = 0.0, std = 1.0}, mean, std)
  return ng(function() t:normal_(o.mean, o.std) return t end)
end

function I.constant_(t, val) return ng(function() t:fill_(val) return t end) end
function I.ones_(t) return I.constant_(t, 1) end
function I.zeros_(t) return ng(function() t:zero_() return t end) end

-- eye_(t): the identity for a 2-D tensor.
function I.eye_(t)
  if t:dim() ~= 2 then error("nn.init.eye_: only 2-D tensors are supported, got shape " .. U.shape_str(t), 2) end
  return ng(function() t:copy_(torch.eye(t:size(1), t:size(2))) return t end)
end

function I.xavier_uniform_(t, gain)
  local o = U.args("nn.init.xavier_uniform_", {"gain"}, {gain = 1.0}, gain)
  local fi, fo = I._calculate_fan_in_and_fan_out(t)
  local std = o.gain * math.sqrt(2.0 / (fi + fo))
  local a = math.sqrt(3.0) * std
  return ng(function() t:uniform_(-a, a) return t end)
end

function I.xavier_normal_(t, gain)
  local o = U.args("nn.init.xavier_normal_", {"gain"}, {gain = 1.0}, gain)
  local fi, fo = I._calculate_fan_in_and_fan_out(t)
  local std = o.gain * math.sqrt(2.0 / (fi + fo))
  return ng(function() t:normal_(0, std) return t end)
end

local KAIMING = {"a", "mode", "nonlinearity"}
local KAIMING_D = {a = 0, mode = "fan_in", nonlinearity = "leaky_relu"}

function I.kaiming_uniform_(t, ...)
  local o = U.args("nn.init.kaiming_uniform_", KAIMING, KAIMING_D, ...)
  local gain = I.calculate_gain(o.nonlinearity, o.a)
  local std = gain / math.sqrt(fan(t, o.mode))
  local bound = math.sqrt(3.0) * std
  return ng(function() t:uniform_(-bound, bound) return t end)
end

function I.kaiming_normal_(t, ...)
  local o = U.args("nn.init.kaiming_normal_", KAIMING, KAIMING_D, ...)
  local gain = I.calculate_gain(o.nonlinearity, o.a)
  local std = gain / math.sqrt(fan(t, o.mode))
  return ng(function() t:normal_(0, std) return t end)
end

-- trunc_normal_(t, mean=0, std=1, a=-2, b=2): N(mean, std) restricted to
-- [a, b] (values outside are redrawn until none is left).
function I.trunc_normal_(t, ...)
  local o = U.args("nn.init.trunc_normal_", {"mean", "std", "a", "b"}, {mean = 0., std = 1., a = -2., b = 2.}, ...)
  if o.a >= o.b then error("nn.init.trunc_normal_: a must be less than b", 2) end
  return ng(function()
    local x = torch.empty(t:size(), {dtype = t.dtype}):normal_(o.mean, o.std)
    for _ = 1, 1000 do
      local bad = x:lt(o.a):logical_or(x:gt(o.b))
      if not bad:any():item() then break end
      local fresh = torch.empty(t:size(), {dtype = t.dtype}):normal_(o.mean, o.std)
      x = torch.where(bad, fresh, x)
    end
    t:copy_(x:clamp(o.a, o.b))
    return t
  end)
end

-- orthogonal_(t, gain=1): a (semi-)orthogonal matrix from the QR
-- decomposition of a normal sample (trailing dims are flattened).
function I.orthogonal_(t, gain)
  local o = U.args("nn.init.orthogonal_", {"gain"}, {gain = 1.0}, gain)
  if t:dim() < 2 then error("nn.init.orthogonal_: only tensors with 2 or more dimensions are supported", 2) end
  if t:numel() == 0 then return t end
  return ng(function()
    local rows = t:size(1)
    local cols = t:numel() // rows
    local flat = torch.randn(rows, cols, {dtype = torch.float64})
    if rows < cols then flat = flat:t():contiguous() end
    local q, r = torch.linalg.qr(flat)
    local d = r:diagonal():sign()
    q = q * d
    if rows < cols then q = q:t() end
    t:copy_((q * o.gain):reshape(t:size()))
    return t
  end)
end

-- dirac_(t[, groups=1]): the identity convolution kernel.
function I.dirac_(t, groups)
  groups = groups or 1
  local s = t:size()
  if #s < 3 or #s > 5 then error("nn.init.dirac_: only 3, 4 and 5-D tensors are supported", 2) end
  local out_per = s[1] // groups
  local min_dim = math.min(out_per, s[2])
  return ng(function()
    t:zero_()
    for g = 0, groups - 1 do
      for d = 1, min_dim do
        local idx = {g * out_per + d, d}
        for k = 3, #s do idx[k] = s[k] // 2 + 1 end
        t[idx] = 1
      end
    end
    return t
  end)
end

-- PyTorch's deprecated aliases without the underscore are not provided.

U.doc(I, {
  calculate_gain = "nn.init.calculate_gain(nonlinearity[, param]) -- recommended gain for an activation",
  uniform_ = "nn.init.uniform_(t, a=0, b=1) -- fill t from U(a, b)",
  normal_ = "nn.init.normal_(t, mean=0, std=1) -- fill t from N(mean, std^2)",
  constant_ = "nn.init.constant_(t, val) -- fill t with val",
  ones_ = "nn.init.ones_(t) -- fill t with 1",
  zeros_ = "nn.init.zeros_(t) -- fill t with 0",
  eye_ = "nn.init.eye_(t) -- the identity matrix (2-D t)",
  xavier_uniform_ = "nn.init.xavier_uniform_(t, gain=1) -- Glorot uniform initialisation",
  xavier_normal_ = "nn.init.xavier_normal_(t, gain=1) -- Glorot normal initialisation",
  kaiming_uniform_ = "nn.init.kaiming_uniform_(t, a=0, mode='fan_in', nonlinearity='leaky_relu') -- He uniform",
  kaiming_normal_ = "nn.init.kaiming_normal_(t, a=0, mode='fan_in', nonlinearity='leaky_relu') -- He normal",
  trunc_normal_ = "nn.init.trunc_normal_(t, mean=0, std=1, a=-2, b=2) -- normal truncated to [a, b]",
  orthogonal_ = "nn.init.orthogonal_(t, gain=1) -- (semi-)orthogonal matrix",
  dirac_ = "nn.init.dirac_(t[, groups]) -- identity convolution kernel",
})


-- public entry points: an error raised inside names the function at the caller's line
U.public_table(I, "nn.init.")

return I
