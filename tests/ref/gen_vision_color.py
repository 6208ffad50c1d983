#!/usr/bin/python3
"""gen_vision_color.py -- torchvision references for
tests/domains/vision/test_color.lua (the color, blur, normalize, erase and
dtype ops of torch.vision.transforms.v2.functional).

    cd tests/ref && /usr/bin/python3 gen_vision_color.py   # writes vision_color.lua

Uses Debian's torchvision 0.14 (transforms.functional on tensors, whose
results the v2 kernels of 0.26 repeat). Inputs come from gen() (the Lua test
repeats it). Each case: op, input spec, arguments and the flat result."""
import os

import torch
import torchvision.transforms.functional as TF
from reflib import lua

DT = {"uint8": torch.uint8, "float32": torch.float32, "float64": torch.float64}


def gen(shape, seed, dtype, mods=None):
    """Values (k*k*31 + k*17 + seed*101) % 256 for uint8, % 1000 / 999 for
    floats, k the flat index; mods "const" makes the first channel plane of
    every image one value (77, or 0.3)."""
    n = 1
    for s in shape:
        n *= s
    if dtype == "uint8":
        vals = [(k * k * 31 + k * 17 + seed * 101) % 256 for k in range(n)]
    else:
        vals = [((k * k * 31 + k * 17 + seed * 101) % 1000) / 999 for k in range(n)]
    t = torch.tensor(vals, dtype=torch.float64).reshape(shape).to(DT[dtype])
    if mods == "const":
        t[..., 0, :, :] = 77 if dtype == "uint8" else 0.3
    return t


def float_via_uint8(fn):
    """0.26 runs equalize on floats through uint8 (0.14 takes uint8 only)."""
    def run(x, *a):
        u = TF.convert_image_dtype(x, torch.uint8)
        return TF.convert_image_dtype(fn(u, *a), x.dtype)
    return run


OPS = {
    "adjust_brightness": TF.adjust_brightness,
    "adjust_contrast": TF.adjust_contrast,
    "adjust_saturation": TF.adjust_saturation,
    "adjust_hue": TF.adjust_hue,
    "adjust_gamma": TF.adjust_gamma,
    "adjust_sharpness": TF.adjust_sharpness,
    "autocontrast": TF.autocontrast,
    "equalize": lambda x: TF.equalize(x) if x.dtype == torch.uint8 else float_via_uint8(TF.equalize)(x),
    "invert": TF.invert,
    "posterize": lambda x, b: TF.posterize(x, b) if x.dtype == torch.uint8 else
    ((x * (1 << b)).floor().clamp(0, (1 << b) - 1) / (1 << b)),
    "solarize": TF.solarize,
    "rgb_to_grayscale": TF.rgb_to_grayscale,
    "gaussian_blur": TF.gaussian_blur,
    "normalize": TF.normalize,
    "erase": lambda x, i, j, h, w, v: TF.erase(x, i, j, h, w, torch.tensor(v, dtype=torch.float32).view(-1, 1, 1)),
    "convert_image_dtype": lambda x, d: TF.convert_image_dtype(x, DT[d]),
}

cases = []


def case(op, shape, seed, dtype, *args, mods=None):
    x = gen(shape, seed, dtype, mods)
    y = OPS[op](x.clone(), *args)
    c = {"op": op, "shape": list(shape), "seed": seed, "dtype": dtype, "args": list(args),
         "y_dtype": str(y.dtype).replace("torch.", ""), "y_shape": list(y.shape), "y": y.flatten()}
    if mods:
        c["mods"] = mods
    cases.append(c)


S3, B3, S1 = (3, 9, 11), (2, 3, 7, 8), (1, 6, 7)
for dt in ("uint8", "float32"):
    for f in (0.0, 0.5, 1.7):
        case("adjust_brightness", S3, 1, dt, f)
    case("adjust_brightness", S1, 2, dt, 1.3)
    for f in (0.3, 1.8):
        case("adjust_contrast", S3, 3, dt, f)
    case("adjust_contrast", B3, 4, dt, 0.6)
    case("adjust_contrast", S1, 5, dt, 1.4)
    for f in (0.0, 0.6, 2.0):
        case("adjust_saturation", S3, 6, dt, f)
    case("adjust_saturation", B3, 7, dt, 1.5)
    for f in (-0.5, -0.3, 0.1, 0.45):
        case("adjust_hue", S3, 8, dt, f)
    case("adjust_hue", B3, 9, dt, 0.2)
    case("adjust_hue", S3, 10, dt, 0.25, mods="const")
    case("adjust_gamma", S3, 11, dt, 0.5)
    case("adjust_gamma", S3, 12, dt, 2.2, 0.8)
    for f in (0.2, 2.5):
        case("adjust_sharpness", S3, 13, dt, f)
    case("adjust_sharpness", B3, 14, dt, 0.0)
    case("adjust_sharpness", S1, 15, dt, 3.0)
    case("autocontrast", S3, 16, dt)
    case("autocontrast", B3, 17, dt, mods="const")
    case("equalize", (3, 24, 20), 18, dt)
    case("equalize", (2, 3, 20, 16), 19, dt, mods="const")
    case("equalize", S3, 20, dt)  # few pixels: PIL's step is 0, the image comes back
    case("invert", S3, 21, dt)
    for b in (1, 4, 8):
        case("posterize", S3, 22, dt, b)
    case("solarize", S3, 23, dt, 100 if dt == "uint8" else 0.4)
    for n in (1, 3):
        case("rgb_to_grayscale", S3, 24, dt, n)
    case("rgb_to_grayscale", B3, 25, dt, 1)
    case("gaussian_blur", S3, 26, dt, [3, 3], [0.8, 0.8])
    case("gaussian_blur", B3, 27, dt, [5, 3], [1.5, 0.7])
    case("gaussian_blur", S3, 28, dt, [7, 5], None)
    case("erase", S3, 29, dt, 2, 3, 4, 5, [0.25])
    case("erase", B3, 30, dt, 0, 1, 7, 3, [10.0, 20.0, 30.0])
case("adjust_hue", S3, 31, "float64", 0.3)
case("adjust_contrast", S3, 32, "float64", 0.7)
case("gaussian_blur", S3, 33, "float64", [3, 5], [1.1, 0.6])
case("normalize", S3, 34, "float32", [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
case("normalize", B3, 35, "float64", [0.5], [0.25])
case("convert_image_dtype", S3, 36, "uint8", "float32")
case("convert_image_dtype", S3, 37, "float32", "uint8")
case("convert_image_dtype", S3, 38, "float64", "uint8")
case("convert_image_dtype", S3, 39, "uint8", "float64")

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision_color.lua")
with open(out, "w") as f:
    f.write("-- generated by tests/ref/gen_vision_color.py (torchvision " + __import__("torchvision").__version__
            + "); do not edit\nreturn {\n")
    for c in cases:
        y = c.pop("y")
        c["args"] = [False if a is None else a for a in c["args"]]
        f.write("  " + lua(c)[:-1] + ", y = " + lua(y, single=True) + "},\n")
    f.write("}\n")
