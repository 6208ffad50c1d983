-- torch.nn.functional.layers -- F.linear, bilinear, convolutions, pooling,
-- normalization, embedding, dropout and one_hot: thin wrappers over engine
-- ops (recorded by autograd) with PyTorch's argument order. No module state.
local torch = require "torch"
local U = require "torch.nn.util"

local F = {}
local is_tensor = torch.is_tensor

-- On CUDA (outside torch.compile, which folds the bias itself) a bias of
-- the input's dtype goes through addmm: one cuBLASLt call with the bias
-- epilogue, and the backward computes the weight and bias gradients in one
-- call too (docs/cuda.md, "cuBLASLt epilogues").
local function linear_cuda(x, w, b)
  local k = x.shape[x:dim()]
  if x:dim() == 2 then return torch.addmm(b, x, w:t()) end
  local shape = {table.unpack(x.shape)}
  shape[#shape] = w.shape[1]
  return torch.addmm(b, x:reshape(-1, k), w:t()):view(shape)
end

-- linear(input, weight[, bias]): input @ weight^T + bias.
function F.linear(x, w, b)
  if type(b) == "table" then b = U.check("F.linear", b, "bias").bias end
  -- is_compiling first: a capture and its replays must make the same calls
  -- (a replay's stand-in temporaries are CPU tensors)
  if b ~= nil and not torch.compiler.is_compiling() and x.is_cuda and x:dim() >= 2 and w:dim() == 2 and
     b:dim() == 1 and x.dtype == w.dtype and x.dtype == b.dtype and w.shape[2] == x.shape[x:dim()] and
     b.shape[1] == w.shape[1] then
    return linear_cuda(x, w, b)
  end
  local y = x:matmul(w:t())
  if b ~= nil then y = y + b end
  return y
end

-- bilinear(input1, input2, weight[, bias]): y_o = x1^T W_o x2 + b_o, with
-- weight of shape (out, in1, in2) and inputs (..., in1), (..., in2).
function F.bilinear(x1, x2, w, b)
  if type(b) == "table" then b = U.check("F.bilinear", b, "bias").bias end
  local O, I, J = w:size(1), w:size(2), w:size(3)
  local lead = x1:size()
  lead[#lead] = nil
  local a = x1:reshape(-1, I)
  local n = a:size(1)
  local t = a:matmul(w:permute(2, 1, 3):reshape(I, O * J)):view(n, O, J)
  local y = (t * x2:reshape(n, 1, J)):sum(3)
  if b ~= nil then y = y + b end
  lead[#lead + 1] = O
  return y:reshape(lead)
end

-- Engine ops with PyTorch's signatures: (input, weight, bias, stride,
-- padding, dilation, groups) / (input, kernel_size, stride, padding, ...).
F.conv1d, F.conv2d, F.conv3d = torch.conv1d, torch.conv2d, torch.conv3d
F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d =
  torch.conv_transpose1d, torch.conv_transpose2d, torch.conv_transpose3d
F.max_pool1d, F.max_pool2d, F.max_pool3d = torch.max_pool1d, torch.max_pool2d, torch.max_pool3d
F.max_pool1d_with_indices, F.max_pool2d_with_indices = torch.max_pool1d_with_indices, torch.max_pool2d_with_indices
F.avg_pool1d, F.avg_pool2d, F.avg_pool3d = torch.avg_pool1d, torch.avg_pool2d, torch.avg_pool3d
F.adaptive_avg_pool1d, F.adaptive_avg_pool2d, F.adaptive_avg_pool3d =
  torch.adaptive_avg_pool1d, torch.adaptive_avg_pool2d, torch.adaptive_avg_pool3d

local function adaptive_max(fn, name)
  return function(x, output_size, return_indices)
    if type(return_indices) == "table" then
      return_indices = U.check(name, return_indices, "return_indices").return_indices
    end
    local y, i = fn(x, output_size)
    if return_indices then return y, i end
    return y
  end
end
-- adaptive_max_poolNd(input, output_size[, return_indices=false])
F.adaptive_max_pool1d = adaptive_max(torch.adaptive_max_pool1d, "F.adaptive_max_pool1d")
F.adaptive_max_pool2d = adaptive_max(torch.adaptive_max_pool2d, "F.adaptive_max_pool2d")
F.adaptive_max_pool3d = adaptive_max(torch.adaptive_max_pool3d, "F.adaptive_max_pool3d")

local BN = {"weight", "bias", "training", "momentum", "eps"}
local BN_D = {training = false, momentum = 0.1, eps = 1e-5}
-- batch_norm(input, running_mean, running_var[, weight, bias, training=false,
-- momentum=0.1, eps=1e-5]); running statistics are updated in place when training.
function F.batch_norm(x, running_mean, running_var, ...)
  local o = U.args("F.batch_norm", BN, BN_D, ...)
  return (torch.batch_norm(x, o.weight, o.bias, running_mean, running_var, o.training, o.momentum, o.eps))
end

-- instance_norm(input[, running_mean, running_var, weight, bias, use_input_stats=true, momentum, eps])
function F.instance_norm(x, ...)
  local o = U.args("F.instance_norm", {"running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum",
                                       "eps"}, {use_input_stats = true, momentum = 0.1, eps = 1e-5}, ...)
  local C = x:size(2)
  local y = torch.group_norm(x, C, nil, nil, o.eps)
  local shape = {1, C}
  for _ = 3, x:dim() do shape[#shape + 1] = 1 end
  if o.weight ~= nil then y = y * o.weight:view(shape) end
  if o.bias ~= nil then y = y + o.bias:view(shape) end
  return y
end

-- layer_norm(input, normalized_shape[, weight, bias, eps=1e-5])
function F.layer_norm(x, normalized_shape, ...)
  local o = U.args("F.layer_norm", {"weight", "bias", "eps"}, {eps = 1e-5}, ...)
  return (torch.layer_norm(x, normalized_shape, o.weight, o.bias, o.eps))
end

-- group_norm(input, num_groups[, weight, bias, eps=1e-5])
function F.group_norm(x, num_groups, ...)
  local o = U.args("F.group_norm", {"weight", "bias", "eps"}, {eps = 1e-5}, ...)
  return (torch.group_norm(x, num_groups, o.weight, o.bias, o.eps))
end

local FINFO_EPS = {}
local function finfo_eps(dtype)
  if not FINFO_EPS[torch.float32] then
    FINFO_EPS[torch.float32] = 1.1920928955078125e-07
    FINFO_EPS[torch.float64] = 2.220446049250313e-16
    FINFO_EPS[torch.float16] = 0.0009765625
    FINFO_EPS[torch.bfloat16] = 0.0078125
  end
  return FINFO_EPS[dtype] or FINFO_EPS[torch.float32]
end
F._finfo_eps = finfo_eps

-- rms_norm(input, normalized_shape[, weight, eps=machine epsilon of the dtype]):
-- x / sqrt(mean(x^2 over the normalized dims) + eps) * weight.
function F.rms_norm(x, normalized_shape, ...)
  local o = U.args("F.rms_norm", {"weight", "eps"}, nil, ...)
  local n = type(normalized_shape) == "table" and #normalized_shape or 1
  local nd = x:dim()
  local dims = {}
  for i = 1, n do dims[i] = nd - n + i end
  local eps = o.eps or finfo_eps(x.dtype)
  local y = x * (x * x):mean(dims, true):add(eps):rsqrt()
  if o.weight ~= nil then y = y * o.weight end
  return y
end

local EMB = {"padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse"}
local EMB_D = {norm_type = 2.0}
-- embedding(input, weight[, padding_idx, max_norm, norm_type=2]): rows of
-- weight at the 1-based indices of input (int64), shape input.shape..., dim.
-- The padding_idx row gets no gradient; max_norm renormalizes looked-up rows in place.
local function embedding(fname, input, weight, o)
  if not is_tensor(input) or input:is_floating_point() or input.dtype == torch.bool then
    error(fname .. ": expected an integer (int64) tensor of 1-based indices, got "
          .. (is_tensor(input) and tostring(input.dtype) or type(input)), 3)
  end
  if o.max_norm ~= nil then
    torch.no_grad(function()
      local rows = input:reshape(-1):unique()
      local sel = weight:index_select(1, rows)
      local norms = sel:norm(o.norm_type, 2, true)
      local scale = torch.where(norms:gt(o.max_norm), o.max_norm / (norms + 1e-7), torch.ones_like(norms))
      weight:index_copy_(1, rows, sel * scale)
    end)
  end
  local shape = input:size()
  shape[#shape + 1] = weight:size(2)
  local flat = input:reshape(-1)
  local ok, y = pcall(weight.index_select, weight, 1, flat)
  if not ok then -- name the offending index the way the user wrote it
    local n = weight:size(1)
    local bad = flat:lt(1):logical_or(flat:gt(n))
    if bad:any():item() then
      error(("%s: index %d is out of range for %d embeddings (indices are 1-based: 1..%d)"):format(fname,
            flat:masked_select(bad)[1]:item(), n, n), 3)
    end
    error(y, 0)
  end
  y = y:view(shape)
  if o.padding_idx ~= nil then
    local pidx = o.padding_idx < 0 and weight:size(1) + o.padding_idx + 1 or o.padding_idx
    y = torch.where(input:ne(pidx):unsqueeze(-1), y, y:detach())
  end
  return y
end
-- (for nn.Embedding, whose errors name it)
function F._embedding(fname, input, weight, padding_idx, max_norm, norm_type)
  return embedding(fname, input, weight, {padding_idx = padding_idx, max_norm = max_norm, norm_type = norm_type})
end

function F.embedding(input, weight, ...)
  return embedding("F.embedding", input, weight, U.args("F.embedding", EMB, EMB_D, ...))
end

local DROP = {"p", "training", "inplace"}
local DROP_D = {p = 0.5, training = true, inplace = false}

local function check_p(p, name)
  if type(p) ~= "number" or p < 0 or p > 1 then
    error(("%s: dropout probability has to be between 0 and 1, got %s"):format(name, tostring(p)), 3)
  end
end

-- Zeroes elements (whole channels when mask_shape keeps only N, C) with
-- probability p and scales the rest by 1/(1-p).
local function dropout_impl(x, o, name, channel)
  check_p(o.p, name)
  if not o.training or o.p == 0 then return x end
  local mask
  if channel then
    local s = x:size()
    local ms = {}
    for i = 1, #s do ms[i] = i <= (#s - channel) and s[i] or 1 end
    mask = torch.empty(ms, {dtype = x.dtype, device = x.device})
  else
    mask = torch.empty_like(x)
  end
  if o.p == 1 then mask:zero_() else mask:bernoulli_(1 - o.p):div_(1 - o.p) end
  if o.inplace then return x:mul_(mask) end
  return x * mask
end

-- dropout(input[, p=0.5, training=true, inplace=false])
function F.dropout(x, ...) return dropout_impl(x, U.args("F.dropout", DROP, DROP_D, ...), "F.dropout") end
-- dropout1d/2d/3d: whole channels (the last 1/2/3 dims share a mask value).
function F.dropout1d(x, ...) return dropout_impl(x, U.args("F.dropout1d", DROP, DROP_D, ...), "F.dropout1d", 1) end
function F.dropout2d(x, ...) return dropout_impl(x, U.args("F.dropout2d", DROP, DROP_D, ...), "F.dropout2d", 2) end
function F.dropout3d(x, ...) return dropout_impl(x, U.args("F.dropout3d", DROP, DROP_D, ...), "F.dropout3d", 3) end

-- one_hot(tensor[, num_classes]): int64 tensor with a trailing dim of size
-- num_classes (default: the largest value) holding 1 at each 1-based class.
function F.one_hot(t, num_classes)
  if type(num_classes) == "table" then num_classes = U.check("F.one_hot", num_classes, "num_classes").num_classes end
  if not is_tensor(t) or t:is_floating_point() then
    error("F.one_hot: expected an integer tensor of 1-based class values", 2)
  end
  if t:numel() > 0 then
    local lo, hi = t:min():item(), t:max():item()
    if lo < 1 then error(("F.one_hot: class values must be >= 1 (1-based), got %d"):format(lo), 2) end
    if num_classes == nil or num_classes < 0 then num_classes = hi end
    if hi > num_classes then
      error(("F.one_hot: class value %d is larger than num_classes=%d"):format(hi, num_classes), 2)
    end
  elseif num_classes == nil or num_classes < 0 then
    error("F.one_hot: can not infer num_classes from an empty tensor", 2)
  end
  local shape = t:size()
  shape[#shape + 1] = num_classes
  local out = torch.zeros(shape, {dtype = torch.int64, device = t.device})
  out:scatter_(-1, t:long():unsqueeze(-1), 1)
  return out
end

return F
