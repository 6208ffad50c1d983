-- torch.nn.activation -- activation modules (ReLU, GELU, Softmax, ...), each
-- a thin wrapper of its F. function with PyTorch's constructor arguments.
local torch = require "torch"
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point

local Module, Parameter = M.Module, M.Parameter
local A = {}

local function inplace_repr(self) return self.inplace and "inplace=true" or "" end

-- Modules whose only option is inplace.
local SIMPLE = {ReLU = F.relu, SiLU = F.silu, ReLU6 = F.relu6, Hardswish = F.hardswish, Hardsigmoid = F.hardsigmoid,
                Mish = F.mish, SELU = F.selu}
for name, fn in pairs(SIMPLE) do
  local cls = Module:extend(name)
  function cls:__init(inplace)
    if U.opts("nn." .. name, inplace, "inplace") then inplace = inplace.inplace end
    self.inplace = inplace == true
  end
  if name == "ReLU" or name == "SiLU" then
    function cls:forward(x) return fn(x, self.inplace) end
  else
    function cls:forward(x) return fn(x) end
  end
  cls.extra_repr = inplace_repr
  A[name] = cls
end

-- Modules without options.
local PLAIN = {Tanh = F.tanh, Sigmoid = F.sigmoid, LogSigmoid = F.logsigmoid, Softsign = F.softsign,
               Tanhshrink = F.tanhshrink}
for name, fn in pairs(PLAIN) do
  local cls = Module:extend(name)
  function cls:__init() end
  function cls:forward(x) return fn(x) end
  A[name] = cls
end

local LeakyReLU = Module:extend("LeakyReLU")
-- LeakyReLU([negative_slope=0.01, inplace=false])
function LeakyReLU:__init(...)
  local o = U.args("nn.LeakyReLU", {"negative_slope", "inplace"}, {negative_slope = 0.01, inplace = false}, ...)
  self.negative_slope, self.inplace = o.negative_slope, o.inplace
end
function LeakyReLU:forward(x) return F.leaky_relu(x, self.negative_slope) end
function LeakyReLU:extra_repr()
  return "negative_slope=" .. U.repr(self.negative_slope) .. (self.inplace and ", inplace=true" or "")
end

local GELU = Module:extend("GELU")
-- GELU([approximate='none' | 'tanh'])
function GELU:__init(approximate)
  if U.opts("nn.GELU", approximate, "approximate") then approximate = approximate.approximate end
  approximate = approximate or "none"
  if approximate ~= "none" and approximate ~= "tanh" then
    error("nn.GELU: approximate must be 'none' or 'tanh', got '" .. tostring(approximate) .. "'", 2)
  end
  self.approximate = approximate
end
function GELU:forward(x) return F.gelu(x, self.approximate) end
function GELU:extra_repr() return "approximate=" .. U.repr(self.approximate) end

local ELU = Module:extend("ELU")
-- ELU([alpha=1, inplace=false])
function ELU:__init(...)
  local o = U.args("nn.ELU", {"alpha", "inplace"}, {alpha = 1.0, inplace = false}, ...)
  self.alpha, self.inplace = o.alpha, o.inplace
end
function ELU:forward(x) return F.elu(x, self.alpha) end
function ELU:extra_repr() return "alpha=" .. U.repr(self.alpha + 0.0) end

local Softplus = Module:extend("Softplus")
-- Softplus([beta=1, threshold=20])
function Softplus:__init(...)
  local o = U.args("nn.Softplus", {"beta", "threshold"}, {beta = 1.0, threshold = 20.0}, ...)
  self.beta, self.threshold = o.beta, o.threshold
end
function Softplus:forward(x) return F.softplus(x, self.beta, self.threshold) end
function Softplus:extra_repr() return ("beta=%s, threshold=%s"):format(U.repr(self.beta), U.repr(self.threshold)) end

local Hardtanh = Module:extend("Hardtanh")
-- Hardtanh([min_val=-1, max_val=1, inplace=false])
function Hardtanh:__init(...)
  local o = U.args("nn.Hardtanh", {"min_val", "max_val", "inplace"}, {min_val = -1.0, max_val = 1.0}, ...)
  self.min_val, self.max_val = o.min_val, o.max_val
end
function Hardtanh:forward(x) return F.hardtanh(x, self.min_val, self.max_val) end
function Hardtanh:extra_repr() return ("min_val=%s, max_val=%s"):format(U.repr(self.min_val), U.repr(self.max_val)) end

local SOFT = {Softmax = F.softmax, LogSoftmax = F.log_softmax, Softmin = F.softmin}
for name, fn in pairs(SOFT) do
  local cls = Module:extend(name)
  -- Softmax(dim) / LogSoftmax(dim) / Softmin(dim)
  function cls:__init(dim)
    if U.opts("nn." .. name, dim, "dim") then dim = dim.dim end
    self.dim = dim
  end
  function cls:forward(x)
    if self.dim == nil then error(self:_get_name() .. ": construct it with a dim, e.g. nn." .. name .. "(-1)", 2) end
    return fn(x, self.dim)
  end
  function cls:extra_repr() return "dim=" .. tostring(self.dim) end
  A[name] = cls
end

local GLU = Module:extend("GLU")
-- GLU([dim=-1])
function GLU:__init(dim)
  if U.opts("nn.GLU", dim, "dim") then dim = dim.dim end
  self.dim = dim or -1
end
function GLU:forward(x) return F.glu(x, self.dim) end
function GLU:extra_repr() return "dim=" .. self.dim end

local PReLU = Module:extend("PReLU")
-- PReLU([num_parameters=1, init=0.25])
function PReLU:__init(...)
  local o = U.args("nn.PReLU", {"num_parameters", "init", "device", "dtype"}, {num_parameters = 1, init = 0.25}, ...)
  self.num_parameters = o.num_parameters
  self.weight = Parameter(torch.full({o.num_parameters}, o.init, U.topts(o.dtype, o.device)))
end
function PReLU:forward(x) return F.prelu(x, self.weight) end
function PReLU:extra_repr() return "num_parameters=" .. self.num_parameters end

A.LeakyReLU, A.GELU, A.ELU, A.Softplus, A.Hardtanh, A.GLU, A.PReLU = LeakyReLU, GELU, ELU, Softplus, Hardtanh, GLU, PReLU
return A
