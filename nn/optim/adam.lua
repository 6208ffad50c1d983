-- torch.optim.adam -- Adam and AdamW (amsgrad, maximize): PyTorch 1.13's
-- single-tensor updates, op for op (addcmul/addcdiv spelled as mul + add);
-- on CUDA the same update in one kernel per parameter (fused, the default
-- there; fused=false or foreach=true keeps the ops; fused=true also fuses
-- float32/float64 CPU parameters).
local torch = require "torch"
local U = require "torch.nn.util"
local Optimizer = require "torch.optim.optimizer"

local A = {}

-- self += value * t1 * t2
local function addcmul_(self, t1, t2, value) return self:add_((t1 * value):mul_(t2)) end
-- self += value * t1 / t2
local function addcdiv_(self, t1, t2, value) return self:add_((t1 * value):div_(t2)) end
A.addcmul_, A.addcdiv_ = addcmul_, addcdiv_

local ARGS = {"lr", "betas", "eps", "weight_decay", "amsgrad", "foreach", "maximize", "capturable", "differentiable",
              "fused"}

local function setup(self, name, params, wd_default, ...)
  local o = U.args("optim." .. name, ARGS, {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = wd_default,
                                           amsgrad = false, maximize = false}, ...)
  local fname = "optim." .. name
  if U.number(fname, "lr", o.lr) < 0 then error(("%s: invalid learning rate %s"):format(fname, o.lr), 3) end
  if U.number(fname, "eps", o.eps) < 0 then error(("%s: invalid epsilon value %s"):format(fname, o.eps), 3) end
  if type(o.betas) ~= "table" or #o.betas ~= 2 or o.betas[1] < 0 or o.betas[1] >= 1 or o.betas[2] < 0 or o.betas[2] >= 1 then
    error(("optim.%s: betas must be a list of two numbers in [0, 1)"):format(name), 3)
  end
  if U.number(fname, "weight_decay", o.weight_decay) < 0 then
    error(("%s: invalid weight_decay value %s"):format(fname, o.weight_decay), 3)
  end
  if o.fused and o.foreach then error(("optim.%s: `fused` and `foreach` cannot be `true` together"):format(name), 3) end
  if o.fused and o.differentiable then error(("optim.%s: `fused` does not support `differentiable`"):format(name), 3) end
  -- fused (PyTorch's fused=True): one kernel per CUDA parameter, the
  -- default there unless foreach or differentiable is asked for; on the CPU
  -- (float32/float64) only when fused = true is given.
  self._fused = o.fused
  if o.foreach or o.differentiable then self._fused = false end
  o.foreach, o.capturable, o.differentiable, o.fused = nil, nil, nil, nil
  self:_setup(params, o)
end

-- whether p's step runs fused: CUDA unless fused = false; the CPU when fused = true
local function fused_device(self, p)
  if p.is_cuda then return self._fused ~= false end
  return self._fused == true and (p.dtype == torch.float32 or p.dtype == torch.float64)
end

local function fusable(p, grad, st, amsgrad)
  if not (grad.device == p.device and grad.dtype == p.dtype and p:is_contiguous() and grad:is_contiguous()) then
    return false
  end
  for _, t in ipairs{st.exp_avg, st.exp_avg_sq, amsgrad and st.max_exp_avg_sq or nil} do
    if not (t.device == p.device and t.dtype == p.dtype and t:is_contiguous()) then return false end
  end
  return type(st.step) == "number"
end

-- The fused step of a group's parameters that take it (torch._fused_adam_,
-- one call per device); returns the set of parameters it updated.
local function fused_update(self, group, decoupled)
  local amsgrad = group.amsgrad
  local per_device, done = {}, {}
  for _, p in ipairs(group.params) do
    local grad, st = p.grad, self.state[p]
    local on = grad ~= nil and fused_device(self, p)
    if on and st == nil then
      st = {step = 0, exp_avg = torch.zeros_like(p), exp_avg_sq = torch.zeros_like(p)}
      if amsgrad then st.max_exp_avg_sq = torch.zeros_like(p) end
      self.state[p] = st
    end
    if on and amsgrad and st.max_exp_avg_sq == nil then st.max_exp_avg_sq = torch.zeros_like(p) end
    if on and fusable(p, grad, st, amsgrad) then
      local key = tostring(p.device)
      local l = per_device[key]
      if not l then
        l = {{}, {}, {}, {}, {}, {}}
        per_device[key] = l
      end
      local k = #l[1] + 1
      st.step = st.step + 1
      l[1][k], l[2][k], l[3][k], l[4][k], l[6][k] = p, grad, st.exp_avg, st.exp_avg_sq, st.step
      l[5][k] = amsgrad and st.max_exp_avg_sq or false
      done[p] = true
    end
  end
  local o = {lr = group.lr, beta1 = group.betas[1], beta2 = group.betas[2], eps = group.eps,
             weight_decay = group.weight_decay, amsgrad = amsgrad, maximize = group.maximize, decoupled = decoupled}
  for _, l in pairs(per_device) do torch._fused_adam_(l[1], l[2], l[3], l[4], amsgrad and l[5] or nil, l[6], o) end
  return done
