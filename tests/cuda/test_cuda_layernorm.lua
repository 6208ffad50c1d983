-- tests/cuda/test_cuda_layernorm.lua -- the fast layer norm kernels
-- (tensor/cuda/layernorm.c, layernorm.cu) against the CPU path on the same
-- random data: outputs, saved mean/rstd, and the input, weight and bias
-- gradients autograd gets, for float32, float16 and bfloat16, row lengths
-- that take the vector and the element-by-element accesses, one and many
-- threads per row (33, 384, 1000, 4100, 16384), 1 and many rows, with and
-- without weight and bias, views and the direct backward op. Rows
-- longer than the fast kernels take (70000 in test_cuda_norm.lua) use the
-- general ones. Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU layer norm tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved

local function tol(dt)
  if dt == torch.float16 or dt == torch.bfloat16 then return {atol = 3e-2, rtol = 3e-2} end
  return {atol = 2e-4, rtol = 2e-4}
end

local function same(g, c, dt, what)
  check(g.is_cuda, what .. " stays on cuda")
  check_eq(g.dtype, c.dtype, what .. " dtype")
  check_eq(g:size(), c:size(), what .. " shape")
  check_close(g:cpu():double(), c:double(), tol(dt or c.dtype))
end

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local compare = require("devcompare").new(check_eq, same)

local dts = {torch.float32, torch.float16, torch.bfloat16}

local function rnd(dt, grad, ...)
  local t = torch.randn(...):to(dt)
  if grad then t:requires_grad_() end
  return t
end

