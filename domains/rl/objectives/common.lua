-- torch.rl.objectives.common -- LossModule, the base of every loss: it
-- holds the networks (and frozen target copies of those it delays), the
-- TensorDict keys (set_keys), the value estimator (make_value_estimator)
-- and the helpers the losses share: distance_loss, running a network with
-- its parameters frozen, reading keys with errors that name the loss.
local torch = require "torch"
local nn = require "torch.nn"
local U = require "torch.nn.util"
local F = require "torch.nn.functional"
local K = require "torch.rl.modules.keys"

local M = {}
local PREFIX = "torch.rl.objectives."
M.PREFIX = PREFIX

-- ValueEstimators: the names make_value_estimator takes.
M.ValueEstimators = {TD0 = "TD0", TD1 = "TD1", TDLambda = "TDLambda", GAE = "GAE"}

-- distance_loss(v1, v2[, loss_function="l2"]) -> elementwise loss:
-- (v1 - v2)^2 for "l2", |v1 - v2| for "l1", Huber with delta 1 for "smooth_l1".
function M.distance_loss(v1, v2, loss_function)
  loss_function = loss_function or "l2"
  if loss_function == "l2" then return F.mse_loss(v1, v2, {reduction = "none"})
  elseif loss_function == "l1" then return F.l1_loss(v1, v2, {reduction = "none"})
  elseif loss_function == "smooth_l1" then return F.smooth_l1_loss(v1, v2, {reduction = "none"}) end
  error(("distance_loss: loss_function must be \"l2\", \"l1\" or \"smooth_l1\", got %s"):format(tostring(loss_function)), 2)
end

-- check_loss_function(fname, name, v) -> v when it is a distance_loss name.
function M.check_loss_function(fname, name, v)
  if v ~= "l2" and v ~= "l1" and v ~= "smooth_l1" then
    error(("%s: %s must be \"l2\", \"l1\" or \"smooth_l1\", got %s"):format(fname, name, tostring(v)), 3)
  end
  return v
end

-- check_unsupported(fname, o): TorchRL options these losses accept only
-- at their defaults (reduction="mean", separate_losses=false).
function M.check_unsupported(fname, o)
  if o.reduction ~= nil and o.reduction ~= "mean" then
    error(("%s: only reduction=\"mean\" is supported, got %s"):format(fname, tostring(o.reduction)), 3)
  end
  if o.separate_losses then
    error(fname .. ": separate_losses=true is not supported (networks that share parameters get every loss's gradient)", 3)
  end
end

local clone_module = require("torch.nn.transformer")._clone_module

-- frozen(module, fn, ...) -> fn(...)'s results, with module's parameters
-- not requiring grad while fn runs: gradients flow through the module to
-- its inputs but never reach its parameters (TorchRL's detached params).
function M.frozen(module, fn, ...)
  local ps, flags = module:parameters(), {}
  for i, p in ipairs(ps) do flags[i] = p.requires_grad; p:requires_grad_(false) end
  local res = table.pack(pcall(fn, ...))
  for i, p in ipairs(ps) do p:requires_grad_(flags[i]) end
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- module_check(fname, what, m) -> m when it is a TensorDict module.
function M.module_check(fname, what, m)
  if type(m) ~= "table" or type(m.in_keys) ~= "table" or type(m.out_keys) ~= "table" then
    error(("%s: %s must be a TensorDict module (TensorDictModule, Actor, ValueOperator, ...), got %s")
          :format(fname, what, type(m)), 3)
  end
  return m
end

---------------------------------------------------------------- LossModule

local LossModule = nn.Module:extend("LossModule")
LossModule.__prefix = PREFIX
M.LossModule = LossModule

-- _init_keys(defaults): the loss's tensordict keys (TorchRL's
-- tensor_keys), each a string or a nested key; set_keys changes them.
function LossModule:_init_keys(defaults)
  local t = {}
  for k, v in pairs(defaults) do t[k] = v end
  self.tensor_keys = t
end

