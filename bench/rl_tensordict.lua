-- bench/rl_tensordict.lua -- TensorDict overhead: stacking 8 TensorDicts of
-- 20 leaves (tensordict issue #1694 publishes 127 us for this with
-- tensordict; no peer is installable here, so bench/peers/rl_tensordict.py
-- prints that published figure, labelled as such), indexing a row and
-- building one from a table.
package.path = "bench/?.lua;" .. package.path
local torch = require "torch"
local B = require "common"
local TensorDict = torch.rl.TensorDict

local function make(nleaves, batch)
  local src = {}
  for i = 1, nleaves do src["key" .. i] = torch.randn(batch, 4) end
  return src
end

local src = make(20, 1)
local tds = {}
for i = 1, 8 do tds[i] = TensorDict(make(20, 1), {1}) end
B.report("rl_td_stack_8x20", B.time(function() return TensorDict.stack(tds, 1) end, 2000))
local big = TensorDict.stack(tds, 1)
B.report("rl_td_index_row_20", B.time(function() return big[3] end, 2000))
B.report("rl_td_new_20", B.time(function() return TensorDict(src, {1}) end, 2000))
