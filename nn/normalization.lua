-- torch.nn.normalization -- BatchNorm1d/2d/3d (running statistics buffers,
-- momentum or cumulative averaging, eval mode), LayerNorm, GroupNorm,
-- RMSNorm and InstanceNorm1d/2d, with PyTorch's parameters and state_dict keys.
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point

local Module, Parameter = M.Module, M.Parameter
local N = {}

local BN_ARGS = {"eps", "momentum", "affine", "track_running_stats", "device", "dtype"}

local function bn_init(self, name, num_features, ...)
  local o = U.args("nn." .. name, BN_ARGS, {eps = 1e-5, affine = true, track_running_stats = true}, ...)
  U.size("nn." .. name, "num_features", num_features)
  -- momentum: 0.1 by default; false means PyTorch's None (cumulative average)
  local momentum = o.momentum
  if momentum == nil then momentum = 0.1 elseif momentum == false then momentum = nil end
  self.num_features, self.eps, self.momentum = num_features, o.eps, momentum
  self.affine, self.track_running_stats = o.affine, o.track_running_stats
  if o.affine then
    self.weight = Parameter(torch.ones(num_features, U.topts(o.dtype, o.device)))
    self.bias = Parameter(torch.zeros(num_features, U.topts(o.dtype, o.device)))
  else
    self:register_parameter("weight", nil)
    self:register_parameter("bias", nil)
  end
  if o.track_running_stats then
    self:register_buffer("running_mean", torch.zeros(num_features, U.topts(o.dtype, o.device)))
    self:register_buffer("running_var", torch.ones(num_features, U.topts(o.dtype, o.device)))
    self:register_buffer("num_batches_tracked", torch.tensor(0, {dtype = torch.int64}))
  else
    self:register_buffer("running_mean", nil)
    self:register_buffer("running_var", nil)
    self:register_buffer("num_batches_tracked", nil)
  end
end

local function bn_reset_running_stats(self)
  if self.track_running_stats then
    torch.no_grad(function()
      self.running_mean:zero_()
      self.running_var:fill_(1)
      self.num_batches_tracked:zero_()
    end)
  end
end

local function bn_forward(self, x)
  self:_check_input_dim(x)
  if x:size(2) ~= self.num_features then
    error(("%s: expected input with %d channels (dim 2), got shape %s"):format(self:_label(), self.num_features,
          U.shape_str(x)), 2)
  end
  local factor = self.momentum or 0.0
  local training = rawget(self, "training")
  if training and self.track_running_stats then
    local nbt = self.num_batches_tracked
    if nbt ~= nil then
      nbt:add_(1)
      if self.momentum == nil then factor = 1.0 / nbt:item() end
    end
  end
  local bn_training = training or (self.running_mean == nil and self.running_var == nil)
  local use_stats = not training or self.track_running_stats
  return (torch.batch_norm(x, self.weight, self.bias, use_stats and self.running_mean or nil,
                           use_stats and self.running_var or nil, bn_training, factor, self.eps))
end

local function bn_extra(self)
  return ("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s"):format(self.num_features, U.repr(self.eps),
          U.repr(self.momentum), tostring(self.affine), tostring(self.track_running_stats))
end

local BN_DIMS = {BatchNorm1d = {2, 3, "2D or 3D"}, BatchNorm2d = {4, 4, "4D"}, BatchNorm3d = {5, 5, "5D"}}
for name, dims in pairs(BN_DIMS) do
  local cls = Module:extend(name)
  -- BatchNormNd(num_features[, eps=1e-5, momentum=0.1 (false: cumulative
  -- average), affine=true, track_running_stats=true])
  cls.__init = function(self, num_features, ...) bn_init(self, name, num_features, ...) end
  cls._check_input_dim = function(self, x)
    local nd = x:dim()
    if nd < dims[1] or nd > dims[2] then
      error(("%s: expected %s input, got shape %s"):format(self:_label(), dims[3], U.shape_str(x)), 3)
    end
  end
  cls.forward, cls.extra_repr, cls.reset_running_stats = bn_forward, bn_extra, bn_reset_running_stats
  cls.reset_parameters = function(self)
    bn_reset_running_stats(self)
    if self.affine then torch.no_grad(function() self.weight:fill_(1); self.bias:zero_() end) end
  end
  N[name] = cls
end

local function shape_list(s) if type(s) == "number" then return {s} end return s end

local LayerNorm = Module:extend("LayerNorm")
-- LayerNorm(normalized_shape[, eps=1e-5, elementwise_affine=true, bias=true])
function LayerNorm:__init(normalized_shape, ...)
  local o = U.args("nn.LayerNorm", {"eps", "elementwise_affine", "bias", "device", "dtype"},
                   {eps = 1e-5, elementwise_affine = true, bias = true}, ...)
  self.normalized_shape, self.eps, self.elementwise_affine = shape_list(normalized_shape), o.eps,
                                                             o.elementwise_affine
  if o.elementwise_affine then
    self.weight = Parameter(torch.ones(self.normalized_shape, U.topts(o.dtype, o.device)))
    if o.bias then self.bias = Parameter(torch.zeros(self.normalized_shape, U.topts(o.dtype, o.device)))
    else self:register_parameter("bias", nil) end
  else
    self:register_parameter("weight", nil)
    self:register_parameter("bias", nil)
  end
