-- test_resample.lua -- torch.audio's resampling: resample's sinc filters
-- against torchaudio 0.13 (tests/ref/audio_resample.lua: random signals
-- and espeak-ng speech), its gradient (torchaudio's, and finite
-- differences), the streaming Resampler against whole-signal resample,
-- soxr_hq's quality and conventions, speed and SpeedPerturbation, and
-- errors on bad input.
local F = torch.audio.functional
local T = torch.audio.transforms
local R = ref("audio_resample")

local DT = {float32 = torch.float32, float64 = torch.float64}

local function tol(dtype)
  return dtype == torch.float64 and {atol = 1e-10, rtol = 1e-10} or {atol = 1e-5, rtol = 1e-5}
end

local function input(c) return torch.tensor(c.x, {dtype = DT[c.dtype]}):reshape(c.shape) end

-- blocks of x along time (sizes cycling through `sizes`) through a Resampler, joined
local function streamed(r, x, sizes)
  local d, n, pos, k, parts = x:dim(), x.shape[x:dim()], 1, 0, {}
  while pos <= n do
    k = k % #sizes + 1
    local len = math.min(sizes[k], n - pos + 1)
    parts[#parts + 1] = r:process(x:narrow(d, pos, len))
    pos = pos + len
  end
  parts[#parts + 1] = r:flush()
  return torch.cat(parts, d)
end

-- ---- sinc resampling against torchaudio ----

test("resample matches torchaudio (hann, kaiser, options, short and batched inputs, speech)", function()
  local n = 0
  for name, c in pairs(R.cases) do
    if not c.opts.transform then
      local x = input(c)
      local opts = {}
      for k, v in pairs(c.opts) do opts[k] = v end
      local y = F.resample(x, c.orig, c.new, opts)
      check_shape(y, c.yshape)
      check(y.dtype == x.dtype, name .. ": dtype kept")
      local t = tol(x.dtype)
      -- torchaudio computes I0(beta) in float32: beta = 8.5's rounding differs from ours by an ulp (1e-7)
      if c.opts.beta and x.dtype == torch.float64 then t = {atol = 1e-10, rtol = 2e-7} end
      local ok, err = pcall(check_close, y, torch.tensor(c.y, {dtype = DT[c.dtype]}):reshape(c.yshape), t)
      check(ok, name .. ": " .. tostring(err))
      n = n + 1
    end
  end
  check(n >= 40, "cases run: " .. n)
end)

test("transforms.Resample matches torchaudio's module", function()
  for _, name in ipairs{"transform_48_16", "transform_kaiser_f64"} do
    local c = R.cases[name]
    local m = T.Resample(c.orig, c.new, {resampling_method = c.opts.resampling_method})
    local x = input(c)
    check_close(m(x), torch.tensor(c.y, {dtype = x.dtype}):reshape(c.yshape), tol(x.dtype))
  end
  local x = torch.randn(2, 50)
  check(T.Resample(16000, 16000)(x) == x, "equal rates: the waveform itself")
  check(F.resample(x, 8000, 8000) == x, "equal rates (functional)")
end)

test("resample's gradient matches torchaudio's and finite differences", function()
  for name, g in pairs(R.grads) do
    local x = torch.tensor(g.x, {dtype = torch.float64}):reshape(g.shape):requires_grad_()
    local y = F.resample(x, g.orig, g.new)
    local w = torch.tensor(g.w, {dtype = torch.float64}):reshape(y.shape)
    local loss = (y * w):sum()
    loss:backward()
    check_close(x.grad, torch.tensor(g.g, {dtype = torch.float64}):reshape(g.shape), {atol = 1e-10, rtol = 1e-10})
  end
  for _, p in ipairs{{48000, 16000}, {16000, 44100}, {3, 5}} do
    for _, method in ipairs{"sinc_interp_hann", "sinc_interp_kaiser"} do
      local x = torch.randn(2, 37, {dtype = torch.float64}):requires_grad_()
      local fn = function(t) return F.resample(t, p[1], p[2], {resampling_method = method}) end
      check(torch.autograd.gradcheck(fn, {x}), ("gradcheck %d -> %d %s"):format(p[1], p[2], method))
      if p[1] ~= 16000 then
        check(torch.autograd.gradgradcheck(fn, {x}), ("gradgradcheck %d -> %d"):format(p[1], p[2]))
      end
    end
  end
end)

test("resample is linear and keeps a low tone (closed form)", function()
  local a, b = torch.randn(3, 500, {dtype = torch.float64}), torch.randn(3, 500, {dtype = torch.float64})
  check_close(F.resample(a * 2 + b, 44100, 16000), F.resample(a, 44100, 16000) * 2 + F.resample(b, 44100, 16000),
    {atol = 1e-12, rtol = 1e-12})
  -- a 440 Hz sine at 48 kHz -> 16 kHz is the sine sampled at 16 kHz, away from the edges
  local n = 4800
  local t = torch.arange(0, n, {dtype = torch.float64}) / 48000
  local y = F.resample(torch.sin(t * (2 * math.pi * 440)), 48000, 16000)
  check_shape(y, {1600})
  local t2 = torch.arange(0, 1600, {dtype = torch.float64}) / 16000
  check_close(y:narrow(1, 200, 1200), torch.sin(t2 * (2 * math.pi * 440)):narrow(1, 200, 1200), {atol = 2e-3, rtol = 0})
end)

test("resample under torch.compile equals eager (values and gradients), strided inputs", function()
  local f = torch.compile(function(x) return F.resample(x * 2, 48000, 16000) + 1 end)
  for _ = 1, 3 do
    local x = torch.randn(2, 300)
    check_close(f(x), F.resample(x * 2, 48000, 16000) + 1, {atol = 1e-6, rtol = 1e-6})
  end
  local g = torch.compile(function(x) local y = F.resample(x, 44100, 16000); return (y * y):sum() end)
  for _ = 1, 3 do
    local x = torch.randn(2, 500, {dtype = torch.float64})
    local xc, xe = x:clone():requires_grad_(), x:clone():requires_grad_()
    g(xc):backward()
    local le = (F.resample(xe, 44100, 16000) ^ 2):sum()
    le:backward()
    check_close(xc.grad, xe.grad, {atol = 1e-12, rtol = 1e-12})
  end
  local base = torch.randn(400, 3, {dtype = torch.float64})
  local xt = base:t() -- [3, 400], not contiguous
  check(not xt:is_contiguous(), "a strided view")
  check_close(F.resample(xt, 22050, 16000), F.resample(xt:contiguous(), 22050, 16000), {atol = 0, rtol = 0})
end)

test("float16 and bfloat16 waveforms are computed in float32 and keep their dtype", function()
  local x = torch.randn(2, 300)
  for _, dt in ipairs{torch.float16, torch.bfloat16} do
    local y = F.resample(x:to(dt), 48000, 16000)
    check(y.dtype == dt, tostring(dt))
    check_close(y:float(), F.resample(x:to(dt):float(), 48000, 16000):to(dt):float(), {atol = 1e-6, rtol = 0})
  end
end)

-- ---- streaming ----

test("Resampler: blocks of any sizes give resample's samples (sinc, float32 and float64)", function()
  local pairs_ = {{48000, 16000}, {44100, 48000}, {16000, 8000}, {8000, 44100}, {3, 5}}
  local sizes = {{7, 0, 130, 1, 999}, {4096}, {333, 2, 17}}
  for _, dt in ipairs{torch.float32, torch.float64} do
    local eps = dt == torch.float64 and 1e-12 or 1e-6
    for i, p in ipairs(pairs_) do
      local x = torch.randn(2, 3, 1500 + i, {dtype = dt})
      for _, method in ipairs{"sinc_interp_hann", "sinc_interp_kaiser"} do
        local whole = F.resample(x, p[1], p[2], {resampling_method = method})
        local r = F.Resampler(p[1], p[2], {resampling_method = method})
        for _, s in ipairs(sizes) do
          local y = streamed(r, x, s)
          check_shape(y, whole.shape)
          check_close(y, whole, {atol = eps, rtol = eps})
        end
      end
    end
  end
end)

test("Resampler on speech, tiny signals and the module's stream", function()
  local one = torch.randn(2, 300, {dtype = torch.float64})
  check_close(streamed(F.Resampler(44100, 48000), one, {1}), F.resample(one, 44100, 48000), {atol = 1e-12, rtol = 1e-12})
  local c = R.cases.speech_f64_16000
  local x = input(c)
  local y = streamed(F.Resampler(c.orig, c.new), x, {512})
  check_close(y, torch.tensor(c.y, {dtype = torch.float64}):reshape(c.yshape), {atol = 1e-10, rtol = 1e-10})
  for _, n in ipairs{1, 2, 3, 40} do
    local s = torch.randn(1, n, {dtype = torch.float64})
    check_close(streamed(F.Resampler(44100, 16000), s, {1}), F.resample(s, 44100, 16000), {atol = 1e-12, rtol = 1e-12})
    check_close(streamed(F.Resampler(8000, 44100), s, {2}), F.resample(s, 8000, 44100), {atol = 1e-12, rtol = 1e-12})
  end
  local m = T.Resample(22050, 16000)
  local a = torch.randn(900, {dtype = torch.float64})
  check_close(torch.cat({m:process(a:narrow(1, 1, 450)), m:process(a:narrow(1, 451, 450)), m:flush()}, 1), m(a),
    {atol = 1e-12, rtol = 1e-12})
  m:process(a:narrow(1, 1, 10))
  m:reset()
  check_close(torch.cat({m:process(a), m:flush()}, 1), m(a), {atol = 1e-12, rtol = 1e-12})
end)

test("Resampler refuses blocks of other leading dims and a flush before any block", function()
  local r = F.Resampler(48000, 16000)
  r:process(torch.randn(2, 100))
  check_error(function() r:process(torch.randn(3, 100)) end, "leading dims")
  check_error(function() F.Resampler(48000, 16000):flush() end, "no block")
end)

-- ---- soxr_hq ----

local function rms(t) return math.sqrt((t * t):mean():item()) end

test("soxr_hq: a sine keeps its amplitude and an out-of-band tone is below -90 dB", function()
  local n = 44100
  local t = torch.arange(0, n, {dtype = torch.float64}) / 44100
  local x = torch.sin(t * (2 * math.pi * 1000))
  local y = F.resample(x, 44100, 16000, {resampling_method = "soxr_hq"})
  check_shape(y, {16000})
  local mid = y:narrow(1, 2000, 12000)
  local t2 = torch.arange(1999, 13999, {dtype = torch.float64}) / 16000
  check(math.abs(rms(mid) / (1 / math.sqrt(2)) - 1) < 1e-3, "amplitude kept: " .. rms(mid) * math.sqrt(2))
  check_close(mid, torch.sin(t2 * (2 * math.pi * 1000)), {atol = 1e-3, rtol = 0})
  -- 12 kHz is above the 8 kHz Nyquist rate of 16 kHz: it must be removed, not aliased to 4 kHz
  local xa = torch.sin((torch.arange(0, 48000, {dtype = torch.float64}) / 48000) * (2 * math.pi * 12000))
  local ya = F.resample(xa, 48000, 16000, {resampling_method = "soxr_hq"})
  local db = 20 * math.log(rms(ya:narrow(1, 1000, 14000)) / rms(xa), 10)
  check(db < -90, ("aliased tone at %.1f dB"):format(db))
end)

test("soxr_hq: lengths, dtypes, batches, and streaming gives the whole signal's samples", function()
  for _, p in ipairs{{44100, 16000}, {16000, 48000}, {48000, 44100}} do
    for _, dt in ipairs{torch.float32, torch.float64} do
      local x = torch.randn(2, 3, 4001, {dtype = dt})
      local whole = F.resample(x, p[1], p[2], {resampling_method = "soxr_hq"})
      check_shape(whole, {2, 3, (p[2] * 4001 + p[1] - 1) // p[1]})
      check(whole.dtype == dt, "dtype kept")
      -- each row alone gives the same samples (the channels do not mix)
      local row = F.resample(x[2][3], p[1], p[2], {resampling_method = "soxr_hq"})
      check_close(whole[2][3], row, {atol = 1e-6, rtol = 0})
      local eps = dt == torch.float64 and 1e-12 or 1e-6
      for _, s in ipairs{{1000}, {1, 77, 0, 513}} do
        check_close(streamed(F.Resampler(p[1], p[2], {resampling_method = "soxr_hq"}), x, s), whole,
          {atol = eps, rtol = eps})
      end
    end
  end
end)

test("soxr_hq: a batch gives each row's samples alone, bit for bit, on any number of threads", function()
  local threads = torch.get_num_threads()
  local ok, err = pcall(function()
    for _, p in ipairs{{48000, 16000}, {44100, 48000}} do
      for _, dt in ipairs{torch.float32, torch.float64} do
        -- long enough (> 2^14 samples) that the rows run on the thread team
        local x = torch.randn(5, 20000, {dtype = dt})
        local alone = {}
        torch.set_num_threads(1)
        for r = 1, 5 do alone[r] = F.resample(x[r], p[1], p[2], {resampling_method = "soxr_hq"}) end
        for _, n in ipairs{1, 2, 3} do
          torch.set_num_threads(n)
          local whole = F.resample(x, p[1], p[2], {resampling_method = "soxr_hq"})
          local streamed_y = streamed(F.Resampler(p[1], p[2], {resampling_method = "soxr_hq"}), x, {20000})
          for r = 1, 5 do
            check_close(whole[r], alone[r], {atol = 0, rtol = 0})
            check_close(streamed_y[r], alone[r], {atol = 0, rtol = 0})
          end
        end
      end
    end
  end)
  torch.set_num_threads(threads)
  if not ok then error(err, 0) end
end)

test("soxr_hq agrees with the sinc filter in the passband and refuses gradients", function()
  local t = torch.arange(0, 8000, {dtype = torch.float64}) / 16000
  local x = torch.sin(t * (2 * math.pi * 300)) + torch.sin(t * (2 * math.pi * 2000)) * 0.5
  local a = F.resample(x, 16000, 22050, {resampling_method = "soxr_hq"})
  local b = F.resample(x, 16000, 22050)
  check_close(a:narrow(1, 500, 10000), b:narrow(1, 500, 10000), {atol = 2e-3, rtol = 0})
  local xg = torch.randn(100):requires_grad_()
  check_error(function() F.resample(xg, 16000, 8000, {resampling_method = "soxr_hq"}) end, "not differentiable")
  torch.no_grad(function() F.resample(xg, 16000, 8000, {resampling_method = "soxr_hq"}) end)
end)

-- ---- speed ----

test("speed and Speed: torchaudio 2.x's formula (resample from int(factor * f) Hz to f Hz)", function()
  local x = torch.randn(2, 1000, {dtype = torch.float64})
  local lengths = torch.tensor({1000, 731}, {dtype = torch.int64})
  for _, f in ipairs{0.9, 1.0, 1.1, 1.5} do
    local y, l = F.speed(x, 16000, f, {lengths = lengths})
    local src = math.floor(f * 16000)
    check_close(y, F.resample(x, src, 16000), {atol = 0, rtol = 0})
    local g = src
    local a, b = src, 16000
    while b ~= 0 do a, b = b, a % b end
    local want = {}
    for i, n in ipairs{1000, 731} do want[i] = math.ceil(n * (16000 // a) / (src // a)) end
    check_eq(l:totable(), want)
    check(l.dtype == torch.int64, "lengths keep their dtype")
    local y2, l2 = T.Speed(16000, f)(x, lengths)
    check_close(y2, y, {atol = 0, rtol = 0})
    check_eq(l2:totable(), want)
  end
  local y, l = F.speed(x, 16000, 1.1)
  check_shape(y, {2, (10 * 1000 + 10) // 11})
  check(l == nil, "no lengths given: nil")
end)

test("SpeedPerturbation draws its factor from torch's generator", function()
  local x = torch.randn(1, 800, {dtype = torch.float64})
  local m = T.SpeedPerturbation(16000, {0.9, 1.0, 1.1})
  local seen = {}
  for s = 1, 12 do
    torch.manual_seed(s)
    local y = m(x)
    torch.manual_seed(s)
    local k = torch.randint(1, 4, {}):item()
    local want = F.speed(x, 16000, ({0.9, 1.0, 1.1})[k])
    check_close(y, want, {atol = 0, rtol = 0})
    seen[k] = true
  end
  check(seen[1] and seen[2] and seen[3], "every factor drawn")
end)

test("speed against torchaudio 2.x (tests/ref/audio_speed_2x.lua, when generated)", function()
  local f = io.open("tests/ref/audio_speed_2x.lua")
  if not f then return end
  f:close()
  for name, c in pairs(ref("audio_speed_2x")) do
    local x = torch.tensor(c.x, {dtype = torch.float64}):reshape(c.shape)
    local y, l = F.speed(x, c.orig_freq, c.factor, {lengths = torch.tensor(c.lengths, {dtype = torch.int64})})
    check_close(y, torch.tensor(c.y, {dtype = torch.float64}):reshape(c.yshape), {atol = 1e-10, rtol = 1e-10})
    check_eq(l:totable(), c.out_lengths, name)
  end
end)

-- ---- errors ----

test("bad input raises clear errors and the session goes on", function()
  local x = torch.randn(2, 100)
  check_error(function() F.resample(x, 0, 16000) end, "orig_freq must be a positive number")
  check_error(function() F.resample(x, 44100, 5512.5) end, "integer number of Hz")
  check_error(function() F.resample(torch.ones(2, 10, {dtype = torch.int64}), 2, 1) end, "floating waveform")
  check_error(function() F.resample(torch.tensor(1.0), 2, 1) end, "0-dim")
  check_error(function() F.resample(x, 2, 1, {resampling_method = "sinc_interpolation"}) end, "unknown resampling_method")
  check_error(function() F.resample(x, 2, 1, {lowpas_filter_width = 3}) end, "unknown option 'lowpas_filter_width'")
  check_error(function() F.resample(x, 2, 1, {lowpass_filter_width = 0}) end, "lowpass_filter_width")
  check_error(function() F.resample(x, 2, 1, {rolloff = -1}) end, "rolloff")
  check_error(function() F.resample("x", 2, 1) end, "expected a waveform tensor")
  check_error(function() F.speed(x, 16000, -1) end, "factor")
  check_error(function() T.SpeedPerturbation(16000, {}) end, "non-empty")
  check_error(function() F.resample(x, 10000019, 9999991) end, "too large")
  check_shape(F.resample(x, 48000, 16000), {2, 34})
end)
