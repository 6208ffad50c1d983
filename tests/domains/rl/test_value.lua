-- tests/domains/rl/test_value.lua -- torch.rl.objectives.value.functional
-- (domains/rl/objectives/value/functional.lua): GAE, TD(0), TD(1) and
-- TD(lambda) against backward loops written in Python from TorchRL's
-- formulas (tests/ref/gen_rl_value.py), loop and vectorized forms, batch
-- dims, time_dim, per-step gamma/lambda, gradients, and bad input.
local VF = torch.rl.objectives.value.functional
local R = ref("rl_value")
local f64 = {dtype = torch.float64}

local function T(c, k) return torch.tensor(c[k], f64):view(c.shape) end
local function B(c, k) return torch.tensor(c[k]):view(c.shape):bool() end
local TOL = {atol = 1e-6, rtol = 1e-6}

for _, c in ipairs(R.cases) do
  local v, nv, r = T(c, "state_value"), T(c, "next_state_value"), T(c, "reward")
  local done, term = B(c, "done"), B(c, "terminated")
  local topt = c.pass_terminated and {terminated = term} or {}
  test("GAE (loop and vectorized) equals the reference: " .. c.name, function()
    for _, f in ipairs{VF.generalized_advantage_estimate, VF.vec_generalized_advantage_estimate} do
      local adv, target = f(c.gamma, c.lmbda, v, nv, r, done, topt)
      check_close(adv, T(c, "gae_advantage"), TOL)
      check_close(target, T(c, "gae_value_target"), TOL)
    end
  end)
  test("TD(lambda) and TD(1) (loop and vectorized) equal the reference: " .. c.name, function()
    for _, f in ipairs{VF.td_lambda_return_estimate, VF.vec_td_lambda_return_estimate} do
      check_close(f(c.gamma, c.lmbda, nv, r, done, topt), T(c, "td_lambda_return"), TOL)
    end
    for _, f in ipairs{VF.td1_return_estimate, VF.vec_td1_return_estimate} do
      check_close(f(c.gamma, nv, r, done, topt), T(c, "td1_return"), TOL)
    end
  end)
  test("TD(0) return and advantage equal the reference: " .. c.name, function()
    check_close(VF.td0_return_estimate(c.gamma, nv, r, term), T(c, "td0_return"), TOL)
    check_close(VF.td0_return_estimate(c.gamma, nv, r, {done = term}), T(c, "td0_return"), TOL)
    check_close(VF.td0_advantage_estimate(c.gamma, v, nv, r, term), T(c, "td0_advantage"), TOL)
  end)
end

test("per-step gamma and lambda tensors", function()
  local c = R.tensor_case
  local v, nv, r = T(c, "state_value"), T(c, "next_state_value"), T(c, "reward")
  local done, term = B(c, "done"), B(c, "terminated")
  local g, l = T(c, "gamma"), T(c, "lmbda")
  for _, f in ipairs{VF.generalized_advantage_estimate, VF.vec_generalized_advantage_estimate} do
    local adv, target = f(g, l, v, nv, r, done, {terminated = term})
    check_close(adv, T(c, "gae_advantage"), TOL)
    check_close(target, T(c, "gae_value_target"), TOL)
  end
  for _, f in ipairs{VF.td_lambda_return_estimate, VF.vec_td_lambda_return_estimate} do
    check_close(f(g, l, nv, r, done, {terminated = term}), T(c, "td_lambda_return"), TOL)
  end
end)

test("time_dim=1 takes [T, B, 1] inputs", function()
  local c = R.time_case
  local v, nv, r = T(c, "state_value"), T(c, "next_state_value"), T(c, "reward")
  local done, term = B(c, "done"), B(c, "terminated")
  for _, f in ipairs{VF.generalized_advantage_estimate, VF.vec_generalized_advantage_estimate} do
    local adv, target = f(0.9, 0.7, v, nv, r, done, {terminated = term, time_dim = 1})
    check_shape(adv, c.shape)
    check_close(adv, T(c, "gae_advantage"), TOL)
    check_close(target, T(c, "gae_value_target"), TOL)
  end
  for _, f in ipairs{VF.td_lambda_return_estimate, VF.vec_td_lambda_return_estimate} do
    check_close(f(0.9, 0.7, nv, r, done, {terminated = term, time_dim = 1}), T(c, "td_lambda_return"), TOL)
  end
end)

