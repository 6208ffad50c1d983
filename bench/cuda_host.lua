-- bench/cuda_host.lua -- host time of small CUDA ops: what the CPU spends
-- per op (dispatch, checks, allocation, kernel lookup, the launch) on
-- 16-element tensors. Launches go out 200 at a time after a sync, below the
-- launch queue's depth, so the GPU never pushes back and the figure is
-- host work only; median of 100 rounds, in microseconds per op.
-- Peer: bench/peers/cuda_host.py (run both in one call on the GPU machine).
local a, b = torch.randn(16, {device = "cuda"}), torch.randn(16, {device = "cuda"})

-- host us per call: 200 calls after a sync (wall: up to the end of the
-- following sync, so deferred work is counted too)
local function host_us(fn, wall)
  for _ = 1, 1000 do fn() end
  local ts = {}
  for r = 1, 100 do
    torch.cuda.synchronize()
    local t0 = torch.time()
    for _ = 1, 200 do fn() end
    if wall then torch.cuda.synchronize() end
    ts[r] = (torch.time() - t0) / 200 * 1e6
  end
  torch.cuda.synchronize()
  table.sort(ts)
  return ts[50]
end

local rows = {
  {"add", function() local c = a + b end},
  {"mul_scalar", function() local c = a * 2 end},
  {"relu", function() local c = a:relu() end},
  {"add_inplace", function() a:add_(b) end},
  {"sum", function() local c = a:sum() end},
  {"chain3", function() local c = (a * 2 + b):relu() end}, -- three dependent ops per call
}
-- eager elementwise ops wait and go out fused (tensor/cuda/lazy.c); the
-- _nolazy rows launch each op alone, the _wall rows include the GPU's part
for _, r in ipairs(rows) do print(("small_%s_host_us %.2f"):format(r[1], host_us(r[2]))) end
print(("small_add_wall_us %.2f"):format(host_us(rows[1][2], true)))
print(("small_chain3_wall_us %.2f"):format(host_us(rows[6][2], true)))
local was = torch.cuda.lazy_fusion(false)
print(("small_add_nolazy_host_us %.2f"):format(host_us(rows[1][2])))
print(("small_chain3_nolazy_host_us %.2f"):format(host_us(rows[6][2])))
print(("small_add_nolazy_wall_us %.2f"):format(host_us(rows[1][2], true)))
torch.cuda.lazy_fusion(was)
-- the driver's part: cuLaunchKernel of an empty kernel alone
local ts = {}
for r = 1, 100 do ts[r] = torch.cuda._launch_cost(200) end
table.sort(ts)
print(("empty_launch_host_us %.2f"):format(ts[50]))
