-- torch.nn.loss -- loss modules: each holds its options (reduction, weight
-- buffers, ...) and calls its F. function on (input, target).
local U = require "torch.nn.util"
local M = require "torch.nn.module"
local F = require("torch.nn.functional")._unguarded -- the module call is the entry point

local Module = M.Module
local Loss = {}

local function legacy(o)
  if o.size_average ~= nil or o.reduce ~= nil then
    local sa, r = o.size_average ~= false, o.reduce ~= false
    if sa and r then return "mean" elseif r then return "sum" else return "none" end
  end
  return o.reduction or "mean"
end

local function check_reduction(name, r, extra)
  if r == "mean" or r == "sum" or r == "none" or (extra and r == extra) then return r end
  U.choice("nn." .. name, "reduction", r, extra and "mean sum none " .. extra or "mean sum none")
end

-- Losses whose options are the reduction plus the listed extras.
-- spec: {F function, option names (PyTorch order), defaults, extra reduction}
local SPECS = {
  MSELoss = {F.mse_loss, {"size_average", "reduce", "reduction"}, {}},
  L1Loss = {F.l1_loss, {"size_average", "reduce", "reduction"}, {}},
  SmoothL1Loss = {F.smooth_l1_loss, {"size_average", "reduce", "reduction", "beta"}, {beta = 1.0}},
  HuberLoss = {F.huber_loss, {"reduction", "delta"}, {delta = 1.0}},
  KLDivLoss = {F.kl_div, {"size_average", "reduce", "reduction", "log_target"}, {log_target = false}, "batchmean"},
  BCELoss = {F.binary_cross_entropy, {"weight", "size_average", "reduce", "reduction"}, {}},
  BCEWithLogitsLoss = {F.binary_cross_entropy_with_logits, {"weight", "size_average", "reduce", "reduction",
                                                            "pos_weight"}, {}},
  NLLLoss = {F.nll_loss, {"weight", "size_average", "ignore_index", "reduce", "reduction"}, {ignore_index = -100}},
  CrossEntropyLoss = {F.cross_entropy, {"weight", "size_average", "ignore_index", "reduce", "reduction",
                                        "label_smoothing"}, {ignore_index = -100, label_smoothing = 0.0}},
}

local BUFFERS = {weight = true, pos_weight = true}

for name, spec in pairs(SPECS) do
  local fn, names, defaults, extra = spec[1], spec[2], spec[3], spec[4]
  local cls = Module:extend(name)
  function cls:__init(...)
    local o = U.args("nn." .. name, names, defaults, ...)
    self.reduction = check_reduction(name, legacy(o), extra)
    self._opts = {}
    for _, k in ipairs(names) do
      if k ~= "size_average" and k ~= "reduce" and k ~= "reduction" then
        if BUFFERS[k] then self:register_buffer(k, o[k]) else self[k] = o[k] end
        self._opts[#self._opts + 1] = k
      end
    end
  end
  function cls:forward(input, target)
    local o = {reduction = self.reduction}
    for _, k in ipairs(self._opts) do o[k] = self[k] end
    return fn(input, target, o)
  end
  Loss[name] = cls
end

return Loss
