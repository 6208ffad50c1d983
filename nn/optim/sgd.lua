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
  if o.lr ~= Optimizer.required and U.number("optim.SGD", "lr", o.lr) < 0 then
    error("optim.SGD: invalid learning rate " .. o.lr, 2)
  end
  if U.number("optim.SGD", "momentum", o.momentum) < 0 then
    error("optim.SGD: invalid momentum value " .. o.momentum, 2)
  end
  if U.number("optim.SGD", "weight_decay", o.weight_decay) < 0 then
    error("optim.SGD: invalid weight_decay value " .. o.weight_decay, 2)
  end
  if o.nesterov and (o.momentum <= 0 or o.dampening ~= 0) then
    error("optim.SGD: Nesterov momentum requires a momentum and zero dampening", 2)
  end
  o.foreach, o.differentiable = nil, nil
  self:_setup(params, o)
end

-- Under torch.compile lr is a runtime scalar of the graph (a new value
-- needs no recompile), and the step that makes a momentum buffer asks to
-- be captured again (the buffer is Lua-side state).
function SGD:_update_group(group)
  local torch = require "torch"
  local lr, mom, damp, wd = group.lr, group.momentum, group.dampening, group.weight_decay
  local capturing = torch.compiler.is_compiling()
  if capturing then lr = torch.compiler.scalar(group, "lr") end
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
          if capturing then torch.compiler.capture_again("optim.SGD made its momentum buffers") end
        else
          buf:mul_(mom):add_(d_p, {alpha = 1 - damp})
        end
        if nesterov then d_p = d_p:add(buf, {alpha = mom}) else d_p = buf end
      end
      if type(lr) == "number" then p:add_(d_p, {alpha = -lr}) else p:sub_(d_p * lr) end
    end
  end
end

return SGD
