-- bench/rl_envs.lua -- batched CartPole-v1 stepping: N = 4096 copies,
-- random actions (drawn in place each step, random_), same-step autoreset, in env
-- steps per second: the C env (domains/rl/envs/batch.c) on the CPU, and the
-- tensor-op env (tensor_ops.lua) on CUDA when a GPU is present. Peer:
-- bench/peers/rl_envs.py (the same dynamics as PyTorch tensor ops,
-- CleanRL-style vectorized). TorchRL's ParallelEnv publishes about 1,000
-- frames/s for comparison.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local only = arg and arg[1]
local function want(name) return not only or only == "all" or only == name end

local N = 4096
local MODE = os.getenv("RL_AUTORESET") or "same_step"

-- rows: new result tensors each step, and results written into
-- preallocated ones (step's out=, as TorchRL's step writes into its
-- TensorDict)
for _, dev in ipairs({"cpu", "cuda"}) do
  for _, reuse in ipairs({false, true}) do
    local name = (dev == "cpu" and "cartpole_4096" or "cartpole_cuda_4096") .. (reuse and "_out" or "")
    if want(name) and (dev == "cpu" or torch.cuda.is_available()) then
      torch.manual_seed(0)
      -- on CUDA: the tensor ops compiled as one graph a step (eager if that fails)
      local opts = {num_envs = N, seed = 0, device = dev, autoreset_mode = MODE, compile = dev == "cuda" or nil}
      local env = torch.rl.envs.CartPoleEnv(opts)
      env:reset()
      local actions = torch.empty(N, {dtype = torch.int64, device = dev})
      if dev == "cuda" and not pcall(env.step, env, actions:fill_(1)) then
        opts.compile = nil
        env = torch.rl.envs.CartPoleEnv(opts)
        env:reset()
      end
      local step_opts
      if reuse then
        local f32, b = {dtype = torch.float32, device = dev}, {dtype = torch.bool, device = dev}
        local out = {torch.empty(N, 4, f32), torch.empty(N, f32), torch.empty(N, b), torch.empty(N, b)}
        if MODE == "same_step" then out[5] = torch.empty(N, 4, f32) end
        step_opts = {out = out}
      end
      local fn = function() env:step(actions:random_(1, 3), step_opts) end
      local secs = dev == "cuda" and B.cuda_ms(fn, 20, 50) / 1e3 or B.time(fn, 50)
      B.report(name, secs, N / secs, "steps/s")
    end
  end
end
