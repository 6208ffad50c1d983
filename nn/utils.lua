-- torch.nn.utils -- gradient clipping and parameter/vector conversion
-- (PyTorch's torch.nn.utils), under no_grad.
local torch = require "torch"
local U = require "torch.nn.util"

local Ut = {}

local function param_list(parameters)
  if torch.is_tensor(parameters) then return {parameters} end
  return parameters
end

local function grads_of(parameters)
  local gs = {}
  for _, p in ipairs(param_list(parameters)) do
    local g = p.grad
    if g ~= nil then gs[#gs + 1] = g end
  end
  return gs
end

-- The gradients split by device, in order of first appearance.
local function by_device(grads)
  local groups, order = {}, {}
  for _, g in ipairs(grads) do
    local k = tostring(g.device)
    if not groups[k] then
      groups[k] = {}
      order[#order + 1] = k
    end
    table.insert(groups[k], g)
  end
  local out = {}
  for i, k in ipairs(order) do out[i] = groups[k] end
  return out
end

-- Eager clip_grad_norm_: per device one torch._foreach_norm (a few kernel
-- launches on CUDA for all its gradients) and one torch._foreach_mul_ by a
-- coefficient that stays on the device (no host read).
-- error_if_nonfinite: a non-finite total norm is an error (at the caller's `level`)
local function check_finite(total, p, level)
  local v = total:item()
  if v ~= v or v == math.huge or v == -math.huge then
    error(("nn.utils.clip_grad_norm_: the total norm of order %s of the gradients is non-finite, so it cannot "
           .. "be clipped (pass error_if_nonfinite=false to clip anyway)"):format(tostring(p)), level)
  end
end

local function clip_eager(grads, max_norm, p, error_if_nonfinite)
  local groups = by_device(grads)
  local total
  if #groups == 1 then
    total = select(2, torch._foreach_norm(grads, p))
  else
    local totals = {}
    for i, gs in ipairs(groups) do totals[i] = select(2, torch._foreach_norm(gs, p)):to(grads[1].device) end
    total = torch.linalg.vector_norm(torch.stack(totals), p)
  end
  if error_if_nonfinite then check_finite(total, p, 5) end
  local coef = (max_norm / (total + 1e-6)):clamp(nil, 1.0)
  for _, gs in ipairs(groups) do torch._foreach_mul_(gs, #groups == 1 and coef or coef:to(gs[1].device)) end
  return total
end

-- clip_grad_norm_(parameters, max_norm[, norm_type=2, error_if_nonfinite=false]):
-- scales all gradients by max_norm / (total_norm + 1e-6) when that is below 1;
-- returns the total norm (a 0-dim tensor) of the gradients taken together.
function Ut.clip_grad_norm_(parameters, max_norm, ...)
  local o = U.args("nn.utils.clip_grad_norm_", {"norm_type", "error_if_nonfinite"},
                   {norm_type = 2.0, error_if_nonfinite = false}, ...)
  local grads = grads_of(parameters)
  if #grads == 0 then return torch.tensor(0.0) end
  return torch.no_grad(function()
    local p = o.norm_type
    if p == "inf" then p = math.huge end
    if not torch.compiler.is_compiling() then return clip_eager(grads, max_norm, p, o.error_if_nonfinite) end
    local total
    if p == math.huge then
      local norms = {}
      for i, g in ipairs(grads) do norms[i] = g:abs():max() end
      total = #norms == 1 and norms[1] or torch.stack(norms):max()
    elseif p == 2 then
      -- inside a compiled step: elementwise ops and sums the JIT fuses
      for _, g in ipairs(grads) do
        -- rows first: a whole-tensor sum is one row of work (one GPU block)
        local s = g * g
        if s:dim() > 1 then s = s:sum(-1) end
        s = s:sum()
        total = total and total + s or s
      end
      total = total:sqrt()
    else
      local norms = {}
      for i, g in ipairs(grads) do norms[i] = torch.linalg.vector_norm(g, p) end
      total = torch.linalg.vector_norm(torch.stack(norms), p)
    end
    if o.error_if_nonfinite then check_finite(total, p, 4) end
    local coef = (max_norm / (total + 1e-6)):clamp(nil, 1.0)
    for _, g in ipairs(grads) do g:mul_(coef) end
    return total
  end)
end

-- clip_grad_value_(parameters, clip_value): clamps every gradient to [-v, v].
function Ut.clip_grad_value_(parameters, clip_value)
  torch.no_grad(function()
    for _, g in ipairs(grads_of(parameters)) do g:clamp_(-clip_value, clip_value) end
  end)
end

-- parameters_to_vector(parameters): one 1-D tensor of all parameters.
function Ut.parameters_to_vector(parameters)
  local vs = {}
  for i, p in ipairs(param_list(parameters)) do vs[i] = p:reshape(-1) end
  return torch.cat(vs)
end

-- vector_to_parameters(vec, parameters): copies slices of vec into the parameters.
function Ut.vector_to_parameters(vec, parameters)
  torch.no_grad(function()
    local off = 0
    for _, p in ipairs(param_list(parameters)) do
      local n = p:numel()
      p:copy_(vec:narrow(1, off + 1, n):view(p:size()))
      off = off + n
    end
    if off ~= vec:numel() then
      error(("nn.utils.vector_to_parameters: vector has %d elements, parameters %d"):format(vec:numel(), off), 3)
    end
  end)
end

U.doc(Ut, {
  clip_grad_norm_ = "nn.utils.clip_grad_norm_(params, max_norm[, norm_type=2, error_if_nonfinite]) -- clip by total norm; returns it",
  clip_grad_value_ = "nn.utils.clip_grad_value_(params, clip_value) -- clamp every gradient to [-v, v]",
  parameters_to_vector = "nn.utils.parameters_to_vector(params) -- all parameters as one 1-D tensor",
  vector_to_parameters = "nn.utils.vector_to_parameters(vec, params) -- copy vec's slices into params",
})


-- public entry points: an error raised inside names the function at the caller's line
U.public_table(Ut, "nn.utils.")

return Ut
