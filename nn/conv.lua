-- torch.nn.conv -- Conv1d, Conv2d, Conv3d, ConvTranspose1d/2d: weights
-- (out, in/groups, k...) or, transposed, (in, out/groups, k...), initialised
-- as PyTorch does; padding_mode other than 'zeros' pads with F.pad first.
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point
local init = require "torch.nn.initializers"

local Module, Parameter = M.Module, M.Parameter
local C = {}

local PAD_MODES = {zeros = true, reflect = true, replicate = true, circular = true}

local function all_eq(t, v)
  for _, x in ipairs(t) do if x ~= v then return false end end
  return true
end

-- Shared constructor: nsp spatial dims; transposed for ConvTranspose.
local function conv_init(self, name, nsp, transposed, in_ch, out_ch, kernel_size, o)
  U.size("nn." .. name, "in_channels", in_ch)
  U.size("nn." .. name, "out_channels", out_ch)
  if in_ch % o.groups ~= 0 then error(("nn.%s: in_channels (%d) must be divisible by groups (%d)"):format(name, in_ch, o.groups), 4) end
  if out_ch % o.groups ~= 0 then error(("nn.%s: out_channels (%d) must be divisible by groups (%d)"):format(name, out_ch, o.groups), 4) end
  if not PAD_MODES[o.padding_mode] then
    U.choice("nn." .. name, "padding_mode", o.padding_mode, "zeros reflect replicate circular")
  end
  self.in_channels, self.out_channels, self.groups = in_ch, out_ch, o.groups
  self.kernel_size = U.ntuple(kernel_size, nsp, "kernel_size")
  self.stride = U.ntuple(o.stride, nsp, "stride")
  if type(o.padding) == "string" then
    if o.padding ~= "same" and o.padding ~= "valid" then
      error(("nn.%s: padding must be an integer, a list, 'same' or 'valid', got '%s'"):format(name, o.padding), 4)
    end
    if o.padding == "same" and not all_eq(self.stride, 1) then
      error(("nn.%s: padding='same' is not supported for strided convolutions"):format(name), 4)
    end
    self.padding = o.padding
  else
    self.padding = U.ntuple(o.padding, nsp, "padding")
  end
  self.dilation = U.ntuple(o.dilation, nsp, "dilation")
  self.output_padding = U.ntuple(o.output_padding or 0, nsp, "output_padding")
  self.padding_mode, self.transposed, self._nsp = o.padding_mode, transposed, nsp
  local shape = transposed and {in_ch, out_ch // o.groups} or {out_ch, in_ch // o.groups}
  for _, k in ipairs(self.kernel_size) do shape[#shape + 1] = k end
  self.weight = Parameter(torch.empty(shape, U.topts(o.dtype, o.device)))
  if o.bias then self.bias = Parameter(torch.empty(out_ch, U.topts(o.dtype, o.device)))
  else self:register_parameter("bias", nil) end
  -- F.pad amounts (last dim first) for padding_mode ~= 'zeros'
  if o.padding_mode ~= "zeros" then
    local rp = {}
    if self.padding == "same" then
      for i = nsp, 1, -1 do
        local total = self.dilation[i] * (self.kernel_size[i] - 1)
        local left = total // 2
        rp[#rp + 1] = left; rp[#rp + 1] = total - left
      end
    elseif self.padding ~= "valid" then
      for i = nsp, 1, -1 do rp[#rp + 1] = self.padding[i]; rp[#rp + 1] = self.padding[i] end
    end
    self._reversed_padding = rp
  end
  self:reset_parameters()
end

local function reset(self)
  init.kaiming_uniform_(self.weight, math.sqrt(5))
  if self.bias ~= nil then
    local fan_in = init._calculate_fan_in_and_fan_out(self.weight)
    if fan_in ~= 0 then
      local bound = 1 / math.sqrt(fan_in)
      init.uniform_(self.bias, -bound, bound)
    end
  end
end

local function extra(self)
  local s = ("%d, %d, kernel_size=%s, stride=%s"):format(self.in_channels, self.out_channels,
            U.repr(self.kernel_size), U.repr(self.stride))
  if type(self.padding) == "string" then s = s .. ", padding=" .. self.padding
  elseif not all_eq(self.padding, 0) then s = s .. ", padding=" .. U.repr(self.padding) end
  if not all_eq(self.dilation, 1) then s = s .. ", dilation=" .. U.repr(self.dilation) end
  if not all_eq(self.output_padding, 0) then s = s .. ", output_padding=" .. U.repr(self.output_padding) end
  if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
  if self.bias == nil then s = s .. ", bias=false" end
  if self.padding_mode ~= "zeros" then s = s .. ", padding_mode=" .. self.padding_mode end
  return s
end

local SPATIAL = {"L", "H, W", "D, H, W"}

-- Checks the input's rank and channels; returns it batched and whether it was.
local function check_input(self, x, channels)
  local nsp = self._nsp
  local nd = x:dim()
  if (nd ~= nsp + 1 and nd ~= nsp + 2) or x:size(nd - nsp) ~= channels then
    error(("%s: expected input of shape (N, %d, %s) or (%d, %s), got %s"):format(self:_label(), channels,
          SPATIAL[nsp], channels, SPATIAL[nsp], U.shape_str(x)), 3)
  end
  if nd == nsp + 1 then return x:unsqueeze(1), true end
  return x, false
end

-- op names, looked up in torch at each call (so torch.profiler's wrappers are seen)
local CONV_FNS = {"conv1d", "conv2d", "conv3d"}
local CONVT_FNS = {"conv_transpose1d", "conv_transpose2d", "conv_transpose3d"}

local function conv_forward(self, x)
  local xb, unbatched = check_input(self, x, self.in_channels)
  local y
  if self.padding_mode ~= "zeros" then
    xb = F.pad(xb, self._reversed_padding, self.padding_mode)
    y = torch[CONV_FNS[self._nsp]](xb, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
  else
    y = torch[CONV_FNS[self._nsp]](xb, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
  end
  if unbatched then y = y:squeeze(1) end
  return y
end

local CONV_ARGS = {"stride", "padding", "dilation", "groups", "bias", "padding_mode", "device", "dtype"}
local CONV_D = {stride = 1, padding = 0, dilation = 1, groups = 1, bias = true, padding_mode = "zeros"}

for nsp = 1, 3 do
  local name = "Conv" .. nsp .. "d"
  local cls = Module:extend(name)
  -- ConvNd(in_channels, out_channels, kernel_size[, stride=1, padding=0,
  -- dilation=1, groups=1, bias=true, padding_mode='zeros'])
  cls.__init = function(self, in_ch, out_ch, kernel_size, ...)
    local o = U.args("nn." .. name, CONV_ARGS, CONV_D, ...)
    conv_init(self, name, nsp, false, in_ch, out_ch, kernel_size, o)
  end
  cls.reset_parameters, cls.extra_repr, cls.forward = reset, extra, conv_forward
  C[name] = cls
end

local CONVT_ARGS = {"stride", "padding", "output_padding", "groups", "bias", "dilation", "padding_mode", "device",
                    "dtype"}
local CONVT_D = {stride = 1, padding = 0, output_padding = 0, groups = 1, bias = true, dilation = 1,
                 padding_mode = "zeros"}

-- output_padding that makes the output spatial size equal output_size.
local function output_padding_for(self, x, output_size)
  local nsp = self._nsp
  local os = {}
  if #output_size > nsp then for i = 1, nsp do os[i] = output_size[#output_size - nsp + i] end
  else os = output_size end
  local op = {}
  for i = 1, nsp do
    local n = x:size(x:dim() - nsp + i)
    local base = (n - 1) * self.stride[i] - 2 * self.padding[i] + self.dilation[i] * (self.kernel_size[i] - 1) + 1
    op[i] = os[i] - base
    if op[i] < 0 or op[i] >= math.max(self.stride[i], self.dilation[i]) then
      error(("%s: requested output size %s is not reachable from input %s"):format(self:_label(), U.repr(os),
            U.shape_str(x)), 3)
    end
  end
  return op
end

for nsp = 1, 3 do
  local name = "ConvTranspose" .. nsp .. "d"
  local cls = Module:extend(name)
  -- ConvTransposeNd(in_channels, out_channels, kernel_size[, stride=1,
  -- padding=0, output_padding=0, groups=1, bias=true, dilation=1])
  cls.__init = function(self, in_ch, out_ch, kernel_size, ...)
    local o = U.args("nn." .. name, CONVT_ARGS, CONVT_D, ...)
    if o.padding_mode ~= "zeros" then error("nn." .. name .. ": only padding_mode='zeros' is supported", 3) end
    if type(o.padding) == "string" then error("nn." .. name .. ": padding must be integers", 3) end
    conv_init(self, name, nsp, true, in_ch, out_ch, kernel_size, o)
  end
  cls.reset_parameters, cls.extra_repr = reset, extra
  -- forward(input[, output_size]): output_size picks the output_padding.
  cls.forward = function(self, x, output_size)
    local xb, unbatched = check_input(self, x, self.in_channels)
    local op = self.output_padding
    if output_size ~= nil then op = output_padding_for(self, xb, output_size) end
    local y = torch[CONVT_FNS[nsp]](xb, self.weight, self.bias, self.stride, self.padding, op, self.groups, self.dilation)
    if unbatched then y = y:squeeze(1) end
    return y
  end
  C[name] = cls
end

return C