end

-- Under torch.compile the step count is a float64 0-dim tensor (updated
-- in place, so a compiled step replays it) and lr a runtime scalar of the
-- graph (torch.compiler.scalar), so changing it needs no recompile; the
-- first captured step makes the state and asks to be captured again.
local function update(self, group, decoupled)
  local capturing = torch.compiler.is_compiling()
  local lr, beta1, beta2, eps, wd = group.lr, group.betas[1], group.betas[2], group.eps, group.weight_decay
  if capturing then lr = torch.compiler.scalar(group, "lr") end
  local amsgrad, maximize = group.amsgrad, group.maximize
  local state = self.state
  local done = (self._fused ~= false and not capturing) and fused_update(self, group, decoupled) or {}
  for _, p in ipairs(group.params) do
    local grad = p.grad
    if grad ~= nil and not done[p] then
      if maximize then grad = -grad end
      local st = state[p]
      if st == nil then
        st = {step = 0, exp_avg = torch.zeros_like(p), exp_avg_sq = torch.zeros_like(p)}
        if amsgrad then st.max_exp_avg_sq = torch.zeros_like(p) end
        state[p] = st
        if capturing then torch.compiler.capture_again("optim." .. self.__name .. " made its state") end
      end
      if capturing and type(st.step) == "number" then
        st.step = torch.tensor(st.step, {dtype = torch.float64, device = p.device})
        torch.compiler.capture_again("optim." .. self.__name .. " keeps its step count in a tensor when compiled")
      end
      local exp_avg, exp_avg_sq = st.exp_avg, st.exp_avg_sq
      local step
      if type(st.step) == "number" then
        st.step = st.step + 1
        step = st.step
      else
        st.step:add_(1)
        step = st.step
      end
      if decoupled then
        p:mul_(1 - lr * wd)
      elseif wd ~= 0 then
        grad = grad:add(p, {alpha = wd})
      end
      exp_avg:mul_(beta1):add_(grad, {alpha = 1 - beta1})
      addcmul_(exp_avg_sq:mul_(beta2), grad, grad, 1 - beta2)
      local bias_correction1, bias_correction2, bc2_sqrt
      if type(step) == "number" then
        bias_correction1, bias_correction2 = 1 - beta1 ^ step, 1 - beta2 ^ step
        bc2_sqrt = math.sqrt(bias_correction2)
      else
        bias_correction1, bias_correction2 = 1 - torch.pow(beta1, step), 1 - torch.pow(beta2, step)
        bc2_sqrt = bias_correction2:sqrt()
      end
      local step_size = lr / bias_correction1
      local denom
      if amsgrad then
        local m = st.max_exp_avg_sq
        if m == nil then m = torch.zeros_like(p); st.max_exp_avg_sq = m end
        torch.maximum(m, exp_avg_sq, {out = m})
        denom = (m:sqrt():div_(bc2_sqrt)):add_(eps)
      else
        denom = (exp_avg_sq:sqrt():div_(bc2_sqrt)):add_(eps)
      end
      addcdiv_(p, exp_avg, denom, -step_size)
    end
  end
end

local Adam = Optimizer:extend("Adam")
-- Adam(params[, lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0,
-- amsgrad=false, maximize=false]): L2 weight decay added to the gradient.
function Adam:__init(params, ...) setup(self, "Adam", params, 0, ...) end
function Adam:_update_group(group) update(self, group, false) end

local AdamW = Optimizer:extend("AdamW")
-- AdamW(params[, lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=1e-2,
-- amsgrad=false, maximize=false]): decoupled weight decay.
function AdamW:__init(params, ...) setup(self, "AdamW", params, 1e-2, ...) end
function AdamW:_update_group(group) update(self, group, true) end

A.Adam, A.AdamW = Adam, AdamW
return A