test("closed forms: no done gives the discounted sum; terminated at t stops bootstrapping", function()
  -- r = 1 everywhere, V' = 10, T = 3, gamma = 0.5, lambda = 1:
  -- G_3 = 1 + 0.5*10 = 6, G_2 = 1 + 0.5*6 = 4, G_1 = 1 + 0.5*4 = 3
  local r, nv = torch.ones(3, 1, f64), torch.full({3, 1}, 10.0, f64)
  local none = torch.zeros(3, 1):bool()
  check_close(VF.td1_return_estimate(0.5, nv, r, none), torch.tensor({{3.0}, {4.0}, {6.0}}, f64))
  check_close(VF.vec_td1_return_estimate(0.5, nv, r, none), torch.tensor({{3.0}, {4.0}, {6.0}}, f64))
  -- terminated at step 2: G_2 = 1, G_1 = 1 + 0.5 = 1.5, G_3 = 6
  local t2 = torch.tensor({{false}, {true}, {false}})
  check_close(VF.td1_return_estimate(0.5, nv, r, t2, {terminated = t2}), torch.tensor({{1.5}, {1.0}, {6.0}}, f64))
  -- truncated (done, not terminated) at step 2: G_2 = 1 + 0.5*10 = 6, G_1 = 1 + 0.5*6 = 4
  check_close(VF.td1_return_estimate(0.5, nv, r, t2, {terminated = none}), torch.tensor({{4.0}, {6.0}, {6.0}}, f64))
end)

test("loop and vectorized forms agree in float32 on a long batch", function()
  torch.manual_seed(3)
  local shape = {16, 200, 1}
  local v, nv, r = torch.randn(shape), torch.randn(shape), torch.randn(shape)
  local done = torch.rand(shape):lt(0.05)
  local term = done:logical_and(torch.rand(shape):lt(0.5))
  local a1, t1 = VF.generalized_advantage_estimate(0.99, 0.95, v, nv, r, done, {terminated = term})
  local a2, t2 = VF.vec_generalized_advantage_estimate(0.99, 0.95, v, nv, r, done, {terminated = term})
  check_close(a1, a2, {atol = 1e-4, rtol = 1e-5})
  check_close(t1, t2, {atol = 1e-4, rtol = 1e-5})
  check_close(VF.td_lambda_return_estimate(0.99, 0.95, nv, r, done, {terminated = term}),
              VF.vec_td_lambda_return_estimate(0.99, 0.95, nv, r, done, {terminated = term}),
              {atol = 1e-4, rtol = 1e-5})
end)

test("gradients flow to the values (float64 gradcheck)", function()
  local done = torch.tensor({{false}, {true}, {false}, {false}})
  local r = torch.randn(4, 1, f64)
  local function f(v, nv) return (VF.vec_generalized_advantage_estimate(0.9, 0.8, v, nv, r, done)) end
  local function g(v, nv) return (VF.generalized_advantage_estimate(0.9, 0.8, v, nv, r, done)) end
  local v = torch.randn(4, 1, {dtype = torch.float64, requires_grad = true})
  local nv = torch.randn(4, 1, {dtype = torch.float64, requires_grad = true})
  check(torch.autograd.gradcheck(f, {v, nv}), "vec GAE gradcheck")
  check(torch.autograd.gradcheck(g, {v, nv}), "GAE gradcheck")
  local function h(nv2) return VF.vec_td_lambda_return_estimate(0.9, 0.8, nv2, r, done) end
  check(torch.autograd.gradcheck(h, {nv}), "vec TD(lambda) gradcheck")
end)

test("bad input: clear errors naming the function and the shapes", function()
  local x = torch.zeros(2, 5, 1)
  local d = torch.zeros(2, 5, 1):bool()
  check_error(function() VF.generalized_advantage_estimate(0.9, 0.9, x, x, torch.zeros(2, 4, 1), d) end,
              "generalized_advantage_estimate: all inputs must share one shape")
  local z = torch.zeros(5)
  check_error(function() VF.vec_td_lambda_return_estimate(0.9, 0.9, z, z, z:bool()) end,
              "must have a time dim and a feature dim")
  check_error(function() VF.td_lambda_return_estimate(0.9, "a", x, x, d) end, "lmbda must be a number or a tensor")
  check_error(function() VF.td_lambda_return_estimate(0.9, 0.9, x, x, d, {time_dim = 4}) end, "time_dim must be")
  check_error(function() VF.generalized_advantage_estimate(0.9, 0.9, x, x, x, d, {termnated = d}) end, "terminated")
  check_error(function() VF.td_lambda_return_estimate(torch.ones(3), 0.9, x, x, d) end,
              "gamma must be a number or a tensor of the inputs' shape")
  check_error(function() VF.td1_return_estimate(0.9, x, x, d, {rolling_gamma = false}) end, "rolling_gamma=false")
end)
