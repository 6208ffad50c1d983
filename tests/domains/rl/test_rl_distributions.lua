-- tests/domains/rl/test_rl_distributions.lua -- torch.rl.modules'
-- distributions (domains/rl/modules/distributions.lua): TanhNormal's
-- log_prob and mode against TorchRL's definition built from torch 1.13's
-- distributions (tests/ref/gen_distributions.py), its samples' range and
-- gradients, OneHotCategorical's straight-through rsample,
-- MaskedCategorical, and bad input.
local RM = torch.rl.modules
local R = ref("distributions").tanh_normal
local f64 = {dtype = torch.float64}

local function T(t) return torch.tensor(t.data, f64):view(t.shape) end

for _, c in ipairs(R.cases) do
  test("TanhNormal log_prob and mode equal the reference: " .. c.name, function()
    local d = RM.TanhNormal(T(R.loc), T(R.scale), {low = T(c.low), high = T(c.high), upscale = c.upscale,
                                                    tanh_loc = c.tanh_loc})
    check_eq({table.unpack(d.batch_shape)}, {5})
    check_eq({table.unpack(d.event_shape)}, {2})
    check_close(d:log_prob(T(c.y)), T(c.log_prob), {atol = 1e-6, rtol = 1e-6})
    check_close(d.mode, T(c.mode), {atol = 1e-9})
    check_close(d.deterministic_sample, T(c.mode), {atol = 1e-9})
    -- safe_tanh=false (TanhTransform with a cache) gives the same densities inside the support
    local d2 = RM.TanhNormal(T(R.loc), T(R.scale), {low = T(c.low), high = T(c.high), upscale = c.upscale,
                                                     tanh_loc = c.tanh_loc, safe_tanh = false})
    check_close(d2:log_prob(T(c.y)), T(c.log_prob), {atol = 1e-6, rtol = 1e-6})
  end)
end

