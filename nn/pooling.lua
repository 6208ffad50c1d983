-- torch.nn.pooling -- MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
-- AdaptiveMaxPool1d/2d: modules around the engine's pooling ops.
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"

local Module = M.Module
local P = {}

local SPATIAL = {"L", "H, W", "D, H, W"}

local function check_rank(self, x, nsp)
  local nd = x:dim()
  if nd ~= nsp + 1 and nd ~= nsp + 2 then
    error(("%s: expected input of shape (N, C, %s) or (C, %s), got %s"):format(self:_label(), SPATIAL[nsp],
          SPATIAL[nsp], U.shape_str(x)), 3)
  end
end

-- op names, looked up in torch at each call (so torch.profiler's wrappers are seen)
local MAX_FNS = {"max_pool1d", "max_pool2d", "max_pool3d"}
local AVG_FNS = {"avg_pool1d", "avg_pool2d", "avg_pool3d"}
local AAVG_FNS = {"adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d"}
local AMAX_FNS = {"adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d"}

for nsp = 1, 3 do
  local name = "MaxPool" .. nsp .. "d"
  local cls = Module:extend(name)
  -- MaxPoolNd(kernel_size[, stride=kernel_size, padding=0, dilation=1,
  -- return_indices=false, ceil_mode=false])
  function cls:__init(kernel_size, ...)
    local o = U.args("nn." .. name, {"stride", "padding", "dilation", "return_indices", "ceil_mode"},
                     {padding = 0, dilation = 1, return_indices = false, ceil_mode = false}, ...)
    self.kernel_size, self.stride = kernel_size, o.stride or kernel_size
    self.padding, self.dilation = o.padding, o.dilation
    self.return_indices, self.ceil_mode = o.return_indices, o.ceil_mode
  end
  function cls:forward(x)
    check_rank(self, x, nsp)
    return torch[MAX_FNS[nsp]](x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                        self.return_indices)
  end
  function cls:extra_repr()
    return ("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s"):format(U.repr(self.kernel_size),
            U.repr(self.stride), U.repr(self.padding), U.repr(self.dilation), tostring(self.ceil_mode))
  end
  P[name] = cls

  name = "AvgPool" .. nsp .. "d"
  local avg = Module:extend(name)
  -- AvgPoolNd(kernel_size[, stride=kernel_size, padding=0, ceil_mode=false,
  -- count_include_pad=true, divisor_override])
  function avg:__init(kernel_size, ...)
    local o = U.args("nn." .. name, {"stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"},
                     {padding = 0, ceil_mode = false, count_include_pad = true}, ...)
    self.kernel_size, self.stride, self.padding = kernel_size, o.stride or kernel_size, o.padding
    self.ceil_mode, self.count_include_pad, self.divisor_override = o.ceil_mode, o.count_include_pad,
                                                                    o.divisor_override
  end
  function avg:forward(x)
    check_rank(self, x, nsp)
    return torch[AVG_FNS[nsp]](x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad,
                        self.divisor_override)
  end
  function avg:extra_repr()
    return ("kernel_size=%s, stride=%s, padding=%s"):format(U.repr(self.kernel_size), U.repr(self.stride),
                                                           U.repr(self.padding))
  end
  P[name] = avg

  name = "AdaptiveAvgPool" .. nsp .. "d"
  local aavg = Module:extend(name)
  -- AdaptiveAvgPoolNd(output_size): an integer or a list (false keeps that input size)
  function aavg:__init(output_size) self.output_size = output_size end
  function aavg:forward(x)
    check_rank(self, x, nsp)
    return torch[AAVG_FNS[nsp]](x, self.output_size)
  end
  function aavg:extra_repr() return "output_size=" .. U.repr(self.output_size) end
  P[name] = aavg

  name = "AdaptiveMaxPool" .. nsp .. "d"
  local amax = Module:extend(name)
  -- AdaptiveMaxPoolNd(output_size[, return_indices=false])
  function amax:__init(output_size, return_indices)
    if U.opts("nn." .. name, return_indices, "return_indices") then return_indices = return_indices.return_indices end
    self.output_size, self.return_indices = output_size, return_indices == true
  end
  function amax:forward(x)
    check_rank(self, x, nsp)
    local y, i = torch[AMAX_FNS[nsp]](x, self.output_size)
    if self.return_indices then return y, i end
    return y
  end
  function amax:extra_repr() return "output_size=" .. U.repr(self.output_size) end
  P[name] = amax
end

return P
