-- torch.nn.functional.activation -- activation functions and softmax
-- variants, built on the engine's recorded elementwise ops.
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}

local function inplace_arg(v) if type(v) == "table" then return v.inplace end return v end

-- relu(input[, inplace=false])
function F.relu(x, inplace) if inplace_arg(inplace) then return x:relu_() end return x:relu() end
function F.relu_(x) return x:relu_() end
function F.relu6(x, inplace) return F.hardtanh(x, 0, 6, inplace) end

-- leaky_relu(input[, negative_slope=0.01, inplace=false])
function F.leaky_relu(x, ...)
  local o = U.args("F.leaky_relu", {"negative_slope", "inplace"}, {negative_slope = 0.01}, ...)
  return torch.leaky_relu(x, o.negative_slope)
end

-- gelu(input[, approximate='none' | 'tanh'])
function F.gelu(x, approximate)
  if U.opts("F.gelu", approximate, "approximate") then approximate = approximate.approximate end
  if approximate == nil or approximate == "none" then return x:gelu() end
  if approximate == "tanh" then return x:gelu_tanh() end
  error("F.gelu: approximate must be 'none' or 'tanh', got '" .. tostring(approximate) .. "'", 2)
end

function F.silu(x, inplace) if inplace_arg(inplace) then return x:silu_() end return x:silu() end
function F.tanh(x) return x:tanh() end
function F.sigmoid(x) return x:sigmoid() end
function F.logsigmoid(x) return -F.softplus(-x) end
function F.softsign(x) return x / (x:abs() + 1) end
function F.tanhshrink(x) return x - x:tanh() end
function F.mish(x) return x * F.softplus(x):tanh() end
function F.hardsigmoid(x) return (x / 6 + 0.5):clamp(0, 1) end
function F.hardswish(x) return x * F.hardsigmoid(x) end

-- hardtanh(input[, min_val=-1, max_val=1, inplace=false])
function F.hardtanh(x, ...)
  local o = U.args("F.hardtanh", {"min_val", "max_val", "inplace"}, {min_val = -1., max_val = 1.}, ...)
  if o.inplace then return x:clamp_(o.min_val, o.max_val) end
  return x:clamp(o.min_val, o.max_val)
end

-- elu(input[, alpha=1, inplace=false]): x for x > 0, alpha (e^x - 1) otherwise.
function F.elu(x, ...)
  local o = U.args("F.elu", {"alpha", "inplace"}, {alpha = 1.0}, ...)
  return torch.where(x:gt(0), x, x:clamp(nil, 0):expm1() * o.alpha)
end

-- selu(input): scale * elu(x, alpha) with the self-normalizing constants.
function F.selu(x)
  return F.elu(x, 1.6732632423543772848170429916717) * 1.0507009873554804934193349852946
end

-- softplus(input[, beta=1, threshold=20]): log(1 + e^(beta x)) / beta, linear above threshold.
function F.softplus(x, ...)
  local o = U.args("F.softplus", {"beta", "threshold"}, {beta = 1.0, threshold = 20.0}, ...)
  local bx = x * o.beta
  local soft = bx:clamp(nil, o.threshold):exp():log1p() / o.beta
  return torch.where(bx:gt(o.threshold), x, soft)
end

local function softmax_dim(fname, x, dim, dtype)
  if U.opts(fname, dim, "dim dtype") then dim, dtype = dim.dim, dim.dtype end
  if dim == nil then error(fname .. ": dim is required (e.g. " .. fname .. "(x, -1))", 3) end
  if dtype ~= nil then x = x:to(dtype) end
  return x, dim
end

-- softmax(input, dim[, dtype]) / log_softmax / softmin
function F.softmax(x, dim, dtype)
  local y, d = softmax_dim("F.softmax", x, dim, dtype)
  return y:softmax(d)
end
function F.log_softmax(x, dim, dtype)
  local y, d = softmax_dim("F.log_softmax", x, dim, dtype)
  return y:log_softmax(d)
end
function F.softmin(x, dim, dtype)
  local y, d = softmax_dim("F.softmin", x, dim, dtype)
  return (-y):softmax(d)
end

-- glu(input[, dim=-1]): a * sigmoid(b) with a, b the halves of input along dim.
function F.glu(x, dim)
  if U.opts("F.glu", dim, "dim") then dim = dim.dim end
  dim = dim or -1
  local n = x:size(dim)
  if n % 2 ~= 0 then error(("F.glu: dim %d has odd size %d"):format(dim, n), 2) end
  return x:narrow(dim, 1, n // 2) * x:narrow(dim, n // 2 + 1, n // 2):sigmoid()
end

-- prelu(input, weight): max(0, x) + weight * min(0, x), weight per channel (dim 2).
function F.prelu(x, w)
  if w:numel() > 1 and x:dim() >= 2 then
    local shape = {1, w:numel()}
    for _ = 3, x:dim() do shape[#shape + 1] = 1 end
    w = w:view(shape)
  end
  return x:relu() + w * x:clamp(nil, 0)
end

return F
