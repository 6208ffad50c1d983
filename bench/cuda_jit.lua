-- bench/cuda_jit.lua -- the CUDA JIT's figures (H100): a compiled
-- elementwise chain, gelu(x * w + b) over 64M float32 (x: 65536 x 1024,
-- w and b rows of 1024), in GB/s counting the bytes read and written
-- (x in, y out: 512 MiB), against the device's copy bandwidth measured in
-- the same run (a 64M-float device-to-device copy, same byte count), and
-- eager (three ops); then the host cost of a small compiled graph replayed
-- as a CUDA graph, against the same graph without graphs and eagerly.
-- Peer: bench/peers/cuda_jit.py (torch.compile in PyTorch, same run).

package.path = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$") or "bench") .. "/?.lua;" .. package.path
local time_ms = require("common").cuda_ms

local M, N = 65536, 1024
local n = M * N
local bytes = 2 * 4 * n
torch.manual_seed(0)
local x = torch.randn(M, N, {device = "cuda"})
local w, b = torch.randn(N, {device = "cuda"}), torch.randn(N, {device = "cuda"})
local y = torch.empty(M, N, {device = "cuda"})

local copy_ms = time_ms(function() y:copy_(x) end, 10, 5)
local copy_gbs = bytes / copy_ms / 1e6
print(("copy_64M_f32 %.1f GB/s (%.3f ms)"):format(copy_gbs, copy_ms))

local function f(a, w_, b_) return torch.nn.functional.gelu(a * w_ + b_) end
local cf = torch.compile(f)
local r
local ms = time_ms(function() r = cf(x, w, b) end, 10, 5)
local gbs = bytes / ms / 1e6
print(("jit_gelu_xwb_64M_f32 %.1f GB/s (%.3f ms) %.1f%% of copy"):format(gbs, ms, 100 * gbs / copy_gbs))
local s = torch.compiler.stats()
print(("  compiled calls %d, eager calls %d, fallbacks %d"):format(s.compiled_calls, s.eager_calls, s.fallbacks))
local err = (r - f(x, w, b)):abs():max():item()
print(("  max |compiled - eager| %.3g"):format(err))
local ems = time_ms(function() r = f(x, w, b) end, 10, 5)
print(("eager_gelu_xwb_64M_f32 %.1f GB/s (%.3f ms)"):format(bytes / ems / 1e6, ems))

-- a flat 5-op chain over 64M (no broadcast operand)
local function chain(a) return ((a * 1.5 + 0.5):relu() - a):sigmoid() * a end
local cc = torch.compile(chain)
local cms = time_ms(function() r = cc(x) end, 10, 5)
print(("jit_chain5_64M_f32 %.1f GB/s (%.3f ms) %.1f%% of copy"):format(bytes / cms / 1e6, cms,
      100 * bytes / cms / 1e6 / copy_gbs))

-- host cost of a small compiled graph (16 floats, 2 kernels: a chain and a row softmax + sum)
local xs, ws = torch.randn(4, 4, {device = "cuda"}), torch.randn(4, {device = "cuda"})
local function small(a, w_) local t = (a * w_ + 1):tanh() return t:softmax(-1):sum(-1) + t:amax(-1) end
local cs = torch.compile(small)
local function host_us(fn, calls)
  for _ = 1, 50 do fn() end
  torch.cuda.synchronize()
  local best = math.huge
  for _ = 1, 5 do
    local t0 = torch.time()
    for _ = 1, calls do fn() end
    torch.cuda.synchronize()
    best = math.min(best, (torch.time() - t0) / calls * 1e6)
  end
  return best
end
local before = torch.compiler.stats().cuda_graph_replays
local us = host_us(function() return cs(xs, ws) end, 5000)
local replays = torch.compiler.stats().cuda_graph_replays - before
print(("jit_small_graph_replay %.1f us/call (%d CUDA graph replays)"):format(us, replays))
local eus = host_us(function() return small(xs, ws) end, 5000)
print(("eager_small_graph %.1f us/call (%.2fx of replay)"):format(eus, eus / us))
