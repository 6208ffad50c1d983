-- bench/rl_replay.lua -- prioritized replay: one sample(256) call of a
-- TensorDictPrioritizedReplayBuffer (LazyTensorStorage of CartPole-sized
-- transitions: obs[4], action, reward, next.obs[4], next.done), at 1M and
-- at 10k stored transitions, after update_priority of random priorities
-- for every entry; plus the sampler alone (tree search and weights). The
-- peer, bench/peers/rl_replay.py, is the same algorithm in PyTorch + numpy.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local D = torch.rl.data
local TensorDict = torch.rl.TensorDict

local function buffer(n)
  torch.manual_seed(0)
  local rb = D.TensorDictPrioritizedReplayBuffer({alpha = 0.6, beta = 0.4, storage = D.LazyTensorStorage(n)})
  local td = TensorDict({obs = torch.randn(n, 4), action = torch.randint(1, 3, {n}), reward = torch.ones(n, 1),
                         next = {obs = torch.randn(n, 4), done = torch.zeros(n, 1, {dtype = torch.bool})}}, {n})
  rb:extend(td)
  rb:update_priority(torch.arange(1, n + 1), torch.rand(n) * 10)
  return rb
end

for _, row in ipairs({{"1m", 1000000}, {"10k", 10000}}) do
  local rb = buffer(row[2])
  local t = B.time(function() return rb:sample(256) end, 200)
  B.report("rl_prb_sample256_" .. row[1], t)
  local s, st = rb._sampler, rb._storage
  local ts = B.time(function() return s:sample(st, 256) end, 200)
  B.report("rl_prb_sampler256_" .. row[1], ts)
end
