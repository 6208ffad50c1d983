-- tests/graph/specs_vision.lua -- gradcheck cases for the vision ops
-- (roi_align, roi_pool and their backward ops; see test_gradcheck.lua).
-- Rois are fixed (they get no gradient); roi_pool's inputs are distinct
-- values (a permutation) so that no finite-difference step moves a max.
local G = require "gradlib"
local R = G.R
local V = torch._vision

local rois = torch.tensor({{1, 0.6, 0.3, 3.7, 4.2}, {2, 1.2, 1.1, 4.3, 3.9}, {1, -1, 2, 2.5, 6}}, {dtype = torch.float64})

-- 120 distinct values in a scrambled order (37 is prime to 120)
local function distinct() return ((torch.arange(120) * 37) % 120):double():view(2, 2, 5, 6) * 0.25 end

local function pool_argmax()
  local _, ix = V.roi_pool(distinct(), rois, 2, 3, 1.0)
  return ix
end

return {
  roi_align = {
    {fn = function(x) return V.roi_align(x, rois, 2, 3, 1.0, 2, false) end, inputs = function() return {R(2, 2, 5, 6)} end,
     second_order = true},
    {fn = function(x) return V.roi_align(x, rois, 3, 2, 0.7, -1, true) end, inputs = function() return {R(2, 2, 5, 6)} end},
  },
  roi_align_backward = {
    {fn = function(g) return V.roi_align_backward(g, rois, {2, 2, 5, 6}, 2, 3, 1.0, 2, false) end,
     inputs = function() return {R(3, 2, 2, 3)} end, second_order = true},
  },
  roi_pool = {
    {fn = function(x) return (V.roi_pool(x, rois, 2, 3, 1.0)) end,
     inputs = function() return {distinct():requires_grad_()} end, second_order = true},
  },
  roi_pool_backward = {
    {fn = function(g) return V.roi_pool_backward(g, pool_argmax(), {2, 2, 5, 6}) end,
     inputs = function() return {R(3, 2, 2, 3)} end, second_order = true},
  },
}
