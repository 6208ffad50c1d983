"""bench/peers/vision_warp.py -- torchvision's side of bench/vision_warp.lua:
the tensor functionals affine (nearest) and rotate (bilinear) on 3x224x224
uint8 and float32 images, one and a batch of 32, and a loop of affine over
32 images with a random map each (the peer of both per-sample rows; this
torchvision has no per-sample batching)."""
import random

import torch
import torchvision.transforms.functional as TF
from benchlib import report, setup, timeit


def main():
    want = setup()
    torch.manual_seed(0)
    bil = TF.InterpolationMode.BILINEAR
    for tag, dt in (("u8", torch.uint8), ("f32", torch.float32)):
        for n in (1, 32):
            x = (torch.rand(n, 3, 224, 224) * 255).to(dt)
            if n == 1:
                x = x[0]
            reps = 20 if n == 1 else 2
            name = f"warp_affine_{tag}_{n}"
            if want(name):
                report(name, timeit(lambda: TF.affine(x, 30, [2, -1], 0.9, [10, 5]), reps))
            name = f"warp_rotate_{tag}_{n}"
            if want(name):
                report(name, timeit(lambda: TF.rotate(x, 30, bil), reps))
    batch = torch.rand(32, 3, 224, 224)

    def loop():
        for i in range(32):
            a = [random.random() for _ in range(4)]
            TF.affine(batch[i], a[0] * 60 - 30, [int(a[1] * 44 - 22), int(a[2] * 44 - 22)], 0.8 + 0.4 * a[3],
                      [10 * a[0] - 5, 0.0], bil, 0)

    for name in ("warp_per_sample_affine_32", "warp_loop_affine_32"):
        if want(name):
            report(name, timeit(loop, 2))


if __name__ == "__main__":
    with torch.no_grad():
        main()