test("layer_norm forward and gradients equal the CPU's: dtypes, row lengths, rows, affine or not", function()
  torch.manual_seed(21)
  local cases = {{{64, 384}, 1}, {{1, 384}, 1}, {{3, 5, 384}, 1}, {{9, 1000}, 1}, {{17, 33}, 1}, {{1, 33}, 1},
                 {{4, 1}, 1}, {{6, 4100}, 1}, {{2, 16384}, 1}, {{5, 6, 64}, 2}, {{300, 96}, 1}}
  for _, c in ipairs(cases) do
    local shape, nn = c[1], c[2]
    local norm = {}
    for i = #shape - nn + 1, #shape do norm[#norm + 1] = shape[i] end
    for _, dt in ipairs(dts) do
      for _, mode in ipairs{"both", "none", "weight", "bias"} do
        local x = (rnd(dt, false, table.unpack(shape)) * 3 + 1):to(dt):requires_grad_()
        local w = (mode == "both" or mode == "weight") and rnd(dt, true, table.unpack(norm)) or nil
        local b = (mode == "both" or mode == "bias") and rnd(dt, true, table.unpack(norm)) or nil
        local what = ("layer_norm %s %s %s"):format(table.concat(shape, "x"), tostring(dt), mode)
        local ins = {x}
        if w then ins[#ins + 1] = w end
        if b then ins[#ins + 1] = b end
        compare(function(xx, p1, p2)
          local ww, bb = w and p1 or nil, (b and (w and p2 or p1)) or nil
          return torch.layer_norm(xx, norm, ww, bb, 1e-5)
        end, ins, dt, what)
      end
    end
  end
end)

test("layer_norm statistics: float32 mean and rstd of every row, for every input dtype", function()
  torch.manual_seed(22)
  for _, dt in ipairs(dts) do
    for _, L in ipairs{384, 33, 1000} do
      local x = (torch.randn(7, 3, L) * 2 - 1):to(dt)
      local y, m, r = torch.layer_norm(x, {L}, nil, nil, 1e-5)
      local yg, mg, rg = torch.layer_norm(x:cuda(), {L}, nil, nil, 1e-5)
      local what = ("stats %s L=%d"):format(tostring(dt), L)
      same(yg, y, dt, what .. " y")
      check_eq(mg.dtype, torch.float32, what .. " mean dtype")
      same(mg, m, torch.float32, what .. " mean")
      same(rg, r, torch.float32, what .. " rstd")
    end
  end
end)

test("layer_norm on views, misaligned rows, parameters of another dtype", function()
  torch.manual_seed(23)
  -- a transposed (non-contiguous) input
  local xt = torch.randn(384, 20):t()
  compare(function(xx) return torch.layer_norm(xx, {384}, nil, nil, 1e-5) end, {xt:requires_grad_()},
          torch.float32, "transposed input")
  -- rows starting one element past an aligned address: element-by-element accesses
  for _, dt in ipairs(dts) do
    local base = torch.randn(8 * 384 + 1):to(dt)
    local w, b = torch.randn(384), torch.randn(384)
    local xc = base:narrow(1, 2, 8 * 384):view(8, 384)
    local xg = base:cuda():narrow(1, 2, 8 * 384):view(8, 384)
    same(torch.layer_norm(xg, {384}, w:cuda(), b:cuda(), 1e-5), torch.layer_norm(xc, {384}, w, b, 1e-5), dt,
         "misaligned " .. tostring(dt))
    -- a misaligned weight
    local wb = torch.randn(385)
    same(torch.layer_norm(xg, {384}, wb:cuda():narrow(1, 2, 384), nil, 1e-5),
         torch.layer_norm(xc, {384}, wb:narrow(1, 2, 384), nil, 1e-5), dt, "misaligned weight " .. tostring(dt))
  end
  -- bfloat16 input with float32 parameters (and the gradients' dtypes follow the weight)
  local x = rnd(torch.bfloat16, true, 16, 384)
  local w, b = rnd(torch.float32, true, 384), rnd(torch.float32, true, 384)
  compare(function(xx, ww, bb) return torch.layer_norm(xx, {384}, ww, bb, 1e-5) end, {x, w, b}, torch.bfloat16,
          "bfloat16 input, float32 parameters")
  -- parameters of a third dtype, or of two dtypes: read as float32, gradients in the weight's dtype
  for _, c in ipairs{{torch.float16, torch.bfloat16, torch.bfloat16}, {torch.float32, torch.float64, torch.float64},
                     {torch.bfloat16, torch.bfloat16, torch.float32}} do
    local xx, ww, bb = rnd(c[1], true, 10, 96), rnd(c[2], true, 96), rnd(c[3], true, 96)
    compare(function(p, q, r) return torch.layer_norm(p, {96}, q, r, 1e-5) end, {xx, ww, bb}, torch.bfloat16,
            ("input %s, weight %s, bias %s"):format(tostring(c[1]), tostring(c[2]), tostring(c[3])))
  end
end)

test("the backward op called directly, and group_norm of (N, C) in one group", function()
  torch.manual_seed(24)
  for _, dt in ipairs(dts) do
    for _, L in ipairs{384, 33, 1000} do
      local x, g = torch.randn(50, L):to(dt), torch.randn(50, L):to(dt)
      local w = torch.randn(L):to(dt)
      local _, m, r = torch.layer_norm(x, {L}, w, nil, 1e-5)
      local a = {torch._backward.layer_norm(g, x, {L}, m, r, w)}
      local _, mg, rg = torch.layer_norm(x:cuda(), {L}, w:cuda(), nil, 1e-5)
      local bg = {torch._backward.layer_norm(g:cuda(), x:cuda(), {L}, mg, rg, w:cuda())}
      for i = 1, 3 do same(bg[i], a[i], dt, ("_backward.layer_norm %s L=%d result %d"):format(tostring(dt), L, i)) end
    end
  end
  for _, dt in ipairs(dts) do
    local x, w, b = rnd(dt, true, 40, 96), rnd(dt, true, 96), rnd(dt, true, 96)
    compare(function(xx, ww, bb) return torch.group_norm(xx, 1, ww, bb, 1e-5) end, {x, w, b}, dt,
            "group_norm (40, 96) one group " .. tostring(dt))
  end
end)

test("the char GPT's shape: 16384 rows of 384, float32 and bfloat16, and layer_norm under bfloat16 autocast", function()
  torch.manual_seed(25)
  for _, dt in ipairs{torch.float32, torch.bfloat16} do
    local x = rnd(dt, true, 64, 256, 384)
    local w, b = rnd(torch.float32, true, 384), rnd(torch.float32, true, 384)
    compare(function(xx, ww, bb) return torch.layer_norm(xx, {384}, ww, bb, 1e-5) end, {x, w, b}, dt,
            "gpt shape " .. tostring(dt))
  end
  -- autocast runs layer_norm in float32: a bfloat16 input gives a float32 result
  local x = torch.randn(8, 384, {device = "cuda"}):to(torch.bfloat16)
  local w = torch.randn(384, {device = "cuda"})
  local y = torch.autocast("cuda", torch.bfloat16, function() return torch.layer_norm(x, {384}, w, nil, 1e-5) end)
  check_eq(y.dtype, torch.float32, "layer_norm under bfloat16 autocast")
  same(y, torch.layer_norm(x:cpu():float(), {384}, w:cpu(), nil, 1e-5), torch.float32, "autocast values")
end)
