-- bench/cuda_random_sort.lua -- CUDA figures for device random draws
-- (Philox), sorts and scans: ms (median of 10 after warm-up) and GB/s of
-- output written for the draws. Run: build/moontorch bench/cuda_random_sort.lua

package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local time_ms = require("common").cuda_ms

local C = {device = "cuda"}
local n = 1 << 26
local x = torch.empty(n, C)
for _, case in ipairs({{"uniform_", function() x:uniform_() end}, {"normal_", function() x:normal_() end},
                       {"bernoulli_(0.9)", function() x:bernoulli_(0.9) end}}) do
  local ms = time_ms(case[2], 10)
  print(("%-16s 2^26 float32  %7.3f ms  %6.0f GB/s"):format(case[1], ms, n * 4 / ms / 1e6))
end
local h = torch.randn(4096, 1024, C)
local F = require "torch.nn.functional"
print(("%-16s 4096x1024      %7.3f ms"):format("dropout(0.1)", time_ms(function() F.dropout(h, 0.1) end, 10)))
local cases = {
  {"sort rows", torch.randn(4096, 1024, C), function(t) torch.sort(t, 2) end},
  {"sort 1-D", torch.randn(1 << 20, C), function(t) torch.sort(t) end},
  {"topk 10 rows", torch.randn(4096, 1024, C), function(t) torch.topk(t, 10, 2) end},
  {"cumsum rows", torch.randn(4096, 4096, C), function(t) torch.cumsum(t, 2) end},
  {"cumsum cols", torch.randn(4096, 4096, C), function(t) torch.cumsum(t, 1) end},
  {"cumsum 1-D", torch.randn(1 << 24, C), function(t) torch.cumsum(t, 1) end},
}
for _, c in ipairs(cases) do
  local t = c[2]
  local shape = table.concat(t:size(), "x")
  print(("%-16s %-14s %7.3f ms"):format(c[1], shape, time_ms(function() c[3](t) end, 10)))
end
