-- tests/tensor/test_random.lua -- the RNG and random ops (tensor/random.c).
-- Philox against the Random123 known-answer vectors; distributions against
-- closed-form moments with tolerances of 5 standard errors for the sample
-- size (chi-square tests at about p = 1e-5); reproducibility by seed, by
-- state and across thread counts; Generator objects.

local N = 200000

local function values(t) return t:double():flatten():totable() end

-- mean and (unbiased) variance of a list
local function moments(v)
  local s, n = 0, #v
  for i = 1, n do s = s + v[i] end
  local m, q = s / n, 0
  for i = 1, n do q = q + (v[i] - m) ^ 2 end
  return m, q / (n - 1)
end

local function check_near(got, want, tol, what)
  if math.abs(got - want) > tol then
    error(("%s: got %.6g, expected %.6g +- %.3g"):format(what, got, want, tol), 2)
  end
end

-- Pearson chi-square of observed counts vs expected; fails above
-- dof + 6 sqrt(2 dof) (about p = 1e-5 for these dofs).
local function check_chi2(counts, expected, what)
  local chi, dof = 0, -1
  for k, e in pairs(expected) do
    chi = chi + ((counts[k] or 0) - e) ^ 2 / e
    dof = dof + 1
  end
  for k in pairs(counts) do
    if not expected[k] then error(what .. ": unexpected value " .. tostring(k), 2) end
  end
  local limit = dof + 6 * math.sqrt(2 * dof)
  if chi > limit then error(("%s: chi-square %.1f exceeds %.1f (%d dof)"):format(what, chi, limit, dof), 2) end
end

local function same_values(a, b, what)
  local x, y = values(a), values(b)
  check(#x == #y, what .. ": sizes differ")
  for i = 1, #x do
    if x[i] ~= y[i] then error(("%s: element %d differs: %.17g vs %.17g"):format(what, i, x[i], y[i]), 2) end
  end
end

-- erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), for normal CDF bins
local function erf(x)
  local s = x < 0 and -1 or 1
  x = math.abs(x)
  local t = 1 / (1 + 0.3275911 * x)
  local y = 1 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    * math.exp(-x * x)
  return s * y
end

test("Philox4x32-10 matches the Random123 known-answer vectors", function()
  check_eq(torch._philox({0, 0, 0, 0}, {0, 0}), {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8})
  local f = 0xffffffff
  check_eq(torch._philox({f, f, f, f}, {f, f}), {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd})
  check_eq(torch._philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
    {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1})
end)

-- the state of the generator that draws on DEVICE (the CPU's, or the GPU's own)
local get_state = DEVICE == "cuda" and torch.cuda.get_rng_state or torch.get_rng_state
local set_state = DEVICE == "cuda" and torch.cuda.set_rng_state or torch.set_rng_state

test("draws use Philox block (offset + i) keyed by the seed", function()
  torch.manual_seed(0)
  -- ranges up to 2^16 take one word per value (its top bits)
  check_eq(torch.randint(0, 1 << 16, {4}):totable(), {0x6627, 0xe169, 0xbc57, 0x9b00})
  -- larger ranges take a 64-bit word per value; [0, 2^32) keeps its high half
  torch.manual_seed(0)
  check_eq(torch.randint(0, 1 << 32, {2}):totable(), {0xe169c58d, 0x9b00dbd8})
  -- the 8-lane path agrees with the scalar block, across a carry into the
  -- counter's high word: seed 0x299f31d0a4093822, offset 2^32 - 3
  local seed, off = 0x299f31d0a4093822, (1 << 32) - 3
  local st = torch.zeros(16, {dtype = torch.uint8, device = "cpu"})
  for i = 0, 7 do
    st[i + 1] = (seed >> (8 * i)) & 0xff
    st[i + 9] = (off >> (8 * i)) & 0xff
  end
  set_state(st) -- a GPU draws from its own generator, which makes the same stream
  local got = torch.randint(0, 1 << 32, {40}):totable()
  for i = 0, 39 do
    local b = off + i // 2
    local w = torch._philox({b & 0xffffffff, b >> 32, 0, 0}, {seed & 0xffffffff, seed >> 32})
    check(got[i + 1] == w[2 * (i % 2) + 2], "value " .. i + 1)
  end
end)

