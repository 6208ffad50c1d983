#!/usr/bin/env python3
"""gen_vision_color_v2.py -- torchvision 0.26 (transforms.v2.functional)
references for tests/domains/vision/test_color.lua: the same ops as
gen_vision_color.py (run on torchvision 0.14) plus what 0.14 lacks (to_dtype's
scaling rules, equalize of float images, permute_channels, grayscale_to_rgb)
and the exact 0.26 rounding (hue scaled back by 255.999, autocontrast).

    python gen_vision_color_v2.py OUT_PATH     # writes OUT_PATH, prints nothing

Needs only torch, torchvision (0.26) and the standard library. Inputs come from
gen() (the Lua test repeats it). The writer repeats reflib.py's format."""
import math
import re
import sys

import torch
import torchvision
import torchvision.transforms.v2.functional as F

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key(k):
    k = str(k)
    return k if _IDENT.match(k) else "[" + lua(k) + "]"


def lua(v, single=False):
    """A Lua literal for v (as reflib.lua; single: floats with 9 digits)."""
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        return lua(v.tolist(), single)
    if v is None:
        return "false"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return ("%.9g" % v) if single else repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x, single) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join(key(k) + " = " + lua(x, single) for k, x in v.items()) + "}"
    raise TypeError(type(v))


DT = {"uint8": torch.uint8, "float32": torch.float32, "float64": torch.float64, "int16": torch.int16,
      "int32": torch.int32, "bool": torch.bool, "uint16": getattr(torch, "uint16", None), "int8": torch.int8}


def gen(shape, seed, dtype, mods=None):
    """As gen_vision_color.py's gen(); int8 values are taken % 128."""
    n = 1
    for s in shape:
        n *= s
    if dtype in ("float32", "float64"):
        vals = [((k * k * 31 + k * 17 + seed * 101) % 1000) / 999 for k in range(n)]
    else:
        m = 128 if dtype == "int8" else 256
        vals = [(k * k * 31 + k * 17 + seed * 101) % m for k in range(n)]
    t = torch.tensor(vals, dtype=torch.float64).reshape(shape).to(DT[dtype])
    if mods == "const":
        t[..., 0, :, :] = 77 if dtype == "uint8" else 0.3
    return t


def erase(x, i, j, h, w, v):
    return F.erase(x, i, j, h, w, torch.tensor(v, dtype=torch.float32).view(-1, 1, 1))


OPS = {
    "adjust_brightness": F.adjust_brightness, "adjust_contrast": F.adjust_contrast,
    "adjust_saturation": F.adjust_saturation, "adjust_hue": F.adjust_hue, "adjust_gamma": F.adjust_gamma,
    "adjust_sharpness": F.adjust_sharpness, "autocontrast": F.autocontrast, "equalize": F.equalize,
    "invert": F.invert, "posterize": F.posterize, "solarize": F.solarize, "rgb_to_grayscale": F.rgb_to_grayscale,
    "grayscale_to_rgb": F.grayscale_to_rgb, "gaussian_blur": F.gaussian_blur, "normalize": F.normalize,
    "erase": erase, "permute_channels": F.permute_channels,
    "to_dtype": lambda x, d, s: F.to_dtype(x, DT[d], scale=s),
    "convert_image_dtype": lambda x, d: F.convert_image_dtype(x, DT[d]),
}

cases = []


def case(op, shape, seed, dtype, *args, mods=None):
    x = gen(shape, seed, dtype, mods)
    try:
        y = OPS[op](x.clone(), *args)
    except Exception:
        return  # (e.g. uint16 ops this torch lacks)
    if op == "permute_channels":
        args = ([p + 1 for p in args[0]],)  # the Lua API takes 1-based channel indices
    c = {"op": op, "shape": list(shape), "seed": seed, "dtype": dtype, "args": list(args),
         "y_dtype": str(y.dtype).replace("torch.", ""), "y_shape": list(y.shape)}
    if mods:
        c["mods"] = mods
    y = y.flatten()
    c["y"] = y.to(torch.float64) if y.is_floating_point() else [int(v) for v in y.to(torch.int64).tolist()]
    cases.append(c)


S3, B3, S1, V = (3, 9, 11), (2, 3, 7, 8), (1, 6, 7), (2, 2, 3, 5, 6)
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
    case("adjust_saturation", V, 7, dt, 1.5)
    for f in (-0.5, -0.3, 0.1, 0.45):
        case("adjust_hue", S3, 8, dt, f)
    case("adjust_hue", B3, 9, dt, 0.2)
    case("adjust_hue", S3, 10, dt, 0.25, mods="const")
    case("adjust_gamma", S3, 11, dt, 0.5)
    case("adjust_gamma", S3, 12, dt, 2.2, 0.8)
    for f in (0.2, 2.5):
        case("adjust_sharpness", S3, 13, dt, f)
    case("adjust_sharpness", V, 14, dt, 0.0)
    case("adjust_sharpness", S1, 15, dt, 3.0)
    case("autocontrast", S3, 16, dt)
    case("autocontrast", B3, 17, dt, mods="const")
    case("equalize", (3, 24, 20), 18, dt)
    case("equalize", (2, 3, 20, 16), 19, dt, mods="const")
    case("equalize", S3, 20, dt)
    case("invert", S3, 21, dt)
    for b in (1, 4, 8):
        case("posterize", S3, 22, dt, b)
    case("solarize", S3, 23, dt, 100 if dt == "uint8" else 0.4)
    for n in (1, 3):
        case("rgb_to_grayscale", S3, 24, dt, n)
        case("rgb_to_grayscale", S1, 24, dt, n)
    case("grayscale_to_rgb", S1, 25, dt)
    case("gaussian_blur", S3, 26, dt, [3, 3], [0.8, 0.8])
    case("gaussian_blur", B3, 27, dt, [5, 3], [1.5, 0.7])
    case("gaussian_blur", V, 28, dt, [3, 5], None)
    case("erase", S3, 29, dt, 2, 3, 4, 5, [0.25])
    case("erase", B3, 30, dt, 0, 1, 7, 3, [10.0, 20.0, 30.0])
    case("permute_channels", B3, 31, dt, [2, 0, 1])
case("normalize", S3, 34, "float32", [0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
case("normalize", B3, 35, "float64", [0.5], [0.25])
for src, dst in [("uint8", "float32"), ("uint8", "float64"), ("float32", "uint8"), ("float64", "uint8"),
                 ("uint8", "int16"), ("int16", "uint8"), ("uint8", "int32"), ("int32", "int16"), ("int8", "uint8"),
                 ("uint8", "int8"), ("float32", "int16"), ("float64", "int32"), ("bool", "float32"),
                 ("float32", "float64"), ("uint8", "uint16"), ("uint16", "uint8"), ("uint16", "float32"),
                 ("float32", "uint16")]:
    case("to_dtype", S3, 40, src, dst, True)
    case("to_dtype", S3, 41, src, dst, False)
case("convert_image_dtype", S3, 42, "uint8", "float32")
case("convert_image_dtype", S3, 43, "float32", "uint8")

with open(sys.argv[1], "w") as f:
    f.write("-- generated by tests/ref/gen_vision_color_v2.py (torchvision " + torchvision.__version__
            + "); do not edit\nreturn {\n")
    for c in cases:
        y = c.pop("y")
        f.write("  " + lua(c)[:-1] + ", y = " + lua(y, single=True) + "},\n")
    f.write("}\n")
