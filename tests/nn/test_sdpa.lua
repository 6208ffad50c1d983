-- tests/nn/test_sdpa.lua -- F.scaled_dot_product_attention: both backends
-- against PyTorch 1.13's math composition (tests/ref/sdpa.lua, gen_sdpa.py),
-- the flash backend against the math backend on random float32 inputs over
-- masks, causal, GQA, odd sizes, batch ranks and tile sizes (forward and
-- gradients), the selection rule, the backend switches, dropout, and the
-- messages for bad input.
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/nn"
package.path = here .. "/?.lua;" .. package.path
local R = require "nnref"
local F = require("torch.nn").functional
local refs = ref("sdpa")
local f64 = {dtype = torch.float64}

-- The flash backend is the CPU kernel (the GPU's kernels are another
-- issue): under a GPU test device the cases about it run on the CPU.
local function cpu_test(name, fn)
  test(name, function()
    if DEVICE == "cpu" then return fn() end
    torch.set_default_device("cpu")
    local ok, err = xpcall(fn, debug.traceback)
    torch.set_default_device(DEVICE)
    if not ok then error(err, 0) end
  end)
end

-- Runs fn with only the named backend enabled.
local function with_backend(name, fn)
  local g <close> = torch.backends.sdp_kernel{flash = name == "flash", math = name == "math"}
  return fn()
end

-- Runs fn with flash tiles bq x bk.
local function with_blocks(bq, bk, fn)
  local oq, ok = torch._sdpa_blocks(bq, bk)
  local good, a, b = pcall(fn)
  torch._sdpa_blocks(oq, ok)
  if not good then error(a, 0) end
  return a, b
end

local function ref_inputs(c)
  local q, k, v = R.gen(c.q, 1), R.gen(c.k, 2), R.gen(c.v, 3)
  local o = {is_causal = c.causal, enable_gqa = c.gqa, scale = c.scale}
  if c.mask_kind == "bool" then o.attn_mask = R.gen(c.mask, 7):gt(-0.6)
  elseif c.mask_kind == "float" then o.attn_mask = R.gen(c.mask, 8) end
  return q, k, v, o
end

