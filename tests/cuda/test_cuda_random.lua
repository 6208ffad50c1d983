-- tests/cuda/test_cuda_random.lua -- random draws made on the device by the
-- Philox kernels (tensor/cuda/random.c, random.cu): the device generator
-- reproduces the CPU's stream for the same (seed, offset), so draws are
-- compared with the CPU's (uniform and integer ones bit for bit), then
-- checked statistically (moments, quantile fractions in the style of a
-- Kolmogorov-Smirnov bound, rates), for determinism, per-device state, and
-- dropout's scaling and gradient. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU random tests skipped\n")
  return
end

local F = require "torch.nn.functional"
local nn = require "torch.nn"
local C = {device = "cuda"}

local function on(t) return t:to("cuda") end

-- draws f(opts) on the CPU and on the GPU after seeding both the same way
local function both(seed, f)
  torch.manual_seed(seed)
  local c = f({device = "cpu"})
  torch.manual_seed(seed)
  local g = f(C)
  check(g.is_cuda, "drawn on the device")
  return c, g:cpu()
end

test("uniform and integer draws equal the CPU's bit for bit, any size and dtype", function()
  for _, n in ipairs({1, 3, 15, 16, 17, 255, 257, 1000, 100003}) do
    for _, dt in ipairs({torch.float32, torch.float64, torch.float16, torch.bfloat16}) do
      local c, g = both(n, function(o) return torch.rand(n, {dtype = dt, device = o.device}) end)
      check(torch.equal(c, g), ("rand %d %s"):format(n, tostring(dt)))
      c, g = both(n, function(o) return torch.empty(n, {dtype = dt, device = o.device}):uniform_(-3, 5) end)
      check(torch.equal(c, g), "uniform_")
    end
    local c, g = both(7, function(o) return torch.randint(-5, 9, {n}, {device = o.device}) end)
    check(torch.equal(c, g), "randint small range")
    c, g = both(7, function(o) return torch.randint(-2 ^ 40, 2 ^ 41, {n}, {device = o.device}) end)
    check(torch.equal(c, g), "randint 64-bit range")
    c, g = both(7, function(o) return torch.randint(0, 100, {n}, {dtype = torch.int32, device = o.device}) end)
    check(torch.equal(c, g), "randint int32")
    c, g = both(9, function(o) return torch.empty(n, {dtype = torch.int64, device = o.device}):random_() end)
    check(torch.equal(c, g), "random_ full range")
    c, g = both(9, function(o) return torch.empty(n, {device = o.device}):bernoulli_(0.3) end)
    check(torch.equal(c, g), "bernoulli_")
  end
end)

test("normal and exponential draws match the CPU's to the last bits; strided targets", function()
  for _, n in ipairs({1, 5, 16, 33, 4099}) do
    local c, g = both(3, function(o) return torch.randn(n, {device = o.device}) end)
    check_close(g, c, {atol = 1e-5, rtol = 1e-5})
    c, g = both(3, function(o) return torch.randn(n, {dtype = torch.float64, device = o.device}) end)
    check_close(g, c, {atol = 1e-12, rtol = 1e-12})
    c, g = both(4, function(o) return torch.empty(n, {device = o.device}):normal_(2, 3) end)
    check_close(g, c, {atol = 1e-4, rtol = 1e-5})
    c, g = both(5, function(o) return torch.empty(n, {device = o.device}):exponential_(2) end)
    check_close(g, c, {atol = 1e-6, rtol = 1e-5})
    c, g = both(5, function(o) return torch.empty(n, {dtype = torch.float64, device = o.device}):exponential_(0.5) end)
    check_close(g, c, {atol = 1e-12, rtol = 1e-12})
  end
  local c, g = both(11, function(o) return torch.zeros(6, 9, {device = o.device}):t():uniform_() end)
  check(torch.equal(c, g), "a transposed view is filled like the CPU's")
  c, g = both(11, function(o) return torch.zeros(8, 10, {device = o.device}):narrow(2, 2, 5):normal_() end)
  check_close(g, c, {atol = 1e-5})
  check(torch.zeros(8, 10, C):narrow(2, 2, 5):normal_():cpu():ne(0):all():item(), "view filled")
end)

