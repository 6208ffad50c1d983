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
L.dtype_tests(test, torch.float16)
