#!/usr/bin/python3
"""gen_vision_warp.py -- torchvision reference values for the image kernels
of tests/domains/vision/test_warp.lua (affine, rotate, perspective, elastic).

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_vision_warp.py   # writes tests/ref/vision_warp.lua

Uses Debian's torchvision 0.14, whose tensor kernels compute what 0.26's
image kernels compute. Perspective coefficients are solved as 0.26 does
(float64 least squares rounded to float32) and passed to the tensor kernel.
Inputs come from gen_image()/gen_disp() (test_warp.lua repeats them)."""
import os

import torch
import torchvision
import torchvision.transforms.functional as TF
import torchvision.transforms.functional_tensor as FT
from reflib import lua


def hashes(n, seed):
    """n pseudo-random integers in [0, 2^32) (a multiplicative hash)."""
    return [(k * 2654435761 + seed * 40503 + 12345) % 4294967296 for k in range(n)]


def gen_image(shape, seed, dtype):
    """uint8: the hash's top byte; float: hash / 2^32 (in [0, 1))."""
    n = 1
    for s in shape:
        n *= s
    h = hashes(n, seed)
    if dtype == torch.uint8:
        return torch.tensor([v // 16777216 for v in h], dtype=torch.uint8).reshape(shape)
    return torch.tensor([v / 4294967296 for v in h], dtype=torch.float64).to(dtype).reshape(shape)


def gen_disp(h, w, seed, amp):
    """a displacement field [1, h, w, 2] with values in [-amp, amp)."""
    v = gen_image((1, h, w, 2), seed, torch.float64)
    return ((v * 2 - 1) * amp).to(torch.float32)


def coeffs(startpoints, endpoints):
    """perspective coefficients as torchvision 0.26 solves them."""
    a = torch.zeros(8, 8, dtype=torch.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i, :] = torch.tensor([p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]])
        a[2 * i + 1, :] = torch.tensor([0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]])
    b = torch.tensor(startpoints, dtype=torch.float64).view(8)
    return torch.linalg.lstsq(a, b, driver="gels").solution.to(torch.float32).tolist()


DT = {"uint8": torch.uint8, "float32": torch.float32, "float64": torch.float64}
MODE = {"nearest": TF.InterpolationMode.NEAREST, "bilinear": TF.InterpolationMode.BILINEAR}
cases = {}


def case(name, op, shape, seed, dtype, **kw):
    img = gen_image(shape, seed, DT[dtype])
    c = {"op": op, "shape": list(shape), "seed": seed, "dtype": dtype}
    c.update({k: v for k, v in kw.items()})
    mode = MODE[kw.get("interpolation", "nearest" if op in ("affine", "rotate") else "bilinear")]
    fill = kw.get("fill")
    if op == "affine":
        y = TF.affine(img, kw["angle"], kw["translate"], kw["scale"], kw["shear"], mode, fill, kw.get("center"))
    elif op == "rotate":
        y = TF.rotate(img, kw["angle"], mode, kw.get("expand", False), kw.get("center"), fill)
    elif op == "perspective":
        co = coeffs(kw["startpoints"], kw["endpoints"])
        c["coefficients"] = co
        y = FT.perspective(img, co, mode.value, fill)
    else:
        d = gen_disp(shape[-2], shape[-1], kw["dseed"], kw["amp"])
        y = TF.elastic_transform(img, d, mode, fill)
    c["out_shape"] = list(y.shape)
    c["out"] = y.flatten() if DT[dtype] == torch.uint8 else y.double().flatten()
    cases[name] = c


SP = [[0, 0], [18, 0], [18, 16], [0, 16]]
EP = [[2, 1], [17, 3], [15, 15], [1, 13]]
case("affine_u8_nearest", "affine", (3, 17, 19), 1, "uint8", angle=30.0, translate=[2, -1], scale=0.9, shear=[10.0, 5.0])
case("affine_f32_bilinear", "affine", (3, 17, 19), 2, "float32", angle=-23.5, translate=[1.5, 2.0], scale=1.2,
     shear=[-7.0, 0.0], interpolation="bilinear")
