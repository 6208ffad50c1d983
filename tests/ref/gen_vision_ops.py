#!/usr/bin/python3
"""gen_vision_ops.py -- torchvision reference values for
tests/domains/vision/test_ops.lua (torch.vision.ops).

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_vision_ops.py   # writes tests/ref/vision_ops.lua

Inputs come from two generators the Lua test repeats: gen(shape, seed)
(gen_pool.py's values) and boxes(n, seed), xyxy boxes from a linear
congruential sequence on a quarter-pixel grid with scores on a 1/20 grid,
so that many boxes overlap and many scores tie exactly. Index results are
written 1-based."""
import os

import torch
import torchvision
import torchvision.ops as O
from reflib import lua


def gen(shape, seed, dtype=torch.float64):
    n = 1
    for s in shape:
        n *= s
    vals = [((37 * k + 11 * seed) % 101 - 50) / 32 for k in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape).to(dtype)


class Lcg:
    def __init__(self, seed):
        self.s = seed

    def u(self):
        self.s = (self.s * 1103515245 + 12345) % 2147483648
        return self.s / 2147483648


def boxes(n, seed, span=80, size=30, dtype=torch.float32):
    """n boxes (x1, y1, x2, y2) and n scores."""
    r, b, s = Lcg(seed), [], []
    for _ in range(n):
        x1, y1 = int(r.u() * span * 4) / 4, int(r.u() * span * 4) / 4
        w, h = 1 + int(r.u() * size * 4) / 4, 1 + int(r.u() * size * 4) / 4
        b.append([x1, y1, x1 + w, y1 + h])
        s.append(int(r.u() * 20) / 20)
    return torch.tensor(b, dtype=dtype), torch.tensor(s, dtype=dtype)


def labels(n, seed, k):
    r = Lcg(seed)
    return torch.tensor([int(r.u() * k) for _ in range(n)], dtype=torch.int64)


cases = {}

# ---- nms and batched_nms ----
for n, seed, thr, dt in [(200, 1, 0.5, "float32"), (200, 2, 0.3, "float32"), (300, 3, 0.7, "float64"),
                         (60, 4, 0.0, "float32"), (500, 5, 0.5, "float32")]:
    b, s = boxes(n, seed, dtype=getattr(torch, dt))
    cases["nms_%d_%d" % (n, seed)] = {"n": n, "seed": seed, "thr": thr, "dtype": dt,
                                       "keep": O.nms(b, s, thr) + 1}
# past 1024 boxes our CPU pass goes through a grid of cells: a dense and a sparse scene
for n, seed, span, thr in [(3000, 15, 300, 0.5), (4000, 16, 2000, 0.3)]:
    b, s = boxes(n, seed, span=span)
    cases["nms_%d_%d" % (n, seed)] = {"n": n, "seed": seed, "thr": thr, "dtype": "float32", "span": span,
                                       "keep": O.nms(b, s, thr) + 1}
for n, seed, k, thr in [(200, 6, 4, 0.5), (150, 7, 3, 0.3), (1500, 8, 5, 0.5), (2000, 9, 12, 0.6)]:
    b, s = boxes(n, seed)
    idx = labels(n, seed + 100, k)
    keep = O.batched_nms(b, s, idx, thr)
    cases["batched_%d_%d" % (n, seed)] = {"n": n, "seed": seed, "k": k, "thr": thr, "keep": keep + 1,
                                           "vanilla": b.numel() > 4000}

# ---- box functions ----
b1, _ = boxes(7, 11, span=20, size=15, dtype=torch.float64)
b2, _ = boxes(5, 12, span=20, size=15, dtype=torch.float64)
cases["iou"] = {
    "box_iou": O.box_iou(b1, b2).flatten(),
    "generalized_box_iou": O.generalized_box_iou(b1, b2).flatten(),
    "distance_box_iou": O.distance_box_iou(b1, b2).flatten(),
    "complete_box_iou": O.complete_box_iou(b1, b2).flatten(),
    "box_area": O.box_area(b1),
}
conv = {}
for a in ("xyxy", "xywh", "cxcywh"):
    for c in ("xyxy", "xywh", "cxcywh"):
        conv[a + "_" + c] = O.box_convert(b1, a, c).flatten()
cases["convert"] = conv
cases["clip"] = O.clip_boxes_to_image(b1, (12, 15)).flatten()
cases["small"] = O.remove_small_boxes(b1, 6.5) + 1
m = (gen((3, 6, 7), 5) > 1.1)
m[2, 1, 2] = True
cases["masks"] = {"boxes": O.masks_to_boxes(m).flatten()}

# losses on matching pairs, with the gradient of the sum wrt boxes1
p1, _ = boxes(6, 13, span=20, size=15, dtype=torch.float64)
p2, _ = boxes(6, 14, span=20, size=15, dtype=torch.float64)
loss_cases = {}
for name in ("generalized_box_iou_loss", "distance_box_iou_loss", "complete_box_iou_loss"):
    fn = getattr(O, name)
    for red in ("none", "mean", "sum"):
        x = p1.clone().requires_grad_()
        y = fn(x, p2, reduction=red)
        y.sum().backward()
        loss_cases[name + "_" + red] = {"y": y.detach().flatten(), "g": x.grad.flatten()}
