-- tests/domains/vision/test_ops.lua -- torch.vision.ops against
-- torchvision 0.14's values (tests/ref/vision_ops.lua, made by
-- tests/ref/gen_vision_ops.py from the same generated inputs), closed-form
-- cases, finite differences for roi_align and roi_pool, and bad input.
local R = ref("vision_ops")
local O = torch.vision.ops
local f32, f64 = torch.float32, torch.float64

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/domains/vision"
package.path = here .. "/?.lua;" .. package.path
local G = require "opsgen"
local gen, boxes, labels, rois = G.gen, G.boxes, G.labels, G.rois

local function names(t, prefix)
  local out = {}
  for k in pairs(t) do if k:sub(1, #prefix) == prefix then out[#out + 1] = k end end
  table.sort(out)
  return out
end

test("nms keeps torchvision's boxes in its order (overlaps, exact score ties, float32/64, dense and sparse scenes of thousands)", function()
  local cases = names(R, "nms_")
  check(#cases == 7)
  for _, name in ipairs(cases) do
    local c = R[name]
    local b, s = boxes(c.n, c.seed, torch[c.dtype], c.span)
    local keep = O.nms(b, s, c.thr)
    check_eq(keep.dtype, torch.int64)
    check_eq(keep:totable(), c.keep, name)
  end
end)

test("nms: the kept boxes overlap each other at most iou_threshold, ranked by score then position", function()
  local b, s = boxes(400, 77)
  local keep = O.nms(b, s, 0.4)
  local kb, ks = b:index_select(1, keep), s:index_select(1, keep):totable()
  local iou = O.box_iou(kb, kb) - torch.eye(keep:size(1))
  check(iou:max():item() <= 0.4)
  local k = keep:totable()
  for i = 2, #k do check(ks[i] < ks[i - 1] or (ks[i] == ks[i - 1] and k[i] > k[i - 1])) end
  -- every suppressed box overlaps a kept one ranked before it by more than the threshold
  local kept = {}
  for _, i in ipairs(k) do kept[i] = true end
  local all = O.box_iou(b, kb)
  for i = 1, 400 do
    if not kept[i] then check(all[i]:max():item() > 0.4) end
  end
end)

-- greedy NMS written out over the IoU matrix (the definition), stable ranks
local function brute_nms(b, s, thr)
  local n = b:size(1)
  local iou = O.box_iou(b, b):totable()
  local sc = s:totable()
  local order = {}
  for i = 1, n do order[i] = i end
  table.sort(order, function(p, q) return sc[p] > sc[q] or (sc[p] == sc[q] and p < q) end)
  local dead, keep = {}, {}
  for _, i in ipairs(order) do
    if not dead[i] then
      keep[#keep + 1] = i
      for _, j in ipairs(order) do if iou[i][j] > thr then dead[j] = true end end
    end
  end
  return keep
end

test("nms of thousands of boxes (the grid of cells) equals greedy NMS over the IoU matrix", function()
  for _, c in ipairs{{1500, 21, 100, 0.5}, {2500, 22, 1500, 0.2}, {1200, 23, 40, 0.0}, {1100, 24, 300, 0.9}} do
    local b, s = boxes(c[1], c[2], f64, c[3])
    -- inverted, empty and huge boxes among them
    b[1] = torch.tensor({10, 10, 5, 5}):double()
    b[2] = torch.tensor({7, 7, 7, 9}):double()
    b[3] = torch.tensor({-50, -50, 500, 500}):double()
    check_eq(O.nms(b, s, c[4]):totable(), brute_nms(b, s, c[4]), "scene " .. c[2])
  end
  -- a NaN coordinate: the plain pass (no grid); the NaN box suppresses nothing and is kept
  local b, s = boxes(1300, 25, f64, 200)
  b[5][1] = 0 / 0
  local keep = O.nms(b, s, 0.5):totable()
  local want = brute_nms(b, s, 0.5)
  check_eq(keep, want)
end)

test("nms of identical boxes with equal scores keeps the first; empty input gives an empty keep", function()
  local b = torch.tensor({{0, 0, 1, 1}, {0, 0, 1, 1}, {0, 0, 1, 1}}):float()
  check_eq(O.nms(b, torch.tensor({0.5, 0.5, 0.5}), 0.5):totable(), {1})
  check_eq(O.nms(b, torch.tensor({0.5, 0.7, 0.7}), 0.5):totable(), {2})
  check_eq(O.nms(torch.zeros(0, 4), torch.zeros(0), 0.5):size(1), 0)
  check_eq(O.batched_nms(torch.zeros(0, 4), torch.zeros(0), torch.zeros(0):long(), 0.5):size(1), 0)
  -- threshold 1: nothing is suppressed; negative: only disjoint boxes survive
  check_eq(O.nms(b, torch.tensor({0.1, 0.3, 0.2}), 1.0):totable(), {2, 3, 1})
end)

test("batched_nms matches torchvision (coordinate trick and per-category paths)", function()
  local cases = names(R, "batched_")
  check(#cases == 4)
  for _, name in ipairs(cases) do
    local c = R[name]
    local b, s = boxes(c.n, c.seed)
    local keep = O.batched_nms(b, s, labels(c.n, c.seed + 100, c.k), c.thr):totable()
    if c.vanilla then -- torchvision's final sort is not stable: same set, ours by score then position
      local a, w = {}, {}
      for i, v in ipairs(keep) do a[i] = v end
      for i, v in ipairs(c.keep) do w[i] = v end
      table.sort(a)
      table.sort(w)
      check_eq(a, w, name)
      local sc = s:totable()
      for i = 2, #keep do
        check(sc[keep[i]] < sc[keep[i - 1]] or (sc[keep[i]] == sc[keep[i - 1]] and keep[i] > keep[i - 1]))
      end
    else
      check_eq(keep, c.keep, name)
    end
  end
end)

test("batched_nms: the per-category pass equals nms run on each category", function()
  local n = 1200
  local b, s = boxes(n, 41)
  local idx = labels(n, 42, 4)
  local keep = O.batched_nms(b, s, idx, 0.5)
  local got = {}
  for _, i in ipairs(keep:totable()) do got[i] = true end
  for cat = 0, 3 do
    local members = idx:eq(cat):nonzero():reshape(-1)
    local k = O.nms(b:index_select(1, members), s:index_select(1, members), 0.5)
    local m = members:totable()
    local want = {}
    for _, j in ipairs(k:totable()) do want[m[j]] = true end
    for _, i in ipairs(m) do check_eq(got[i] == true, want[i] == true) end
  end
end)

local b1 = boxes(7, 11, f64, 20, 15)
local b2 = boxes(5, 12, f64, 20, 15)

test("box_iou, generalized/distance/complete_box_iou and box_area match torchvision", function()
  local c = R.iou
  for _, fn in ipairs{"box_iou", "generalized_box_iou", "distance_box_iou", "complete_box_iou"} do
    local y = O[fn](b1, b2)
    check_shape(y, {7, 5})
    check_close(y, c[fn], {atol = 1e-12, rtol = 1e-12})
    check_close(O[fn](b1:float(), b2:float()), c[fn], {atol = 1e-6, rtol = 1e-5})
  end
  check_close(O.box_area(b1), c.box_area, {atol = 0, rtol = 0})
  check_eq(O.box_area(b1:half()).dtype, f32)
  check_eq(O.box_area(b1:long()).dtype, torch.int64)
  check_close(O.box_iou(torch.tensor({{0, 0, 2, 2}}), torch.tensor({{1, 1, 3, 3}, {2, 2, 4, 4}})), {1 / 7, 0})
end)

test("box_convert between xyxy, xywh and cxcywh matches torchvision and round-trips", function()
  for k, want in pairs(R.convert) do
    local a, c = k:match("^(%w+)_(%w+)$")
    check_close(O.box_convert(b1, a, c), want, {atol = 1e-12, rtol = 0})
    check_close(O.box_convert(O.box_convert(b1, a, c), c, a), b1, {atol = 1e-12, rtol = 0})
  end
  local batched = O.box_convert(b1:reshape(7, 1, 4), "xyxy", "cxcywh")
  check_shape(batched, {7, 1, 4})
  local same = O.box_convert(b1, "xywh", "xywh")
  check(same ~= b1)
end)

test("clip_boxes_to_image, remove_small_boxes (1-based) and masks_to_boxes match torchvision", function()
  check_close(O.clip_boxes_to_image(b1, {12, 15}), R.clip, {atol = 0, rtol = 0})
  check_eq(O.remove_small_boxes(b1, 6.5):totable(), R.small)
  local m = gen({3, 6, 7}, 5):gt(1.1)
  m[3][2][3] = true
  local mb = O.masks_to_boxes(m)
  check_eq(mb.dtype, f32)
  check_close(mb, R.masks.boxes, {atol = 0, rtol = 0})
  check_eq(O.masks_to_boxes(torch.zeros(0, 4, 4)).shape, {0, 4})
end)

test("box losses (giou, diou, ciou; none/mean/sum) and their gradients match torchvision", function()
  local p1 = boxes(6, 13, f64, 20, 15)
  local p2 = boxes(6, 14, f64, 20, 15)
  local n = 0
  for k, want in pairs(R.losses) do
    local fn, red = k:match("^(.-)_(%a+)$")
    local x = p1:clone():requires_grad_()
    local y = O[fn](x, p2, {reduction = red})
    y:sum():backward()
    check_close(y, want.y, {atol = 1e-12, rtol = 1e-10})
    check_close(x.grad, want.g, {atol = 1e-12, rtol = 1e-9})
    n = n + 1
  end
  check_eq(n, 9)
  check_close(O.generalized_box_iou_loss(torch.tensor({0, 0, 2, 2}), torch.tensor({0, 0, 2, 2})), {0},
              {atol = 1e-6})
end)

test("sigmoid_focal_loss and its gradient match torchvision (alpha, gamma, reductions)", function()
  for name, c in pairs(R.focal) do
    local x = gen({3, 5}, 21):requires_grad_()
    local t = gen({3, 5}, 22):gt(0):double()
    local y = O.sigmoid_focal_loss(x, t, c.alpha, c.gamma, c.reduction)
    y:sum():backward()
    check_close(y, c.y, {atol = 1e-12, rtol = 1e-10})
    check_close(x.grad, c.g, {atol = 1e-12, rtol = 1e-9})
  end
  local y = O.sigmoid_focal_loss(gen({4}, 1), torch.ones(4):double(), {reduction = "sum"})
  check_eq(y:dim(), 0)
end)

test("roi_align forward and input gradient match torchvision (aligned, sampling ratios, scales, dtypes)", function()
  local n = 0
  for name, c in pairs(R.roi_align) do
    local dt = torch[c.dtype]
    local x = gen({2, 3, 10, 12}, 1, dt):requires_grad_()
    local y = O.roi_align(x, rois(6, 31, dt), c.size, c.scale, c.sr, c.aligned)
    check_eq(y.dtype, dt)
    check_shape(y, {8, 3, c.size[1], c.size[2]})
    local tol = dt == f64 and {atol = 1e-12, rtol = 1e-10} or {atol = 2e-6, rtol = 1e-5}
    check_close(y, c.y, tol)
    y:backward(gen(y.shape, 99, dt))
    check_close(x.grad, c.gx, tol)
    n = n + 1
  end
  check_eq(n, 32)
end)

test("roi_align takes a table of per-image boxes, rois of another float dtype, and RoIAlign", function()
  local x = gen({2, 3, 10, 12}, 1)
  local r = rois(6, 31)
  local per = {}
  for img = 1, 2 do per[img] = r:index_select(1, r:select(2, 1):eq(img):nonzero():reshape(-1)):narrow(2, 2, 4) end
  local y1 = O.roi_align(x, per, 3, 0.5, 2, true)
  local sorted = torch.cat({r:index_select(1, r:select(2, 1):eq(1):nonzero():reshape(-1)),
                            r:index_select(1, r:select(2, 1):eq(2):nonzero():reshape(-1))}, 1)
  check_close(y1, O.roi_align(x, sorted, {3, 3}, {spatial_scale = 0.5, sampling_ratio = 2, aligned = true}),
              {atol = 0, rtol = 0})
  check_close(O.roi_align(x, r:float(), 2), O.roi_align(x, r, 2), {atol = 1e-5, rtol = 1e-5})
  local m = O.RoIAlign({3, 3}, 0.5, 2, true)
  check_close(m(x, sorted), y1, {atol = 0, rtol = 0})
  check_eq(tostring(m), "RoIAlign(output_size=(3, 3), spatial_scale=0.5, sampling_ratio=2, aligned=true)")
  check_eq(O.roi_align(x, torch.zeros(0, 5):double(), 2).shape, {0, 3, 2, 2})
end)

test("roi_align and roi_pool under torch.compile equal eager (values and gradients); float16 input", function()
  local x = gen({2, 3, 10, 12}, 1, f32)
  local r = rois(6, 31, f32)
  local f = torch.compile(function(t, b) return (O.roi_align(t, b, 3, 0.5, 2, true) * 2):sum() + O.roi_pool(t, b, 2):sum() end)
  local want, wgrad
  do
    local xe = x:clone():requires_grad_()
    want = (O.roi_align(xe, r, 3, 0.5, 2, true) * 2):sum() + O.roi_pool(xe, r, 2):sum()
    want:backward()
    wgrad = xe.grad
  end
  for _ = 1, 2 do
    local xc = x:clone():requires_grad_()
    local got = f(xc, r)
    check_close(got, want, {atol = 1e-5, rtol = 1e-6})
    got:backward()
    check_close(xc.grad, wgrad, {atol = 1e-6, rtol = 1e-6})
  end
  local h = O.roi_align(x:half(), r, 3, 0.5, 2, true)
  check_eq(h.dtype, torch.float16)
  check_close(h:float(), O.roi_align(x, r, 3, 0.5, 2, true), {atol = 1e-2, rtol = 1e-2}) -- rois rounded to float16 too
end)

test("roi_align of a constant image is the constant inside the image (closed form)", function()
  local x = torch.full({1, 2, 8, 8}, 3.5):double()
  local y = O.roi_align(x, torch.tensor({{1, 1.2, 0.7, 6.1, 5.3}}):double(), {4, 3}, 1.0, 2, true)
  check_close(y, torch.full({1, 2, 4, 3}, 3.5), {atol = 1e-12})
  -- a ramp (pixel i holds i): bilinear sampling is exact, so a bin's average is the ramp at the
  -- bin's centre; aligned shifts the box by half a pixel: x in [2, 6], bin centres 3 and 5
  local ramp = torch.arange(10):double():reshape(1, 1, 1, 10):expand(1, 1, 6, 10):contiguous()
  local z = O.roi_align(ramp, torch.tensor({{1, 2.5, 1, 6.5, 3}}):double(), {1, 2}, 1.0, 4, true)
  check_close(z, {3, 5}, {atol = 1e-12})
  check_close(O.roi_align(ramp, torch.tensor({{1, 2, 1, 6, 3}}):double(), {1, 2}, 1.0, 4, false), {3, 5},
              {atol = 1e-12})
end)

test("roi_align and roi_pool gradients agree with finite differences (gradcheck)", function()
  local x = (gen({1, 2, 6, 7}, 3) + gen({1, 2, 6, 7}, 8) * 0.37):requires_grad_()
  local r = torch.tensor({{1, 0.6, 0.3, 4.7, 5.2}, {1, 2.2, 1.1, 6.3, 3.9}}):double()
  check(torch.autograd.gradcheck(function(t) return O.roi_align(t, r, {2, 3}, 1.0, 2, false) end, {x}))
  check(torch.autograd.gradcheck(function(t) return O.roi_align(t, r, 2, 0.8, -1, true) end, {x}))
  check(torch.autograd.gradcheck(function(t) return O.roi_pool(t, r, {2, 2}, 1.0) end, {x}))
  -- second order: the backward ops are differentiable (linear in the gradient)
  check(torch.autograd.gradgradcheck(function(t) return O.roi_align(t, r, {2, 3}, 1.0, 2, false) end, {x}))
  check(torch.autograd.gradgradcheck(function(t) return O.roi_pool(t, r, {2, 2}, 1.0) end, {x}))
end)

test("roi_pool forward and input gradient match torchvision; RoIPool", function()
  for name, c in pairs(R.roi_pool) do
    local x = gen({2, 3, 10, 12}, 1):requires_grad_()
    local y = O.roi_pool(x, rois(6, 31), c.size, c.scale)
    check_close(y, c.y, {atol = 0, rtol = 0})
    y:backward(gen(y.shape, 99))
    check_close(x.grad, c.gx, {atol = 1e-12, rtol = 0})
    check_close(O.RoIPool(c.size, c.scale)(x:float(), rois(6, 31)), c.y, {atol = 1e-6, rtol = 1e-6})
  end
end)

test("MultiScaleRoIAlign pools each box from its pyramid level as torchvision (values and gradients)", function()
  local n = 0
  for key, c in pairs(R.multiscale) do
    local feats = {}
    for k, m in pairs{f1 = 1, f2 = 2, f3 = 4} do
      feats[k] = gen({2, 3, 32 // m, 40 // m}, 3 + m):requires_grad_()
    end
    local m = O.MultiScaleRoIAlign(c.names, c.size, c.sr)
    local y = m(feats, {G.pyramid_boxes(5, 41), G.pyramid_boxes(4, 42)}, {{128, 160}, {120, 150}})
    check_close(y, c.y, {atol = 1e-12, rtol = 1e-10})
    y:backward(gen(y.shape, 99))
    for _, k in ipairs{"f1", "f2", "f3"} do
      local g = feats[k].grad or torch.zeros(feats[k]:numel()):double()
      check_close(g:reshape(-1), c["g_" .. k], {atol = 1e-12, rtol = 1e-10})
    end
    n = n + 1
  end
  check_eq(n, 3)
  check_error(function() O.MultiScaleRoIAlign({"f1"}, 2, 2)({}, {}, {{4, 4}}) end, "no feature map named 'f1'")
end)

test("bad input is a clear error naming the function", function()
  local x = gen({2, 3, 10, 12}, 1)
  check_error(function() O.roi_align(x, torch.zeros(3, 4):double(), 2) end, "roi_align: a boxes tensor must be K x 5")
  check_error(function() O.roi_align(x:reshape(6, 10, 12), rois(2, 1), 2) end, "roi_align: input must be")
  check_error(function() O.roi_align(x, rois(2, 1), {2}) end, "roi_align: output_size must be")
  check_error(function() O.roi_align(x, rois(2, 1), 0) end, "roi_align: output_size must be positive")
  if DEVICE == "cpu" then -- CUDA gives zeros for such rois rather than read them back (tests/cuda)
    check_error(function() O.roi_align(x, torch.tensor({{3, 0, 0, 1, 1}}):double(), 2) end,
                "batch index 3, outside 1..2")
    check_error(function() O.roi_align(x, torch.tensor({{0, 0, 0, 1, 1}}):double(), 2) end, "outside 1..2")
    check_error(function() torch._vision.roi_pool_backward(torch.ones(1, 1, 1, 1), torch.full({1, 1, 1, 1}, 99):long(),
                                                           {1, 1, 2, 2}) end, "roi_pool_backward: argmax holds 99")
  end
  check_error(function() O.roi_align(x:long(), rois(2, 1), 2) end, "roi_align: input must be floating")
  check_error(function() O.roi_align(x, rois(2, 1), 2, {bogus = 1}) end, "roi_align: unknown option 'bogus'")
  check_error(function() O.roi_pool(x, {torch.zeros(2, 5)}, 2) end, "roi_pool: boxes[1] must be an L x 4 tensor")
  check_error(function() O.nms(torch.zeros(3, 5), torch.zeros(3), 0.5) end, "nms: boxes must be an N x 4")
  check_error(function() O.nms(torch.zeros(3, 4), torch.zeros(2), 0.5) end, "nms: scores must be a 1-D tensor")
  check_error(function() O.nms(torch.zeros(3, 4):long(), torch.zeros(3), 0.5) end, "must be floating")
  check_error(function() O.nms(torch.zeros(3, 4), torch.zeros(3), "a") end, "nms: iou_threshold must be a number")
  check_error(function() O.batched_nms(torch.zeros(3, 4), torch.zeros(3), torch.zeros(3), 0.5) end,
              "batched_nms: idxs must be an integer tensor")
  check_error(function() O.batched_nms(torch.zeros(3, 4), torch.zeros(3), torch.zeros(2):long(), 0.5) end,
              "batched_nms: idxs must hold one category id per box")
  check_error(function() O.box_convert(b1, "xyxy", "yxyx") end, "box_convert: unsupported formats")
  check_error(function() O.box_iou(b1, torch.zeros(3)) end, "box_iou: boxes2 must be an N x 4 tensor")
  check_error(function() O.generalized_box_iou_loss(b1, b1, {reduction = "avg"}) end, "invalid reduction 'avg'")
  check_error(function() O.sigmoid_focal_loss(gen({3}, 1), gen({3}, 2), {reduction = "max"}) end,
              "sigmoid_focal_loss: invalid reduction")
  check_error(function() O.sigmoid_focal_loss(gen({3}, 1), gen({3}, 2), {gama = 2}) end, "unknown option 'gama'")
  check_error(function() O.masks_to_boxes(torch.zeros(2, 3, 3)) end, "masks_to_boxes: mask 1 has no nonzero pixel")
  check_error(function() O.clip_boxes_to_image(b1, {3}) end, "clip_boxes_to_image: size must be")
  check_error(function() O.RoIAlign(7) end, "RoIAlign: expected RoIAlign(output_size, spatial_scale, sampling_ratio")
end)
