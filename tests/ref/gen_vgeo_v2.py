#!/usr/bin/env python3
"""gen_vgeo_v2.py -- torchvision 0.26 (transforms.v2) reference values for
tests/domains/vision/test_vgeo.lua: the kernels 0.14 lacks (boxes in every
format, keypoints, masks, the uint8 resize path of v2, nearest-exact).

    python gen_vgeo_v2.py OUT_PATH      # e.g. tests/ref/vgeo_v2.lua

Imports only torch, torchvision and the standard library; prints nothing.
Each case: the input (kind, data or a gen() spec, format, canvas), the
functional and its arguments (positional `args`, named `opts`, both as the
Lua test passes them), and the results (values flat, shapes, canvas,
format). Images come from gen(), which the Lua test repeats."""
import math
import re
import sys

import torch
import torchvision
from torchvision import tv_tensors
from torchvision.transforms import v2
from torchvision.transforms.v2 import functional as F

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def lua(v):
    """a Lua literal for v (as tests/ref/reflib.py writes them)"""
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        return lua(v.tolist())
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join((k if _IDENT.match(k) else "[" + lua(k) + "]") + " = " + lua(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def gen(shape, seed, dtype):
    n = 1
    for s in shape:
        n *= s
    vals = [(k * 7919 + seed * 104729) % 65521 % 256 for k in range(n)]
    t = torch.tensor(vals, dtype=torch.float64).reshape(shape)
    if dtype == "uint8":
        return t.to(torch.uint8)
    return (t / 256).to(torch.float32 if dtype == "float32" else torch.float64)


DT = {"float32": torch.float32, "int64": torch.int64, "float64": torch.float64, "uint8": torch.uint8}
cases = []


def result(r):
    """results as {y = flat values, shapes, canvas_size, format}"""
    rs = list(r) if isinstance(r, (list, tuple)) else [r]
    out = {"y": [], "shapes": []}
    for t in rs:
        out["shapes"].append(list(t.shape))
        out["y"] += t.flatten().double().tolist()
        if isinstance(t, tv_tensors.BoundingBoxes):
            out["canvas_size"] = list(t.canvas_size)
            out["format"] = t.format.name
        if isinstance(t, tv_tensors.KeyPoints):
            out["canvas_size"] = list(t.canvas_size)
    return out


def case(name, inp, fn, args, opts=None, pyopts=None):
    """inp: {kind, data | gen, format, canvas_size, dtype}; fn: the F name"""
    opts = opts or {}
    x = make(inp)
    r = getattr(F, fn)(x, *args, **dict(opts, **(pyopts or {})))
    c = {"name": name, "input": inp, "fn": fn, "args": list(args), "opts": opts}
    c.update(result(r))
    cases.append(c)


def make(inp):
    k = inp["kind"]
    if k == "image":
        return tv_tensors.Image(gen(*inp["gen"]))
    t = torch.tensor(inp["data"], dtype=DT[inp["dtype"]])
    if k == "boxes":
        return tv_tensors.BoundingBoxes(t, format=inp["format"], canvas_size=tuple(inp["canvas_size"]))
    if k == "keypoints":
        return tv_tensors.KeyPoints(t, canvas_size=tuple(inp["canvas_size"]))
    return tv_tensors.Mask(t)


XYXY = [[1.0, 2.0, 9.0, 8.0], [10.0, 10.0, 14.0, 12.5], [0.0, 0.0, 20.0, 15.0], [-3.0, 4.0, 5.0, 30.0],
        [18.5, 1.0, 19.5, 14.0]]
CS = [15, 20]
for fmt in ("XYXY", "XYWH", "CXCYWH"):
    for dt in ("float32", "int64"):
        data = F.convert_bounding_box_format(torch.tensor(XYXY), old_format="XYXY", new_format=fmt)
        data = data.to(DT[dt]).tolist()
        inp = {"kind": "boxes", "data": data, "format": fmt, "canvas_size": CS, "dtype": dt}
        tag = "boxes_%s_%s_" % (fmt, dt)
        case(tag + "hflip", inp, "horizontal_flip", [])
        case(tag + "vflip", inp, "vertical_flip", [])
        case(tag + "resize", inp, "resize", [[8, 30]])
        case(tag + "resize_short", inp, "resize", [[10]], {"max_size": 12})
        case(tag + "crop", inp, "crop", [2, 3, 8, 10])
        case(tag + "crop_out", inp, "crop", [-2, 12, 20, 15])
        case(tag + "center_crop", inp, "center_crop", [[7, 9]])
        case(tag + "center_crop_large", inp, "center_crop", [[20, 25]])
        case(tag + "resized_crop", inp, "resized_crop", [2, 3, 8, 10, [16, 5]])
        case(tag + "pad", inp, "pad", [[1, 2, 3, 4]])
        case(tag + "pad_negative", inp, "pad", [[-2, 1, 0, -3]])
        case(tag + "clamp", inp, "clamp_bounding_boxes", [])
        for new in ("XYXY", "XYWH", "CXCYWH"):
            case(tag + "to_" + new, inp, "convert_bounding_box_format", [], {"new_format": new})
        case(tag + "sanitize", inp, "sanitize_bounding_boxes", [], {"min_size": 2.0})

KP = [[0.0, 0.0], [3.5, 7.25], [19.0, 14.0], [-2.0, 20.0], [11.0, 3.0]]
for dt in ("float32", "int64"):
    data = torch.tensor(KP).to(DT[dt]).tolist()
    inp = {"kind": "keypoints", "data": data, "canvas_size": CS, "dtype": dt}
    tag = "keypoints_%s_" % dt
    case(tag + "hflip", inp, "horizontal_flip", [])
    case(tag + "vflip", inp, "vertical_flip", [])
    case(tag + "resize", inp, "resize", [[8, 30]])
    case(tag + "crop", inp, "crop", [2, 3, 8, 10])
    case(tag + "center_crop", inp, "center_crop", [[7, 9]])
    case(tag + "resized_crop", inp, "resized_crop", [2, 3, 8, 10, [16, 5]])
    case(tag + "pad", inp, "pad", [[1, 2, 3, 4]])
    case(tag + "clamp", inp, "clamp_keypoints", [])

MASK = ((gen([7, 9], 31, "float64") * 4).floor()).to(torch.int64).tolist()
minp = {"kind": "mask", "data": MASK, "dtype": "int64"}
case("mask_resize", minp, "resize", [[12, 5]])
case("mask_resize_short", minp, "resize", [[4]])
case("mask_crop_out", minp, "crop", [-1, 2, 8, 9])
case("mask_center_crop", minp, "center_crop", [[10, 4]])
case("mask_pad_edge", minp, "pad", [[2, 1]], {"padding_mode": "edge"})
case("mask_pad_fill", minp, "pad", [[1, 2, 3, 0]], {"fill": 5})
case("mask_hflip", minp, "horizontal_flip", [])
case("mask_resized_crop", minp, "resized_crop", [1, 2, 5, 6, [9, 13]])

for dt in ("uint8", "float32"):
    for mode in ("bilinear", "bicubic", "nearest", "nearest-exact"):
        for size, seed in (([7, 9], 41), ([30, 41], 42), ([13, 5], 43)):
            inp = {"kind": "image", "gen": [[3, 19, 23], seed, dt]}
            im = v2.InterpolationMode(mode)
            case("image_%s_%s_%dx%d" % (dt, mode.replace("-", "_"), size[0], size[1]), inp, "resize", [size],
                 {"interpolation": mode, "antialias": True}, pyopts={"interpolation": im})
inp = {"kind": "image", "gen": [[2, 3, 16, 18], 44, "uint8"]}
case("image_uint8_pad_symmetric", inp, "pad", [[3, 1, 2, 4]], {"padding_mode": "symmetric"})
case("image_uint8_pad_vector_fill", {"kind": "image", "gen": [[3, 6, 7], 45, "uint8"]}, "pad", [[2, 1]],
     {"fill": [10, 20, 30]})
case("image_uint8_crop_out", {"kind": "image", "gen": [[3, 6, 7], 46, "uint8"]}, "crop", [-2, 3, 7, 6])

with open(sys.argv[1], "w") as f:
    f.write("-- tests/ref/vgeo_v2.lua -- generated by tests/ref/gen_vgeo_v2.py (torchvision %s, PyTorch %s); "
            "do not edit.\n" % (torchvision.__version__, torch.__version__))
    f.write("return {\n")
    for c in cases:
        f.write("  " + lua(c) + ",\n")
    f.write("}\n")
