-- torch.optim.rmsprop -- RMSprop and Adagrad: PyTorch 1.13's single-tensor
-- updates, op for op.
local torch = require "torch"
local U = require "torch.nn.util"
local Optimizer = require "torch.optim.optimizer"
local adam = require "torch.optim.adam"

local addcmul_, addcdiv_ = adam.addcmul_, adam.addcdiv_
local R = {}

local RMSprop = Optimizer:extend("RMSprop")
-- RMSprop(params[, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
-- momentum=0, centered=false, maximize=false])
function RMSprop:__init(params, ...)
  local o = U.args("optim.RMSprop", {"lr", "alpha", "eps", "weight_decay", "momentum", "centered", "foreach",
                                     "maximize", "differentiable"},
                   {lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = false,
                    maximize = false}, ...)
  if U.number("optim.RMSprop", "lr", o.lr) < 0 then error("optim.RMSprop: invalid learning rate " .. o.lr, 2) end
  if o.eps < 0 then error("optim.RMSprop: invalid epsilon value " .. o.eps, 2) end
  if o.momentum < 0 then error("optim.RMSprop: invalid momentum value " .. o.momentum, 2) end
  if o.alpha < 0 then error("optim.RMSprop: invalid alpha value " .. o.alpha, 2) end
  o.foreach, o.differentiable = nil, nil
  self:_setup(params, o)
end

function RMSprop:_update_group(group)
  local lr, alpha, eps, wd, mom = group.lr, group.alpha, group.eps, group.weight_decay, group.momentum
  local state = self.state
  for _, p in ipairs(group.params) do
    local grad = p.grad
    if grad ~= nil then
      if group.maximize then grad = -grad end
      local st = state[p]
      if st == nil then
        st = {step = 0, square_avg = torch.zeros_like(p)}
        if mom > 0 then st.momentum_buffer = torch.zeros_like(p) end
        if group.centered then st.grad_avg = torch.zeros_like(p) end
        state[p] = st
      end
      st.step = st.step + 1
      if wd ~= 0 then grad = grad:add(p, {alpha = wd}) end
      local square_avg = st.square_avg
      addcmul_(square_avg:mul_(alpha), grad, grad, 1 - alpha)
      local avg
      if group.centered then
        local grad_avg = st.grad_avg
        grad_avg:mul_(alpha):add_(grad, {alpha = 1 - alpha})
        avg = addcmul_(square_avg:clone(), grad_avg, grad_avg, -1):sqrt_()
      else
        avg = square_avg:sqrt()
      end
      avg:add_(eps)
      if mom > 0 then
        local buf = st.momentum_buffer
        addcdiv_(buf:mul_(mom), grad, avg, 1)
        p:add_(buf, {alpha = -lr})
      else
        addcdiv_(p, grad, avg, -lr)
      end
    end
  end
end

local Adagrad = Optimizer:extend("Adagrad")
-- Adagrad(params[, lr=1e-2, lr_decay=0, weight_decay=0,
-- initial_accumulator_value=0, eps=1e-10, maximize=false])
function Adagrad:__init(params, ...)
  local o = U.args("optim.Adagrad", {"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps", "foreach",
                                     "maximize", "differentiable"},
                   {lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10,
                    maximize = false}, ...)
  if U.number("optim.Adagrad", "lr", o.lr) < 0 then error("optim.Adagrad: invalid learning rate " .. o.lr, 2) end
  if o.lr_decay < 0 then error("optim.Adagrad: invalid lr_decay value " .. o.lr_decay, 2) end
  if o.initial_accumulator_value < 0 then
    error("optim.Adagrad: invalid initial_accumulator_value " .. o.initial_accumulator_value, 2)
  end
  o.foreach, o.differentiable = nil, nil
  self:_setup(params, o)
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      self.state[p] = {step = 0, sum = torch.full_like(p, g.initial_accumulator_value)}
    end
  end
end

function Adagrad:_update_group(group)
  local lr, lr_decay, wd, eps = group.lr, group.lr_decay, group.weight_decay, group.eps
  local state = self.state
  for _, p in ipairs(group.params) do
    local grad = p.grad
    if grad ~= nil then
      local st = state[p]
      if st == nil then
        st = {step = 0, sum = torch.full_like(p, group.initial_accumulator_value)}
        state[p] = st
      end
      st.step = st.step + 1
      if group.maximize then grad = -grad end
      if wd ~= 0 then grad = grad:add(p, {alpha = wd}) end
      local clr = lr / (1 + (st.step - 1) * lr_decay)
      addcmul_(st.sum, grad, grad, 1)
      local std = st.sum:sqrt():add_(eps)
      addcdiv_(p, grad, std, -clr)
    end
  end
end

R.RMSprop, R.Adagrad = RMSprop, Adagrad
return R