local names = {}
for name in pairs(refs) do names[#names + 1] = name end
table.sort(names)
for _, backend in ipairs({"flash", "math"}) do
  for _, name in ipairs(names) do
    (backend == "flash" and cpu_test or test)(("%s backend matches PyTorch's math composition: %s"):format(backend, name), function()
      local c = refs[name]
      local q, k, v, o = ref_inputs(c)
      q:requires_grad_(); k:requires_grad_(); v:requires_grad_()
      with_backend(backend, function()
        check_eq(torch.backends.sdp_selected(q, k, v, o), backend)
        local y = F.scaled_dot_product_attention(q, k, v, o)
        check_close(y, c.y, R.TOL)
        local g = torch.autograd.grad({y}, {q, k, v}, {grad_outputs = {R.gen(y:size(), 99)}})
        check_close(g[1], c.gq, R.TOL)
        check_close(g[2], c.gk, R.TOL)
        check_close(g[3], c.gv, R.TOL)
      end)
    end)
  end
end

-- float32: |a - b| <= 1e-5 * max(max|b|, 1) + 1e-5 |b| (gradients that are
-- exactly 0 in the math path, as dq for S = 1, come out as rounding noise)
local function close32(a, b, what)
  local scale = b:abs():max():item()
  check_close(a, b, {atol = 1e-5 * math.max(scale, 1), rtol = 1e-5})
end

-- Flash against math on random float32 inputs: output and input gradients.
local function compare(qs, ks, vs, o, mask_kind, mask_shape)
  local q = torch.randn(qs):requires_grad_()
  local k, v = torch.randn(ks):requires_grad_(), torch.randn(vs):requires_grad_()
  o = o or {}
  if mask_kind == "bool" then
    local m = torch.rand(mask_shape):lt(0.8)
    m:select(#mask_shape, 1):fill_(true) -- no fully masked row (NaN in both; checked elsewhere)
    o.attn_mask = m
  elseif mask_kind == "float" then
    o.attn_mask = torch.randn(mask_shape)
  end
  local y1 = with_backend("flash", function() return F.scaled_dot_product_attention(q, k, v, o) end)
  local y2 = torch._sdpa_math(q, k, v, o)
  close32(y1, y2)
  local g = torch.randn(y1:size())
  local a = torch.autograd.grad({y1}, {q, k, v}, {grad_outputs = {g}})
  local b = torch.autograd.grad({y2}, {q, k, v}, {grad_outputs = {g}})
  for i = 1, 3 do close32(a[i], b[i]) end
end

torch.manual_seed(7)
local sizes = {{1, 1}, {7, 33}, {33, 7}, {130, 130}, {130, 65}, {64, 129}}
for _, ls in ipairs(sizes) do
  local L, S = ls[1], ls[2]
  for _, mask in ipairs({"none", "bool", "float", "causal"}) do
    for _, gqa in ipairs({false, true}) do
      cpu_test(("flash matches math, float32, L=%d S=%d mask=%s gqa=%s"):format(L, S, mask, tostring(gqa)), function()
        local hq, hk = 4, gqa and 2 or 4
        local o = {enable_gqa = gqa or nil, is_causal = mask == "causal" or nil}
        local kind = (mask == "bool" or mask == "float") and mask or nil
        compare({2, hq, L, 16}, {2, hk, S, 16}, {2, hk, S, 8}, o, kind, {hq, L, S})
      end)
    end
  end
end

for rank = 2, 4 do
  cpu_test(("flash matches math for batch rank %d with broadcast masks and small tiles"):format(rank), function()
    local lead = ({{}, {3}, {2, 3}})[rank - 1]
    local function shp(...)
      local s = {}
      for _, d in ipairs(lead) do s[#s + 1] = d end
      for _, d in ipairs({...}) do s[#s + 1] = d end
      return s
    end
    with_blocks(16, 8, function()
      compare(shp(37, 8), shp(21, 8), shp(21, 5), {}, "float", {1, 21})
      compare(shp(37, 8), shp(21, 8), shp(21, 5), {}, "bool", {37, 21})
      compare(shp(37, 8), shp(45, 8), shp(45, 5), {is_causal = true})
    end)
  end)
end

cpu_test("flash matches math with the scale option and non-contiguous inputs", function()
  local q = torch.randn(2, 4, 8, 40):transpose(3, 4)
  local k = torch.randn(2, 4, 8, 50):transpose(3, 4)
  local v = torch.randn(2, 50, 4, 6):transpose(2, 3)
  local o = {scale = 0.05}
  close32(with_backend("flash", function() return F.scaled_dot_product_attention(q, k, v, o) end),
          torch._sdpa_math(q, k, v, o))
end)

cpu_test("a fully masked row gives NaN in both backends, as PyTorch's math path", function()
  local q, k, v = torch.randn(1, 3, 4), torch.randn(1, 5, 4), torch.randn(1, 5, 2)
  local m = torch.ones(3, 5):bool()
  m[2]:fill_(false)
  for _, b in ipairs({"flash", "math"}) do
    local y = with_backend(b, function() return F.scaled_dot_product_attention(q, k, v, {attn_mask = m}) end)
    check(y[1][2][1]:item() ~= y[1][2][1]:item(), b .. ": masked row should be NaN")
    check(y[1][1][1]:item() == y[1][1][1]:item(), b .. ": other rows are numbers")
  end
  local fm = torch.zeros(3, 5):masked_fill(m:logical_not(), -math.huge)
  local y = F.scaled_dot_product_attention(q, k, v, {attn_mask = fm})
  check(y[1][2][1]:item() ~= y[1][2][1]:item(), "float mask of -inf: NaN")
end)

cpu_test("selection rule: flash when it can run, else math, saying why", function()
  local q, k, v = torch.randn(2, 2, 8, 4), torch.randn(2, 2, 8, 4), torch.randn(2, 2, 8, 4)
  local sel = torch.backends.sdp_selected
  check_eq(sel(q, k, v), "flash")
  check_eq(sel(q, k, v, {is_causal = true}), "flash")
  check_eq(sel(q, k, v, {attn_mask = torch.ones(8, 8):bool()}), "flash")
  check_eq(sel(q:double(), k:double(), v:double()), "flash")
  check_eq(sel(q, k, v, {dropout_p = 0.1}), "math")
  check_eq(sel(q, k:narrow(1, 1, 1), v:narrow(1, 1, 1)), "math") -- broadcast batch dims
  check_eq(sel(q, k, v, {attn_mask = torch.zeros(8, 8):requires_grad_()}), "math")
  check_eq(sel(q:half(), k:half(), v:half()), "math")
  do
    local g <close> = torch.backends.sdp_kernel{flash = false}
    check_eq(sel(q, k, v), "math")
    check_eq(torch.backends.sdp_enabled().flash, false)
  end
  check_eq(torch.backends.sdp_enabled().flash, true) -- the guard restored it
  local g = torch.backends.sdp_kernel{math = false}
  check_eq(sel(q, k, v), "flash")
  check_error(function() sel(q, k, v, {dropout_p = 0.1}) end, "flash it has no dropout (dropout_p > 0); math is disabled")
  g:close()
  check_eq(sel(q, k, v, {dropout_p = 0.1}), "math")
  do
    local g2 <close> = torch.backends.sdp_kernel{flash = false, math = false}
    check_error(function() F.scaled_dot_product_attention(q, k, v) end, "flash is disabled; math is disabled")
  end
  check_error(function() torch.backends.sdp_kernel{fast = true} end, "unknown option 'fast'")
  if torch.cuda.is_available() then -- the CPU kernel does not take GPU tensors
    check_eq(sel(q:cuda(), k:cuda(), v:cuda()), "math")
  end
end)

test("the math backend on the suite's device equals the CPU's", function()
  local q, k, v = torch.randn(2, 3, 7, 8), torch.randn(2, 3, 9, 8), torch.randn(2, 3, 9, 5)
  local m = torch.rand(7, 9):lt(0.7)
  m:select(2, 1):fill_(true)
  for _, o in ipairs({{}, {is_causal = true}, {attn_mask = m}, {attn_mask = torch.randn(7, 9)}}) do
    local y = F.scaled_dot_product_attention(q, k, v, o)
    check_eq(tostring(y.device):match("^%a+"), DEVICE)
    local oc = {is_causal = o.is_causal, attn_mask = o.attn_mask and o.attn_mask:cpu()}
    close32(y:cpu(), torch._sdpa_math(q:cpu(), k:cpu(), v:cpu(), oc))
  end
end)

cpu_test("the flash backend records a node whose backward is the flash backward op", function()
  local q = torch.randn(1, 5, 4):requires_grad_()
  local y = F.scaled_dot_product_attention(q, torch.randn(1, 6, 4), torch.randn(1, 6, 3))
  check_eq(tostring(y.grad_fn), "<SdpaFlashBackward0>")
  local ym = torch._sdpa_math(q, torch.randn(1, 6, 4), torch.randn(1, 6, 3))
  check_eq(tostring(ym.grad_fn), "<MatmulBackward0>")
end)

test("dropout runs on the math backend with the torch RNG", function()
  local q, k, v = torch.randn(2, 6, 4), torch.randn(2, 7, 4), torch.randn(2, 7, 3)
  torch.manual_seed(123)
  local y = F.scaled_dot_product_attention(q, k, v, {dropout_p = 0.4})
  torch.manual_seed(123)
  local keep = torch.empty(2, 6, 7):bernoulli_(0.6)
  local p = (q:matmul(k:transpose(2, 3)) / 2):softmax(-1)
  check_close(y, (p * keep / 0.6):matmul(v), {atol = 1e-6, rtol = 1e-5})
  torch.manual_seed(123)
  check_close(F.scaled_dot_product_attention(q, k, v, {dropout_p = 0.4}), y, {atol = 0, rtol = 0})
end)

cpu_test("memory stays linear in L: L=S=4096 without the 64 MB score matrix", function()
  local n = 4096
  local q, k, v = torch.randn(1, n, 16), torch.randn(1, n, 16), torch.randn(1, n, 16)
  collectgarbage()
  local before = rss_mb()
  local y = F.scaled_dot_product_attention(q, k, v)
  local grown = rss_mb() - before -- the math path holds scores and probabilities: 128 MB
  check(grown < 48, ("resident memory grew by %.0f MB"):format(grown))
  check_shape(y, {1, n, 16})
  close32(y[{{}, {1, 8}}], torch._sdpa_math(q[{{}, {1, 8}}], k, v))
end)

test("bad input gives clear errors", function()
  local q, k, v = torch.randn(2, 5, 4), torch.randn(2, 6, 4), torch.randn(2, 6, 3)
  local sdpa = F.scaled_dot_product_attention
  check_error(function() sdpa(q, torch.randn(2, 6, 3), v) end, "query and key must have the same head dim")
  check_error(function() sdpa(q, k, torch.randn(2, 7, 3)) end, "key and value must have the same sequence length")
  check_error(function() sdpa(q, k, v, {attn_mask = torch.ones(4, 6):bool()}) end,
              "attn_mask of shape 4x6 does not broadcast to the scores' shape 2x5x6")
  check_error(function() sdpa(q, k, v, {attn_mask = torch.ones(3, 5, 6):bool()}) end, "does not broadcast")
  check_error(function() sdpa(q, k, v, {attn_mask = torch.ones(5, 6):long()}) end,
              "attn_mask must be bool (true = attend) or the query's dtype float32")
  check_error(function() sdpa(q:long(), k:long(), v:long()) end, "must share one floating dtype")
  check_error(function() sdpa(q, k:double(), v) end, "got float32, float64 and float32")
  check_error(function() sdpa(q, k, v, {is_causal = true, attn_mask = torch.ones(5, 6):bool()}) end,
              "either attn_mask or is_causal")
  check_error(function() sdpa(q, k, v, {dropout_p = 1}) end, "dropout_p must be in [0, 1)")
  check_error(function() sdpa(torch.randn(1, 3, 5, 4), torch.randn(1, 2, 6, 4), torch.randn(1, 2, 6, 3),
                              {enable_gqa = true}) end, "dividing the query's")
  check_error(function() sdpa(torch.randn(1, 4, 5, 4), torch.randn(1, 2, 6, 4), torch.randn(1, 2, 6, 3)) end,
              "do not broadcast")
  check_error(function() sdpa(torch.randn(4), k, v) end, "query must have at least 2 dims")
  check_error(function() sdpa(q, k, v, {scale = -1}) end, "scale must be a positive number")
  check_error(function() sdpa(q, k, v, {attn_mask = 3}) end, "attn_mask must be a tensor or nil")
end)

cpu_test("double backward through the flash backend (create_graph)", function()
  local q = torch.randn({1, 2, 5, 3}, f64):requires_grad_()
  local k = torch.randn({1, 2, 6, 3}, f64):requires_grad_()
  local v = torch.randn({1, 2, 6, 2}, f64):requires_grad_()
  check(torch.autograd.gradgradcheck(function(a, b, c)
    return with_backend("flash", function() return F.scaled_dot_product_attention(a, b, c, {is_causal = true}) end)
  end, {q, k, v}))
end)
