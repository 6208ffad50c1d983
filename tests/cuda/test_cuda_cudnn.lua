-- tests/cuda/test_cuda_cudnn.lua -- convolutions through cuDNN
-- (tensor/cuda/cudnn.c): grouped, depthwise and transposed convolutions,
-- 1-D to 3-D, float16/bfloat16, against the CPU's results on the same data
-- (outputs and the gradients of input, weight and bias); float32 in full
-- precision unless TF32 is allowed; deterministic gradients; the im2col
-- fallback when cuDNN is switched off or declines a problem. Skips without
-- a GPU; the cuDNN cases skip (with a note) where cuDNN is not installed.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; cuDNN tests skipped\n")
  return
end

local cudnn = torch.backends.cudnn
if not cudnn.is_available() then
  io.write("note: cuDNN not found (" .. cudnn.stats().load_error .. "); cuDNN tests skipped\n")
  return
end

-- max |g - c| <= rel * max(1, max |c|): 16-bit results round differently
-- on the two devices (the CPU rounds a float32 result once)
local REL = {[torch.float64] = 1e-10, [torch.float32] = 1e-5, [torch.float16] = 4e-3, [torch.bfloat16] = 2e-2}

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local same, compare = require("convlib").new({check = check, check_eq = check_eq}, REL)

local conv = {torch.conv1d, torch.conv2d, torch.conv3d}
local convt = {torch.conv_transpose1d, torch.conv_transpose2d, torch.conv_transpose3d}

-- {nsp, x shape, w shape, opts, transposed}
local CASES = {
  {2, {2, 8, 9, 9}, {8, 2, 3, 3}, {padding = 1, groups = 4}},
  {2, {2, 6, 10, 11}, {6, 1, 3, 3}, {stride = 2, padding = 1, groups = 6}}, -- depthwise
  {2, {3, 4, 12, 12}, {8, 4, 3, 3}, {stride = {2, 1}, padding = {2, 1}, dilation = {2, 3}}},
  {2, {2, 3, 7, 7}, {6, 3, 1, 1}, {stride = 2}},
  {1, {3, 4, 20}, {6, 2, 5}, {stride = 2, padding = 2, dilation = 2, groups = 2}},
  {3, {2, 4, 5, 6, 7}, {6, 2, 3, 3, 3}, {padding = 1, groups = 2}},
  {3, {1, 2, 6, 6, 6}, {3, 2, 2, 3, 1}, {stride = {2, 1, 1}, dilation = {1, 2, 1}}},
  {2, {2, 4, 5, 5}, {4, 3, 3, 3}, {stride = 2, padding = 1, output_padding = 1}, true},
  {2, {2, 4, 5, 5}, {4, 2, 3, 3}, {stride = 2, padding = 1, groups = 2, dilation = 2}, true},
  {1, {2, 4, 9}, {4, 3, 4}, {stride = 3, padding = 1, output_padding = 2}, true},
  {3, {1, 4, 3, 4, 3}, {4, 1, 3, 3, 3}, {stride = 2, groups = 4}, true},
  {2, {4, 9, 9}, {6, 4, 3, 3}, {padding = 1}}, -- unbatched
}

local function run_cases(dts, label, ungrouped_only)
  for i, c in ipairs(CASES) do
    if ungrouped_only and (c[4].groups or 1) > 1 then goto next end
    local f = (c[5] and convt or conv)[c[1]]
    local nout = c[5] and c[3][2] * (c[4].groups or 1) or c[3][1]
    for _, dt in ipairs(dts) do
      for _, bias in ipairs{true, false} do
        compare(function(x, w, b) return f(x, w, b, c[4]) end, c[2], c[3], bias and nout or nil, dt,
                ("%s case %d (%s%dd) %s bias=%s"):format(label, i, c[5] and "conv_transpose" or "conv", c[1],
                                                         tostring(dt), bias))
      end
    end
    ::next::
  end
end

test("cuDNN is found, reports its version and runs CUDA convolutions", function()
  check(cudnn.version() >= 8000, "version " .. tostring(cudnn.version()))
  check_eq(cudnn.enabled, true, "enabled by default")
  local before = cudnn.stats().convs
  local x, w = torch.randn(2, 3, 8, 8, {device = "cuda"}), torch.randn(4, 3, 3, 3, {device = "cuda"})
  torch.conv2d(x, w, nil, {padding = 1})
  check(cudnn.stats().convs > before, "a forward convolution went through cuDNN")
  io.write(("note: cuDNN %d\n"):format(cudnn.version()))
end)