cases["losses"] = loss_cases
focal = {}
for i, (alpha, gamma, red) in enumerate([(0.25, 2, "none"), (0.5, 1.5, "mean"), (-1, 2, "sum"), (0.1, 0, "none")]):
    x = gen((3, 5), 21).requires_grad_()
    t = (gen((3, 5), 22) > 0).double()
    y = O.sigmoid_focal_loss(x, t, alpha, gamma, red)
    y.sum().backward()
    focal["f%d" % (i + 1)] = {"alpha": alpha, "gamma": gamma, "reduction": red, "y": y.detach().flatten(),
                              "g": x.grad.flatten()}
cases["focal"] = focal

# ---- roi_align and roi_pool: input gen((2, 3, 10, 12), 1), rois from the LCG ----
def rois(k, seed):
    r, out = Lcg(seed), []
    for i in range(k):
        x1, y1 = r.u() * 14 - 2, r.u() * 12 - 2
        out.append([i % 2, x1, y1, x1 + r.u() * 9, y1 + r.u() * 8])
    out.append([1, 3.0, 4.0, 3.0, 4.0])  # a point
    out.append([0, 5.0, 5.0, 4.0, 6.0])  # inverted in x
    return torch.tensor(out, dtype=torch.float64)


align = {}
for aligned in (False, True):
    for sr in (-1, 0, 2, 3):
        for scale, size in ((1.0, (3, 4)), (0.5, (2, 2))):
            for dt in ("float64", "float32"):
                x = gen((2, 3, 10, 12), 1, getattr(torch, dt)).requires_grad_()
                r = rois(6, 31).to(getattr(torch, dt))
                y = O.roi_align(x, r, size, scale, sr, aligned)
                y.backward(gen(tuple(y.shape), 99, getattr(torch, dt)))
                name = "a%s_sr%d_s%g_%s" % ("T" if aligned else "F", sr, scale, dt)
                align[name.replace(".", "p").replace("-", "m")] = {
                    "aligned": aligned, "sr": sr, "scale": scale, "size": list(size), "dtype": dt,
                    "y": y.detach().flatten(), "gx": x.grad.flatten()}
cases["roi_align"] = align
pool = {}
for scale, size in ((1.0, (3, 4)), (0.5, (2, 2)), (0.7, (4, 3))):
    x = gen((2, 3, 10, 12), 1).requires_grad_()
    y = O.roi_pool(x, rois(6, 31), size, scale)
    y.backward(gen(tuple(y.shape), 99))
    pool[("s%g" % scale).replace(".", "p")] = {"scale": scale, "size": list(size), "y": y.detach().flatten(),
                                                "gx": x.grad.flatten()}
cases["roi_pool"] = pool

# MultiScaleRoIAlign over three levels (scales 1/4, 1/8, 1/16) of two images
from collections import OrderedDict


def pyramid_boxes(n, seed):
    r, out = Lcg(seed), []
    for _ in range(n):
        s = 8 + r.u() * 150
        x1, y1 = r.u() * 100, r.u() * 90
        out.append([x1, y1, x1 + s * (0.6 + 0.8 * r.u()), y1 + s * (0.6 + 0.8 * r.u())])
    return torch.tensor(out, dtype=torch.float64)


msr = {}
for names, size, sr in ((["f1", "f2", "f3"], (3, 3), 2), (["f2"], 2, -1), (["f1", "f3"], (2, 3), 1)):
    feats = OrderedDict((k, gen((2, 3, 32 // m, 40 // m), 3 + m).requires_grad_()) for k, m in
                        (("f1", 1), ("f2", 2), ("f3", 4)))
    bx = [pyramid_boxes(5, 41), pyramid_boxes(4, 42)]
    pool_ = O.MultiScaleRoIAlign(names, size, sr)
    y = pool_(feats, bx, [(128, 160), (120, 150)])
    y.backward(gen(tuple(y.shape), 99))
    key_ = "_".join(names)
    msr[key_] = {"names": names, "size": list(size) if isinstance(size, tuple) else size, "sr": sr,
                 "y": y.detach().flatten()}
    for k, v in feats.items():
        msr[key_]["g_" + k] = v.grad.flatten() if v.grad is not None else torch.zeros(v.numel(), dtype=torch.float64)
cases["multiscale"] = msr

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision_ops.lua")
with open(out, "w") as f:
    f.write("-- tests/ref/vision_ops.lua -- generated by tests/ref/gen_vision_ops.py (torchvision %s, "
            "PyTorch %s); do not edit.\n" % (torchvision.__version__, torch.__version__))
    f.write("return " + lua(cases, indent="") + "\n")