-- set_keys{name = key, ...} -> self: e.g. set_keys{reward = "r"}.
function LossModule:set_keys(keys)
  local fname = PREFIX .. self:_get_name() .. ".set_keys"
  for k, v in pairs(keys) do
    if self.tensor_keys[k] == nil then
      local names = {}
      for n in pairs(self.tensor_keys) do names[#names + 1] = n end
      table.sort(names)
      error(("%s: unknown key name '%s' (known: %s)"):format(fname, tostring(k), table.concat(names, ", ")), 2)
    end
    self.tensor_keys[k] = K.check(fname, k, v)
  end
  if rawget(self, "_value_estimator") then self:_sync_estimator_keys() end
  return self
end

function LossModule:_sync_estimator_keys() end

-- get(td, name) -> td's value at tensor_keys[name], or an error naming
-- the loss, the key and what td holds.
function LossModule:_get(td, name)
  return K.get(PREFIX .. self:_get_name(), td, self.tensor_keys[name])
end

-- next_key(name) -> the key of tensor_keys[name] inside "next"
-- ({"next", "reward"} stays as is).
function LossModule:_next(name)
  local k = self.tensor_keys[name]
  if type(k) == "table" and k[1] == "next" then return k end
  return K.nested("next", k)
end

-- convert_to_functional(module, name[, create_target_params=false]):
-- registers module as self[name]; with create_target_params also a deep
-- copy self["target_" .. name] whose parameters never require grad
-- (SoftUpdate / HardUpdate move them toward the source).
function LossModule:convert_to_functional(module, name, create_target_params)
  self:add_module(name, module)
  rawset(self, "_target_names", rawget(self, "_target_names") or {})
  if create_target_params then
    local t = clone_module(module)
    t:requires_grad_(false)
    self:add_module("target_" .. name, t)
    table.insert(self._target_names, name)
  end
end

-- _target(name) -> the target copy of network `name`, or the network
-- itself when it is not delayed (then used without gradients).
function LossModule:_target(name)
  return self._modules.map["target_" .. name] or self._modules.map[name]
end

-- target_pairs() -> {{source=, target=, name=}...} for the delayed networks.
function LossModule:target_pairs()
  local out = {}
  for _, n in ipairs(rawget(self, "_target_names") or {}) do
    out[#out + 1] = {name = n, source = self._modules.map[n], target = self._modules.map["target_" .. n]}
  end
  return out
end

-- make_value_estimator([value_type=default, {gamma=, lmbda=, ...}]) ->
-- self, with self.value_estimator the estimator of that type over the
-- loss's value network.
function LossModule:make_value_estimator(value_type, hp)
  if type(value_type) == "table" and hp == nil then hp, value_type = value_type, nil end
  value_type = value_type or self.default_value_estimator
  local fname = PREFIX .. self:_get_name() .. ".make_value_estimator"
  local ok = false
  for _, v in pairs(M.ValueEstimators) do ok = ok or v == value_type end
  if not ok then
    error(("%s: value_type must be one of ValueEstimators.TD0, TD1, TDLambda, GAE, got %s"):format(fname,
          tostring(value_type)), 2)
  end
  hp = hp or {}
  local o = {}
  for k, v in pairs(hp) do o[k] = v end
  if o.gamma == nil then o.gamma = rawget(self, "_gamma") or 0.99 end
  if o.lmbda == nil and (value_type == "GAE" or value_type == "TDLambda") then o.lmbda = 0.95 end
  local E = require "torch.rl.objectives.value.advantages"
  local cls = ({TD0 = E.TD0Estimator, TD1 = E.TD1Estimator, TDLambda = E.TDLambdaEstimator, GAE = E.GAE})[value_type]
  o.value_network = o.value_network == nil and self:_estimator_network() or o.value_network
  if o.value_network == false then o.value_network = nil end
  local est = cls(o)
  rawset(self, "_value_estimator", est)
  rawset(self, "value_estimator", est)
  rawset(self, "value_type", value_type)
  self:_sync_estimator_keys()
  return self
end

-- the network the estimator runs (nil: the loss writes next values itself).
function LossModule:_estimator_network() return nil end

-- _estimator() -> self.value_estimator, made on first use with the
-- loss's default type.
function LossModule:_estimator()
  if rawget(self, "_value_estimator") == nil then self:make_value_estimator() end
  return rawget(self, "_value_estimator")
end

-- _out(entries) -> a TensorDict with batch size {} of the given scalars.
function M.out(entries)
  return require("torch.rl.tensordict").TensorDict(entries, {})
end

return M
