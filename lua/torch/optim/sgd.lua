-- torch.optim.sgd -- SGD with momentum, dampening, Nesterov, weight decay and
-- maximize: PyTorch 1.13's single-tensor update, op for op.
local U = require "torch.nn.util"
local Optimizer = require "torch.optim.optimizer"

local SGD = Optimizer:extend("SGD")

-- SGD(params, lr[, momentum=0, dampening=0, weight_decay=0, nesterov=false,
-- maximize=false])
function SGD:__init(params, ...)
  local o = U.args("optim.SGD", {"lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize", "foreach",
                                 "differentiable"},
                   {lr = Optimizer.required, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false,
                    maximize = false}, ...)
  if o.lr ~= Optimizer.required and o.lr < 0 then error("optim.SGD: invalid learning rate " .. o.lr, 2) end
  if o.momentum < 0 then error("optim.SGD: invalid momentum value " .. o.momentum, 2) end
  if o.weight_decay < 0 then error("optim.SGD: invalid weight_decay value " .. o.weight_decay, 2) end
  if o.nesterov and (o.momentum <= 0 or o.dampening ~= 0) then
    error("optim.SGD: Nesterov momentum requires a momentum and zero dampening", 2)
  end
  o.foreach, o.differentiable = nil, nil
  self:_setup(params, o)
end

function SGD:_update_group(group)
  local lr, mom, damp, wd = group.lr, group.momentum, group.dampening, group.weight_decay
  local nesterov, maximize = group.nesterov, group.maximize
  local state = self.state
  for _, p in ipairs(group.params) do
    local d_p = p.grad
    if d_p ~= nil then
      if maximize then d_p = -d_p end
      if wd ~= 0 then d_p = d_p:add(p, {alpha = wd}) end
      if mom ~= 0 then
        local st = state[p]
        if st == nil then st = {}; state[p] = st end
        local buf = st.momentum_buffer
        if buf == nil then
          buf = d_p:clone()
          st.momentum_buffer = buf
        else
          buf:mul_(mom):add_(d_p, {alpha = 1 - damp})
        end
        if nesterov then d_p = d_p:add(buf, {alpha = mom}) else d_p = buf end
      end
      p:add_(d_p, {alpha = -lr})
    end
  end
end

return SGD
