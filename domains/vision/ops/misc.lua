-- torch.vision.ops.misc -- the building blocks torchvision's models share
-- (torchvision.ops.misc and .stochastic_depth): Conv2d/Conv3dNormActivation,
-- SqueezeExcitation, MLP, StochasticDepth, stochastic_depth, FrozenBatchNorm2d
-- and Permute.
-- Layer factories (norm_layer, activation_layer, ...) are nn classes or
-- functions returning a module; `false` stands for Python's None (no layer).
-- Children are named "0", "1", ... as in torchvision, so state_dict keys match.
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.nn.util"

local Module = nn.Module
local X = {}

-- seq_add(seq, m): appends m to seq under the next 0-based name.
local function seq_add(seq, m)
  seq:add_module(tostring(#seq._modules.names), m)
end
X._seq_add = seq_add

-- A layer factory is a class or a function; false/nil means "none".
local function check_factory(fname, what, f, allow_none)
  if f == false and allow_none then return end
  local t = type(f)
  local ok = t == "function" or (t == "table" and getmetatable(f) and getmetatable(f).__call ~= nil)
  if not ok then
    error(("%s: %s must be an nn class or a function returning a module%s, got %s"):format(fname, what,
          allow_none and " (or false for none)" or "", tostring(f)), 4)
  end
end

-- The padding (kernel_size - 1) // 2 * dilation per dimension.
local function auto_padding(kernel_size, dilation, nsp)
  if type(kernel_size) ~= "table" and type(dilation) ~= "table" then return (kernel_size - 1) // 2 * dilation end
  local k, d = U.ntuple(kernel_size, nsp, "kernel_size"), U.ntuple(dilation, nsp, "dilation")
  local p = {}
  for i = 1, nsp do p[i] = (k[i] - 1) // 2 * d[i] end
  return p
end

local CNA_ARGS = {"kernel_size", "stride", "padding", "groups", "norm_layer", "activation_layer", "dilation", "inplace",
                  "bias"}

-- Builds conv -> norm -> activation into self (a Sequential); nsp spatial dims.
local function cna_init(self, name, nsp, in_ch, out_ch, ...)
  local fname = "torch.vision.ops." .. name
  local defaults = {kernel_size = 3, stride = 1, groups = 1, dilation = 1, inplace = true,
                    norm_layer = nsp == 2 and nn.BatchNorm2d or nn.BatchNorm3d, activation_layer = nn.ReLU}
  local o = U.args(fname, CNA_ARGS, defaults, ...)
  U.size(fname, "in_channels", in_ch, 1)
  U.size(fname, "out_channels", out_ch, 1)
  check_factory(fname, "norm_layer", o.norm_layer, true)
  check_factory(fname, "activation_layer", o.activation_layer, true)
  local padding = o.padding
  if padding == nil or padding == false then padding = auto_padding(o.kernel_size, o.dilation, nsp) end
  local bias = o.bias
  if bias == nil then bias = o.norm_layer == false end
  local conv = (nsp == 2 and nn.Conv2d or nn.Conv3d)(in_ch, out_ch, o.kernel_size,
    {stride = o.stride, padding = padding, dilation = o.dilation, groups = o.groups, bias = bias})
  seq_add(self, conv)
  if o.norm_layer then seq_add(self, o.norm_layer(out_ch)) end
  if o.activation_layer then seq_add(self, o.activation_layer()) end
  self.out_channels = out_ch
end

for nsp = 2, 3 do
  local name = "Conv" .. nsp .. "dNormActivation"
  local cls = nn.Sequential:extend(name)
  -- ConvNdNormActivation(in_channels, out_channels[, kernel_size=3, stride=1,
  -- padding=(k-1)//2*dilation, groups=1, norm_layer=nn.BatchNormNd,
  -- activation_layer=nn.ReLU, dilation=1, inplace=true, bias=(norm_layer==false)])
  function cls:__init(in_ch, out_ch, ...) cna_init(self, name, nsp, in_ch, out_ch, ...) end
  X[name] = cls
end

local SE = Module:extend("SqueezeExcitation")
-- SqueezeExcitation(input_channels, squeeze_channels[, activation=nn.ReLU,
-- scale_activation=nn.Sigmoid]): x * scale_activation(fc2(activation(fc1(avgpool(x))))).
function SE:__init(input_channels, squeeze_channels, ...)
  local fname = "torch.vision.ops.SqueezeExcitation"
  local o = U.args(fname, {"activation", "scale_activation"}, {activation = nn.ReLU, scale_activation = nn.Sigmoid},
                   ...)
  U.size(fname, "input_channels", input_channels, 1)
  U.size(fname, "squeeze_channels", squeeze_channels, 1)
  check_factory(fname, "activation", o.activation)
  check_factory(fname, "scale_activation", o.scale_activation)
  self.avgpool = nn.AdaptiveAvgPool2d(1)
  self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
  self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
  self.activation = o.activation()
  self.scale_activation = o.scale_activation()
end
function SE:_scale(x)
  return self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
end
function SE:forward(x)
  if not torch.is_tensor(x) or (x:dim() ~= 4 and x:dim() ~= 3) then
    error(("SqueezeExcitation: expected a (N, C, H, W) or (C, H, W) tensor, got %s"):format(
          torch.is_tensor(x) and U.shape_str(x) or type(x)), 2)
  end
  return self:_scale(x) * x
end
X.SqueezeExcitation = SE

local MLP = nn.Sequential:extend("MLP")
-- MLP(in_channels, hidden_channels[, norm_layer=false, activation_layer=nn.ReLU,
-- inplace=true, bias=true, dropout=0]): Linear (-> norm) -> activation ->
-- Dropout for each hidden size but the last, then Linear -> Dropout.
function MLP:__init(in_channels, hidden_channels, ...)
  local fname = "torch.vision.ops.MLP"
  local o = U.args(fname, {"norm_layer", "activation_layer", "inplace", "bias", "dropout"},
                   {norm_layer = false, activation_layer = nn.ReLU, inplace = true, bias = true, dropout = 0.0}, ...)
  U.size(fname, "in_channels", in_channels, 1)
  if type(hidden_channels) ~= "table" or #hidden_channels == 0 then
    error(fname .. ": hidden_channels must be a non-empty list of sizes, got " .. tostring(hidden_channels), 2)
  end
  check_factory(fname, "norm_layer", o.norm_layer, true)
  check_factory(fname, "activation_layer", o.activation_layer, true)
  local in_dim = in_channels
  for i, h in ipairs(hidden_channels) do
    U.size(fname, "hidden_channels[" .. i .. "]", h, 1)
    seq_add(self, nn.Linear(in_dim, h, {bias = o.bias}))
    if i < #hidden_channels then
      if o.norm_layer then seq_add(self, o.norm_layer(h)) end
      if o.activation_layer then seq_add(self, o.activation_layer()) end
    end
    seq_add(self, nn.Dropout(o.dropout))
    in_dim = h
  end
end
X.MLP = MLP

-- stochastic_depth(input, p, mode[, training=true]): zeroes the whole input
-- (mode 'batch') or whole rows of dim 1 (mode 'row') with probability p and
-- scales the survivors by 1/(1-p); the identity when not training or p == 0.
local function stochastic_depth(input, p, mode, training)
  local fname = "torch.vision.ops.stochastic_depth"
  if U.opts(fname, training, "training") then training = training.training end
  if not torch.is_tensor(input) then error(fname .. ": input must be a tensor, got " .. type(input), 2) end
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(fname .. ": drop probability has to be between 0 and 1, but got " .. tostring(p), 2)
  end
  if mode ~= "batch" and mode ~= "row" then
    error(fname .. ": mode has to be either 'batch' or 'row', but got " .. tostring(mode), 2)
  end
  if training == false or p == 0 then return input end
  if input:dim() == 0 then error(fname .. ": input must have at least one dimension", 2) end
  local survival = 1.0 - p
  local size = {}
  for i = 1, input:dim() do size[i] = 1 end
  if mode == "row" then size[1] = input:size(1) end
  local noise = torch.empty(size, {dtype = input.dtype, device = input.device}):bernoulli_(survival)
  if survival > 0 then noise:div_(survival) end
  return input * noise
end
X.stochastic_depth = torch._public(stochastic_depth, "torch.vision.ops.stochastic_depth")

local SD = Module:extend("StochasticDepth")
-- StochasticDepth(p, mode): stochastic_depth(x, p, mode, self.training).
function SD:__init(p, mode)
  local fname = "torch.vision.ops.StochasticDepth"
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(fname .. ": drop probability has to be between 0 and 1, but got " .. tostring(p), 2)
  end
  if mode ~= "batch" and mode ~= "row" then
    error(fname .. ": mode has to be either 'batch' or 'row', but got " .. tostring(mode), 2)
  end
  self.p, self.mode = p, mode
end
function SD:forward(x) return stochastic_depth(x, self.p, self.mode, rawget(self, "training")) end
function SD:extra_repr() return ("p=%s, mode=%s"):format(U.repr(self.p + 0.0), self.mode) end
X.StochasticDepth = SD

local FBN = Module:extend("FrozenBatchNorm2d")
-- FrozenBatchNorm2d(num_features[, eps=1e-5]): batch norm with fixed
-- statistics and affine terms, all four buffers (weight, bias,
-- running_mean, running_var): x * w / sqrt(rv + eps) + (b - rm * scale).
function FBN:__init(num_features, ...)
  local o = U.args("torch.vision.ops.FrozenBatchNorm2d", {"eps"}, {eps = 1e-5}, ...)
  U.size("torch.vision.ops.FrozenBatchNorm2d", "num_features", num_features, 1)
  self.eps, self.num_features = o.eps, num_features
  self:register_buffer("weight", torch.ones(num_features))
  self:register_buffer("bias", torch.zeros(num_features))
  self:register_buffer("running_mean", torch.zeros(num_features))
  self:register_buffer("running_var", torch.ones(num_features))
end
function FBN:forward(x)
  if not torch.is_tensor(x) or x:dim() ~= 4 or x:size(2) ~= self.num_features then
    error(("FrozenBatchNorm2d: expected an (N, %d, H, W) tensor, got %s"):format(self.num_features,
          torch.is_tensor(x) and U.shape_str(x) or type(x)), 2)
  end
  local scale = self.weight * (self.running_var + self.eps):rsqrt()
  local shift = self.bias - self.running_mean * scale
  return x * scale:reshape(1, -1, 1, 1) + shift:reshape(1, -1, 1, 1)
end
function FBN:extra_repr() return ("%d, eps=%s"):format(self.num_features, U.repr(self.eps)) end
X.FrozenBatchNorm2d = FBN

local Permute = Module:extend("Permute")
-- Permute(dims): x:permute(dims) (dims 1-based, a list).
function Permute:__init(dims)
  if type(dims) ~= "table" or #dims == 0 then
    error("torch.vision.ops.misc.Permute: dims must be a list of dimensions, got " .. tostring(dims), 2)
  end
  self.dims = dims
end
function Permute:forward(x) return x:permute(self.dims) end
X.Permute = Permute

return X
