"""gen_vision_warp_v2.py -- torchvision 0.26 reference values for the v2-only
parts of tests/domains/vision/test_warp.lua: affine, rotate, perspective and
elastic on bounding boxes, keypoints, masks and videos through
torchvision.transforms.v2.functional, and deterministic draws of the
transform classes applied to a whole sample.

    python gen_vision_warp_v2.py OUT_PATH      # e.g. tests/ref/vision_warp_v2.lua

Needs torchvision >= 0.26 (KeyPoints); imports only torch, torchvision and
the standard library, and prints nothing. Inputs come from gen_image() and
gen_disp() (test_warp.lua and gen_vision_warp.py repeat them)."""
import math
import re
import sys

import torch
import torchvision
from torchvision import tv_tensors
from torchvision.transforms import v2
from torchvision.transforms.v2 import functional as F

# ---- Lua literals, as tests/ref/reflib.py writes them ----
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key(k):
    k = str(k)
    return k if _IDENT.match(k) else "[" + lua(k) + "]"


def lua(v, indent=None):
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        return lua(v.tolist(), indent)
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
        return "{" + ", ".join(lua(x, indent) for x in v) + "}"
    if isinstance(v, dict):
        if indent is None:
            return "{" + ", ".join(key(k) + " = " + lua(x) for k, x in v.items()) + "}"
        inner = indent + "  "
        items = [f"{inner}{key(k)} = {lua(x, inner)}," for k, x in v.items()]
        return "{\n" + "\n".join(items) + "\n" + indent + "}"
    raise TypeError(type(v))


# ---- inputs ----
def hashes(n, seed):
    return [(k * 2654435761 + seed * 40503 + 12345) % 4294967296 for k in range(n)]


