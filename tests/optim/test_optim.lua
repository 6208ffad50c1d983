-- tests/optim/test_optim.lua -- SGD, Adam, AdamW, RMSprop and Adagrad
-- parameter trajectories over several steps (momentum, dampening, Nesterov,
-- weight decay, amsgrad, centered, lr_decay, maximize, param groups)
-- against PyTorch 1.13 (tests/ref/optim.lua, gen_optim.py) in float64 and
-- float32; plus zero_grad, state_dict round trips and argument errors.
local optim = require "torch.optim"
local refs = ref("optim")

local function gen(shape, seed, dtype)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local flat = {}
  for k = 0, n - 1 do flat[k + 1] = ((37 * k + 11 * seed) % 101 - 50) / 32 end
  return torch.tensor(flat, {dtype = torch.float64}):reshape(shape):to(dtype)
end

local function problem(dtype)
  local p1 = gen({3, 4}, 1, dtype):requires_grad_()
  local p2 = gen({4}, 2, dtype):requires_grad_()
  local a1, b1 = gen({3, 4}, 3, dtype):abs() + 0.1, gen({3, 4}, 4, dtype)
  local a2, b2 = gen({4}, 5, dtype):abs() + 0.1, gen({4}, 6, dtype)
  local function loss() return (a1 * p1 * p1 + b1 * p1):sum() + (a2 * p2 * p2 + b2 * p2):sum() end
  return p1, p2, loss
end

local makers = {
  sgd = {function(ps) return optim.SGD(ps, 0.1) end},
  sgd_momentum_dampening_wd = {function(ps)
    return optim.SGD(ps, {lr = 0.05, momentum = 0.9, dampening = 0.3, weight_decay = 0.1}) end},
  sgd_nesterov = {function(ps) return optim.SGD(ps, 0.05, 0.8, {nesterov = true}) end},
  sgd_maximize = {function(ps) return optim.SGD(ps, {lr = 0.01, momentum = 0.5, maximize = true}) end},
  sgd_groups = {function(ps) return optim.SGD(ps, {lr = 0.1, momentum = 0.9}) end, {lr = 0.02, momentum = 0.5}},
  adam = {function(ps) return optim.Adam(ps, {lr = 0.1}) end},
  adam_wd_amsgrad = {function(ps)
    return optim.Adam(ps, {lr = 0.05, betas = {0.8, 0.9}, eps = 1e-6, weight_decay = 0.2, amsgrad = true}) end},
  adam_maximize = {function(ps) return optim.Adam(ps, {lr = 0.01, maximize = true}) end},
  adamw = {function(ps) return optim.AdamW(ps, {lr = 0.1}) end},
  adamw_amsgrad = {function(ps) return optim.AdamW(ps, {lr = 0.05, weight_decay = 0.3, amsgrad = true}) end,
                   {weight_decay = 0.0}},
  rmsprop = {function(ps) return optim.RMSprop(ps, {lr = 0.01}) end},
  rmsprop_centered_momentum_wd = {function(ps)
    return optim.RMSprop(ps, {lr = 0.02, alpha = 0.9, momentum = 0.7, centered = true, weight_decay = 0.1}) end},
  adagrad = {function(ps) return optim.Adagrad(ps, {lr = 0.1}) end},
  adagrad_decay_wd_init = {function(ps)
    return optim.Adagrad(ps, {lr = 0.2, lr_decay = 0.1, weight_decay = 0.05, initial_accumulator_value = 0.3}) end},
}

local function run(name, dtype, steps)
  local make, group2 = makers[name][1], makers[name][2]
  local p1, p2, loss = problem(dtype)
  local params = {p1, p2}
  if group2 then
    local g = {params = {p2}}
    for k, v in pairs(group2) do g[k] = v end
    params = {{params = {p1}}, g}
  end
  local opt = make(params)
  local traj = {}
  for i = 1, steps do
    opt:zero_grad()
    loss():backward()
    opt:step()
    traj[i] = torch.cat({p1:detach():reshape(-1), p2:detach():reshape(-1)}):double()
  end
  return traj, opt, p1, p2, loss
end

