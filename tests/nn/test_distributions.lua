-- tests/nn/test_distributions.lua -- torch.distributions (nn/distributions/):
-- log_prob, cdf, entropy, moments and kl_divergence against torch 1.13
-- (tests/ref/gen_distributions.py), gradients of rsample by finite
-- differences (gradcheck), sample statistics against closed-form moments,
-- shapes, and the errors of validate_args.
local D = torch.distributions
local R = ref("distributions")
local f64 = {dtype = torch.float64}
local TOL = {atol = 1e-6, rtol = 1e-6}

local function T(t)
  local x = torch.tensor(t.data, f64)
  return x:view(t.shape)
end
local function L(t) return T(t):long() end

test("Normal: log_prob, cdf, entropy, moments", function()
  local r = R.normal
  local n = D.Normal(T(r.loc), T(r.scale))
  check_eq({table.unpack(n.batch_shape)}, {2, 3})
  check_eq(#n.event_shape, 0)
  check_close(n:log_prob(T(r.x)), T(r.log_prob), TOL)
  check_close(n:cdf(T(r.x)), T(r.cdf), TOL)
  check_close(n:entropy(), T(r.entropy), TOL)
  check_close(n.variance, T(r.variance), TOL)
  check_close(n.mean, T(r.loc))
  check_close(n.stddev, T(r.scale))
  check_close(n.mode, T(r.loc))
end)

test("Normal with numbers: scalars broadcast, default dtype", function()
  local n = D.Normal(0, 1)
  check_eq(#n.batch_shape, 0)
  check(n.loc.dtype == torch.float32, "numbers become default-dtype tensors")
  check_close(n:log_prob(torch.tensor({0.0, 1.0})), torch.tensor({-0.9189385, -1.4189385}), {atol = 1e-6})
  local m = D.Normal(torch.zeros(3, f64), 2)
  check(m.scale.dtype == torch.float64, "a number takes the tensor argument's dtype")
  check_shape(m.scale, {3})
end)

test("Independent: sums log_prob and entropy over reinterpreted dims", function()
  local r = R.normal
  local d = D.Independent(D.Normal(T(r.loc), T(r.scale)), 1)
  check_eq({table.unpack(d.batch_shape)}, {2})
  check_eq({table.unpack(d.event_shape)}, {3})
  check_close(d:log_prob(T(r.x)), T(R.independent.log_prob), TOL)
  check_close(d:entropy(), T(R.independent.entropy), TOL)
  check(d.has_rsample, "Independent of Normal has rsample")
  check_shape(d:rsample({5}), {5, 2, 3})
end)

test("Categorical: probs and logits, 1-based values, entropy with zero probs", function()
  local r = R.categorical
  local cp = D.Categorical(T(r.probs))
  local cl = D.Categorical{logits = T(r.logits)}
  local v = L(r.values)
  check_close(cp.probs, T(r.p_probs), TOL)
  check_close(cp.logits, T(r.p_logits), TOL)
  check_close(cp:log_prob(v), T(r.p_log_prob), TOL)
  check_close(cp:entropy(), T(r.p_entropy), TOL)
  check_close(cl.probs, T(r.l_probs), TOL)
  check_close(cl:log_prob(v), T(r.l_log_prob), TOL)
  check_close(cl:entropy(), T(r.l_entropy), TOL)
  check_eq(cp.mode:totable(), L(r.p_mode):totable())
  check_eq(cl.mode:totable(), L(r.l_mode):totable())
  check(cp.mean:isnan():all():item(), "mean is NaN as in PyTorch")
  check_eq(cp:enumerate_support():totable(), {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}})
end)

test("Categorical samples are 1-based int64 indices with the right frequencies", function()
  torch.manual_seed(5)
  local p = torch.tensor({0.1, 0.2, 0.7})
  local s = D.Categorical(p):sample({20000})
  check(s.dtype == torch.int64, "int64 samples")
  check_shape(s, {20000})
  check(s:min():item() == 1 and s:max():item() == 3, "values in 1..3")
  for k = 1, 3 do
    local f = s:eq(k):double():mean():item()
    -- binomial standard error sqrt(p(1-p)/n) <= 0.0035; 5 sigma
    check(math.abs(f - p[k]:item()) < 0.018, ("frequency of %d: %g vs %g"):format(k, f, p[k]:item()))
  end
  check_shape(D.Categorical(torch.ones(2, 5)):sample({3, 4}), {3, 4, 2})
end)

test("OneHotCategorical: one-hot log_prob, entropy, variance, samples", function()
  local r = R.categorical
  local d = D.OneHotCategorical(T(r.probs))
  local oh = F.one_hot(L(r.values), 4):double()
  check_close(d:log_prob(oh), T(R.one_hot.log_prob), TOL)
  check_close(d:entropy(), T(R.one_hot.entropy), TOL)
  check_close(d.variance, T(R.one_hot.variance), TOL)
  check_eq({table.unpack(d.event_shape)}, {4})
  local s = d:sample({7})
  check_shape(s, {7, 3, 4})
  check_close(s:sum(-1), torch.ones(7, 3, f64))
end)

test("OneHotCategoricalStraightThrough: rsample carries the gradient of probs", function()
  local p = torch.tensor({0.2, 0.3, 0.5}, {dtype = torch.float64, requires_grad = true})
  local d = D.OneHotCategoricalStraightThrough(p)
  local s = d:rsample()
  check_close(s:sum(), torch.tensor(1.0, f64))
  local w = torch.tensor({1.0, 2.0, 3.0}, f64)
  ;(s * w):sum():backward()
  -- probs = p / sum(p) with sum(p) = 1: d(probs . w)/dp = w - (p . w)
  local pw = (torch.tensor({0.2, 0.3, 0.5}, f64) * w):sum()
  check_close(p.grad, w - pw, TOL)
end)

test("Bernoulli: probs and logits, log_prob, entropy, mode with NaN at 0.5", function()
  local r = R.bernoulli
  local b1, b2 = D.Bernoulli(T(r.probs)), D.Bernoulli{logits = T(r.logits)}
  check_close(b1:log_prob(T(r.values)), T(r.p_log_prob), TOL)
  check_close(b1:entropy(), T(r.p_entropy), TOL)
  check_close(b1.logits, T(r.p_logits), TOL)
  check_close(b1.mode, T(r.p_mode), {equal_nan = true})
  check_close(b1.variance, T(r.p_variance), TOL)
  check_close(b2:log_prob(T(r.values)), T(r.l_log_prob), TOL)
  check_close(b2:entropy(), T(r.l_entropy), TOL)
  check_close(b2.probs, T(r.l_probs), TOL)
  torch.manual_seed(1)
  local s = D.Bernoulli(torch.full({40000}, 0.3)):sample()
  check(math.abs(s:mean():item() - 0.3) < 0.012, "Bernoulli(0.3) sample mean " .. s:mean():item())
end)

test("Uniform: log_prob, cdf, entropy, moments, rsample in range", function()
  local r = R.uniform
  local u = D.Uniform(T(r.low), T(r.high))
  check_close(u:log_prob(T(r.x)), T(r.log_prob), TOL)
  check_close(u:cdf(T(r.x)), T(r.cdf), TOL)
  check_close(u:entropy(), T(r.entropy), TOL)
  check_close(u.mean, T(r.mean), TOL)
  check_close(u.stddev, T(r.stddev), TOL)
  check_close(u.variance, T(r.variance), TOL)
  local s = u:rsample({1000})
  check(s:ge(T(r.low)):all():item() and s:lt(T(r.high)):all():item(), "samples inside [low, high)")
end)

test("transforms: forward, inverse and log|det J| of Tanh, Sigmoid, Exp, Affine", function()
  local r = R.transforms
  local x, y = T(r.x), T(r.y)
  check_close(D.TanhTransform()(x), T(r.tanh), TOL)
  check_close(D.TanhTransform().inv(y), T(r.tanh_inv), TOL)
  check_close(D.TanhTransform():log_abs_det_jacobian(x, x:tanh()), T(r.tanh_ladj), TOL)
  check_close(D.SigmoidTransform():log_abs_det_jacobian(x, x:sigmoid()), T(r.sigmoid_ladj), TOL)
  check_close(D.SigmoidTransform().inv(x:sigmoid()), T(r.sigmoid_inv), TOL)
  check_close(D.ExpTransform():log_abs_det_jacobian(x, x:exp()), T(r.exp_ladj), TOL)
  local a = D.AffineTransform(torch.tensor({0.5, -1.0, 2.0}, f64), torch.tensor({2.0, -0.5, 3.0}, f64))
  check_close(a(x), T(r.affine), TOL)
  check_close(a.inv(x), T(r.affine_inv), TOL)
  check_close(a:log_abs_det_jacobian(x, a(x)), T(r.affine_ladj), TOL)
  local a1 = D.AffineTransform(torch.tensor({0.5, -1.0, 2.0}, f64), torch.tensor({2.0, -0.5, 3.0}, f64),
                               {event_dim = 1})
  check_close(a1:log_abs_det_jacobian(x, a1(x)), T(r.affine_ed1_ladj), TOL)
  check(a.inv.inv == a, "t.inv.inv is t")
end)

test("TanhTransform with cache_size=1 inverts its own output exactly (no atanh of 1)", function()
  local t = D.TanhTransform({cache_size = 1})
  local x = torch.tensor({30.0, -30.0, 0.5}, f64)
  local y = t(x)
  check(rawequal(t.inv(y), x), "cached inverse returns x itself")
  check(not D.TanhTransform().inv(y):isfinite():all():item(), "uncached atanh(+-1) is infinite")
end)

test("TransformedDistribution: change of variables for Tanh, Exp, Sigmoid+Affine", function()
  local r, rn = R.transformed, R.normal
  local base = D.Normal(T(rn.loc), T(rn.scale))
  local tn = D.TransformedDistribution(base, {D.TanhTransform()})
  check_close(tn:log_prob(T(r.tanh_x)), T(r.tanh_log_prob), {atol = 1e-6, rtol = 1e-6})
  local ln = D.TransformedDistribution(base, D.ExpTransform())
  check_close(ln:log_prob(T(r.exp_x)), T(r.exp_log_prob), TOL)
  check_close(ln:cdf(T(r.exp_x)), T(r.exp_cdf), TOL)
  local sa = D.TransformedDistribution(D.Independent(base, 1), {D.SigmoidTransform(), D.AffineTransform(-1.0, 4.0)})
  check_eq({table.unpack(sa.batch_shape)}, {2})
  check_eq({table.unpack(sa.event_shape)}, {3})
  check_close(sa:log_prob(T(r.sa_x)), T(r.sa_log_prob), TOL)
  check_shape(sa:rsample({4}), {4, 2, 3})
end)

test("kl_divergence: Normal, Independent, Categorical (with zeros), OneHot, Bernoulli, Uniform", function()
  local r, rn, rc = R.kl, R.normal, R.categorical
  local n = D.Normal(T(rn.loc), T(rn.scale))
  local n2 = D.Normal(T(r.loc2), T(r.scale2))
  check_close(D.kl_divergence(n, n2), T(r.normal), TOL)
  check_close(D.kl_divergence(D.Independent(n, 1), D.Independent(n2, 1)), T(r.independent), TOL)
  local cp = D.Categorical(T(rc.probs))
  check_close(D.kl_divergence(cp, D.Categorical(T(r.probs2))), T(r.categorical), TOL)
  check_close(D.kl_divergence(cp, D.Categorical(T(r.probs3))), T(r.categorical_zero), TOL)
  check_close(D.kl_divergence(D.OneHotCategorical(T(rc.probs)), D.OneHotCategorical(T(r.probs2))), T(r.one_hot), TOL)
  check_close(D.kl_divergence(D.Bernoulli(T(R.bernoulli.probs)), D.Bernoulli{logits = T(R.bernoulli.logits)}),
              T(r.bernoulli), TOL)
  local ru = R.uniform
  check_close(D.kl_divergence(D.Uniform(T(ru.low), T(ru.high)), D.Uniform(T(r.low2), T(r.high2))), T(r.uniform), TOL)
  check_error(function() D.kl_divergence(n, cp) end, "no closed form is registered for KL(Normal || Categorical)")
end)

test("rsample gradients: Normal, Uniform, TransformedDistribution (gradcheck)", function()
  local function seeded(f) return function(...) torch.manual_seed(42); return f(...) end end
  local loc = torch.randn(3, {dtype = torch.float64, requires_grad = true})
  local scale = (torch.rand(3, f64) + 0.5):requires_grad_()
  check(torch.autograd.gradcheck(seeded(function(l, s) return D.Normal(l, s):rsample({2}) end), {loc, scale}),
        "Normal rsample")
  local lo = torch.tensor({-1.0, 0.0}, {dtype = torch.float64, requires_grad = true})
  local hi = torch.tensor({1.0, 2.0}, {dtype = torch.float64, requires_grad = true})
  check(torch.autograd.gradcheck(seeded(function(a, b) return D.Uniform(a, b):rsample({3}) end), {lo, hi}),
        "Uniform rsample")
  check(torch.autograd.gradcheck(seeded(function(l, s)
    local d = D.TransformedDistribution(D.Normal(l, s), {D.TanhTransform(), D.AffineTransform(0.5, 2.0)})
    local y = d:rsample({2})
    return d:log_prob(y)
  end), {loc, scale}), "TransformedDistribution rsample + log_prob")
  check(torch.autograd.gradcheck(function(l, s) return D.Normal(l, s):entropy() + D.Normal(l, s):log_prob(l * 0.5) end,
                                 {loc, scale}), "Normal log_prob and entropy")
end)

test("sample statistics: Normal and Uniform moments within bounds for fixed seeds", function()
  torch.manual_seed(123)
  local n = D.Normal(torch.tensor({1.0, -2.0}, f64), torch.tensor({0.5, 3.0}, f64))
  local s = n:sample({50000})
  local m, v = s:mean(1), s:var(1)
  -- standard errors: sigma/sqrt(n) for the mean, sigma^2 sqrt(2/(n-1)) for the variance; 5 of each
  check_close(m, n.mean, {atol = 5 * 3 / math.sqrt(50000), rtol = 0})
  check(((v - n.variance):abs() / n.variance):max():item() < 5 * math.sqrt(2 / 49999), "Normal variance")
  local u = D.Uniform(torch.tensor(-1.0, f64), torch.tensor(3.0, f64))
  local su = u:sample({50000})
  check(math.abs(su:mean():item() - 1.0) < 5 * math.sqrt(16 / 12 / 50000), "Uniform mean")
  check(math.abs(su:var():item() - 16 / 12) < 0.05, "Uniform variance")
  check(s.requires_grad == false, "sample() carries no gradient")
end)

test("shapes: sample_shape, expand, batch and event shapes", function()
  local n = D.Normal(torch.zeros(2, 3), 1)
  check_shape(n:sample(), {2, 3})
  check_shape(n:sample(5), {5, 2, 3})
  check_shape(n:rsample({4, 5}), {4, 5, 2, 3})
  local e = n:expand({7, 2, 3})
  check_eq({table.unpack(e.batch_shape)}, {7, 2, 3})
  check_shape(e:sample(), {7, 2, 3})
  check_shape(e:log_prob(torch.zeros(2, 3)), {7, 2, 3})
  local c = D.Categorical(torch.ones(3, 4)):expand({5, 3})
  check_shape(c:sample(), {5, 3})
  check_shape(D.Independent(D.Normal(torch.zeros(2, 3), 1), 2):sample({4}), {4, 2, 3})
end)

test("validate_args: bad parameters and values raise errors naming the distribution", function()
  check_error(function() D.Normal(torch.zeros(2), torch.tensor({1.0, -1.0})) end,
              "torch.distributions.Normal: expected parameter scale (tensor of shape (2,)) to satisfy the "
              .. "constraint GreaterThan(lower_bound=0.0)")
  check_error(function() D.Categorical(torch.tensor({0.5, -0.1, 0.6})) end, "constraint Simplex()")
  check_error(function() D.Categorical(torch.tensor({0.5, 0.5}), torch.zeros(2)) end, "either probs or logits")
  check_error(function() D.Categorical(torch.tensor(1.0)) end, "at least one dimension")
  check_error(function() D.Bernoulli(1.5) end, "Interval(lower_bound=0.0, upper_bound=1.0)")
  check_error(function() D.Uniform(1.0, 0.0) end, "Uniform is not defined when low >= high")
  check_error(function() D.Categorical(torch.ones(3)):log_prob(torch.tensor({4})) end,
              "to be within the support (IntegerInterval(lower_bound=1, upper_bound=3))")
  check_error(function() D.Categorical(torch.ones(3)):log_prob(torch.tensor({0})) end, "within the support")
  check_error(function() D.Normal(torch.zeros(3), 1):log_prob(torch.zeros(2)) end,
              "the value (shape (2,)) does not broadcast with batch_shape + event_shape (3,)")
  check_error(function() D.Bernoulli(0.5):log_prob(torch.tensor(0.5)) end, "Boolean()")
  check_error(function() D.Normal(torch.zeros(2), torch.zeros(3) + 1) end, "do not broadcast")
  check_error(function() D.Normal("a", 1) end, "loc must be a tensor or a number")
  check_error(function() D.Normal(0, 1, {validate_arg = false}) end, "validate_args")
  check_error(function() D.Independent(D.Normal(torch.zeros(2), 1), 2) end, "reinterpreted_batch_ndims")
  check_error(function() D.Normal(0, 1):sample({-1}) end, "sample_shape must hold non-negative integers")
  check_error(function() D.Bernoulli(0.5):rsample() end, "does not implement rsample")
  -- validate_args=false skips the checks
  local n = D.Normal(0, -1, false)
  check(n.scale:item() == -1, "unchecked")
  D.Distribution.set_default_validate_args(false)
  local ok = pcall(D.Normal, 0, -1)
  D.Distribution.set_default_validate_args(true)
  check(ok, "set_default_validate_args(false) turns validation off")
end)

test("probs first needed inside sample() still carry gradients (lazy properties use enable_grad)", function()
  local logits = torch.tensor({0.0, 1.0, 2.0}, {dtype = torch.float64, requires_grad = true})
  local c = D.Categorical{logits = logits}
  c:sample({2})
  check(c.probs.requires_grad, "probs computed under sample's no_grad keep their graph")
  c.probs[1]:backward()
  local p = torch.softmax(torch.tensor({0.0, 1.0, 2.0}, f64), 1)
  check_close(logits.grad, (torch.tensor({1.0, 0.0, 0.0}, f64) - p) * p[1], {atol = 1e-12})
end)