test("rand is uniform on [0, 1): mean, variance, range", function()
  torch.manual_seed(1)
  for _, dt in ipairs({torch.float32, torch.float64}) do
    local v = values(torch.rand(N, {dtype = dt}))
    local m, var = moments(v)
    check_near(m, 0.5, 5 * math.sqrt(1 / 12 / N), "mean " .. dt.name)
    check_near(var, 1 / 12, 5 * math.sqrt((1 / 80 - 1 / 144) / N), "variance " .. dt.name)
    local lo, hi = math.huge, -math.huge
    for i = 1, #v do lo, hi = math.min(lo, v[i]), math.max(hi, v[i]) end
    check(lo >= 0 and hi < 1 and lo < 1e-3 and hi > 1 - 1e-3, "range " .. dt.name)
  end
end)

test("uniform_(a, b) has mean (a+b)/2 and variance (b-a)^2/12", function()
  torch.manual_seed(2)
  local x = torch.empty(N, {dtype = torch.float64})
  check(rawequal(x:uniform_(-3, 5), x) or true)
  local v = values(x)
  local m, var = moments(v)
  check_near(m, 1, 5 * 8 * math.sqrt(1 / 12 / N), "mean")
  check_near(var, 64 / 12, 5 * 64 * math.sqrt((1 / 80 - 1 / 144) / N), "variance")
  for i = 1, #v do check(v[i] >= -3 and v[i] < 5, "range") end
  local h = torch.empty(1000, {dtype = torch.float16}):uniform_()
  for _, y in ipairs(values(h)) do check(y >= 0 and y < 1, "float16 range") end
end)

test("randn is standard normal: moments, tails and CDF bins", function()
  torch.manual_seed(3)
  for _, dt in ipairs({torch.float32, torch.float64}) do
    local v = values(torch.randn(N, {dtype = dt}))
    local m, var = moments(v)
    check_near(m, 0, 5 / math.sqrt(N), "mean " .. dt.name)
    check_near(var, 1, 5 * math.sqrt(2 / N), "variance " .. dt.name)
    local k4, tail, bins = 0, 0, {}
    for i = 1, #v do
      k4 = k4 + v[i] ^ 4
      if math.abs(v[i]) > 2 then tail = tail + 1 end
      local b = math.min(19, math.floor(0.5 * (1 + erf(v[i] / math.sqrt(2))) * 20))
      bins[b] = (bins[b] or 0) + 1
    end
    check_near(k4 / N, 3, 5 * math.sqrt(96 / N), "fourth moment " .. dt.name)
    local p = 0.04550026
    check_near(tail / N, p, 5 * math.sqrt(p * (1 - p) / N), "P(|z| > 2) " .. dt.name)
    local want = {}
    for b = 0, 19 do want[b] = N / 20 end
    check_chi2(bins, want, "CDF bins " .. dt.name)
  end
end)

test("normal_ and torch.normal scale and shift", function()
  torch.manual_seed(4)
  local m, var = moments(values(torch.empty(N):normal_(3, 2)))
  check_near(m, 3, 5 * 2 / math.sqrt(N), "normal_ mean")
  check_near(var, 4, 5 * 4 * math.sqrt(2 / N), "normal_ variance")
  m, var = moments(values(torch.normal(-1, 0.5, {N})))
  check_near(m, -1, 5 * 0.5 / math.sqrt(N), "normal(number, number, size) mean")
  check_near(var, 0.25, 5 * 0.25 * math.sqrt(2 / N), "normal(number, number, size) variance")
  local t = torch.normal(torch.full({N}, 10.0), 3.0)
  check_eq(t.dtype, torch.float32)
  m, var = moments(values(t))
  check_near(m, 10, 5 * 3 / math.sqrt(N), "normal(tensor, number) mean")
  check_near(var, 9, 5 * 9 * math.sqrt(2 / N), "normal(tensor, number) variance")
end)

