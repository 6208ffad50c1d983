-- tests/cuda/test_cuda_flash_fp16.lua -- the flash attention kernels on
-- CUDA in float16, as test_cuda_flash.lua does bfloat16: forward and
-- gradients against math in float32 (flashlib.lua). Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU flash attention tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved
local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/?.lua;" .. package.path
local L = require "flashlib"
L.use({check = check, check_eq = check_eq})
local F = require("torch.nn").functional
local inputs, close, compare = L.inputs, L.close, L.compare

local dt = torch.float16
for _, E in ipairs({64, 128}) do
  test(("flash forward and backward match math in float32: %s E=%d"):format(tostring(dt), E), function()
    for _, c in ipairs({
      {L = 128, S = 128}, {L = 77, S = 77}, {L = 100, S = 37}, {L = 37, S = 100}, {L = 1, S = 64}, {L = 1, S = 1},
      {L = 200, S = 200, causal = true}, {L = 77, S = 130, causal = true}, {L = 130, S = 77, causal = true},
      {L = 96, S = 80, mask = "bool"}, {L = 65, S = 70, mask = "add"},
      {L = 100, S = 100, H = 8, Hk = 2, gqa = true}, {L = 64, S = 90, H = 6, Hk = 3, gqa = true, causal = true},
    }) do
      c.E, c.grad = E, true
      compare(dt, c)
    end
  end)
end
test(("flash forward with head dim 256 matches math: %s"):format(tostring(dt)), function()
  for _, c in ipairs({{L = 100, S = 77}, {L = 130, S = 130, causal = true}, {L = 50, S = 60, mask = "bool"}}) do
    c.E = 256
    compare(dt, c)
  end
end)