test("grouped, depthwise, dilated, strided and transposed convolutions (1-D to 3-D) equal the CPU's", function()
  torch.manual_seed(11)
  run_cases({torch.float32, torch.float64}, "cudnn")
end)

test("float16 and bfloat16 convolutions and their gradients equal the CPU's", function()
  torch.manual_seed(12)
  run_cases({torch.float16, torch.bfloat16}, "cudnn")
end)

test("float32 is full precision by default; TF32 only when set_float32_matmul_precision allows", function()
  torch.manual_seed(13)
  local x, w = torch.randn(8, 64, 16, 16), torch.randn(64, 64, 3, 3)
  local ref = torch.conv2d(x:double(), w:double(), nil, {padding = 1})
  local function err()
    local y = torch.conv2d(x:cuda(), w:cuda(), nil, {padding = 1}):cpu():double()
    return ((y - ref):abs():max() / ref:abs():max()):item()
  end
  local e = err()
  check(e < 1e-5, ("full float32: relative error %.3g"):format(e))
  torch.set_float32_matmul_precision("high")
  local ok, e2 = pcall(err)
  torch.set_float32_matmul_precision("highest")
  check(ok, tostring(e2))
  check(e2 < 1e-2, ("TF32 allowed: relative error %.3g"):format(e2))
  io.write(("note: conv2d 64->64 relative error: float32 %.2g, TF32 allowed %.2g\n"):format(e, e2))
end)

test("gradients are deterministic: two backward passes give identical bits", function()
  torch.manual_seed(14)
  local x = torch.randn(16, 32, 20, 20, {device = "cuda"})
  local w = torch.randn(32, 8, 3, 3, {device = "cuda"})
  local g = torch.randn(16, 32, 10, 10, {device = "cuda"})
  local function grads()
    local xd, wd = x:clone():requires_grad_(), w:clone():requires_grad_()
    ;(torch.conv2d(xd, wd, nil, {stride = 2, padding = 1, groups = 4}) * g):sum():backward()
    return xd.grad, wd.grad
  end
  local gx1, gw1 = grads()
  local gx2, gw2 = grads()
  check(torch.equal(gx1, gx2), "grad input bits")
  check(torch.equal(gw1, gw2), "grad weight bits")
end)

test("switched off, convolutions take im2col + cuBLAS with the same results; grouped ones then raise", function()
  torch.manual_seed(15)
  local x, w = torch.randn(2, 4, 9, 9, {device = "cuda"}), torch.randn(6, 4, 3, 3, {device = "cuda"})
  local on = torch.conv2d(x, w, nil, {padding = 1})
  local xh, wh = x:half(), w:half()
  local onh = torch.conv2d(xh, wh, nil, {padding = 1})
  cudnn.enabled = false
  local ok, err = pcall(function()
    local st = cudnn.stats()
    check_eq(st.enabled, false, "stats say disabled")
    local off = torch.conv2d(x, w, nil, {padding = 1})
    check_close(off:cpu(), on:cpu(), {atol = 1e-4, rtol = 1e-4})
    same(torch.conv2d(xh, wh, nil, {padding = 1}), onh:cpu(), torch.float16, "float16 through the fallback")
    check_eq(cudnn.stats().convs, st.convs, "no cuDNN call while disabled")
    -- the im2col path in every direction, 16-bit floats included
    run_cases({torch.bfloat16}, "im2col", true)
    local wg = torch.randn(6, 2, 3, 3)
    same(torch.conv2d(x, wg:cuda(), nil, {groups = 2}), torch.conv2d(x:cpu(), wg, nil, {groups = 2}), torch.float32,
         "grouped, group by group through im2col")
  end)
  cudnn.enabled = true
  if not ok then error(err, 0) end
  check_eq(cudnn.enabled, true, "enabled again")
end)

test("a problem cuDNN declines (padding='same' with an even kernel) falls back and equals the CPU's", function()
  torch.manual_seed(16)
  local before = cudnn.stats().declined
  compare(function(x, w, b) return torch.conv2d(x, w, b, {padding = "same"}) end, {2, 3, 8, 8}, {4, 3, 4, 2}, 4,
          torch.float32, "same padding")
  check(cudnn.stats().declined > before, "declined counted")
  check(cudnn.stats().last_declined:find("asymmetric padding"), cudnn.stats().last_declined)
end)