local names = {}
for k in pairs(makers) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do
  test(name .. ": float64 parameter trajectory matches PyTorch", function()
    local want = refs.optim[name].f64
    local traj = run(name, torch.float64, #want)
    for i = 1, #want do check_close(traj[i], want[i], {atol = 1e-12, rtol = 1e-10}) end
  end)
  test(name .. ": float32 parameter trajectory matches PyTorch", function()
    local want = refs.optim[name].f32
    local traj = run(name, torch.float32, #want)
    for i = 1, #want do check_close(traj[i], want[i], {atol = 2e-6, rtol = 2e-6}) end
  end)
end

test("every reference optimizer case has a test", function()
  for k in pairs(refs.optim) do check(makers[k] ~= nil, "no test for " .. k) end
end)

test("state_dict round trip: a fresh optimizer loaded mid-run continues the same trajectory", function()
  for _, name in ipairs{"sgd_momentum_dampening_wd", "adam_wd_amsgrad", "rmsprop_centered_momentum_wd",
                        "adagrad_decay_wd_init", "sgd_groups"} do
    local want = refs.optim[name].f64
    local _, opt, p1, p2, loss = run(name, torch.float64, 3)
    local sd = opt:state_dict()
    check_eq(#sd.param_groups, makers[name][2] and 2 or 1)
    check(sd.state[1] ~= nil and sd.state[2] ~= nil, "state of both parameters")
    local ps = {p1, p2}
    if makers[name][2] then ps = {{params = {p1}}, {params = {p2}}} end
    local opt2 = makers[name][1](ps)
    opt2:load_state_dict(sd)
    -- the loaded state is a copy: stepping the old optimizer must not affect it
    for i = 4, #want do
      opt2:zero_grad()
      loss():backward()
      opt2:step()
      check_close(torch.cat({p1:detach():reshape(-1), p2:detach():reshape(-1)}), want[i], {atol = 1e-12, rtol = 1e-10})
    end
  end
end)

test("zero_grad sets gradients to nil by default, or zeroes them with set_to_none=false", function()
  local p = torch.ones(3, {requires_grad = true})
  local opt = optim.SGD({p}, 0.1)
  local l = (p * 2):sum()
  l:backward()
  opt:zero_grad({set_to_none = false})
  check(p.grad ~= nil and p.grad:sum():item() == 0)
  opt:zero_grad()
  check(p.grad == nil)
  opt:step() -- parameters without gradients are skipped
  check_close(p, {1, 1, 1})
end)

test("param groups: per-group options, defaults filled in, add_param_group", function()
  local a, b, c = torch.ones(2, {requires_grad = true}), torch.ones(2, {requires_grad = true}),
                  torch.ones(2, {requires_grad = true})
  local opt = optim.Adam({{params = {a}}, {params = b, lr = 0.5}}, {lr = 0.01})
  check_eq(opt.param_groups[1].lr, 0.01)
  check_eq(opt.param_groups[2].lr, 0.5)
  check_eq(opt.param_groups[2].betas, {0.9, 0.999})
  opt:add_param_group({params = {c}, weight_decay = 0.1})
  check_eq(#opt.param_groups, 3)
  check_eq(opt.param_groups[3].weight_decay, 0.1)
  check_error(function() opt:add_param_group({params = {a}}) end, "some parameters appear in more than one parameter group")
end)

test("optimizer argument errors are clear", function()
  local p = torch.ones(2, {requires_grad = true})
  check_error(function() optim.SGD({p}) end, "didn't specify a value of required optimization parameter lr")
  check_error(function() optim.SGD({}, 0.1) end, "SGD: got an empty parameter list")
  check_error(function() optim.SGD(p, 0.1) end, "wrap it in a table")
  check_error(function() optim.SGD({p}, 0.1, {nesterov = true}) end, "Nesterov momentum requires a momentum")
  check_error(function() optim.Adam({p}, {lr = -1}) end, "invalid learning rate -1")
  check_error(function() optim.Adam({p}, {betas = {0.9, 1.0}}) end, "betas must be")
  check_error(function() optim.SGD({p * 2}, 0.1) end, "can't optimize a non-leaf tensor")
  check_error(function() optim.Adam({p}, {lr = 0.1, momentum = 0.9}) end, "unknown option 'momentum'")
end)

test("a Linear regression trained with Adam converges", function()
  local nn = require "torch.nn"
  torch.manual_seed(0)
  local m = nn.Linear(3, 1)
  local x = torch.randn(64, 3)
  local y = x:matmul(torch.tensor({{1.0}, {-2.0}, {0.5}})) + 0.3
  local opt = optim.Adam(m:parameters(), {lr = 0.05})
  local F = nn.functional
  local l
  for _ = 1, 300 do
    opt:zero_grad()
    l = F.mse_loss(m(x), y)
    l:backward()
    opt:step()
  end
  check(l:item() < 1e-4, "final loss " .. l:item())
  check_close(m.bias, {0.3}, {atol = 1e-2})
end)