test("normal with tensor mean and std broadcasts them", function()
  local mean = torch.tensor({{0.0}, {100.0}})
  local std = torch.tensor({0.0, 0.0, 0.0})
  local t = torch.normal(mean, std)
  check_shape(t, {2, 3})
  check_close(t, {{0, 0, 0}, {100, 100, 100}}, {atol = 0})
  check_shape(torch.normal(torch.zeros(4, {dtype = torch.float64})), {4})
  check_eq(torch.normal(0.0, torch.ones(3, {dtype = torch.float64})).dtype, torch.float64)
end)

test("exponential_ has mean 1/lambda", function()
  torch.manual_seed(5)
  for _, dt in ipairs({torch.float32, torch.float64}) do
    local v = values(torch.empty(N, {dtype = dt}):exponential_(4))
    local m, var = moments(v)
    check_near(m, 0.25, 5 * 0.25 / math.sqrt(N), "mean " .. dt.name)
    check_near(var, 1 / 16, 5 * math.sqrt(8 / 4 ^ 4 / N), "variance " .. dt.name)
    for i = 1, #v do check(v[i] >= 0, "non-negative") end
  end
end)

test("bernoulli draws 1 with probability p", function()
  torch.manual_seed(6)
  local p = 0.3
  local m = moments(values(torch.bernoulli(torch.full({N}, p))))
  check_near(m, p, 5 * math.sqrt(p * (1 - p) / N), "bernoulli(p tensor)")
  m = moments(values(torch.zeros(N, {dtype = torch.int32}):bernoulli_(0.25)))
  check_near(m, 0.25, 5 * math.sqrt(0.25 * 0.75 / N), "bernoulli_(number)")
  m = moments(values(torch.bernoulli(torch.zeros(N), 0.8)))
  check_near(m, 0.8, 5 * math.sqrt(0.8 * 0.2 / N), "bernoulli(x, p)")
  local edge = torch.bernoulli(torch.tensor({0.0, 1.0, 0.0, 1.0}))
  check_close(edge, {0, 1, 0, 1}, {atol = 0})
  check_eq(edge.dtype, torch.float32)
  local x = torch.zeros(2, 3):bernoulli_(torch.tensor({1.0, 0.0, 1.0}))
  check_close(x, {{1, 0, 1}, {1, 0, 1}}, {atol = 0})
end)

test("randint stays in [low, high) and is uniform (chi-square)", function()
  torch.manual_seed(7)
  local t = torch.randint(3, 13, {N})
  check_eq(t.dtype, torch.int64)
  local counts, want = {}, {}
  for _, v in ipairs(t:totable()) do counts[v] = (counts[v] or 0) + 1 end
  for v = 3, 12 do want[v] = N / 10 end
  check_chi2(counts, want, "randint(3, 13)")
  local u = torch.randint(256, {50000}, {dtype = torch.uint8}):totable()
  counts, want = {}, {}
  for _, v in ipairs(u) do counts[v] = (counts[v] or 0) + 1 end
  for v = 0, 255 do want[v] = 50000 / 256 end
  check_chi2(counts, want, "randint(256) uint8")
  -- a range wider than 2^32 (64-bit words)
  local big = 1 << 40
  local m = moments(values(torch.randint(-big, big, {N})))
  check_near(m, -0.5, 5 * 2 * big / math.sqrt(12 * N), "mean of randint(-2^40, 2^40)")
  for _, v in ipairs(torch.randint(-big, big, {1000}):totable()) do check(v >= -big and v < big, "big range") end
end)

test("random_ fills integers of the tensor's dtype", function()
  torch.manual_seed(8)
  for _, v in ipairs(torch.zeros(1000):random_(5):totable()) do check(v == math.floor(v) and v >= 0 and v < 5) end
  for _, v in ipairs(torch.zeros(1000, {dtype = torch.int16}):random_(-4, 4):totable()) do check(v >= -4 and v < 4) end
  local b = torch.zeros(1000, {dtype = torch.bool}):random_():totable()
  local ones = 0
  for _, v in ipairs(b) do ones = ones + (v and 1 or 0) end
  check(ones > 400 and ones < 600, "bool random_ is fair")
  for _, v in ipairs(torch.zeros(100, {dtype = torch.int8}):random_():totable()) do check(v >= 0 and v <= 127) end
end)

