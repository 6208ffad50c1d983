#!/usr/bin/python3
"""gen_vision_utils.py -- torchvision 0.14 references for
tests/domains/vision/test_utils.lua:

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_vision_utils.py   # writes tests/ref/vision_utils.lua

Inputs come from gen() (float values) and img() (uint8 pictures); the Lua
test repeats both. make_grid results are exact values; save_image's PNG is
read back by PIL; the draw_* results (PIL's rasterization) are whole images
written as hex strings (two digits a byte, C x H x W order). Keypoint
connectivity is written 1-based, as moontorch takes it."""
import io
import os

import torch
from PIL import Image
from torchvision.utils import (draw_bounding_boxes, draw_keypoints, draw_segmentation_masks, make_grid,
                               save_image)
from reflib import lua

HERE = os.path.dirname(os.path.abspath(__file__))


def gen(shape, seed):
    n = 1
    for s in shape:
        n *= s
    vals = [((37 * k + 11 * seed) % 101 - 50) / 32 for k in range(n)]
    return torch.tensor(vals, dtype=torch.float32).reshape(shape)


def img(c, h, w, seed):
    """uint8 C x H x W: (x * 7 + y * 13 + c * 50 + seed) % 256"""
    y = torch.arange(h).view(1, h, 1)
    x = torch.arange(w).view(1, 1, w)
    k = torch.arange(c).view(c, 1, 1)
    return ((x * 7 + y * 13 + k * 50 + seed) % 256).to(torch.uint8)


def hexs(t):
    return bytes(t.to(torch.uint8).flatten().tolist()).hex()


out = {}

# ---- make_grid: exact values
grids = []
for name, shape, seed, opts in [
        ("batch", (5, 3, 4, 5), 1, {"nrow": 2, "padding": 1}),
        ("defaults", (3, 3, 2, 3), 2, {}),
        ("gray_batch", (4, 1, 3, 3), 3, {"nrow": 3, "pad_value": 0.5}),
        ("normalize", (3, 3, 3, 4), 4, {"normalize": True}),
        ("normalize_range", (3, 3, 3, 4), 5, {"normalize": True, "value_range": (-0.5, 0.75)}),
        ("scale_each", (3, 3, 3, 4), 6, {"normalize": True, "scale_each": True, "padding": 0}),
        ("single_gray", (1, 4, 5), 7, {}),
        ("hw", (4, 6), 8, {"padding": 3}),
        ("one_in_batch", (1, 3, 2, 2), 9, {"padding": 5})]:
    x = gen(shape, seed)
    g = make_grid(x, **opts)
    entry = {"name": name, "shape": list(shape), "seed": seed, "out_shape": list(g.shape), "out": g.flatten()}
    o = dict(opts)
    if "value_range" in o:
        o["value_range"] = list(o["value_range"])
    entry["opts"] = o
    grids.append(entry)
# a list of images
x = [gen((1, 3, 3), 20 + k) for k in range(3)]
g = make_grid(x, nrow=2)
grids.append({"name": "list", "list": [[1, 3, 3, 20 + k] for k in range(3)], "opts": {"nrow": 2},
              "out_shape": list(g.shape), "out": g.flatten()})
out["make_grid"] = grids

# ---- save_image: the PNG's pixels as PIL reads them back
x = (gen((3, 3, 4, 4), 30) + 1.6) / 3.2  # mostly in [0, 1], a few out
buf = io.BytesIO()
save_image(x, buf, format="png", nrow=2, padding=1)
back = torch.tensor(list(Image.open(io.BytesIO(buf.getvalue())).convert("RGB").tobytes())).view(
    *Image.open(io.BytesIO(buf.getvalue())).size[::-1], 3).permute(2, 0, 1)
out["save_image"] = {"shape": list(back.shape), "hex": hexs(back)}