case("affine_f32_fill_center", "affine", (3, 17, 19), 3, "float32", angle=41.0, translate=[0, 3], scale=0.8,
     shear=[4.0, -6.0], interpolation="bilinear", fill=[0.2, 0.5, 0.9], center=[4.0, 6.0])
case("affine_u8_bilinear_fill", "affine", (3, 16, 16), 4, "uint8", angle=12.0, translate=[-2, 1], scale=1.1,
     shear=[0.0, 8.0], interpolation="bilinear", fill=128.0)
case("affine_batch_nearest_fill", "affine", (2, 3, 11, 13), 5, "float32", angle=65.0, translate=[1, 1], scale=0.7,
     shear=[3.0, 3.0], fill=0.5)
case("affine_f64_bilinear", "affine", (2, 9, 12), 6, "float64", angle=15.0, translate=[0.5, -1.5], scale=1.3,
     shear=[12.0, 0.0], interpolation="bilinear", fill=0.25)
case("affine_u8_1ch_nearest", "affine", (1, 15, 14), 7, "uint8", angle=-75.0, translate=[3, 0], scale=1.0,
     shear=[0.0, 0.0], fill=0.0)
case("rotate_u8_nearest", "rotate", (3, 17, 19), 8, "uint8", angle=37.0)
case("rotate_f32_expand", "rotate", (3, 17, 19), 9, "float32", angle=37.0, interpolation="bilinear", expand=True)
case("rotate_f32_expand_fill", "rotate", (3, 12, 20), 10, "float32", angle=123.5, interpolation="bilinear",
     expand=True, fill=[1.0, 0.0, 0.5])
case("rotate_u8_center_fill", "rotate", (3, 14, 14), 11, "uint8", angle=-45.0, interpolation="bilinear",
     center=[3.0, 4.0], fill=0.0)
case("rotate_f32_90_nonsquare", "rotate", (2, 9, 14), 12, "float32", angle=90.0, interpolation="bilinear")
# (0.14 makes a 90-degree expanding rotation one pixel too big; 0.26 transposes: only square here)
case("rotate_u8_90_square", "rotate", (3, 12, 12), 13, "uint8", angle=90.0)
case("rotate_f32_batch_nearest_expand", "rotate", (2, 3, 10, 13), 14, "float32", angle=-20.0, expand=True, fill=0.75)
case("perspective_f32", "perspective", (3, 17, 19), 15, "float32", startpoints=SP, endpoints=EP)
case("perspective_u8_nearest_fill", "perspective", (3, 17, 19), 16, "uint8", startpoints=SP, endpoints=EP,
     interpolation="nearest", fill=100.0)
case("perspective_f32_batch_fill", "perspective", (2, 3, 17, 19), 17, "float32", startpoints=EP, endpoints=SP,
     fill=[0.1, 0.2, 0.3])
case("perspective_u8_bilinear", "perspective", (3, 17, 19), 18, "uint8", startpoints=SP, endpoints=EP)
case("elastic_f32", "elastic", (3, 13, 15), 19, "float32", dseed=40, amp=0.2)
case("elastic_u8_nearest_fill", "elastic", (3, 13, 15), 20, "uint8", dseed=41, amp=0.3, interpolation="nearest",
     fill=7.0)
case("elastic_u8_bilinear", "elastic", (2, 3, 12, 10), 21, "uint8", dseed=42, amp=0.15)

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision_warp.lua")
with open(out, "w") as f:
    f.write("-- tests/ref/vision_warp.lua -- generated by tests/ref/gen_vision_warp.py (torchvision %s); do not edit.\n"
            % torchvision.__version__)
    f.write("return " + lua(cases, indent="") + "\n")
