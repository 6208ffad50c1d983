#!/usr/bin/python3
"""gen_vgeo.py -- torchvision reference values for
tests/domains/vision/test_vgeo.lua (the image kernels of resize, crop,
center_crop, resized_crop, pad, flips, five_crop and ten_crop).

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_vgeo.py   # writes tests/ref/vgeo.lua

Uses Debian's torchvision 0.14 (transforms.functional on tensors: uint8
images are resized in float and rounded, bicubic clamped) and, for
nearest-exact (not in 0.14), torch's interpolate as torchvision 0.26 calls
it. Images come from gen() (test_vgeo.lua repeats it): uint8 pixels from a
multiplicative hash, float pixels in [0, 1)."""
import os

import torch
import torch.nn.functional as NF
import torchvision.transforms.functional as F
from torchvision.transforms.functional import InterpolationMode as IM
from reflib import lua


def gen(shape, seed, dtype):
    n = 1
    for s in shape:
        n *= s
    vals = [(k * 7919 + seed * 104729) % 65521 % 256 for k in range(n)]
    t = torch.tensor(vals, dtype=torch.float64).reshape(shape)
    if dtype == "uint8":
        return t.to(torch.uint8)
    return (t / 256).to(torch.float32 if dtype == "float32" else torch.float64)


MODES = {"nearest": IM.NEAREST, "bilinear": IM.BILINEAR, "bicubic": IM.BICUBIC}
cases = {}


def put(name, x, y, **args):
    """a case: input spec, args, result shape and values"""
    ys = y if isinstance(y, (list, tuple)) else [y]
    c = {"x": x, "args": args, "shapes": [list(t.shape) for t in ys]}
    vals = []
    for t in ys:
        vals += t.flatten().tolist()
    c["y"] = vals
    cases[name] = c


def resize_case(name, shape, seed, dtype, size, mode, antialias, max_size=None):
    x = gen(shape, seed, dtype)
    if mode == "nearest-exact":
        xf = x if x.is_floating_point() else x.float()
        y = NF.interpolate(xf.reshape((-1,) + tuple(x.shape[-3:])), size=size, mode="nearest-exact")
        y = y.reshape(tuple(x.shape[:-2]) + tuple(y.shape[-2:])).to(x.dtype)
    else:
        aa = antialias if mode != "nearest" else None
        y = F.resize(x, size, interpolation=MODES[mode], max_size=max_size, antialias=aa)
    put(name, [list(shape), seed, dtype], y, op="resize", size=size, mode=mode, antialias=antialias,
        max_size=max_size if max_size is not None else False)


# downscale, upscale, mixed, shorter side, max_size; uint8 and float; batches
for dt in ("uint8", "float32"):
    for mode in ("nearest", "nearest-exact", "bilinear", "bicubic"):
        for aa in (True, False):
            if mode.startswith("nearest") and not aa:
                continue
            tag = "%s_%s_%s" % (dt, mode.replace("-", "_"), "aa" if aa else "noaa")
            resize_case(tag + "_down", (3, 19, 23), 1, dt, [7, 9], mode, aa)
            resize_case(tag + "_up", (3, 5, 6), 2, dt, [11, 16], mode, aa)
            resize_case(tag + "_mixed", (2, 3, 9, 14), 3, dt, [13, 5], mode, aa)
            resize_case(tag + "_big", (1, 64, 80), 4, dt, [13, 17], mode, aa)
resize_case("float64_bicubic_aa", (2, 10, 12), 5, "float64", [4, 7], "bicubic", True)
resize_case("uint8_short_side", (3, 12, 20), 6, "uint8", [6], "bilinear", True)
resize_case("uint8_short_side_tall", (3, 20, 12), 7, "uint8", [9], "bilinear", True)
resize_case("float32_max_size", (3, 12, 30), 8, "float32", [10], "bilinear", True, max_size=16)
resize_case("uint8_one_pixel", (1, 1, 1), 9, "uint8", [3, 4], "bicubic", True)
resize_case("float32_to_one", (2, 9, 7), 10, "float32", [1, 1], "bilinear", True)


def img_case(name, shape, seed, dtype, op, fn, **args):
    x = gen(shape, seed, dtype)
    put(name, [list(shape), seed, dtype], fn(x), op=op, **args)


for dt in ("uint8", "float32"):
    img_case(dt + "_crop_inside", (3, 10, 12), 11, dt, "crop", lambda x: F.crop(x, 2, 3, 5, 6), top=2, left=3,
             height=5, width=6)
    img_case(dt + "_crop_outside", (3, 10, 12), 12, dt, "crop", lambda x: F.crop(x, -2, 8, 6, 7), top=-2, left=8,
             height=6, width=7)
    img_case(dt + "_center_crop_small", (3, 11, 14), 13, dt, "center_crop", lambda x: F.center_crop(x, [4, 7]),
             output_size=[4, 7])
    img_case(dt + "_center_crop_large", (3, 5, 6), 14, dt, "center_crop", lambda x: F.center_crop(x, [8, 9]),
             output_size=[8, 9])
    img_case(dt + "_center_crop_odd", (2, 9, 8), 15, dt, "center_crop", lambda x: F.center_crop(x, [4, 5]),
             output_size=[4, 5])
    img_case(dt + "_resized_crop", (3, 20, 24), 16, dt, "resized_crop",
             lambda x: F.resized_crop(x, 3, 5, 12, 14, [6, 5], antialias=True), top=3, left=5, height=12, width=14,
             size=[6, 5], mode="bilinear", antialias=True)
    img_case(dt + "_resized_crop_bicubic_up", (3, 12, 12), 17, dt, "resized_crop",
             lambda x: F.resized_crop(x, 1, 2, 5, 6, [9, 13], interpolation=IM.BICUBIC, antialias=True), top=1,
             left=2, height=5, width=6, size=[9, 13], mode="bicubic", antialias=True)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        img_case("%s_pad_%s" % (dt, mode), (2, 5, 6), 18, dt, "pad",
                 lambda x, m=mode: F.pad(x, [2, 1, 3, 4], fill=7, padding_mode=m), padding=[2, 1, 3, 4], fill=7,
                 padding_mode=mode)
    img_case(dt + "_pad_two", (3, 4, 5), 19, dt, "pad", lambda x: F.pad(x, [1, 2]), padding=[1, 2], fill=0,
             padding_mode="constant")
    img_case(dt + "_pad_negative", (2, 7, 8), 20, dt, "pad",
             lambda x: F.pad(x, [-1, 2, 1, -2], padding_mode="constant"), padding=[-1, 2, 1, -2], fill=0,
             padding_mode="constant")
    img_case(dt + "_hflip", (2, 3, 4, 5), 21, dt, "hflip", F.hflip)
    img_case(dt + "_vflip", (2, 3, 4, 5), 22, dt, "vflip", F.vflip)
    img_case(dt + "_five_crop", (3, 9, 10), 23, dt, "five_crop", lambda x: F.five_crop(x, [4, 5]), size=[4, 5])
    img_case(dt + "_ten_crop_v", (3, 9, 10), 24, dt, "ten_crop", lambda x: F.ten_crop(x, [5, 3], vertical_flip=True),
             size=[5, 3], vertical_flip=True)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vgeo.lua")
with open(out, "w") as f:
    f.write("-- tests/ref/vgeo.lua -- generated by tests/ref/gen_vgeo.py (torchvision %s, PyTorch %s); do not edit.\n"
            % (__import__("torchvision").__version__, torch.__version__))
    f.write("return " + lua(cases, single=True, indent="") + "\n")