# ---- draw_bounding_boxes without labels
boxes_cases = []
base = img(3, 24, 32, 5)
for name, boxes, kw in [
        ("outline", [[2, 3, 10, 12], [5, 5, 30, 20], [20, 1, 22, 3]], {"colors": ["red", "#10e0a0", (7, 100, 200)]}),
        ("wide", [[1, 1, 12, 14], [8, 4, 31, 23], [3, 15, 9, 22]], {"width": 3, "colors": "blue"}),
        ("palette_clip", [[-3, -2, 10, 8], [15, 10, 40, 30], [4.7, 6.2, 18.9, 19.5]], {"width": 2}),
        ("fill", [[2, 3, 17, 12], [10, 8, 30, 22]], {"fill": True, "colors": ["orange", "purple"]}),
        ("fill_wide", [[0, 0, 31, 23], [6, 6, 14, 14]], {"fill": True, "width": 4}),
        ("thin_box", [[5, 5, 6, 6], [10, 2, 10, 20]], {"width": 3, "colors": "white"})]:
    b = torch.tensor(boxes, dtype=torch.float32)
    r = draw_bounding_boxes(base, b, **kw)
    o = dict(kw)
    if "colors" in o and isinstance(o["colors"], list):
        o["colors"] = [list(c) if isinstance(c, tuple) else c for c in o["colors"]]
    boxes_cases.append({"name": name, "boxes": boxes, "opts": o, "hex": hexs(r)})
gray = img(1, 10, 12, 9)
r = draw_bounding_boxes(gray, torch.tensor([[1, 1, 8, 6]]), colors="lime")
boxes_cases.append({"name": "gray", "gray": True, "boxes": [[1, 1, 8, 6]], "opts": {"colors": "lime"}, "hex": hexs(r)})
out["boxes"] = boxes_cases

# ---- draw_segmentation_masks: exact
masks_cases = []
base = img(3, 16, 20, 40)
yy = torch.arange(16).view(16, 1)
xx = torch.arange(20).view(1, 20)
m1 = ((xx - 6) ** 2 + (yy - 7) ** 2) < 30
m2 = (xx + yy) % 5 == 0
m3 = (xx > 12).expand(16, 20)
masks = torch.stack([m1, m2, m3])
for name, kw in [("default", {}), ("alpha", {"alpha": 0.35, "colors": ["red", (10, 200, 30), "#336699"]}),
                 ("one", {"alpha": 1.0, "colors": ["navy"]}), ("zero", {"alpha": 0.0})]:
    ms = masks[:1] if name == "one" else masks
    r = draw_segmentation_masks(base, ms, **kw)
    o = dict(kw)
    if "colors" in o:
        o["colors"] = [list(c) if isinstance(c, tuple) else c for c in o["colors"]]
    masks_cases.append({"name": name, "n": ms.shape[0], "opts": o, "hex": hexs(r)})
out["masks"] = masks_cases

# ---- draw_keypoints: PIL's circles and wide lines (compared pixel by pixel, edges may differ)
kp_cases = []
base = img(3, 40, 48, 70)
kps = [[[5, 6], [20, 8], [30, 30], [8, 33]], [[40, 5], [44, 20], [25, 18], [35, 36]]]
for name, kw in [("dots", {"colors": "red"}), ("dots_r4", {"colors": "#00ff00", "radius": 4}), ("dots_r12", {"colors": "red", "radius": 12}),
                 ("lines", {"connectivity": [(0, 1), (1, 2), (2, 3), (3, 0)], "colors": "blue"}),
                 ("lines_w1", {"connectivity": [(0, 2), (1, 3)], "width": 1}),
                 ("lines_w5", {"connectivity": [(0, 1), (0, 2), (0, 3)], "width": 5, "radius": 1, "colors": "yellow"}),
                 ("no_colors", {"connectivity": [(1, 2)]})]:
    r = draw_keypoints(base, torch.tensor(kps, dtype=torch.float32), **kw)
    o = dict(kw)
    if "connectivity" in o:
        o["connectivity"] = [[a + 1, b + 1] for a, b in o["connectivity"]]
    kp_cases.append({"name": name, "opts": o, "hex": hexs(r)})
out["keypoints"] = {"kps": kps, "cases": kp_cases}

with open(os.path.join(HERE, "vision_utils.lua"), "w") as f:
    f.write("-- generated by tests/ref/gen_vision_utils.py (torchvision 0.14, PIL); do not edit\n")
    f.write("return " + lua(out, single=True) + "\n")