test("randperm is a permutation of 1..n, uniformly", function()
  torch.manual_seed(9)
  for _, n in ipairs({0, 1, 2, 1000}) do
    local p = torch.randperm(n)
    check_eq(p.dtype, torch.int64)
    local seen = {}
    for _, v in ipairs(p:totable()) do
      check(v >= 1 and v <= n and not seen[v], "randperm(" .. n .. ") value " .. v)
      seen[v] = true
    end
  end
  local counts, want = {}, {}
  for _ = 1, 12000 do
    local k = table.concat(torch.randperm(3):totable())
    counts[k] = (counts[k] or 0) + 1
  end
  for _, k in ipairs({"123", "132", "213", "231", "312", "321"}) do want[k] = 2000 end
  check_chi2(counts, want, "randperm(3) orders")
  check_eq(torch.randperm(5, {dtype = torch.float64}).dtype, torch.float64)
end)

test("multinomial with replacement draws categories by weight (1-based)", function()
  torch.manual_seed(10)
  local probs = torch.tensor({0.1, 0.0, 0.2, 0.3, 0.4})
  local t = torch.multinomial(probs, N, true)
  check_shape(t, {N})
  check_eq(t.dtype, torch.int64)
  local counts = {}
  for _, v in ipairs(t:totable()) do counts[v] = (counts[v] or 0) + 1 end
  check_chi2(counts, {[1] = 0.1 * N, [3] = 0.2 * N, [4] = 0.3 * N, [5] = 0.4 * N}, "frequencies")
  -- unnormalised weights, 2-D, method form
  local r = torch.tensor({{0.0, 5.0}, {5.0, 0.0}}):multinomial(3, {replacement = true})
  check_close(r, {{2, 2, 2}, {1, 1, 1}}, {atol = 0})
end)

test("multinomial without replacement: distinct draws, sequential probabilities", function()
  torch.manual_seed(11)
  local w = {1.0, 2.0, 3.0, 4.0}
  local R = 40000
  local p = torch.tensor({w}):expand(R, 4):contiguous()
  local t = torch.multinomial(p, 2)
  check_shape(t, {R, 2})
  local first, second = {}, {}
  for _, row in ipairs(t:totable()) do
    check(row[1] ~= row[2], "distinct")
    first[row[1]] = (first[row[1]] or 0) + 1
    second[row[2]] = (second[row[2]] or 0) + 1
  end
  local want1, want2 = {}, {}
  for j = 1, 4 do
    want1[j] = R * w[j] / 10
    local s = 0
    for i = 1, 4 do if i ~= j then s = s + w[i] / 10 * w[j] / (10 - w[i]) end end
    want2[j] = R * s
  end
  check_chi2(first, want1, "first draw")
  check_chi2(second, want2, "second draw")
  local one = {}
  for _, row in ipairs(torch.multinomial(p, 1):totable()) do one[row[1]] = (one[row[1]] or 0) + 1 end
  check_chi2(one, want1, "single draw")
  local all = torch.multinomial(torch.tensor({1.0, 1.0, 1.0, 1.0}), 4):totable()
  table.sort(all)
  check_eq(all, {1, 2, 3, 4})
end)

test("the same seed gives the same numbers", function()
  local function draw()
    return {torch.rand(100), torch.randn(100, {dtype = torch.float64}), torch.randint(0, 50, {100}),
            torch.randperm(100), torch.multinomial(torch.ones(3, 10), 4), torch.bernoulli(torch.full({100}, 0.5)),
            torch.empty(100):exponential_()}
  end
  local g = torch.manual_seed(1234)
  check_eq(g:initial_seed(), 1234)
  check_eq(torch.initial_seed(), 1234)
  local a = draw()
  torch.manual_seed(1234)
  local b = draw()
  for i = 1, #a do same_values(a[i], b[i], "draw " .. i) end
  torch.manual_seed(1235)
  local c = torch.rand(100)
  check(values(c)[1] ~= values(a[1])[1], "another seed gives other numbers")
end)

