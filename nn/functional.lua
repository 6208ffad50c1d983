-- torch.nn.functional (F) -- the functional form of every nn layer and loss.
-- The functions live in lua/torch/nn/functional/<group>.lua; this file joins
-- them into one table and attaches their help texts.
local torch = require "torch"
local U = require "torch.nn.util"

local F = {__help = "torch.nn.functional (F): functional forms of layers and losses; help(F.name) for one"}
for _, part in ipairs{"layers", "activation", "loss", "vision", "distance", "attention"} do
  for k, v in pairs(require("torch.nn.functional." .. part)) do F[k] = v end
end

U.doc(F, {
  linear = "F.linear(input, weight[, bias]) -- input @ weight^T + bias",
  bilinear = "F.bilinear(input1, input2, weight[, bias]) -- x1^T W x2 + b per output feature",
  batch_norm = "F.batch_norm(input, running_mean, running_var[, weight, bias, training, momentum, eps]) -- batch normalization",
  instance_norm = "F.instance_norm(input[, running_mean, running_var, weight, bias, use_input_stats, momentum, eps]) -- per-sample, per-channel normalization",
  layer_norm = "F.layer_norm(input, normalized_shape[, weight, bias, eps]) -- layer normalization",
  group_norm = "F.group_norm(input, num_groups[, weight, bias, eps]) -- group normalization",
  rms_norm = "F.rms_norm(input, normalized_shape[, weight, eps]) -- root-mean-square normalization",
  embedding = "F.embedding(input, weight[, padding_idx, max_norm, norm_type]) -- rows of weight at 1-based indices",
  dropout = "F.dropout(input[, p=0.5, training=true, inplace=false]) -- zero elements with probability p, scale by 1/(1-p)",
  dropout1d = "F.dropout1d(input[, p, training, inplace]) -- channel dropout for (N, C, L)",
  dropout2d = "F.dropout2d(input[, p, training, inplace]) -- channel dropout for (N, C, H, W)",
  dropout3d = "F.dropout3d(input[, p, training, inplace]) -- channel dropout for (N, C, D, H, W)",
  one_hot = "F.one_hot(tensor[, num_classes]) -- int64 one-hot encoding of 1-based classes",
  adaptive_max_pool1d = "F.adaptive_max_pool1d(input, output_size[, return_indices]) -- adaptive max pooling",
  adaptive_max_pool2d = "F.adaptive_max_pool2d(input, output_size[, return_indices]) -- adaptive max pooling",
  adaptive_max_pool3d = "F.adaptive_max_pool3d(input, output_size[, return_indices]) -- adaptive max pooling",
  relu = "F.relu(input[, inplace]) -- max(x, 0)",
  relu_ = "F.relu_(input) -- max(x, 0) in place",
  relu6 = "F.relu6(input) -- min(max(x, 0), 6)",
  leaky_relu = "F.leaky_relu(input[, negative_slope=0.01]) -- x or slope * x",
  gelu = "F.gelu(input[, approximate='none'|'tanh']) -- Gaussian error linear unit",
  silu = "F.silu(input) -- x * sigmoid(x)",
  tanh = "F.tanh(input) -- hyperbolic tangent",
  sigmoid = "F.sigmoid(input) -- logistic sigmoid",
  logsigmoid = "F.logsigmoid(input) -- log(sigmoid(x))",
  softsign = "F.softsign(input) -- x / (1 + |x|)",
  tanhshrink = "F.tanhshrink(input) -- x - tanh(x)",
  mish = "F.mish(input) -- x * tanh(softplus(x))",
  hardsigmoid = "F.hardsigmoid(input) -- clamp(x / 6 + 1/2, 0, 1)",
  hardswish = "F.hardswish(input) -- x * hardsigmoid(x)",
  hardtanh = "F.hardtanh(input[, min_val=-1, max_val=1]) -- clamp",
  elu = "F.elu(input[, alpha=1]) -- exponential linear unit",
  selu = "F.selu(input) -- scaled exponential linear unit",
  softplus = "F.softplus(input[, beta=1, threshold=20]) -- log(1 + exp(beta x)) / beta",
  softmax = "F.softmax(input, dim[, dtype]) -- softmax along dim",
  log_softmax = "F.log_softmax(input, dim[, dtype]) -- log of softmax along dim",
  softmin = "F.softmin(input, dim[, dtype]) -- softmax of -input",
  glu = "F.glu(input[, dim=-1]) -- gated linear unit",
  prelu = "F.prelu(input, weight) -- leaky relu with learned per-channel slopes",
  mse_loss = "F.mse_loss(input, target[, reduction='mean']) -- mean squared error",
  l1_loss = "F.l1_loss(input, target[, reduction='mean']) -- mean absolute error",
  smooth_l1_loss = "F.smooth_l1_loss(input, target[, reduction='mean', beta=1]) -- smooth L1 loss",
  huber_loss = "F.huber_loss(input, target[, reduction='mean', delta=1]) -- Huber loss",
  nll_loss = "F.nll_loss(input, target[, weight, ignore_index=-100, reduction]) -- negative log likelihood, 1-based targets",
  cross_entropy = "F.cross_entropy(input, target[, weight, ignore_index=-100, reduction, label_smoothing]) -- log_softmax + nll_loss",
  binary_cross_entropy = "F.binary_cross_entropy(input, target[, weight, reduction]) -- BCE of probabilities",
  binary_cross_entropy_with_logits = "F.binary_cross_entropy_with_logits(input, target[, weight, reduction, pos_weight]) -- BCE of logits",
  kl_div = "F.kl_div(input, target[, reduction='mean', log_target=false]) -- Kullback-Leibler divergence",
  pad = "F.pad(input, pad[, mode='constant', value=0]) -- pad (constant, reflect, replicate, circular)",
  interpolate = "F.interpolate(input, size, scale_factor[, mode, align_corners, recompute_scale_factor, antialias]) -- resize",
  grid_sample = "F.grid_sample(input, grid[, mode, padding_mode, align_corners]) -- sample input at grid points",
  affine_grid = "F.affine_grid(theta, size[, align_corners]) -- sampling grid of affine maps",
  unfold = "F.unfold(input, kernel_size[, dilation, padding, stride]) -- im2col: sliding blocks as columns",
  fold = "F.fold(input, output_size, kernel_size[, dilation, padding, stride]) -- col2im: sum blocks back",
  pixel_shuffle = "F.pixel_shuffle(input, r) -- (C r^2, H, W) -> (C, H r, W r)",
  pixel_unshuffle = "F.pixel_unshuffle(input, r) -- (C, H r, W r) -> (C r^2, H, W)",
  normalize = "F.normalize(input[, p=2, dim=2, eps=1e-12]) -- divide by the p-norm along dim",
  cosine_similarity = "F.cosine_similarity(x1, x2[, dim=2, eps=1e-8]) -- cosine of the angle along dim",
  scaled_dot_product_attention = "F.scaled_dot_product_attention(query, key, value[, {attn_mask=, dropout_p=0, "
    .. "is_causal=false, scale=1/sqrt(E), enable_gqa=false}]) -- softmax(q k^T * scale + mask) v (flash or math "
    .. "backend: torch.backends.sdp_kernel)",
  pairwise_distance = "F.pairwise_distance(x1, x2[, p=2, eps=1e-6, keepdim]) -- p-norm of x1 - x2",
})

