#!/usr/bin/python3
"""gen_vision_models.py -- torchvision logits for tests/domains/vision/test_models.lua.

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_vision_models.py   # writes tests/ref/vision_models.lua

Each case builds a torchvision model (eval mode), overwrites its whole state
dict with formula() -- values the Lua test computes the same way, so no
weight file is committed -- and stores the logits for the input gen().
Weights: the i-th key in sorted order, flat position j (0-based) gets
u = ((37 j + 11 i) % 101 - 50) / 50 scaled by the key's role (see formula)."""
import math
import os
import sys

import torch
import torchvision
from reflib import lua


def formula(model):
    """Fills every state_dict entry with the deterministic pattern (the Lua test repeats it)."""
    sd = model.state_dict()
    with torch.no_grad():
        for i, k in enumerate(sorted(sd), 1):
            t = sd[k]
            if not t.is_floating_point():
                t.zero_()
                continue
            n = t.numel()
            j = torch.arange(n, dtype=torch.int64)
            u = ((37 * j + 11 * i) % 101 - 50).double() / 50
            if k.endswith("running_var"):
                v = 1 + u / 2
            elif k.endswith("running_mean"):
                v = u / 10
            elif t.dim() <= 1:
                v = 1 + u / 5 if k.endswith("weight") else u / 10
            else:
                v = u * math.sqrt(1.0 / (n // t.shape[0]))
            t.copy_(v.reshape(t.shape).to(t.dtype))


def gen(shape, seed):
    """Input images: ((37 k + 11 seed) % 101 - 50) / 32 over the flat position k."""
    n = 1
    for s in shape:
        n *= s
    k = torch.arange(n, dtype=torch.int64)
    return (((37 * k + 11 * seed) % 101 - 50).double() / 32).float().reshape(shape)


cases = {}


def short(t):
    """Values to 8 significant digits (the tests compare to 1e-4): a smaller file."""
    return [float("%.8g" % v) for v in t.flatten().tolist()]


def case(key, name, size, **kw):
    torch.manual_seed(0)
    if name is None:  # the class itself (keyword arguments as the Lua test passes them)
        model = torchvision.models.VisionTransformer(**kw).eval()
    else:
        model = torchvision.models.get_model(name, **kw).eval()
    formula(model)
    x = gen((2, 3, size, size), 7)
    with torch.no_grad():
        y = model(x)
    c = {"model": name or "VisionTransformer", "size": size, "shape": list(y.shape), "y": short(y), "nkeys": len(model.state_dict()),
         "nparams": sum(p.numel() for p in model.parameters())}
    if kw:
        c["opts"] = kw
    cases[key] = c
    print(key, float(y.abs().max()), file=sys.stderr)


torch.set_num_threads(1)
case("resnet18", "resnet18", 64)
case("resnet50", "resnet50", 64, num_classes=10)
case("resnext50_32x4d", "resnext50_32x4d", 64, num_classes=10)
case("mobilenet_v2", "mobilenet_v2", 64, num_classes=10)
case("mobilenet_v3_small", "mobilenet_v3_small", 64, num_classes=10)
case("mobilenet_v3_large", "mobilenet_v3_large", 64, num_classes=10)
case("efficientnet_b0", "efficientnet_b0", 64, num_classes=10)
case("efficientnet_v2_s", "efficientnet_v2_s", 64, num_classes=10)
case("vit_b_16", "vit_b_16", 32, num_classes=10, image_size=32)
case("vit_small_repr", None, 32, image_size=32, patch_size=8, num_layers=2, num_heads=4, hidden_dim=64, mlp_dim=128,
     num_classes=10, representation_size=24)
case("convnext_tiny", "convnext_tiny", 64, num_classes=10)


def layer_case(key, module, shape):
    """A torchvision.ops layer with formula weights, eval mode, on gen(shape, 3)."""
    module.eval()
    formula(module)
    x = gen(shape, 3)
    with torch.no_grad():
        y = module(x)
    layers[key] = {"keys": sorted(module.state_dict()), "shape": list(y.shape), "y": short(y)}


layers = {}
ops = torchvision.ops
layer_case("cna_default", ops.Conv2dNormActivation(3, 8), (2, 3, 7, 6))
layer_case("cna_rect_dilated", ops.Conv2dNormActivation(4, 6, kernel_size=(3, 5), stride=2, dilation=(1, 2), groups=2,
                                                        activation_layer=torch.nn.Hardswish), (1, 4, 9, 11))
layer_case("cna_no_norm", ops.Conv2dNormActivation(3, 5, kernel_size=1, norm_layer=None, activation_layer=None),
           (2, 3, 4, 4))
layer_case("cna_bias_pad", ops.Conv2dNormActivation(3, 4, kernel_size=3, padding=0, bias=True,
                                                    activation_layer=torch.nn.SiLU), (1, 3, 6, 6))
layer_case("cna3d", ops.Conv3dNormActivation(2, 4, kernel_size=3, stride=(1, 2, 2)), (1, 2, 4, 6, 6))
layer_case("se", ops.SqueezeExcitation(8, 3), (2, 8, 5, 4))
layer_case("se_hard", ops.SqueezeExcitation(6, 2, activation=torch.nn.SiLU, scale_activation=torch.nn.Hardsigmoid),
           (2, 6, 3, 3))
layer_case("mlp", ops.MLP(6, [10, 8, 4]), (3, 6))
layer_case("mlp_norm_nobias", ops.MLP(5, [7, 3], norm_layer=torch.nn.LayerNorm, activation_layer=torch.nn.GELU,
                                      bias=False, dropout=0.5, inplace=None), (2, 4, 5))
layer_case("frozen_bn", ops.FrozenBatchNorm2d(5, eps=1e-3), (2, 5, 3, 4))
cases["_layers"] = layers

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vision_models.lua")
with open(out, "w") as f:
    f.write("-- tests/ref/vision_models.lua -- generated by tests/ref/gen_vision_models.py (torchvision %s, "
            "PyTorch %s); do not edit.\n" % (torchvision.__version__, torch.__version__))
    f.write("return " + lua(cases, indent="") + "\n")
