-- torch.optim.lr_scheduler -- learning-rate schedules (StepLR, MultiStepLR,
-- ExponentialLR, CosineAnnealingLR, LinearLR, LambdaLR, OneCycleLR) with
-- PyTorch 1.13's recursive update formulas, so the lr sequences match.
-- Epoch counters (last_epoch) count from 0 as in PyTorch: they are counts, not indices.
local U = require "torch.nn.util"

local S = {}

local LRScheduler = {}
LRScheduler.__index = LRScheduler
LRScheduler.__name = "LRScheduler"

-- Class(optimizer, ...) and the methods below are public entry points: an
-- error raised inside the library names the scheduler at the caller's line.
local function name_of(s) return "lr_scheduler." .. (rawget(s, "__name") or getmetatable(s).__name) end
local construct = U.public(function(cls, optimizer, ...)
  if type(optimizer) ~= "table" or optimizer.param_groups == nil then
    error(("lr_scheduler.%s: expected an optimizer as first argument, got %s"):format(cls.__name,
          type(optimizer) == "table" and "a table without param_groups" or type(optimizer)), 2)
  end
  local self = setmetatable({}, cls)
  self:__init(optimizer, ...)
  return self
end, name_of)

local function extend(name)
  local C = {__name = name}
  C.__index = C
  return setmetatable(C, {__index = LRScheduler, __call = construct})
end

-- Base setup: records initial_lr in each group and takes the initial step.
function LRScheduler:_setup(optimizer, last_epoch)
  if type(optimizer) ~= "table" or optimizer.param_groups == nil then
    error(self.__name .. ": expected an optimizer as first argument", 3)
  end
  self.optimizer = optimizer
  last_epoch = last_epoch or -1
  if last_epoch == -1 then
    for _, g in ipairs(optimizer.param_groups) do
      if g.initial_lr == nil then g.initial_lr = g.lr end
    end
  else
    for i, g in ipairs(optimizer.param_groups) do
      if g.initial_lr == nil then
        error(("%s: param 'initial_lr' is not specified in param_groups[%d] when resuming an optimizer"):format(
              self.__name, i), 3)
      end
    end
  end
  self.base_lrs = {}
  for i, g in ipairs(optimizer.param_groups) do self.base_lrs[i] = g.initial_lr end
  self.last_epoch = last_epoch
  self._step_count = 0
  self:step()
end

local function group_lrs(self)
  local r = {}
  for i, g in ipairs(self.optimizer.param_groups) do r[i] = g.lr end
  return r
end

-- step([epoch]): advances the schedule and writes the new lrs into the groups.
function LRScheduler:step(epoch)
  self._step_count = self._step_count + 1
  local values
  if epoch == nil then
    self.last_epoch = self.last_epoch + 1
    values = self:get_lr()
  else
    self.last_epoch = epoch
    values = self._get_closed_form_lr and self:_get_closed_form_lr() or self:get_lr()
  end
  for i, g in ipairs(self.optimizer.param_groups) do g.lr = values[i] end
  self._last_lr = group_lrs(self)
end

-- get_last_lr(): the lrs the last step() set, one per group.
function LRScheduler:get_last_lr() return {table.unpack(self._last_lr)} end

-- state_dict(): the scheduler's fields except the optimizer (and functions).
function LRScheduler:state_dict()
  local sd = {}
  for k, v in pairs(self) do
    if k ~= "optimizer" and type(v) ~= "function" and k ~= "lr_lambdas" then
      sd[k] = type(v) == "table" and {table.unpack(v)} or v
    end
  end
  return sd
end

function LRScheduler:load_state_dict(sd)
  for k, v in pairs(sd) do self[k] = type(v) == "table" and {table.unpack(v)} or v end
end

-- StepLR(optimizer, step_size[, gamma=0.1, last_epoch=-1])
local StepLR = extend("StepLR")
function StepLR:__init(optimizer, step_size, ...)
  local o = U.args("lr_scheduler.StepLR", {"gamma", "last_epoch"}, {gamma = 0.1, last_epoch = -1}, ...)
  U.size("lr_scheduler.StepLR", "step_size", step_size, 1)
  self.step_size, self.gamma = step_size, o.gamma
  self:_setup(optimizer, o.last_epoch)