test("TanhNormal samples lie in [low, high] and their log_prob is finite even when saturated", function()
  torch.manual_seed(2)
  local low, high = torch.tensor({-2.0, 0.0}), torch.tensor({1.0, 3.0})
  local d = RM.TanhNormal(torch.tensor({{0.0, 0.0}, {40.0, -40.0}}), torch.ones(2, 2), {low = low, high = high})
  local s = d:sample({1000})
  check_shape(s, {1000, 2, 2})
  check(s:ge(low):all():item() and s:le(high):all():item(), "inside the bounds")
  check(d:log_prob(s):isfinite():all():item(), "finite log_prob (safe tanh)")
  local y = d:rsample()
  check(d:log_prob(y):isfinite():all():item(), "finite log_prob of rsample")
  check_eq({table.unpack(RM.TanhNormal(torch.zeros(3), 1.0).event_shape)}, {3})
  check_eq(#RM.TanhNormal(torch.zeros(3), 1.0, {event_dims = 0}).event_shape, 0)
end)

test("TanhNormal rsample and log_prob gradients (float64 gradcheck, fixed seed)", function()
  local loc = torch.randn(3, 2, {dtype = torch.float64, requires_grad = true})
  local scale = (torch.rand(3, 2, f64) + 0.5):requires_grad_()
  local function f(l, s)
    torch.manual_seed(9)
    local d = RM.TanhNormal(l, s, {low = -2.0, high = 3.0, tanh_loc = true, upscale = 2.0})
    local a = d:rsample()
    return torch.cat({a:flatten(), d:log_prob(a)})
  end
  check(torch.autograd.gradcheck(f, {loc, scale}), "TanhNormal gradcheck")
end)

test("TanhNormal: sample moments match the squashed Normal (seeded)", function()
  torch.manual_seed(4)
  -- E[tanh(X)] for X ~ N(0.5, 0.3^2) by a 400-point midpoint rule
  local n, acc = 400, 0
  for i = 1, n do
    local u = (i - 0.5) / n * 12 - 6
    acc = acc + math.tanh(0.5 + 0.3 * u) * math.exp(-u * u / 2) / math.sqrt(2 * math.pi) * (12 / n)
  end
  local d = RM.TanhNormal(torch.tensor({0.5}, f64), torch.tensor({0.3}, f64))
  local m = d:sample({40000}):mean():item()
  check(math.abs(m - acc) < 0.006, ("sample mean %g vs %g"):format(m, acc))
end)

test("scale may be a function of loc", function()
  local d = RM.TanhNormal(torch.zeros(4), function(l) return torch.full_like(l, 0.1) end)
  check_close(d.scale, torch.full({4}, 0.1))
end)

test("IndependentNormal: tanh-scaled loc, event dim, log_prob", function()
  local loc, scale = torch.tensor({{10.0, -1.0}}, f64), torch.tensor({{1.0, 2.0}}, f64)
  local d = RM.IndependentNormal(loc, scale, {tanh_loc = true, upscale = 5.0})
  local l2 = (loc / 5):tanh() * 5
  check_close(d.deterministic_sample, l2)
  -- closed form: sum of the two Normal log-densities at 0
  local x = torch.zeros(1, 2, f64)
  local want = (-(l2 * l2) / (2 * scale * scale) - scale:log() - 0.5 * math.log(2 * math.pi)):sum(-1)
  check_close(d:log_prob(x), want, {atol = 1e-12})
end)

test("OneHotCategorical: logits first, one-hot samples, straight-through gradient", function()
  local logits = torch.tensor({0.0, 1.0, 2.0}, {dtype = torch.float64, requires_grad = true})
  local d = RM.OneHotCategorical(logits)
  local s = d:rsample({4})
  check_shape(s, {4, 3})
  check_close(s:sum(-1), torch.ones(4, f64))
  check_close(d.deterministic_sample, torch.tensor({0.0, 0.0, 1.0}, f64))
  ;(s:sum(1) * torch.tensor({1.0, 0.0, 0.0}, f64)):sum():backward()
  -- d/dlogits of 4 * softmax(logits)[1] = 4 p1 (e1 - p)
  local p = torch.softmax(torch.tensor({0.0, 1.0, 2.0}, f64), 1)
  check_close(logits.grad, (torch.tensor({1.0, 0.0, 0.0}, f64) - p) * p[1] * 4, {atol = 1e-12})
  check_close(d:log_prob(torch.tensor({0.0, 1.0, 0.0}, f64)), p[2]:log(), {atol = 1e-12})
  check_error(function() RM.OneHotCategorical(logits, nil, "relaxed") end, "grad_method")
end)

test("MaskedCategorical: masked actions are never sampled and have log_prob -inf", function()
  torch.manual_seed(6)
  local mask = torch.tensor({{true, false, true, false}, {false, false, false, true}})
  local d = RM.MaskedCategorical{logits = torch.tensor({{0.0, 5.0, 1.0, 9.0}, {1.0, 2.0, 3.0, 4.0}}), mask = mask}
  local s = d:sample({500})
  check(s:select(2, 1):eq(1):logical_or(s:select(2, 1):eq(3)):all():item(), "row 1 samples in {1, 3}")
  check(s:select(2, 2):eq(4):all():item(), "row 2 always 4")
  local e1 = math.exp(0) / (math.exp(0) + math.exp(1))
  check_close(d.probs, torch.tensor({{e1, 0, 1 - e1, 0}, {0, 0, 0, 1}}), {atol = 1e-6})
  check_close(d:log_prob(torch.tensor({3, 4})), torch.tensor({math.log(1 - e1), 0.0}), {atol = 1e-6})
  check(d:log_prob(torch.tensor({2, 4}))[1]:item() == -math.huge, "masked action: -inf")
  local h = -(e1 * math.log(e1) + (1 - e1) * math.log(1 - e1))
  check_close(d:entropy(), torch.tensor({h, 0.0}), {atol = 1e-6})
  check_eq(d.deterministic_sample:totable(), {3, 4})
end)

test("bad input: errors name the distribution and the values", function()
  check_error(function() RM.TanhNormal(torch.zeros(2), 1.0, {low = 1.0, high = 0.0}) end,
              "torch.rl.modules.TanhNormal: high must be greater than low everywhere")
  check_error(function() RM.TanhNormal(torch.zeros(2), -1.0) end, "GreaterThan(lower_bound=0.0)")
  check_error(function() RM.TanhNormal(torch.zeros(2), 1.0, {event_dims = 3}) end, "event_dims must be")
  check_error(function() RM.TanhNormal(torch.zeros(2), 1.0, {lowr = 0}) end, "low")
  check_error(function() RM.TanhNormal({1, 2}, 1.0) end, "loc must be a tensor")
  check_error(function() RM.MaskedCategorical{logits = torch.zeros(2, 3), mask = torch.zeros(2, 3):bool()} end,
              "at least one allowed category")
  check_error(function() RM.MaskedCategorical{logits = torch.zeros(2, 3), mask = torch.ones(2, 4):bool()} end,
              "does not broadcast")
  check_error(function() RM.MaskedCategorical{logits = torch.zeros(3), mask = torch.ones(3):bool(), indices = 1} end,
              "sparse masks")
end)