test("numbers do not depend on the thread count", function()
  local n = 100003 -- several thread chunks, not a multiple of the tile
  local saved = torch.get_num_threads()
  local function draw(threads)
    torch.set_num_threads(threads)
    torch.manual_seed(77)
    local r = {torch.rand(n), torch.randn(n), torch.randn(n, {dtype = torch.float64}), torch.randint(0, 1000, {n}),
               torch.bernoulli(torch.full({n}, 0.5)), torch.multinomial(torch.ones(2000, 7), 3),
               torch.empty(n, {dtype = torch.float16}):uniform_(), torch.arange(0, n * 0.5, 0.5)}
    torch.set_num_threads(saved)
    return r
  end
  local one, two, three = draw(1), draw(2), draw(3)
  for i = 1, #one do
    same_values(one[i], two[i], "1 vs 2 threads, draw " .. i)
    same_values(one[i], three[i], "1 vs 3 threads, draw " .. i)
  end
end)

test("get_rng_state / set_rng_state round trip", function()
  torch.manual_seed(5)
  torch.rand(7)
  local s = get_state()
  check_eq(s.dtype, torch.uint8)
  check_shape(s, {16})
  local a = torch.randn(50)
  torch.rand(3)
  set_state(s)
  same_values(torch.randn(50), a, "after set_rng_state")
  check_eq(get_state():totable(), get_state():totable())
  check_error(function() torch.set_rng_state(torch.zeros(3, {device = "cpu"})) end,
    "set_rng_state: expected the uint8 tensor of 16 bytes that get_rng_state returns, got a float32 tensor of 3")
end)

test("a Generator has its own state and leaves the default one alone", function()
  local g = torch.Generator()
  check(tostring(g):find("torch.Generator", 1, true) ~= nil)
  check_eq(tostring(g.device), "cpu")
  check(rawequal(g:manual_seed(42), g), "manual_seed returns the generator")
  check_eq(g:initial_seed(), 42)
  torch.manual_seed(1)
  local before = torch.get_rng_state():totable()
  local a = torch.rand(20, {generator = g})
  check_eq(torch.get_rng_state():totable(), before, "default generator untouched")
  local g2 = torch.Generator():manual_seed(42)
  same_values(torch.rand(20, {generator = g2}), a, "same seed, same numbers")
  local s = g:get_state()
  local b = torch.randperm(30, {generator = g})
  g:set_state(s)
  same_values(torch.randperm(30, {generator = g}), b, "generator state round trip")
  local x = torch.empty(10)
  g:set_state(s)
  x:normal_(0, 1, {generator = g})
  g2:set_state(s)
  same_values(torch.randn(10, {generator = g2}), x, "in-place ops take generator=")
  local seed = g:seed()
  check(math.type(seed) == "integer" and seed >= 0 and g:initial_seed() == seed)
  local ts = torch.seed()
  check(math.type(ts) == "integer" and torch.initial_seed() == ts)
  check(rawequal(torch.manual_seed(3), torch.default_generator), "manual_seed returns the default generator")
end)

test("in-place draws fill strided views in logical order and return x", function()
  torch.manual_seed(12)
  local y = torch.zeros(4, 6):t()
  check(not y:is_contiguous())
  local r = y:uniform_()
  check(rawequal(r, y), "returns x")
  torch.manual_seed(12)
  same_values(y, torch.zeros(6, 4):uniform_(), "strided view")
end)

