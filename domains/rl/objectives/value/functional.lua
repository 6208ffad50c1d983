-- torch.rl.objectives.value.functional -- TorchRL's value estimators as
-- functions of tensors: GAE, TD(0), TD(1) and TD(lambda) returns and
-- advantages, in a loop form and a vectorized form (vec_*) that agree.
-- Tensors are [*B, T, F] with time along dim -2 (time_dim= moves it).
-- `terminated` stops bootstrapping (the next value counts as 0); `done`
-- (terminated or truncated) ends the trajectory, so later steps do not
-- flow back into earlier ones. Pure tensor ops: they run on any device and
-- under autograd or torch.compile.
local torch = require "torch"
local U = require "torch.nn.util"

local M = {}

-- prepare(fname, tensors, names, time_dim) -> the tensors with time moved
-- to dim -2 (done/terminated as bool), after checking they share one shape
-- of at least 2 dims. tensors[k] may be nil (skipped).
local function prepare(fname, list, time_dim)
  local shape
  for _, e in ipairs(list) do
    local v = e.value
    if v ~= nil then
      if not torch.is_tensor(v) then
        error(("%s: %s must be a tensor, got %s"):format(fname, e.name, type(v)), 0)
      end
      if v:dim() < 2 then
        error(("%s: %s must have a time dim and a feature dim ([*B, T, F], e.g. [T, 1]), got shape %s"):format(
          fname, e.name, U.shape_str(v)), 0)
      end
      if shape and U.shape_str(v) ~= shape.str then
        error(("%s: all inputs must share one shape: %s is %s but %s is %s"):format(fname, shape.name, shape.str,
                                                                                   e.name, U.shape_str(v)), 0)
      end
      shape = shape or {name = e.name, str = U.shape_str(v), dim = v:dim()}
    end
  end
  local td = time_dim or -2
  if math.type(td) ~= "integer" or td == 0 or td > shape.dim or td < -shape.dim then
    error(("%s: time_dim must be a dim of the inputs (1..%d or -%d..-1), got %s"):format(
      fname, shape.dim, shape.dim, tostring(time_dim)), 0)
  end
  if td < 0 then td = shape.dim + 1 + td end
  local out = {}
  for i, e in ipairs(list) do
    local v = e.value
    if v ~= nil then
      if td ~= shape.dim - 1 then v = v:transpose(td, -2) end
      if e.bool and v.dtype ~= torch.bool then v = v:ne(0) end
      out[i] = v
    end
  end
  return out, function(x)
    if td ~= shape.dim - 1 then return x:transpose(td, -2) end
    return x
  end
end

-- coef(fname, name, v, like): a number, or a tensor of like's shape (moved like it).
local function coef(fname, name, v, like, back)
  if type(v) == "number" then return v end
  if torch.is_tensor(v) then
    if v:numel() == 1 then return v:reshape({}) end
    local b = back(v)
    if U.shape_str(b) ~= U.shape_str(like) then
      error(("%s: %s must be a number or a tensor of the inputs' shape %s, got %s"):format(fname, name,
            U.shape_str(like), U.shape_str(v)), 0)
    end
    return b
  end
  error(("%s: %s must be a number or a tensor, got %s"):format(fname, name, type(v)), 0)
end

-- at(x, t): step t (1-based) of x along dim -2, or x itself for numbers
-- and 0-dim tensors.
local function at(x, t)
  if type(x) == "number" or x:dim() == 0 then return x end
  return x:select(-2, t)
end

local function as_float(mask, like) return mask:to(like.dtype) end

-- scan(a, b, init) -> g with g_t = a_t + b_t g_{t+1} along dim -2 and
-- g_{T+1} = init (a tensor of one step, or nil for 0): the loop form,
-- backwards in time. Without autograd the steps are written into one
-- result tensor (thousands of live step tensors would make each garbage
-- collection step slower); with it they are stacked.
local function scan_loop(a, b, init)
  local T = a.shape[a:dim() - 1]
  local grad = torch.is_grad_enabled() and (a.requires_grad or (torch.is_tensor(b) and b.requires_grad)
                                             or (init ~= nil and init.requires_grad))
  local out = grad and {} or torch.empty_like(a)
  local g = init
  for t = T, 1, -1 do
    local at_, bt = at(a, t), at(b, t)
    if g == nil then g = at_ else g = at_ + bt * g end
    if grad then out[t] = g else out:select(-2, t):copy_(g) end
  end
  return grad and torch.stack(out, -2) or out
