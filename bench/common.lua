-- bench/common.lua -- timing helpers shared by the Lua benchmarks: each
-- benchmark prints lines "RESULT <name> <seconds per op> [<extra> <unit>]".
local torch = require "torch"
local M = {}

-- Median seconds per call of fn over `reps` timed batches of `n` calls,
-- after a warm-up batch. With BENCH_STAT=min (bench/run --stat min): the
-- fastest single call of the n * reps, which a busy machine disturbs least.
function M.time(fn, n, reps)
  reps = reps or 7
  for _ = 1, n do fn() end
  if os.getenv("BENCH_STAT") == "min" then
    local best = math.huge
    for _ = 1, n * reps do
      local t0 = torch.time()
      fn()
      local t = torch.time() - t0
      if t < best then best = t end
    end
    return best
  end
  local ts = {}
  for r = 1, reps do
    local t0 = torch.time()
    for _ = 1, n do fn() end
    ts[r] = (torch.time() - t0) / n
    collectgarbage("step")
  end
  table.sort(ts)
  return ts[(reps + 1) // 2]
end

-- The Fashion-MNIST CNN of scripts/train_fashion_mnist.lua (seeded), the
-- model of the training, compiled-step and profiler benchmarks.
function M.fmnist_cnn()
  local nn = require "torch.nn"
  torch.manual_seed(0)
  return nn.Sequential(
    nn.Conv2d(1, 32, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, {padding = 1}), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))
end

function M.report(name, secs, extra, unit)
  if extra then
    print(("RESULT %s %.9g %.6g %s"):format(name, secs, extra, unit))
  else
    print(("RESULT %s %.9g"):format(name, secs))
  end
end

-- Device milliseconds per call of fn on CUDA: events around `inner` calls
-- (default 1), median of `reps`, after a warm-up (the GPU benchmarks).
function M.cuda_ms(fn, reps, inner)
  inner = inner or 1
  for _ = 1, 3 do fn() end
  torch.cuda.synchronize()
  local ts = {}
  for i = 1, reps do
    local a, b = torch.cuda.Event({enable_timing = true}), torch.cuda.Event({enable_timing = true})
    a:record()
    for _ = 1, inner do fn() end
    b:record(); b:synchronize()
    ts[i] = a:elapsed_time(b) / inner
  end
  table.sort(ts)
  return ts[(reps + 1) // 2]
end

return M
