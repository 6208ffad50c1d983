-- tests/cuda/test_vision_ops.lua -- torch.vision.ops on CUDA (tensor/cuda/
-- nms.c, roi.c and the box functions' elementwise ops) against torchvision's
-- stored values (tests/ref/vision_ops.lua) and against the CPU on the same
-- inputs: nms and batched_nms keep lists (equal scores: the same order as
-- the CPU), roi_align / roi_pool values and input gradients, box IoUs.
-- Skips without a GPU.

if not torch.cuda.is_available() then
  io.write("note: no CUDA GPU/driver here; GPU vision ops tests skipped\n")
  return
end

torch.set_default_device("cpu") -- inputs are made on the host, then moved

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/cuda"
package.path = here .. "/../domains/vision/?.lua;" .. package.path
local G = require "opsgen"
local R = ref("vision_ops")
local O = torch.vision.ops
local f32, f64 = torch.float32, torch.float64

test("nms on CUDA keeps torchvision's boxes in its order (score ties ranked by position)", function()
  for name, c in pairs(R) do
    if name:match("^nms_") then
      local b, s = G.boxes(c.n, c.seed, torch[c.dtype], c.span)
      local keep = O.nms(b:cuda(), s:cuda(), c.thr)
      check(keep.is_cuda)
      check_eq(keep.dtype, torch.int64)
      check_eq(keep:cpu():totable(), c.keep, name)
    end
  end
end)

test("nms on CUDA equals the CPU on large inputs (50k boxes, many ties; past 4096 mask words)", function()
  for _, c in ipairs{{5000, 2000}, {50000, 2000}, {270000, 6000}} do
    local n = c[1]
    local b, s = G.boxes(n, 7, f32, c[2], 60)
    local cpu = O.nms(b, s, 0.45)
    local gpu = O.nms(b:cuda(), s:cuda(), 0.45)
    check_eq(gpu:size(1), cpu:size(1), "kept count n=" .. n)
    check(gpu:cpu():eq(cpu):all():item(), "keep order n=" .. n)
  end
  check_eq(O.nms(torch.zeros(0, 4):cuda(), torch.zeros(0):cuda(), 0.5):size(1), 0)
end)

test("batched_nms on CUDA: the coordinate trick and the per-category pass match torchvision and the CPU", function()
  for name, c in pairs(R) do
    if name:match("^batched_") then
      local b, s = G.boxes(c.n, c.seed)
      local idx = G.labels(c.n, c.seed + 100, c.k)
      local keep = O.batched_nms(b:cuda(), s:cuda(), idx:cuda(), c.thr):cpu():totable()
      local a, w = {}, {}
      for i, v in ipairs(keep) do a[i] = v end
      for i, v in ipairs(c.keep) do w[i] = v end
      table.sort(a)
      table.sort(w)
      check_eq(a, w, name)
    end
  end
  -- 6000 boxes: above CUDA's 20000 numbers, the category-aware kernel
  local b, s = G.boxes(6000, 3)
  local idx = G.labels(6000, 4, 7)
  local cpu = torch._vision.nms(b, s, 0.5, idx)
  local gpu = O.batched_nms(b:cuda(), s:cuda(), idx:cuda(), 0.5)
  check(gpu:cpu():eq(cpu):all():item())
end)

test("roi_align on CUDA: values and input gradients match torchvision (all cases, float32/64)", function()
  for name, c in pairs(R.roi_align) do
    local dt = torch[c.dtype]
    local x = G.gen({2, 3, 10, 12}, 1, dt):cuda():requires_grad_()
    local y = O.roi_align(x, G.rois(6, 31, dt):cuda(), c.size, c.scale, c.sr, c.aligned)
    check(y.is_cuda)
    local tol = dt == f64 and {atol = 1e-12, rtol = 1e-10} or {atol = 2e-6, rtol = 1e-5}
    check_close(y:cpu(), c.y, tol)
    y:backward(G.gen(y.shape, 99, dt):cuda())
    check_close(x.grad:cpu(), c.gx, tol)
  end
end)

test("roi_align on CUDA: float16 input, a table of boxes, a large problem against the CPU, gradcheck", function()
  local x = torch.randn(2, 8, 30, 30)
  local r = torch.tensor({{1, 1.5, 2.5, 20, 25}, {2, 0, 0, 29, 29}, {1, 10, 3, 12, 4}})
  local cpu = O.roi_align(x, r, 5, 0.9, -1, true)
  check_close(O.roi_align(x:cuda(), r:cuda(), 5, 0.9, -1, true):cpu(), cpu, {atol = 2e-5, rtol = 1e-5})
  local h = O.roi_align(x:half():cuda(), r:cuda(), 5, 0.9, -1, true)
  check_eq(h.dtype, torch.float16)
  check_close(h:float():cpu(), cpu, {atol = 2e-2, rtol = 2e-2})
  local per = O.roi_align(x:cuda(), {r:narrow(1, 1, 1):narrow(2, 2, 4):cuda()}, 5, 0.9, -1, true)
  check_close(per:cpu(), cpu:narrow(1, 1, 1), {atol = 2e-5, rtol = 1e-5})
  local big = torch.randn(2, 64, 50, 50)
  local u = torch.rand(256, 4) * 40
  local bx1, by1 = u:select(2, 1), u:select(2, 2)
  local br = torch.stack({(torch.arange(256) % 2 + 1):float(), bx1, by1, (bx1 + u:select(2, 3)):clamp(0, 49),
                          (by1 + u:select(2, 4)):clamp(0, 49)}, 2)
  local g = torch.randn(256, 64, 7, 7)
  local xc, xg = big:clone():requires_grad_(), big:cuda():requires_grad_()
  local yc, yg = O.roi_align(xc, br, 7, 1.0, 2, false), O.roi_align(xg, br:cuda(), 7, 1.0, 2, false)
  check_close(yg:cpu(), yc, {atol = 1e-4, rtol = 1e-4})
  yc:backward(g)
  yg:backward(g:cuda())
  check_close(xg.grad:cpu(), xc.grad, {atol = 1e-3, rtol = 1e-4})
  local xd = torch.randn(1, 2, 6, 7, {dtype = f64}):cuda():requires_grad_()
  local rd = torch.tensor({{1, 0.6, 0.3, 4.7, 5.2}}, {dtype = f64}):cuda()
  check(torch.autograd.gradcheck(function(t) return O.roi_align(t, rd, {2, 3}, 1.0, 2, false) end, {xd}))
end)

test("roi_pool on CUDA: values and input gradients match torchvision", function()
  for name, c in pairs(R.roi_pool) do
    local x = G.gen({2, 3, 10, 12}, 1):cuda():requires_grad_()
    local y = O.roi_pool(x, G.rois(6, 31):cuda(), c.size, c.scale)
    check_close(y:cpu(), c.y, {atol = 0, rtol = 0})
    y:backward(G.gen(y.shape, 99):cuda())
    check_close(x.grad:cpu(), c.gx, {atol = 1e-12, rtol = 0})
  end
end)

test("a roi with a batch number outside 1..N gives zeros on CUDA (no host check)", function()
  local x = torch.ones(1, 2, 4, 4):cuda()
  local y = O.roi_align(x, torch.tensor({{5, 0, 0, 2, 2}, {1, 0, 0, 2, 2}}):cuda(), 2, 1.0, 2, false)
  check_close(y:cpu(), torch.cat({torch.zeros(1, 2, 2, 2), torch.ones(1, 2, 2, 2)}, 1))
end)

test("box functions on CUDA match torchvision", function()
  local b1 = G.boxes(7, 11, f64, 20, 15):cuda()
  local b2 = G.boxes(5, 12, f64, 20, 15):cuda()
  for _, fn in ipairs{"box_iou", "generalized_box_iou", "distance_box_iou", "complete_box_iou"} do
    local y = O[fn](b1, b2)
    check(y.is_cuda)
    check_close(y:cpu(), R.iou[fn], {atol = 1e-12, rtol = 1e-12})
  end
  check_close(O.clip_boxes_to_image(b1, {12, 15}):cpu(), R.clip, {atol = 0, rtol = 0})
  check_eq(O.remove_small_boxes(b1, 6.5):cpu():totable(), R.small)
  local m = G.gen({3, 6, 7}, 5):gt(1.1)
  m[3][2][3] = true
  check_close(O.masks_to_boxes(m:cuda()):cpu(), R.masks.boxes, {atol = 0, rtol = 0})
end)