end
function LayerNorm:forward(x)
  local ns = self.normalized_shape
  local nd, k = x:dim(), #ns
  local ok = nd >= k
  for i = 1, k do ok = ok and x:size(nd - k + i) == ns[i] end
  if not ok then
    error(("%s: expected input with trailing dims %s, got shape %s"):format(self:_label(), U.shape_str(ns),
          U.shape_str(x)), 2)
  end
  return (torch.layer_norm(x, ns, self.weight, self.bias, self.eps))
end
function LayerNorm:extra_repr()
  return ("%s, eps=%s, elementwise_affine=%s"):format(U.repr(self.normalized_shape), U.repr(self.eps),
                                                     tostring(self.elementwise_affine))
end

local GroupNorm = Module:extend("GroupNorm")
-- GroupNorm(num_groups, num_channels[, eps=1e-5, affine=true])
function GroupNorm:__init(num_groups, num_channels, ...)
  local o = U.args("nn.GroupNorm", {"eps", "affine", "device", "dtype"}, {eps = 1e-5, affine = true}, ...)
  if num_channels % num_groups ~= 0 then
    error(("nn.GroupNorm: num_channels (%d) must be divisible by num_groups (%d)"):format(num_channels, num_groups), 2)
  end
  self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, o.eps, o.affine
  if o.affine then
    self.weight = Parameter(torch.ones(num_channels, U.topts(o.dtype, o.device)))
    self.bias = Parameter(torch.zeros(num_channels, U.topts(o.dtype, o.device)))
  else
    self:register_parameter("weight", nil)
    self:register_parameter("bias", nil)
  end
end
function GroupNorm:forward(x)
  if x:dim() < 2 or x:size(2) ~= self.num_channels then
    error(("%s: expected input of shape (N, %d, ...), got %s"):format(self:_label(), self.num_channels,
          U.shape_str(x)), 2)
  end
  return (torch.group_norm(x, self.num_groups, self.weight, self.bias, self.eps))
end
function GroupNorm:extra_repr()
  return ("%d, %d, eps=%s, affine=%s"):format(self.num_groups, self.num_channels, U.repr(self.eps), tostring(self.affine))
end

local RMSNorm = Module:extend("RMSNorm")
-- RMSNorm(normalized_shape[, eps=machine epsilon, elementwise_affine=true])
function RMSNorm:__init(normalized_shape, ...)
  local o = U.args("nn.RMSNorm", {"eps", "elementwise_affine", "device", "dtype"}, {elementwise_affine = true}, ...)
  self.normalized_shape, self.eps, self.elementwise_affine = shape_list(normalized_shape), o.eps,
                                                             o.elementwise_affine
  if o.elementwise_affine then self.weight = Parameter(torch.ones(self.normalized_shape, U.topts(o.dtype, o.device)))
  else self:register_parameter("weight", nil) end
end
function RMSNorm:forward(x)
  local ns = self.normalized_shape
  local nd, k = x:dim(), #ns
  local ok = nd >= k
  for i = 1, k do ok = ok and x:size(nd - k + i) == ns[i] end
  if not ok then
    error(("%s: expected input with trailing dims %s, got shape %s"):format(self:_label(), U.shape_str(ns),
          U.shape_str(x)), 2)
  end
  return F.rms_norm(x, ns, self.weight, self.eps)
end
function RMSNorm:extra_repr()
  return ("%s, eps=%s, elementwise_affine=%s"):format(U.repr(self.normalized_shape), U.repr(self.eps),
                                                     tostring(self.elementwise_affine))
end

for nsp = 1, 2 do
  local name = "InstanceNorm" .. nsp .. "d"
  local cls = Module:extend(name)
  -- InstanceNormNd(num_features[, eps=1e-5, momentum=0.1, affine=false])
  function cls:__init(num_features, ...)
    local o = U.args("nn." .. name, {"eps", "momentum", "affine", "track_running_stats"},
                     {eps = 1e-5, momentum = 0.1, affine = false, track_running_stats = false}, ...)
    if o.track_running_stats then error("nn." .. name .. ": track_running_stats is not supported", 2) end
    self.num_features, self.eps, self.momentum, self.affine = num_features, o.eps, o.momentum, o.affine
    if o.affine then
      self.weight = Parameter(torch.ones(num_features))
      self.bias = Parameter(torch.zeros(num_features))
    end
  end
  function cls:forward(x)
    local batched = x:dim() == nsp + 2
    if not batched then x = x:unsqueeze(1) end
    local y = F.instance_norm(x, nil, nil, self.weight, self.bias, true, self.momentum, self.eps)
    if not batched then y = y:squeeze(1) end
    return y
  end
  function cls:extra_repr()
    return ("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=false"):format(self.num_features,
            U.repr(self.eps), U.repr(self.momentum), tostring(self.affine))
  end
  N[name] = cls
end

N.LayerNorm, N.GroupNorm, N.RMSNorm = LayerNorm, GroupNorm, RMSNorm
return N
