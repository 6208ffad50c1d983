-- bench/ops.lua -- engine benchmarks: per-op dispatch, memory-bound add and
-- sum on 16M floats (with the copy bandwidth they are measured against),
-- float32 matmul 2048x2048, softmax over rows of 4096x1024.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == name end

if want("dispatch_add16") then
  local a, b = torch.ones(16), torch.ones(16)
  B.report("dispatch_add16", B.time(function() local _ = a + b end, 200000))
end

local N = 16 * 1024 * 1024
if want("copy16M") or want("add16M") or want("sum16M") then
  local a, b, c = torch.rand and torch.rand(N) or torch.ones(N), torch.ones(N), torch.empty(N)
  if want("copy16M") then
    local s = B.time(function() c:copy_(a) end, 10)
    B.report("copy16M", s, 2 * 4 * N / s / 1e9, "GB/s")
  end
  if want("add16M") then
    local s = B.time(function() local _ = a + b end, 10)
    B.report("add16M", s, 3 * 4 * N / s / 1e9, "GB/s")
  end
  if want("sum16M") and a.sum then
    local s = B.time(function() local _ = a:sum() end, 10)
    B.report("sum16M", s, 4 * N / s / 1e9, "GB/s")
  end
end

if want("matmul2048") and torch.matmul then
  local a, b = torch.randn and torch.randn(2048, 2048) or torch.ones(2048, 2048), torch.ones(2048, 2048)
  local s = B.time(function() local _ = a:matmul(b) end, 3, 5)
  B.report("matmul2048", s, 2 * 2048 ^ 3 / s / 1e9, "GFLOP/s")
end

if want("softmax4096x1024") and torch.softmax then
  local x = torch.randn and torch.randn(4096, 1024) or torch.ones(4096, 1024)
  local s = B.time(function() local _ = torch.softmax(x, 2) end, 10)
  B.report("softmax4096x1024", s, 2 * 4 * 4096 * 1024 / s / 1e9, "GB/s")
end