test("rand/randn/randint/_like and friends stay on the device and draw from its generator", function()
  local x = torch.zeros(4, 5, C)
  for _, t in ipairs({torch.rand_like(x), torch.randn_like(x), torch.randint_like(x, 10), torch.bernoulli(x:fill_(0.5)),
                      torch.normal(torch.zeros(3, C), torch.ones(3, C)), torch.randperm(10, C),
                      torch.multinomial(torch.ones(2, 6, C), 3)}) do
    check(t.is_cuda, "on cuda")
  end
  -- a device draw moves the device's generator only
  torch.manual_seed(1)
  local s_cpu, s_gpu = torch.get_rng_state(), torch.cuda.get_rng_state()
  torch.rand(1000, C)
  check(torch.equal(torch.get_rng_state(), s_cpu), "the CPU generator did not move")
  check(not torch.equal(torch.cuda.get_rng_state(), s_gpu), "the device generator moved")
  torch.cuda.set_rng_state(s_gpu)
  local a = torch.randn(100, C):cpu()
  torch.cuda.set_rng_state(s_gpu)
  check(torch.equal(torch.randn(100, C):cpu(), a), "set_rng_state replays")
  -- cuda.manual_seed seeds the device only; the same seed gives the same numbers run to run
  torch.cuda.manual_seed(42)
  local b1 = torch.rand(50, C):cpu()
  torch.cuda.manual_seed_all(42)
  check(torch.equal(torch.rand(50, C):cpu(), b1), "manual_seed_all")
  check_eq(torch.cuda.initial_seed(), 42)
  check_eq(#torch.cuda.get_rng_state_all(), torch.cuda.device_count())
  -- a generator of its own
  local gen = torch.Generator("cuda")
  check_eq(tostring(gen.device), "cuda:0")
  gen:manual_seed(5)
  local g1 = torch.rand(20, {device = "cuda", generator = gen}):cpu()
  gen:manual_seed(5)
  check(torch.equal(torch.rand(20, {device = "cuda", generator = gen}):cpu(), g1), "own generator replays")
  check_error(function() torch.cuda.set_rng_state(torch.zeros(3, {dtype = torch.uint8, device = "cpu"})) end,
              "16 bytes")
end)

local function var(x) -- population variance, from CUDA-ready ops
  local d = x - x:mean()
  return (d * d):mean():item()
end

-- fraction of x below each q must be F(q) within eps (a Kolmogorov-Smirnov style bound)
local function ks(x, cdf, qs, eps, what)
  for _, q in ipairs(qs) do
    local f = x:lt(q):double():mean():item()
    check(math.abs(f - cdf(q)) < eps, ("%s: P(x < %g) = %.5f, expected %.5f"):format(what, q, f, cdf(q)))
  end
end

local function phi(z) -- the standard normal CDF (erf from torch on the CPU)
  return 0.5 * (1 + torch.erf(torch.tensor(z / math.sqrt(2), {dtype = torch.float64, device = "cpu"})):item())
end

test("statistics: moments, quantile fractions and rates of 2^21 draws", function()
  torch.manual_seed(123)
  local n = 1 << 21
  local u = torch.rand(n, C)
  check(math.abs(u:double():mean():item() - 0.5) < 2e-3, "uniform mean")
  check(math.abs(var(u:double()) - 1 / 12) < 1e-3, "uniform variance")
  check(u:min():item() >= 0 and u:max():item() < 1, "uniform range")
  ks(u, function(q) return q end, {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99}, 2e-3, "uniform")
  for _, dt in ipairs({torch.float32, torch.float64}) do
    local z = torch.randn(n, {dtype = dt, device = "cuda"}):double()
    check(math.abs(z:mean():item()) < 3e-3, "normal mean")
    check(math.abs(var(z) - 1) < 5e-3, "normal variance")
    ks(z, phi, {-2.5, -1.5, -0.5, 0, 0.5, 1, 2}, 2e-3, "normal")
  end
  local e = torch.empty(n, C):exponential_(2):double()
  check(math.abs(e:mean():item() - 0.5) < 3e-3, "exponential mean 1/lambda")
  check(e:min():item() >= 0, "exponential >= 0")
  ks(e, function(q) return 1 - math.exp(-2 * q) end, {0.05, 0.2, 0.5, 1, 2}, 2e-3, "exponential")
  for _, p in ipairs({0, 0.1, 0.5, 0.93, 1}) do
    local b = torch.empty(n, C):bernoulli_(p)
    check(math.abs(b:double():mean():item() - p) < 2e-3, "bernoulli rate " .. p)
  end
  local pt = torch.rand(n, C)
  local bt = torch.bernoulli(pt)
  check(math.abs(bt:double():mean():item() - pt:double():mean():item()) < 2e-3, "bernoulli with a tensor of p")
  check(bt:le(pt:ceil()):all():item(), "p = 0 never gives 1")
  local r = torch.randint(3, 13, {n}, C)
  check(r:min():item() == 3 and r:max():item() == 12, "randint bounds")
  for v = 3, 12 do
    check(math.abs(r:eq(v):double():mean():item() - 0.1) < 2e-3, "randint uniform over values")
  end
  local nm = torch.normal(torch.full({n}, 3.0, C), torch.full({n}, 0.5, C))
  check(math.abs(nm:double():mean():item() - 3) < 2e-3 and math.abs(math.sqrt(var(nm:double())) - 0.5) < 2e-3,
        "normal(mean, std) tensors")
end)

test("dropout scales kept elements by 1/(1-p), and its gradient uses the same mask", function()
  torch.manual_seed(7)
  for _, p in ipairs({0.2, 0.5, 0.9}) do
    local x = (torch.rand(256, 512, C) + 0.5):requires_grad_(true)
    local y = F.dropout(x, p, true)
    check(y.is_cuda, "dropout on cuda")
    local kept = y:ne(0)
    local rate = 1 - kept:double():mean():item()
    check(math.abs(rate - p) < 0.01, ("drop rate %g for p = %g"):format(rate, p))
    local yc, xc, kc = y:detach():cpu(), x:detach():cpu(), kept:cpu()
    check_close(yc, xc * kc:float() / (1 - p), {atol = 1e-5, rtol = 1e-5})
    y:sum():backward()
    check_close(x.grad:cpu(), kc:float() / (1 - p), {atol = 1e-5, rtol = 1e-5})
  end
  local m = nn.Dropout(0.25):cuda()
  local x = torch.ones(1000, 100, C)
  m:train()
  check(math.abs(m(x):eq(0):double():mean():item() - 0.25) < 0.01, "nn.Dropout in training")
  m:eval()
  check(torch.equal(m(x):cpu(), x:cpu()), "nn.Dropout in eval is the identity")
  check(torch.equal(F.dropout(x, 0.0, true):cpu(), x:cpu()), "p = 0")
  check(F.dropout(x, 1.0, true):eq(0):all():item(), "p = 1")
  -- the same seed gives the same mask
  torch.manual_seed(3)
  local a = F.dropout(x, 0.5, true):cpu()
  torch.manual_seed(3)
  check(torch.equal(F.dropout(x, 0.5, true):cpu(), a), "reproducible mask")
  local d2 = F.dropout2d(torch.ones(4, 8, 5, 5, C), 0.5, true):cpu()
  check(torch.equal(d2:amax({3, 4}), d2:amin({3, 4})), "dropout2d drops whole channels")
end)

test("multinomial and randperm (drawn on the host from the device's generator)", function()
  for _, n in ipairs({1, 2, 10, 1000}) do
    local c, g = both(n, function(o) return torch.randperm(n, {device = o.device}) end)
    check(torch.equal(c, g), "randperm equals the CPU's")
    local s = g:sort()
    check(torch.equal(s, torch.arange(1, n + 1, {device = "cpu"})), "a permutation")
  end
  local w = torch.tensor({{0.1, 0, 0.3, 0.6}, {1, 1, 1, 1}}, {device = "cpu"})
  local c, g = both(2, function(o) return torch.multinomial(w:to(o.device), 3, false) end)
  check(torch.equal(c, g), "multinomial without replacement equals the CPU's")
  check(g[1]:ne(2):all():item(), "zero weight never drawn")
  torch.manual_seed(5)
  local m = torch.multinomial(on(torch.tensor({1.0, 2.0, 7.0}, {device = "cpu"})), 200000, true):cpu()
  for k, p in ipairs({0.1, 0.2, 0.7}) do
    check(math.abs(m:eq(k):double():mean():item() - p) < 5e-3, "multinomial frequencies")
  end
  check_error(function() torch.multinomial(torch.tensor({-1.0, 1.0}, C), 1) end, "multinomial: weights")
  check_error(function() torch.bernoulli(torch.tensor({0.5, 1.5}, C)) end, "probabilities must be in [0, 1]")
end)