end
function StepLR:get_lr()
  local lrs = group_lrs(self)
  if self.last_epoch == 0 or self.last_epoch % self.step_size ~= 0 then return lrs end
  for i = 1, #lrs do lrs[i] = lrs[i] * self.gamma end
  return lrs
end
function StepLR:_get_closed_form_lr()
  local r = {}
  for i, b in ipairs(self.base_lrs) do r[i] = b * self.gamma ^ (self.last_epoch // self.step_size) end
  return r
end

-- MultiStepLR(optimizer, milestones[, gamma=0.1, last_epoch=-1])
local MultiStepLR = extend("MultiStepLR")
function MultiStepLR:__init(optimizer, milestones, ...)
  local o = U.args("lr_scheduler.MultiStepLR", {"gamma", "last_epoch"}, {gamma = 0.1, last_epoch = -1}, ...)
  self.milestones, self.gamma = {}, o.gamma
  for _, m in ipairs(milestones) do self.milestones[m] = (self.milestones[m] or 0) + 1 end
  self:_setup(optimizer, o.last_epoch)
end
function MultiStepLR:get_lr()
  local lrs = group_lrs(self)
  local n = self.milestones[self.last_epoch]
  if n == nil then return lrs end
  for i = 1, #lrs do lrs[i] = lrs[i] * self.gamma ^ n end
  return lrs
end

-- ExponentialLR(optimizer, gamma[, last_epoch=-1])
local ExponentialLR = extend("ExponentialLR")
function ExponentialLR:__init(optimizer, gamma, last_epoch)
  if U.opts("lr_scheduler.ExponentialLR", last_epoch, "last_epoch") then last_epoch = last_epoch.last_epoch end
  U.number("lr_scheduler.ExponentialLR", "gamma", gamma)
  self.gamma = gamma
  self:_setup(optimizer, last_epoch)
end
function ExponentialLR:get_lr()
  local lrs = group_lrs(self)
  if self.last_epoch == 0 then return lrs end
  for i = 1, #lrs do lrs[i] = lrs[i] * self.gamma end
  return lrs
end

-- CosineAnnealingLR(optimizer, T_max[, eta_min=0, last_epoch=-1])
local CosineAnnealingLR = extend("CosineAnnealingLR")
function CosineAnnealingLR:__init(optimizer, T_max, ...)
  local o = U.args("lr_scheduler.CosineAnnealingLR", {"eta_min", "last_epoch"}, {eta_min = 0, last_epoch = -1}, ...)
  self.T_max, self.eta_min = T_max, o.eta_min
  self:_setup(optimizer, o.last_epoch)
end
function CosineAnnealingLR:get_lr()
  local e, T, eta = self.last_epoch, self.T_max, self.eta_min
  local lrs = group_lrs(self)
  local pi, cos = math.pi, math.cos
  if e == 0 then return lrs end
  if self._step_count == 1 and e > 0 then
    for i, b in ipairs(self.base_lrs) do lrs[i] = eta + (b - eta) * (1 + cos(e * pi / T)) / 2 end
    return lrs
  end
  if (e - 1 - T) % (2 * T) == 0 then
    for i, b in ipairs(self.base_lrs) do lrs[i] = lrs[i] + (b - eta) * (1 - cos(pi / T)) / 2 end
    return lrs
  end
  for i = 1, #lrs do
    lrs[i] = (1 + cos(pi * e / T)) / (1 + cos(pi * (e - 1) / T)) * (lrs[i] - eta) + eta
  end
  return lrs
end
function CosineAnnealingLR:_get_closed_form_lr()
  local r = {}
  for i, b in ipairs(self.base_lrs) do
    r[i] = self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
  end
  return r
end

-- LinearLR(optimizer[, start_factor=1/3, end_factor=1, total_iters=5, last_epoch=-1])
local LinearLR = extend("LinearLR")
function LinearLR:__init(optimizer, ...)
  local o = U.args("lr_scheduler.LinearLR", {"start_factor", "end_factor", "total_iters", "last_epoch"},
                   {start_factor = 1.0 / 3, end_factor = 1.0, total_iters = 5, last_epoch = -1}, ...)
  if o.start_factor > 1 or o.start_factor <= 0 then
    error("lr_scheduler.LinearLR: start_factor must be in (0, 1]", 2)
  end
  if o.end_factor > 1 or o.end_factor < 0 then error("lr_scheduler.LinearLR: end_factor must be in [0, 1]", 2) end
  self.start_factor, self.end_factor, self.total_iters = o.start_factor, o.end_factor, o.total_iters
  self:_setup(optimizer, o.last_epoch)
end
function LinearLR:get_lr()
  local lrs = group_lrs(self)
  local e, s, f, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
  if e == 0 then
    for i = 1, #lrs do lrs[i] = lrs[i] * s end
    return lrs
  end
  if e > n then return lrs end
  for i = 1, #lrs do lrs[i] = lrs[i] * (1.0 + (f - s) / (n * s + (e - 1) * (f - s))) end
  return lrs
end
function LinearLR:_get_closed_form_lr()
  local r = {}
  local e, s, f, n = self.last_epoch, self.start_factor, self.end_factor, self.total_iters
  for i, b in ipairs(self.base_lrs) do r[i] = b * (s + (f - s) * math.min(n, e) / n) end
  return r
end

-- LambdaLR(optimizer, lr_lambda[, last_epoch=-1]): lr = initial lr * lr_lambda(epoch)
-- (one function, or a list of one per group).
local LambdaLR = extend("LambdaLR")
function LambdaLR:__init(optimizer, lr_lambda, last_epoch)
  if U.opts("lr_scheduler.LambdaLR", last_epoch, "last_epoch") then last_epoch = last_epoch.last_epoch end
  local n = #optimizer.param_groups
  if type(lr_lambda) == "table" then
    if #lr_lambda ~= n then
      error(("lr_scheduler.LambdaLR: expected %d lr_lambdas, got %d"):format(n, #lr_lambda), 2)
    end
    self.lr_lambdas = {table.unpack(lr_lambda)}
  else
    self.lr_lambdas = {}
    for i = 1, n do self.lr_lambdas[i] = lr_lambda end
  end
  self:_setup(optimizer, last_epoch)
end
function LambdaLR:get_lr()
  local r = {}
  for i, b in ipairs(self.base_lrs) do r[i] = b * self.lr_lambdas[i](self.last_epoch) end
  return r
end

-- OneCycleLR(optimizer, max_lr[, total_steps, epochs, steps_per_epoch,
-- pct_start=0.3, anneal_strategy='cos', cycle_momentum=true,
-- base_momentum=0.85, max_momentum=0.95, div_factor=25,
-- final_div_factor=1e4, three_phase=false, last_epoch=-1])
local OneCycleLR = extend("OneCycleLR")
local ONE = {"total_steps", "epochs", "steps_per_epoch", "pct_start", "anneal_strategy", "cycle_momentum",
             "base_momentum", "max_momentum", "div_factor", "final_div_factor", "three_phase", "last_epoch"}
local ONE_D = {pct_start = 0.3, anneal_strategy = "cos", cycle_momentum = true, base_momentum = 0.85,
               max_momentum = 0.95, div_factor = 25.0, final_div_factor = 1e4, three_phase = false, last_epoch = -1}

local function per_group(v, n, name)
  if type(v) == "table" then
    if #v ~= n then error(("lr_scheduler.OneCycleLR: expected %d values for %s, got %d"):format(n, name, #v), 4) end
    return v
  end
  local r = {}
  for i = 1, n do r[i] = v end
  return r
end

function OneCycleLR:__init(optimizer, max_lr, ...)
  local o = U.args("lr_scheduler.OneCycleLR", ONE, ONE_D, ...)
  local total = o.total_steps
  if total == nil then
    if o.epochs == nil or o.steps_per_epoch == nil then
      error("lr_scheduler.OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)", 2)
    end
    total = o.epochs * o.steps_per_epoch
  end
  if total <= 0 then error("lr_scheduler.OneCycleLR: total_steps must be positive, got " .. total, 2) end
  if o.pct_start < 0 or o.pct_start > 1 then error("lr_scheduler.OneCycleLR: pct_start must be in [0, 1]", 2) end
  self.total_steps = total
  local p = o.pct_start
  if o.three_phase then
    self._schedule_phases = {
      {end_step = p * total - 1, start_lr = "initial_lr", end_lr = "max_lr", start_momentum = "max_momentum",
       end_momentum = "base_momentum"},
      {end_step = 2 * p * total - 2, start_lr = "max_lr", end_lr = "initial_lr", start_momentum = "base_momentum",
       end_momentum = "max_momentum"},
      {end_step = total - 1, start_lr = "initial_lr", end_lr = "min_lr", start_momentum = "max_momentum",
       end_momentum = "max_momentum"},
    }
  else
    self._schedule_phases = {
      {end_step = p * total - 1, start_lr = "initial_lr", end_lr = "max_lr", start_momentum = "max_momentum",
       end_momentum = "base_momentum"},
      {end_step = total - 1, start_lr = "max_lr", end_lr = "min_lr", start_momentum = "base_momentum",
       end_momentum = "max_momentum"},
    }
  end
  local groups = optimizer.param_groups
  local max_lrs = per_group(max_lr, #groups, "max_lr")
  if o.last_epoch == -1 then
    for i, g in ipairs(groups) do
      g.initial_lr = max_lrs[i] / o.div_factor
      g.max_lr = max_lrs[i]
      g.min_lr = g.initial_lr / o.final_div_factor
    end
  end
  if o.anneal_strategy ~= "cos" and o.anneal_strategy ~= "linear" then
    U.choice("lr_scheduler.OneCycleLR", "anneal_strategy", o.anneal_strategy, "cos linear")
  end
  self.anneal_strategy = o.anneal_strategy
  self.cycle_momentum = o.cycle_momentum
  if o.cycle_momentum then
    local d = optimizer.defaults
    if d.momentum == nil and d.betas == nil then
      error("lr_scheduler.OneCycleLR: optimizer must support momentum or betas with cycle_momentum enabled", 2)
    end
    self.use_beta1 = d.betas ~= nil
    local maxm = per_group(o.max_momentum, #groups, "max_momentum")
    local basem = per_group(o.base_momentum, #groups, "base_momentum")
    if o.last_epoch == -1 then
      for i, g in ipairs(groups) do
        if self.use_beta1 then g.betas = {maxm[i], g.betas[2]} else g.momentum = maxm[i] end
        g.max_momentum, g.base_momentum = maxm[i], basem[i]
      end
    end
  end
  self:_setup(optimizer, o.last_epoch)
end

local function anneal(strategy, start, stop, pct)
  if strategy == "cos" then return stop + (start - stop) / 2.0 * (math.cos(math.pi * pct) + 1) end
  return (stop - start) * pct + start
end

function OneCycleLR:get_lr()
  local step_num = self.last_epoch
  if step_num > self.total_steps then
    error(("lr_scheduler.OneCycleLR: tried to step %d times; the specified number of total steps is %d"):format(
          step_num, self.total_steps), 3)
  end
  local lrs = {}
  local phases = self._schedule_phases
  for gi, g in ipairs(self.optimizer.param_groups) do
    local start_step = 0
    local lr, mom
    for i, ph in ipairs(phases) do
      local end_step = ph.end_step
      if step_num <= end_step or i == #phases then
        local pct = (step_num - start_step) / (end_step - start_step)
        lr = anneal(self.anneal_strategy, g[ph.start_lr], g[ph.end_lr], pct)
        if self.cycle_momentum then
          mom = anneal(self.anneal_strategy, g[ph.start_momentum], g[ph.end_momentum], pct)
        end
        break
      end
      start_step = ph.end_step
    end
    lrs[gi] = lr
    if self.cycle_momentum then
      if self.use_beta1 then g.betas = {mom, g.betas[2]} else g.momentum = mom end
    end
  end
  return lrs
end

for _, k in ipairs{"step", "get_last_lr", "state_dict", "load_state_dict"} do
  LRScheduler[k] = U.public(LRScheduler[k], name_of)
end

S.LRScheduler, S.StepLR, S.MultiStepLR, S.ExponentialLR, S.CosineAnnealingLR, S.LinearLR, S.LambdaLR, S.OneCycleLR =
  LRScheduler, StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR, LambdaLR, OneCycleLR
S._extend = extend
return S