-- torch.autocast: the Lua functions among PyTorch's autocast lists (linear,
-- the losses, softmax...) go through their op's policy (by name) while a
-- region is active; otherwise the original is tail-called, so its errors
-- still point at the caller's line. C ops carry their policy already.
local help = F.__help
local active, wrap = torch._autocast_active, torch._autocast_wrap
for name, fn in pairs(F) do
  if type(fn) == "function" then
    local w = wrap(name, fn)
    if w ~= fn then
      F[name] = function(...)
        if active() then return w(...) end
        return fn(...)
      end
      U.doc(F, {[name] = torch._helptext(fn)})
    end
  end
end
F.__help = help

-- Each Lua function of F is a public entry point: an error raised inside
-- the library names it ("F.mse_loss: ...") at the caller's line. The C
-- functions among them (F.conv2d = torch.conv2d) report that already. The
-- nn modules call the unwrapped functions (F._unguarded): their own call
-- is the entry point, and one guard per call is enough on the hot path.
local unguarded = {}
for name, fn in pairs(F) do
  unguarded[name] = fn
  if type(fn) == "function" and name:sub(1, 1) ~= "_" and debug.getinfo(fn, "S").what ~= "C" then
    F[name] = U.public(fn, "F." .. name)
  end
end
F._unguarded = unguarded
-- F.upsample was the same function as F.interpolate; its guard is its own,
-- and so is its help
U.doc(F, {upsample = "F.upsample(input, size, scale_factor[, mode, align_corners, recompute_scale_factor, antialias]) "
                     .. "-- resize (the older name of F.interpolate)"})

return F
