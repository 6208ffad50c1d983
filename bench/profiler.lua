-- bench/profiler.lua -- the cost of torch.profiler on the Fashion-MNIST CNN
-- training step (the model of bench/train.lua: batch 64, Adam): median step
-- time without a profile and inside profile{record_shapes=true,
-- profile_memory=true}, the two measured alternately, and the overhead in
-- percent. Ours only (no PyTorch peer), so bench/run leaves it out:
--   build/moontorch bench/profiler.lua [steps] [rounds]
-- On a machine shared with other jobs, OMP_NUM_THREADS=1 keeps the step
-- time steady enough for a figure of a fraction of a percent.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local nn = require "torch.nn"
local optim = require "torch.optim"
local B = require "common"

local steps = tonumber(arg and arg[1]) or 10
local rounds = tonumber(arg and arg[2]) or 7

local m = B.fmnist_cnn()
local opt = optim.Adam(m:parameters(), {lr = 1e-3})
local x, y = torch.randn(64, 1, 28, 28), torch.randint(1, 11, {64})
local loss_fn = nn.CrossEntropyLoss()

local function step()
  local loss = loss_fn(m(x), y)
  opt:zero_grad()
  loss:backward()
  opt:step()
end

-- seconds per step over `steps` steps, optionally inside a profile (its
-- start and stop, paid once per profile, are timed apart)
local startstop = {}
local function run(profiled)
  collectgarbage("step")
  local prof, t_start
  if profiled then
    t_start = torch.time()
    prof = torch.profiler.profile{activities = {"cpu"}, record_shapes = true, profile_memory = true}
    t_start = torch.time() - t_start
  end
  local t0 = torch.time()
  for _ = 1, steps do step() end
  local s = (torch.time() - t0) / steps
  if prof then
    local t1 = torch.time()
    prof:stop()
    startstop[#startstop + 1] = t_start + torch.time() - t1
  end
  return s, prof
end

-- Rounds alternate which side runs first; the overhead is the median of
-- the per-round ratios, which cancels slow drifts of a shared machine.
for _ = 1, 3 do step() end
local off, on, ratio, prof = {}, {}, {}, nil
for r = 1, rounds do
  if r % 2 == 1 then
    off[r] = run(false)
    on[r], prof = run(true)
  else
    on[r], prof = run(true)
    off[r] = run(false)
  end
  ratio[r] = on[r] / off[r] - 1
end
local function median(t)
  local c = {table.unpack(t)}
  table.sort(c)
  return c[(#c + 1) // 2]
end
local mo, mp, over = median(off), median(on), median(ratio)
local events = #prof:events()
B.report("train_cnn_step", mo)
B.report("train_cnn_step_profiled", mp, 100 * over, "%overhead")
print(("# %d steps x %d rounds; %d events per profile (%.0f per step); overhead %.2f%% (median of per-round"
  .. " ratios); start + stop of a profile %.2f ms"):format(steps, rounds, events, events / steps, 100 * over,
  1e3 * median(startstop)))

-- The per-op cost directly: dispatch of a 16-element add (the engine's
-- dispatch benchmark) without and inside a profile.
local a, b = torch.ones(16), torch.ones(16)
local function add() local _ = a + b end
local d_off = B.time(add, 100000)
local d_on
do
  local p <close> = torch.profiler.profile{record_shapes = true, profile_memory = true}
  d_on = B.time(add, 100000, 3)
end
B.report("dispatch_add16", d_off)
B.report("dispatch_add16_profiled", d_on, (d_on - d_off) * 1e9, "ns/op")
print(("# recording costs %.0f ns per op; at %.0f events per step that is %.2f%% of the median step"):format(
  (d_on - d_off) * 1e9, events / steps, 100 * (d_on - d_off) * events / steps / mo))
