-- torch.rl.data -- TorchRL's replay buffers: ReplayBuffer,
-- TensorDictReplayBuffer, PrioritizedReplayBuffer,
-- TensorDictPrioritizedReplayBuffer; storages ListStorage,
-- LazyTensorStorage and LazyMemmapStorage; RoundRobinWriter; samplers RandomSampler,
-- SamplerWithoutReplacement, PrioritizedSampler, SliceSampler; and the
-- segment trees. This table gathers the files named below.
local U = require "torch.rl.data._util"
local ST = require "torch.rl.data._segment_tree"
local D = {}

for _, family in ipairs({"_storages", "_writers", "_samplers", "_replay_buffers"}) do
  for name, v in pairs(require("torch.rl.data." .. family)) do
    if D[name] ~= nil then error("torch.rl.data: " .. name .. " defined twice") end
    D[name] = v
  end
end

-- SumSegmentTree(capacity) / MinSegmentTree(capacity): see l_segment_tree.c
function D.SumSegmentTree(capacity) return ST.new(capacity, false) end
function D.MinSegmentTree(capacity) return ST.new(capacity, true) end
D._util = U

return D
