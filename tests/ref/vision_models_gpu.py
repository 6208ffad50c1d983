#!/usr/bin/env python3
"""vision_models_gpu.py -- the torchvision side of the GPU round trip for
torch.vision.models: resnet18, mobilenet_v3_small and vit_b_16 (224x224,
batch 2, eval, float32 with TF32 off), on the GPU of a machine with a recent
torchvision (written for 0.26; anything from 0.14 works).

Run from the repository root on the GPU machine (DIR: any empty folder):

    python3 tests/ref/vision_models_gpu.py export DIR
        torchvision models with seeded random weights (constant parameters
        refilled, BatchNorm statistics drawn) -> DIR/NAME.safetensors (state
        dict), DIR/NAME.io.safetensors (input x, torchvision's GPU logits y)
    build/moontorch tests/domains/vision/models_interop.lua DIR cuda
        loads those weights into moontorch's models, prints the max logit
        difference, and writes DIR/NAME.ours.safetensors (moontorch's own
        seeded state dict), NAME.ours_in.safetensors (x), NAME.ours_y.safetensors
        (moontorch's logits)
    python3 tests/ref/vision_models_gpu.py check DIR
        loads each NAME.ours.safetensors with load_state_dict(strict=True),
        runs x on the GPU and prints the max difference to moontorch's logits

Each line printed reads `NAME max|dlogit|=... (scale ...)`; a difference
below 1e-4 times max(1, scale) passes. Needs torch and torchvision only
(safetensors files are read and written by models_ref.py's code)."""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "domains", "vision"))
from models_ref import gen, load, randomize, save  # noqa: E402

MODELS = ["resnet18", "mobilenet_v3_small", "vit_b_16"]


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("export", "check"):
        raise SystemExit(__doc__)
    mode, d = sys.argv[1], sys.argv[2]
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, device {dev}")
    os.makedirs(d, exist_ok=True)
    worst = 0.0
    for name in MODELS:
        torch.manual_seed(0)
        model = torchvision.models.get_model(name).eval()
        if mode == "export":
            randomize(model)
            x = gen((2, 3, 224, 224), 5)
            with torch.no_grad():
                y = model.to(dev)(x.to(dev)).cpu()
            save(model.state_dict(), f"{d}/{name}.safetensors")
            save({"x": x, "y": y}, f"{d}/{name}.io.safetensors")
            print(f"{name}: wrote {d}/{name}.safetensors, logits scale {float(y.abs().max()):.3g}")
        else:
            model.load_state_dict(load(f"{d}/{name}.ours.safetensors"), strict=True)
            x = load(f"{d}/{name}.ours_in.safetensors")["x"]
            want = load(f"{d}/{name}.ours_y.safetensors")["y"]
            with torch.no_grad():
                y = model.to(dev)(x.to(dev)).cpu()
            diff = float((y - want).abs().max())
            scale = max(1.0, float(want.abs().max()))
            worst = max(worst, diff / scale)
            print(f"{name} max|dlogit|={diff:.3g} (scale {scale:.3g}) {'ok' if diff <= 1e-4 * scale else 'FAIL'}")
    if mode == "check":
        print("all ok" if worst <= 1e-4 else "FAIL: worst relative difference %.3g" % worst)


if __name__ == "__main__":
    main()