test("dtypes and the _like forms", function()
  check_eq(torch.rand(3, {dtype = torch.float64}).dtype, torch.float64)
  check_eq(torch.randn(2, 2, {dtype = torch.bfloat16}).dtype, torch.bfloat16)
  check_eq(torch.randint(5, {3}, {dtype = torch.int32}).dtype, torch.int32)
  local x = torch.zeros(2, 3, {dtype = torch.float64})
  check_shape(torch.rand_like(x), {2, 3})
  check_eq(torch.randn_like(x).dtype, torch.float64)
  local r = torch.randint_like(x, 3, 5)
  check_eq(r.dtype, torch.float64)
  for _, row in ipairs(r:totable()) do for _, v in ipairs(row) do check(v == 3 or v == 4) end end
  check_shape(torch.rand({2, 5}), {2, 5})
  check_shape(torch.rand(), {})
  check_shape(torch.randint(0, 2, {}), {})
end)

test("out= and requires_grad= options", function()
  local o = torch.zeros(5)
  torch.rand(5, {out = o})
  for _, v in ipairs(o:totable()) do check(v > 0 and v < 1) end
  check_error(function() torch.randn(3, {out = torch.zeros(4)}) end, "randn: out= has shape 4 but the result has shape 3")
  if not pcall(torch.ones, 1, {requires_grad = true}) then return end
  check(torch.randn(3, {requires_grad = true}).requires_grad == true)
end)

test("errors name the op and the bad values", function()
  check_error(function() torch.rand(2, {dtype = torch.int64}) end, "rand: dtype int64 is not a floating point type")
  check_error(function() torch.randn(2, -1) end, "randn: negative dimension -1")
  check_error(function() torch.randint(5, 5, {2}) end, "randint: low (5) must be less than high (5)")
  check_error(function() torch.randint(0, 300, {2}, {dtype = torch.uint8}) end,
    "randint: range [0, 300) does not fit in uint8")
  check_error(function() torch.randint(10, 3) end, "randint: expected randint(high, size)")
  check_error(function() torch.normal(0, -1, {3}) end, "normal: std must be >= 0, got -1")
  check_error(function() torch.normal(torch.zeros(2), torch.tensor({1.0, -2.0})) end, "normal: std must be >= 0, found -2")
  check_error(function() torch.normal(0, 1) end, "normal: with numbers for mean and std, give a size")
  check_error(function() torch.bernoulli(torch.tensor({0.5, 1.5})) end, "bernoulli: probabilities must be in [0, 1], found 1.5")
  check_error(function() torch.zeros(3):bernoulli_(-0.1) end, "bernoulli_: probability must be in [0, 1], got -0.1")
  check_error(function() torch.zeros(3):uniform_(2, 1) end, "uniform_: expected from <= to")
  check_error(function() torch.zeros(3, {dtype = torch.int32}):normal_() end,
    "normal_: expected a floating point tensor, got int32")
  check_error(function() torch.zeros(3):exponential_(0) end, "exponential_: expected a finite rate lambd > 0, got 0")
  check_error(function() torch.randperm(-3) end, "randperm: n must be non-negative, got -3")
  check_error(function() torch.randperm(300, {dtype = torch.int8}) end, "randperm: int8 cannot hold the values 1..300")
  check_error(function() torch.multinomial(torch.tensor({1.0, -1.0}), 1) end,
    "multinomial: weights must be finite and >= 0, found -1 (row 1, category 2)")
  check_error(function() torch.multinomial(torch.zeros(2, 3), 1) end, "multinomial: row 1 has no positive weight")
  check_error(function() torch.multinomial(torch.tensor({1.0, 0.0, 1.0}), 3) end,
    "multinomial: cannot draw 3 samples without replacement: row 1 has only 2 categories with positive weight")
  check_error(function() torch.multinomial(torch.tensor({1.0, 1.0}), 3) end,
    "multinomial: cannot draw 3 samples without replacement from 2 categories")
  check_error(function() torch.multinomial(torch.ones(2, 2, 2), 1) end, "multinomial: probabilities must be 1-D or 2-D")
  check_error(function() torch.multinomial(torch.ones(3), 0) end, "multinomial: number of samples must be positive, got 0")
  check_error(function() torch.rand(2, {generator = 5}) end, "generator= must be a torch.Generator, got number")
  check_error(function() torch.manual_seed(1.5) end, "manual_seed: seed must be an integer, got 1.5")
end)