def gen_image(shape, seed, dtype):
    n = 1
    for s in shape:
        n *= s
    h = hashes(n, seed)
    if dtype == torch.uint8:
        return torch.tensor([v // 16777216 for v in h], dtype=torch.uint8).reshape(shape)
    return torch.tensor([v / 4294967296 for v in h], dtype=torch.float64).to(dtype).reshape(shape)


def gen_disp(h, w, seed, amp):
    v = gen_image((1, h, w, 2), seed, torch.float64)
    return ((v * 2 - 1) * amp).to(torch.float32)


DT = {"uint8": torch.uint8, "float32": torch.float32, "float64": torch.float64, "int64": torch.int64}
MODE = {"nearest": v2.InterpolationMode.NEAREST, "bilinear": v2.InterpolationMode.BILINEAR}
BOXES_F = [[1.0, 2.0, 9.0, 11.0], [0.0, 0.0, 19.0, 17.0], [5.5, 3.25, 12.0, 14.5], [14.0, 12.0, 18.5, 16.0]]
BOXES_I = [[1, 2, 8, 9], [0, 0, 19, 17], [5, 3, 6, 10], [12, 11, 3, 4]]
POINTS = [[0.0, 0.0], [18.0, 16.0], [4.5, 7.25], [10.0, 3.0], [17.0, 1.0]]
SP = [[0, 0], [18, 0], [18, 16], [0, 16]]
EP = [[2, 1], [17, 3], [15, 15], [1, 13]]
cases = {}


def make_input(c):
    kind, dtype = c["kind"], DT[c["dtype"]]
    if kind == "BoundingBoxes":
        data = BOXES_F if dtype.is_floating_point else BOXES_I
        return tv_tensors.BoundingBoxes(torch.tensor(data, dtype=dtype), format=c["format"],
                                        canvas_size=tuple(c["canvas"]))
    if kind == "KeyPoints":
        return tv_tensors.KeyPoints(torch.tensor(POINTS, dtype=dtype), canvas_size=tuple(c["canvas"]))
    x = gen_image(c["shape"], c["seed"], dtype)
    if kind == "Mask":
        return tv_tensors.Mask(x % 5 if dtype == torch.uint8 else x)
    return tv_tensors.Video(x) if kind == "Video" else tv_tensors.Image(x)


def call(c, x):
    kw = dict(c.get("kw", {}))
    if "interpolation" in kw:
        kw["interpolation"] = MODE[kw["interpolation"]]
    op = c["op"]
    if op == "affine":
        return F.affine(x, **kw)
    if op == "rotate":
        return F.rotate(x, **kw)
    if op == "perspective":
        return F.perspective(x, **kw)
    d = gen_disp(c["disp"][0], c["disp"][1], c["disp"][2], c["disp"][3])
    return F.elastic(x, d, **kw)


def case(name, op, kind, dtype, **c):
    c.update({"op": op, "kind": kind, "dtype": dtype})
    try:
        y = call(c, make_input(c))
    except IndexError as e:
        # torchvision 0.26's elastic_bounding_boxes indexes its grid out of
        # bounds for a box corner on the canvas's far edge: no reference
        sys.stderr.write("gen_vision_warp_v2: %s skipped: torchvision raised %r\n" % (name, e))
        return
    if kind in ("BoundingBoxes", "KeyPoints"):
        c["out_canvas"] = list(y.canvas_size)
    c["out_shape"] = list(y.shape)
    y = y.as_subclass(torch.Tensor)
    c["out"] = y.flatten() if not y.is_floating_point() else y.double().flatten()
    cases[name] = c


AFF = {"angle": 30.0, "translate": [2.0, -1.0], "scale": 0.9, "shear": [10.0, 5.0]}
AFF2 = {"angle": -63.0, "translate": [1.0, 3.0], "scale": 1.2, "shear": [-4.0, 0.0], "center": [6.0, 5.0]}
C = [17, 19]
case("boxes_affine_xyxy", "affine", "BoundingBoxes", "float32", format="XYXY", canvas=C, kw=AFF)
case("boxes_affine_xywh_int", "affine", "BoundingBoxes", "int64", format="XYWH", canvas=C, kw=AFF)
case("boxes_affine_cxcywh_center", "affine", "BoundingBoxes", "float64", format="CXCYWH", canvas=C, kw=AFF2)
case("boxes_rotate_expand", "rotate", "BoundingBoxes", "float32", format="XYXY", canvas=C,
     kw={"angle": 37.0, "expand": True})
case("boxes_rotate_expand_int", "rotate", "BoundingBoxes", "int64", format="XYWH", canvas=C,
     kw={"angle": -123.0, "expand": True})
case("boxes_rotate_center", "rotate", "BoundingBoxes", "float32", format="XYXY", canvas=C,
     kw={"angle": 25.0, "center": [3.0, 4.0]})
case("boxes_rotate_expand_center", "rotate", "BoundingBoxes", "float32", format="CXCYWH", canvas=C,
     kw={"angle": 70.0, "expand": True, "center": [2.0, 12.0]})
case("boxes_perspective", "perspective", "BoundingBoxes", "float32", format="XYXY", canvas=C,
     kw={"startpoints": SP, "endpoints": EP})
case("boxes_perspective_int", "perspective", "BoundingBoxes", "int64", format="XYWH", canvas=C,
     kw={"startpoints": EP, "endpoints": SP})
case("boxes_elastic", "elastic", "BoundingBoxes", "float32", format="XYXY", canvas=C, disp=[17, 19, 40, 0.2])
case("boxes_elastic_cxcywh", "elastic", "BoundingBoxes", "float32", format="CXCYWH", canvas=C,
     disp=[17, 19, 41, 0.3])
case("points_affine", "affine", "KeyPoints", "float32", canvas=C, kw=AFF)
case("points_affine_center", "affine", "KeyPoints", "float64", canvas=C, kw=AFF2)
case("points_rotate_expand", "rotate", "KeyPoints", "float32", canvas=C, kw={"angle": 37.0, "expand": True})
case("points_perspective", "perspective", "KeyPoints", "float32", canvas=C, kw={"startpoints": SP, "endpoints": EP})
case("points_elastic", "elastic", "KeyPoints", "float32", canvas=C, disp=[17, 19, 42, 0.25])
case("mask_affine", "affine", "Mask", "uint8", shape=[1, 17, 19], seed=30, kw=AFF)
case("mask_affine_2d", "affine", "Mask", "uint8", shape=[17, 19], seed=31, kw=dict(AFF2, fill=4))
case("mask_rotate_expand", "rotate", "Mask", "uint8", shape=[2, 17, 19], seed=32, kw={"angle": 37.0, "expand": True})
case("mask_perspective_fill", "perspective", "Mask", "uint8", shape=[17, 19], seed=33,
     kw={"startpoints": SP, "endpoints": EP, "fill": 3})
case("mask_elastic", "elastic", "Mask", "uint8", shape=[1, 17, 19], seed=34, disp=[17, 19, 43, 0.3])
case("video_rotate", "rotate", "Video", "float32", shape=[2, 3, 11, 13], seed=35,
     kw={"angle": 33.0, "interpolation": "bilinear", "fill": [0.1, 0.2, 0.3]})
case("video_perspective", "perspective", "Video", "uint8", shape=[2, 3, 17, 19], seed=36,
     kw={"startpoints": SP, "endpoints": EP})
case("image_rotate_90_expand", "rotate", "Image", "uint8", shape=[3, 9, 14], seed=37,
     kw={"angle": 90.0, "expand": True})
case("image_rotate_270", "rotate", "Image", "float32", shape=[3, 12, 12], seed=38,
     kw={"angle": -90.0, "interpolation": "bilinear"})
case("image_affine_default_fill", "affine", "Image", "float32", shape=[3, 17, 19], seed=39,
     kw=dict(AFF, interpolation="bilinear"))
case("image_elastic_f64", "elastic", "Image", "float64", shape=[3, 17, 19], seed=40, disp=[17, 19, 44, 0.2])


def sample_case(name, transform, spec):
    """a transform whose draw is fixed (degenerate ranges) applied to an
    image, a mask and boxes together."""
    img = tv_tensors.Image(gen_image([3, 17, 19], 50, torch.float32))
    mask = tv_tensors.Mask(gen_image([17, 19], 51, torch.uint8) % 5)
    boxes = tv_tensors.BoundingBoxes(torch.tensor(BOXES_F), format="XYXY", canvas_size=(17, 19))
    out_img, out_mask, out_boxes = transform(img, mask, boxes)
    cases[name] = {"transform": spec, "image_shape": list(out_img.shape), "image": out_img.double().flatten(),
                   "mask_shape": list(out_mask.shape), "mask": out_mask.flatten(),
                   "boxes": out_boxes.as_subclass(torch.Tensor).double().flatten(),
                   "canvas": list(out_boxes.canvas_size)}


sample_case("sample_random_affine",
            v2.RandomAffine(degrees=(20, 20), scale=(1.1, 1.1), shear=(5, 5, 3, 3), interpolation=MODE["bilinear"],
                            fill={tv_tensors.Image: 0.5, tv_tensors.Mask: 9}),
            {"name": "RandomAffine", "degrees": [20, 20], "scale": [1.1, 1.1], "shear": [5, 5, 3, 3],
             "interpolation": "bilinear", "fill": {"Image": 0.5, "Mask": 9}})
sample_case("sample_random_rotation",
            v2.RandomRotation(degrees=(30, 30), interpolation=MODE["bilinear"], expand=True),
            {"name": "RandomRotation", "degrees": [30, 30], "interpolation": "bilinear", "expand": True})

with open(sys.argv[1], "w") as f:
    f.write("-- tests/ref/vision_warp_v2.lua -- generated by tests/ref/gen_vision_warp_v2.py (torchvision %s); "
            "do not edit.\n" % torchvision.__version__)
    f.write("return " + lua(cases, indent="") + "\n")
