-- torch.nn.linear -- Identity, Linear and Bilinear, initialised as PyTorch
-- does (kaiming_uniform with a = sqrt(5); uniform biases within 1/sqrt(fan_in)).
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point
local init = require "torch.nn.initializers"

local Module, Parameter = M.Module, M.Parameter
local L = {}

local Identity = Module:extend("Identity")
function Identity:__init() end
function Identity:forward(x) return x end

local Linear = Module:extend("Linear")
-- Linear(in_features, out_features[, bias=true, dtype=])
function Linear:__init(in_features, out_features, ...)
  local o = U.args("nn.Linear", {"bias", "device", "dtype"}, {bias = true}, ...)
  U.size("nn.Linear", "in_features", in_features)
  U.size("nn.Linear", "out_features", out_features)
  self.in_features, self.out_features = in_features, out_features
  self.weight = Parameter(torch.empty(out_features, in_features, U.topts(o.dtype, o.device)))
  if o.bias then self.bias = Parameter(torch.empty(out_features, U.topts(o.dtype, o.device)))
  else self:register_parameter("bias", nil) end
  self:reset_parameters()
end
function Linear:reset_parameters()
  init.kaiming_uniform_(self.weight, math.sqrt(5))
  if self.bias ~= nil then
    local fan_in = init._calculate_fan_in_and_fan_out(self.weight)
    local bound = fan_in > 0 and 1 / math.sqrt(fan_in) or 0
    init.uniform_(self.bias, -bound, bound)
  end
end
function Linear:forward(x)
  if x:dim() == 0 or x:size(-1) ~= self.in_features then
    error(("Linear(in_features=%d, out_features=%d): expected input with last dimension %d, got shape %s"):format(
          self.in_features, self.out_features, self.in_features, U.shape_str(x)), 2)
  end
  return F.linear(x, self.weight, self.bias)
end
function Linear:extra_repr()
  return ("in_features=%d, out_features=%d, bias=%s"):format(self.in_features, self.out_features,
                                                             tostring(self.bias ~= nil))
end

local Bilinear = Module:extend("Bilinear")
-- Bilinear(in1_features, in2_features, out_features[, bias=true])
function Bilinear:__init(in1, in2, out, ...)
  local o = U.args("nn.Bilinear", {"bias", "device", "dtype"}, {bias = true}, ...)
  U.size("nn.Bilinear", "in1_features", in1)
  U.size("nn.Bilinear", "in2_features", in2)
  U.size("nn.Bilinear", "out_features", out)
  self.in1_features, self.in2_features, self.out_features = in1, in2, out
  self.weight = Parameter(torch.empty(out, in1, in2, U.topts(o.dtype, o.device)))
  if o.bias then self.bias = Parameter(torch.empty(out, U.topts(o.dtype, o.device)))
  else self:register_parameter("bias", nil) end
  self:reset_parameters()
end
function Bilinear:reset_parameters()
  local bound = 1 / math.sqrt(self.weight:size(2))
  init.uniform_(self.weight, -bound, bound)
  if self.bias ~= nil then init.uniform_(self.bias, -bound, bound) end
end
function Bilinear:forward(x1, x2)
  if x1:dim() == 0 or x1:size(-1) ~= self.in1_features or x2:dim() == 0 or x2:size(-1) ~= self.in2_features then
    error(("%s: expected inputs with last dimensions %d and %d, got shapes %s and %s"):format(self:_label(),
          self.in1_features, self.in2_features, U.shape_str(x1), U.shape_str(x2)), 2)
  end
  return F.bilinear(x1, x2, self.weight, self.bias)
end
function Bilinear:extra_repr()
  return ("in1_features=%d, in2_features=%d, out_features=%d, bias=%s"):format(self.in1_features,
          self.in2_features, self.out_features, tostring(self.bias ~= nil))
end

L.Identity, L.Linear, L.Bilinear = Identity, Linear, Bilinear
return L
