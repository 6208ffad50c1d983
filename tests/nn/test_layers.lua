-- tests/nn/test_layers.lua -- every layer's forward values, running
-- statistics and gradients (of inputs and parameters) against PyTorch 1.13
-- on the same weights and inputs (tests/ref/nn_layers.lua, gen_nn.py), in float64.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/nn"
package.path = here .. "/?.lua;" .. package.path
local R = require "nnref"
R.use(_ENV)
local nn = require "torch.nn"
local refs = ref("nn_layers")

local cases = {
  linear = function() return nn.Linear(5, 3) end,
  linear_3d_nobias = function() return nn.Linear(4, 2, {bias = false}) end,
  bilinear = function() return nn.Bilinear(3, 4, 2) end,
  conv1d = function() return nn.Conv1d(2, 3, 3, {stride = 2, padding = 1}) end,
  conv2d = function() return nn.Conv2d(2, 4, 3, {padding = 1}) end,
  conv2d_groups_dil = function()
    return nn.Conv2d(4, 4, {3, 2}, {stride = {2, 1}, dilation = {1, 2}, groups = 2, bias = false})
  end,
  conv2d_reflect = function() return nn.Conv2d(1, 2, 3, {padding = 1, padding_mode = "reflect"}) end,
  conv2d_same = function() return nn.Conv2d(2, 2, 4, {padding = "same"}) end,
  conv_transpose2d = function() return nn.ConvTranspose2d(3, 2, 3, {stride = 2, padding = 1, output_padding = 1}) end,
  maxpool1d = function() return nn.MaxPool1d(3, {stride = 2, padding = 1}) end,
  maxpool2d = function() return nn.MaxPool2d(2) end,
  avgpool2d = function() return nn.AvgPool2d(3, {stride = 2, padding = 1, count_include_pad = false}) end,
  adaptive_avgpool2d = function() return nn.AdaptiveAvgPool2d({3, 2}) end,
  batchnorm1d_train = function() return nn.BatchNorm1d(3) end,
  batchnorm1d_3d_train = function() return nn.BatchNorm1d(3, {momentum = 0.3}) end,
  batchnorm2d_train = function() return nn.BatchNorm2d(3) end,
  batchnorm2d_eval = function() return nn.BatchNorm2d(3) end,
  batchnorm2d_cumulative = function() return nn.BatchNorm2d(2, {momentum = false}) end,
  batchnorm2d_noaffine_nostats = function()
    return nn.BatchNorm2d(2, {affine = false, track_running_stats = false})
  end,
  layernorm = function() return nn.LayerNorm({3, 4}) end,
  groupnorm = function() return nn.GroupNorm(2, 4) end,
  rmsnorm = function() return nn.RMSNorm(4) end,
  rmsnorm_eps = function() return nn.RMSNorm({2, 3}, {eps = 1e-3}) end,
  embedding = function() return nn.Embedding(6, 3) end,
  embedding_padding = function() return nn.Embedding(5, 2, {padding_idx = 2}) end,
  flatten = function() return nn.Flatten() end,
  unflatten = function() return nn.Unflatten(2, {2, 3}) end,
  relu = function() return nn.ReLU() end,
  leaky_relu = function() return nn.LeakyReLU(0.2) end,
  gelu = function() return nn.GELU() end,
  gelu_tanh = function() return nn.GELU("tanh") end,
  silu = function() return nn.SiLU() end,
  tanh = function() return nn.Tanh() end,
  sigmoid = function() return nn.Sigmoid() end,
  softmax = function() return nn.Softmax(2) end,
  log_softmax = function() return nn.LogSoftmax(-1) end,
  elu = function() return nn.ELU(0.7) end,
  softplus = function() return nn.Softplus(2.0, 1.5) end,
  hardtanh = function() return nn.Hardtanh(-0.5, 0.7) end,
  relu6 = function() return nn.ReLU6() end,
  mish = function() return nn.Mish() end,
  hardswish = function() return nn.Hardswish() end,
  prelu = function() return nn.PReLU(3) end,
  sequential_mlp = function() return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 3), nn.Tanh()) end,
  sequential_cnn = function()
    return nn.Sequential(nn.Conv2d(1, 3, 3, {padding = 1}), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(3 * 3 * 3, 4))
  end,
}

local names = {}
for k in pairs(cases) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do R.module_tests(refs, name, cases[name]) end

test("every reference case has a test", function()
  for k in pairs(refs) do check(cases[k] ~= nil, "no test for reference case " .. k) end
end)

test("float32 Linear and Conv2d agree with the float64 reference within float32 precision", function()
  for _, name in ipairs{"linear", "conv2d"} do
    local c = refs[name]
    local m = R.module(c, cases[name]):float()
    local x = R.tensor(c.inputs[1]):float()
    check_close(m(x), R.tensor(c.outputs[1]), {atol = 2e-5, rtol = 1e-5})
  end
end)