end

-- The same recurrence in log2(T) whole-tensor steps (a doubling scan):
-- after each step, g_t = A_t + B_t g_{t+s}; s doubles until it covers T.
local function scan_vec(a, b, init)
  local T = a.shape[a:dim() - 1]
  if type(b) == "number" or b:dim() == 0 then b = torch.ones_like(a) * b end
  a, b = torch.broadcast_tensors(a, b)
  if init ~= nil then
    local last = a:narrow(-2, T, 1) + b:narrow(-2, T, 1) * init:unsqueeze(-2)
    a = torch.cat({a:narrow(-2, 1, T - 1), last}, -2)
  end
  local A, B = a, b
  local s = 1
  while s < T do
    local zshape = A.shape
    zshape[#zshape - 1] = s
    local zeros = torch.zeros(zshape, {dtype = A.dtype, device = A.device})
    local A_next = torch.cat({A:narrow(-2, s + 1, T - s), zeros}, -2)
    local B_next = torch.cat({B:narrow(-2, s + 1, T - s), zeros}, -2)
    A = A + B * A_next
    B = B * B_next
    s = s * 2
  end
  return A
end

-- GAE: adv_t = delta_t + gamma lmbda (1 - done_t) adv_{t+1}, with
-- delta_t = r_t + gamma (1 - terminated_t) V(s_{t+1}) - V(s_t).
local function gae(fname, scan, gamma, lmbda, state_value, next_state_value, reward, done, o)
  o = U.args(fname, {"terminated", "time_dim"}, nil, table.unpack(o, 1, o.n))
  local x, back = prepare(fname, {{name = "state_value", value = state_value},
    {name = "next_state_value", value = next_state_value}, {name = "reward", value = reward},
    {name = "done", value = done, bool = true}, {name = "terminated", value = o.terminated, bool = true}},
    o.time_dim)
  local v, nv, r, dn, term = x[1], x[2], x[3], x[4], x[5] or x[4]
  gamma = coef(fname, "gamma", gamma, v, back)
  lmbda = coef(fname, "lmbda", lmbda, v, back)
  local not_term, not_done = as_float(term:logical_not(), v), as_float(dn:logical_not(), v)
  local delta = r + nv * not_term * gamma - v
  local adv = scan(delta, not_done * gamma * lmbda)
  return back(adv), back(adv + v)
end

-- generalized_advantage_estimate(gamma, lmbda, state_value,
-- next_state_value, reward, done[, terminated=done, time_dim=-2]) ->
-- advantage, value_target (= advantage + state_value).
function M.generalized_advantage_estimate(gamma, lmbda, state_value, next_state_value, reward, done, ...)
  return gae("generalized_advantage_estimate", scan_loop, gamma, lmbda, state_value, next_state_value, reward,
             done, table.pack(...))
end

-- vec_generalized_advantage_estimate(...): the same values, vectorized over time.
function M.vec_generalized_advantage_estimate(gamma, lmbda, state_value, next_state_value, reward, done, ...)
  return gae("vec_generalized_advantage_estimate", scan_vec, gamma, lmbda, state_value, next_state_value, reward,
             done, table.pack(...))
end

-- td0_return_estimate(gamma, next_state_value, reward[, terminated,
-- {done=}]) -> reward + gamma (1 - terminated) next_state_value.
-- Without terminated, done stands for it (as TorchRL does).
function M.td0_return_estimate(gamma, next_state_value, reward, ...)
  local fname = "td0_return_estimate"
  local o = U.args(fname, {"terminated", "done"}, nil, ...)
  local term = o.terminated
  if term == nil then term = o.done end
  if not torch.is_tensor(next_state_value) or not torch.is_tensor(reward) then
    error(fname .. ": next_state_value and reward must be tensors", 0)
  end
  if U.shape_str(next_state_value) ~= U.shape_str(reward) then
    error(("%s: next_state_value %s and reward %s must share one shape"):format(fname,
          U.shape_str(next_state_value), U.shape_str(reward)), 0)
  end
  gamma = coef(fname, "gamma", gamma, reward, function(t) return t end)
  local nv = next_state_value
  if term ~= nil then
    if not torch.is_tensor(term) or U.shape_str(term) ~= U.shape_str(reward) then
      error(("%s: terminated must be a tensor of the reward's shape %s"):format(fname, U.shape_str(reward)), 0)
    end
    if term.dtype ~= torch.bool then term = term:ne(0) end
    nv = nv * as_float(term:logical_not(), nv)
  end
  return reward + nv * gamma
end

-- td0_advantage_estimate(gamma, state_value, next_state_value, reward[,
-- terminated, {done=}]) -> td0_return_estimate(...) - state_value.
function M.td0_advantage_estimate(gamma, state_value, next_state_value, reward, ...)
  if not torch.is_tensor(state_value) then
    error("td0_advantage_estimate: state_value must be a tensor, got " .. type(state_value), 0)
  end
  return M.td0_return_estimate(gamma, next_state_value, reward, ...) - state_value
end

-- TD(lambda): G_t = r_t + gamma_t [(1 - lmbda + lmbda done_t) V'_t +
-- lmbda (1 - done_t) G_{t+1}], V'_t = (1 - terminated_t) V(s_{t+1}),
-- G_{T+1} = V'_T. lmbda = 1 gives TD(1).
local function td_lambda(fname, scan, gamma, lmbda, next_state_value, reward, done, o)
  o = U.args(fname, {"terminated", "rolling_gamma", "time_dim"}, nil, table.unpack(o, 1, o.n))
  if o.rolling_gamma == false then
    error(fname .. ": rolling_gamma=false is not supported (gamma applies per step, as rolling_gamma=true)", 0)
  end
  local x, back = prepare(fname, {{name = "next_state_value", value = next_state_value},
    {name = "reward", value = reward}, {name = "done", value = done, bool = true},
    {name = "terminated", value = o.terminated, bool = true}}, o.time_dim)
  local nv, r, dn, term = x[1], x[2], x[3], x[4] or x[3]
  gamma = coef(fname, "gamma", gamma, nv, back)
  lmbda = coef(fname, "lmbda", lmbda, nv, back)
  nv = nv * as_float(term:logical_not(), nv)
  local d = as_float(dn, nv)
  local a = r + nv * (d * lmbda + (1 - lmbda)) * gamma
  local b = (1 - d) * lmbda * gamma
  local T = nv.shape[nv:dim() - 1]
  return back(scan(a, b, nv:select(-2, T)))
end

-- td1_return_estimate(gamma, next_state_value, reward, done[, terminated,
-- rolling_gamma, time_dim=-2]) -> the Monte-Carlo return bootstrapped at
-- the end of the batch and at truncations.
function M.td1_return_estimate(gamma, next_state_value, reward, done, ...)
  return td_lambda("td1_return_estimate", scan_loop, gamma, 1,
                   next_state_value, reward, done, table.pack(...))
end

function M.vec_td1_return_estimate(gamma, next_state_value, reward, done, ...)
  return td_lambda("vec_td1_return_estimate", scan_vec, gamma, 1,
                   next_state_value, reward, done, table.pack(...))
end

-- td_lambda_return_estimate(gamma, lmbda, next_state_value, reward, done[,
-- terminated, rolling_gamma, time_dim=-2]) -> the lambda-return.
function M.td_lambda_return_estimate(gamma, lmbda, next_state_value, reward, done, ...)
  return td_lambda("td_lambda_return_estimate", scan_loop, gamma, lmbda,
                   next_state_value, reward, done, table.pack(...))
end

function M.vec_td_lambda_return_estimate(gamma, lmbda, next_state_value, reward, done, ...)
  return td_lambda("vec_td_lambda_return_estimate", scan_vec, gamma, lmbda,
                   next_state_value, reward, done, table.pack(...))
end

return U.public_table(M, "torch.rl.objectives.value.functional.")
