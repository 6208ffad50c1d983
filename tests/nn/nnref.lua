-- tests/nn/nnref.lua -- helpers of the nn tests: rebuild the inputs, states
-- and upstream gradients of a reference case (tests/ref/nn_*.lua, made by
-- gen_nn.py) and compare our outputs and gradients with PyTorch's.
local torch = require "torch"

local R = {}
local E = {} -- the test file's environment (test, check_close, ...): R.use(_ENV)
function R.use(env) E = env end
R.TOL = {atol = 1e-10, rtol = 1e-9}

-- gen(shape, seed): the deterministic float64 values of gen_nn.py's gen().
function R.gen(shape, seed)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for k = 0, n - 1 do flat[k + 1] = ((37 * k + 11 * seed) % 101 - 50) / 32 end
  if #shape == 0 then return torch.tensor(flat[1], {dtype = torch.float64}) end
  return torch.tensor(flat, {dtype = torch.float64}):reshape(shape)
end

-- A tensor from {shape =, data =, dtype =} (float64 unless dtype says).
function R.tensor(d)
  local dt = torch.float64
  if d.dtype == "int64" then dt = torch.int64 elseif d.dtype == "bool" then dt = torch.bool end
  if #d.shape == 0 then return torch.tensor(d.data[1], {dtype = dt}) end
  local n = 1
  for _, s in ipairs(d.shape) do n = n * s end
  if n == 0 then return torch.zeros(d.shape, {dtype = dt}) end
  return torch.tensor(d.data, {dtype = dt}):reshape(d.shape)
end

-- Flattens returned values (tensors or tables of tensors) into a list.
function R.flat(...)
  local out = {}
  local function add(v)
    if torch.is_tensor(v) then out[#out + 1] = v
    elseif type(v) == "table" then for _, x in ipairs(v) do add(x) end end
  end
  for i = 1, select("#", ...) do add((select(i, ...))) end
  return out
end

-- Inputs of case c: float ones are leaves requiring grad (unless no_grad).
function R.inputs(c, no_grad)
  local ins = {}
  for i, d in ipairs(c.inputs) do
    local t = R.tensor(d)
    if t:is_floating_point() and not no_grad then t = t:requires_grad_() end
    ins[i] = t
  end
  return ins
end

-- A module built by make(), in float64, with the case's state loaded.
function R.module(c, make)
  local m = make():double()
  if c.state then
    local sd = {}
    for k, d in pairs(c.state) do sd[k] = R.tensor(d) end
    m:load_state_dict(sd)
  end
  return m
end

local function check_list(got, want, what, tol)
  if #got ~= #want then error(("%s: expected %d tensors, got %d"):format(what, #want, #got), 3) end
  for i, w in ipairs(want) do
    local g = got[i]
    local ok, err = pcall(function()
      local s = g:size()
      if #s ~= #w.shape then error("shape " .. table.concat(s, "x") .. " vs " .. table.concat(w.shape, "x")) end
      for k = 1, #s do if s[k] ~= w.shape[k] then error("shape " .. table.concat(s, "x") .. " vs "
                                                       .. table.concat(w.shape, "x")) end end
      local wt = R.tensor(w)
      if w.dtype then
        if not torch.equal(g:to(wt.dtype), wt) then error("values differ") end
      else
        E.check_close(g, wt, tol)
      end
    end)
    if not ok then error(("%s %d: %s"):format(what, i, tostring(err)), 3) end
  end
end

-- Forward: outputs (and buffers after, for modules) match PyTorch.
-- true when every number in the (nested) reference table v is 0
local function all_zero(v)
  if type(v) == "number" then return v == 0 end
  if type(v) == "table" then
    for _, x in pairs(v) do if not all_zero(x) then return false end end
  end
  return true
end

function R.check_forward(c, fn, tol, m)
  local ins = R.inputs(c)
  local outs = R.flat(fn(table.unpack(ins)))
  check_list(outs, c.outputs, "output", tol or R.TOL)
  if m and c.buffers_after then
    for name, b in m:named_buffers() do
      local want = c.buffers_after[name]
      if want then check_list({b}, {want}, "buffer " .. name, tol or R.TOL) end
    end
  end
end

-- Backward of sum(out_k * gen(shape_k, 99 + k - 1)): gradients of inputs and
-- of the module's parameters match PyTorch.
function R.check_backward(c, fn, tol, m)
  local ins = R.inputs(c)
  local outs = R.flat(fn(table.unpack(ins)))
  local loss
  for k, o in ipairs(outs) do
    if o:is_floating_point() then
      local term = (o * R.gen(o:size(), 99 + k - 1)):sum()
      loss = loss and loss + term or term
    end
  end
  loss:backward()
  for i, want in ipairs(c.gin) do
    if want then
      local g = ins[i].grad
      -- PyTorch returns zeros where only non-differentiable ops (rounding
      -- to an index, as in nearest grid_sample) connect an input; we
      -- return no gradient there
      if g == nil and not all_zero(want.data) then error(("input %d: no gradient reached it"):format(i), 2) end
      if g ~= nil then check_list({g}, {want}, "grad of input", tol or R.TOL) end
    end
  end
  if m then
    for name, p in m:named_parameters() do
      local want = c.gparams[name]
      if want then
        if p.grad == nil then error("parameter " .. name .. ": no gradient reached it", 2) end
        check_list({p.grad}, {want}, "grad of " .. name, tol or R.TOL)
      end
    end
  end
end

-- Registers the forward and gradient tests of module case `name`.
function R.module_tests(refs, name, make, tol)
  local c = refs[name]
  E.test(name .. ": forward matches PyTorch", function()
    if c == nil then error("no reference case " .. name) end
    local m = R.module(c, make)
    local training = true
    if name:find("_eval", 1, true) then training = false end
    m:train(training)
    R.check_forward(c, function(...) return m(...) end, tol, m)
  end)
  E.test(name .. ": gradients match PyTorch", function()
    local m = R.module(c, make)
    m:train(not name:find("_eval", 1, true))
    R.check_backward(c, function(...) return m(...) end, tol, m)
  end)
end

-- Registers the forward and gradient tests of functional case `name`.
function R.fn_tests(refs, name, fn, tol)
  local c = refs[name]
  E.test(name .. ": forward matches PyTorch", function()
    if c == nil then error("no reference case " .. name) end
    R.check_forward(c, fn, tol)
  end)
  local any = false
  for _, g in ipairs(c and c.gin or {}) do any = any or g ~= false end
  if any then
    E.test(name .. ": gradients match PyTorch", function() R.check_backward(c, fn, tol) end)
  end
end

return R
