-- autograd.lua -- the parts of torch.autograd written in Lua: gradcheck and
-- gradgradcheck (finite differences against the recorded backward). Compiled
-- into the torch module; the chunk receives (torch, autograd).
local torch, autograd = ...

-- fn's results as a list of tensors (a tensor, or a list of them)
local function as_list(r)
  if torch.is_tensor(r) then return {r} end
  assert(type(r) == "table", "gradcheck: fn must return a tensor or a list of tensors")
  return r
end

-- multi-index {i1, ..., in} (1-based) of flat position k of shape
local function unravel(shape, k)
  local idx = {}
  k = k - 1
  for d = #shape, 1, -1 do
    idx[d] = k % shape[d] + 1
    k = k // shape[d]
  end
  return idx
end

local function numel(shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return n
end

local function value_at(t, k)
  if t:dim() == 0 then return t:item() end
  return t[unravel(t.shape, k)]:item()
end

-- Jacobians of every output element with respect to every element of each
-- differentiable input: J[i][o][k][j] (input i, output o, output element k,
-- input element j), numerically (central differences) and analytically.
local function jacobians(fn, inputs, eps)
  local diff = {}
  for i, x in ipairs(inputs) do
    if torch.is_tensor(x) and x.requires_grad then diff[#diff + 1] = i end
  end
  if #diff == 0 then error("gradcheck: no input requires grad", 3) end
  local outs = as_list(fn(table.unpack(inputs, 1, #inputs)))
  local ana, num = {}, {}
  for _, i in ipairs(diff) do ana[i], num[i] = {}, {} end
  -- analytical: one vector-Jacobian product per output element
  local diff_inputs = {}
  for n, i in ipairs(diff) do diff_inputs[n] = inputs[i] end
  for o, y in ipairs(outs) do
    for _, i in ipairs(diff) do ana[i][o], num[i][o] = {}, {} end
    if y.requires_grad then
      for k = 1, y:numel() do
        local gos = {}
        for p, z in ipairs(outs) do gos[p] = torch.zeros_like(z) end
        if y:dim() == 0 then gos[o] = torch.ones_like(y) else gos[o][unravel(y.shape, k)] = 1 end
        local req, greq = {}, {}
        for p, z in ipairs(outs) do
          if z.requires_grad then req[#req + 1] = z; greq[#greq + 1] = gos[p] end
        end
        local gs = autograd.grad(req, diff_inputs, {grad_outputs = greq, retain_graph = true, allow_unused = true})
        for n, i in ipairs(diff) do
          local g, x = gs[n], inputs[i]
          if g then
            if g.dtype ~= x.dtype then
              error(("gradcheck: the gradient of input %d is %s, expected %s"):format(i, g.dtype, x.dtype), 3)
            end
            for d = 1, math.max(#g.shape, #x.shape) do
              if g.shape[d] ~= x.shape[d] then
                error(("gradcheck: the gradient of input %d has shape %s, expected %s"):format(i,
                  table.concat(g.shape, "x"), table.concat(x.shape, "x")), 3)
              end
            end
          end
          local row = {}
          for j = 1, x:numel() do row[j] = g and value_at(g, j) or 0 end
          ana[i][o][k] = row
        end
      end
    end
  end
  -- numerical: perturb each element of each input in place (through a
  -- detached alias, so the graph above is not involved); grad mode stays
  -- as it is, since fn may itself differentiate (gradgradcheck)
  do
    for _, i in ipairs(diff) do
      local x = inputs[i]:detach()
      for j = 1, x:numel() do
        local idx = x:dim() == 0 and nil or unravel(x.shape, j)
        local orig = value_at(x, j)
        local function set(v) if idx then x[idx] = v else x:fill_(v) end end
        -- results are copied at once: fn may return (views of) its inputs
        local function eval()
          local r = as_list(fn(table.unpack(inputs, 1, #inputs)))
          for o = 1, #r do r[o] = r[o]:detach():clone() end
          return r
        end
        set(orig + eps)
        local plus = eval()
        set(orig - eps)
        local minus = eval()
        set(orig)
        for o, y in ipairs(outs) do
          if y.requires_grad then
            for k = 1, y:numel() do
              num[i][o][k] = num[i][o][k] or {}
              num[i][o][k][j] = (value_at(plus[o], k) - value_at(minus[o], k)) / (2 * eps)
            end
          end
        end
      end
    end
  end
  return ana, num, outs, diff
end

-- gradcheck(fn, inputs[, {eps=1e-6, atol=1e-5, rtol=1e-3, raise=true}]) ->
-- true, or raises (or returns false, message with raise=false) naming the
-- first mismatching Jacobian entry.
function autograd.gradcheck(fn, inputs, opts)
  opts = torch._check_options("gradcheck", opts or {}, "eps atol rtol raise")
  if torch.is_tensor(inputs) then inputs = {inputs} end
  local eps, atol, rtol = opts.eps or 1e-6, opts.atol or 1e-5, opts.rtol or 1e-3
  local ana, num, outs, diff = jacobians(fn, inputs, eps)
  for _, i in ipairs(diff) do
    for o, y in ipairs(outs) do
      if y.requires_grad then
        for k = 1, y:numel() do
          for j = 1, inputs[i]:numel() do
            local a, n = ana[i][o][k][j], num[i][o][k][j]
            if not (math.abs(a - n) <= atol + rtol * math.abs(n)) then
              local msg = ("gradcheck: Jacobian mismatch for output %d with respect to input %d, output element "
                .. "%d, input element %d: numerical %.10g, analytical %.10g"):format(o, i, k, j, n, a)
              if opts.raise == false then return false, msg end
              error(msg, 2)
            end
          end
        end
      end
    end
  end
  return true
end

-- gradgradcheck(fn, inputs[, opts]): gradcheck of the gradients of fn
-- (computed with create_graph=true) with respect to the inputs and to
-- random upstream gradients.
function autograd.gradgradcheck(fn, inputs, opts)
  if torch.is_tensor(inputs) then inputs = {inputs} end
  local outs = as_list(fn(table.unpack(inputs, 1, #inputs)))
  local gos = {}
  for o, y in ipairs(outs) do
    gos[o] = torch.randn(y.shape, {dtype = y.dtype}):requires_grad_()
  end
  local n = #inputs
  local diff = {}
  for i, x in ipairs(inputs) do
    if torch.is_tensor(x) and x.requires_grad then diff[#diff + 1] = i end
  end
  local function first_grads(...)
    local args = {...}
    local ins = {table.unpack(args, 1, n)}
    local ys = as_list(fn(table.unpack(ins, 1, n)))
    local d = {}
    for k, i in ipairs(diff) do d[k] = ins[i] end
    local req, g = {}, {}
    for o, y in ipairs(ys) do
      if y.requires_grad then req[#req + 1] = y; g[#g + 1] = args[n + o] end
    end
    local gs = autograd.grad(req, d, {grad_outputs = g, create_graph = true, allow_unused = true})
    local res = {}
    for k = 1, #d do res[k] = gs[k] or torch.zeros_like(d[k]) end
    return res
  end
  local all = {table.unpack(inputs, 1, n)}
  for o = 1, #outs do all[n + o] = gos[o] end
  return autograd.gradcheck(first_grads, all, opts)
end

-- public entry points: an error raised inside names the function at the caller's line
autograd.gradcheck = torch._public(autograd.gradcheck, "gradcheck")
autograd.gradgradcheck = torch._public(autograd.gradgradcheck, "gradgradcheck")
