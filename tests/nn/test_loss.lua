-- tests/nn/test_loss.lua -- every loss module (and so its F. form) against
-- PyTorch 1.13: values and input gradients for each reduction and option
-- (tests/ref/nn_loss.lua, gen_nn.py), float64; class targets are 1-based.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/nn"
package.path = here .. "/?.lua;" .. package.path
local R = require "nnref"
R.use(_ENV)
local nn = require "torch.nn"
local F = nn.functional
local refs = ref("nn_loss")
local w = function() return torch.tensor({0.5, 1.0, 2.0, 1.5}, {dtype = torch.float64}) end

local cases = {
  smooth_l1 = function() return nn.SmoothL1Loss({beta = 0.5}) end,
  smooth_l1_beta0 = function() return nn.SmoothL1Loss({beta = 0.0, reduction = "sum"}) end,
  huber = function() return nn.HuberLoss({delta = 0.8}) end,
  huber_none = function() return nn.HuberLoss("none", 1.3) end,
  cross_entropy = function() return nn.CrossEntropyLoss() end,
  cross_entropy_sum = function() return nn.CrossEntropyLoss({reduction = "sum"}) end,
  cross_entropy_none = function() return nn.CrossEntropyLoss({reduction = "none"}) end,
  cross_entropy_weight = function() return nn.CrossEntropyLoss({weight = w()}) end,
  cross_entropy_ignore = function() return nn.CrossEntropyLoss({ignore_index = 2}) end,
  cross_entropy_smooth = function() return nn.CrossEntropyLoss({label_smoothing = 0.2}) end,
  cross_entropy_smooth_weight_ignore = function()
    return nn.CrossEntropyLoss({weight = w(), ignore_index = 4, label_smoothing = 0.1})
  end,
  cross_entropy_probs = function() return nn.CrossEntropyLoss() end,
  cross_entropy_probs_smooth_weight = function() return nn.CrossEntropyLoss({weight = w(), label_smoothing = 0.3}) end,
  cross_entropy_4d = function() return nn.CrossEntropyLoss() end,
  nll = function() return nn.NLLLoss() end,
  nll_weight_sum = function() return nn.NLLLoss({weight = w(), reduction = "sum"}) end,
  bce = function() return nn.BCELoss() end,
  bce_weight_sum = function()
    local R2 = require "nnref"
    return nn.BCELoss({weight = R2.gen({4}, 70):abs(), reduction = "sum"})
  end,
  bce_logits = function() return nn.BCEWithLogitsLoss() end,
  bce_logits_posweight = function()
    return nn.BCEWithLogitsLoss({pos_weight = torch.tensor({1.0, 2.0, 0.5, 3.0}, {dtype = torch.float64}),
                                 reduction = "none"})
  end,
  kldiv_batchmean = function() return nn.KLDivLoss({reduction = "batchmean"}) end,
  kldiv_sum = function() return nn.KLDivLoss({reduction = "sum"}) end,
  kldiv_log_target = function() return nn.KLDivLoss({reduction = "mean", log_target = true}) end,
}
for _, red in ipairs{"mean", "sum", "none"} do
  cases["mse_" .. red] = function() return nn.MSELoss({reduction = red}) end
  cases["l1_" .. red] = function() return nn.L1Loss({reduction = red}) end
end

local names = {}
for k in pairs(cases) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do R.module_tests(refs, name, cases[name]) end

test("every reference case has a test", function()
  for k in pairs(refs) do check(cases[k] ~= nil, "no test for reference case " .. k) end
end)

test("F forms equal the modules", function()
  local c = refs.cross_entropy
  local x, t = R.tensor(c.inputs[1]), R.tensor(c.inputs[2])
  check_close(F.cross_entropy(x, t, {label_smoothing = 0.2}), R.tensor(refs.cross_entropy_smooth.outputs[1]), R.TOL)
  check_close(F.cross_entropy(x, t), R.tensor(c.outputs[1]), R.TOL)
  check_close(F.nll_loss(x:log_softmax(2), t), R.tensor(c.outputs[1]), R.TOL)
  local m = refs.mse_sum
  check_close(F.mse_loss(R.tensor(m.inputs[1]), R.tensor(m.inputs[2]), {reduction = "sum"}), R.tensor(m.outputs[1]),
              R.TOL)
end)

test("loss argument errors name the loss and the shapes", function()
  local x = torch.randn(4, 3)
  check_error(function() F.cross_entropy(x, torch.tensor({1, 2, 4, 1})) end,
              "target 4 is out of bounds: class indices are 1-based and there are 3 classes")
  check_error(function() F.cross_entropy(x, torch.tensor({1, 0, 2, 1})) end, "target 0 is out of bounds")
  check_error(function() F.cross_entropy(x, torch.tensor({1, 2})) end,
              "F.cross_entropy: expected target of shape 4 for input of shape 4x3, got 2")
  check_error(function() F.nll_loss(x, torch.zeros(4, 3)) end, "F.nll_loss: expected target of 1-based class indices")
  check_error(function() F.binary_cross_entropy(x:sigmoid(), torch.zeros(4)) end,
              "F.binary_cross_entropy: target of shape 4 does not match input of shape 4x3")
  check_error(function() F.binary_cross_entropy(x, torch.zeros(4, 3)) end, "between 0 and 1")
  check_error(function() nn.MSELoss({reduction = "avg"}) end, "unknown reduction 'avg' (expected 'mean', 'sum' or 'none')")
  check_error(function() F.mse_loss(x, x, {reduction = "avg"}) end, "F.mse_loss: unknown reduction 'avg'")
  check_error(function() F.mse_loss(x, x, {reductoin = "sum"}) end, "unknown option 'reductoin'")
end)

test("float32 cross entropy of a batch matches the float64 reference closely", function()
  local c = refs.cross_entropy
  local x, t = R.tensor(c.inputs[1]):float(), R.tensor(c.inputs[2])
  check_close(F.cross_entropy(x, t), R.tensor(c.outputs[1]), {atol = 1e-6, rtol = 1e-6})
end)
