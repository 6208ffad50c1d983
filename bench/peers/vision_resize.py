"""bench/peers/vision_resize.py -- torchvision's side of
bench/vision_resize.lua: F.resize(img, size, mode, antialias=True) on the
same images (uint8 on this torchvision may go through float and back), and
RandomResizedCrop(224) + RandomHorizontalFlip applied image by image to a
batch of 16 (the per_sample row's peer and the loop's)."""
import sys

import torch
import torchvision.transforms as T
import torchvision.transforms.functional as F
from benchlib import cuda_time_ms, report, setup, timeit

IM = {"bilinear": F.InterpolationMode.BILINEAR, "bicubic": F.InterpolationMode.BICUBIC}


def image(shape, dt):
    torch.manual_seed(0)
    x = torch.rand(shape) * 255
    return x.to(torch.uint8) if dt == "u8" else x


def main():
    named = setup()
    cuda_only = sys.argv[1:2] == ["cuda"]  # the CUDA rows alone, as bench/vision_resize.lua
    want = (lambda name: name.startswith("resize_cuda_")) if cuda_only else named
    cases = [("512_224", (3, 512, 512), [224, 224], 20), ("1024x768_256", (3, 1024, 768), [256], 10),
             ("b16_256_128", (16, 3, 256, 256), [128], 5)]
    for dev in ("cpu", "cuda"):
        if dev == "cuda" and not torch.cuda.is_available():
            continue
        for tag, shape, size, n in cases:
            for dt in ("u8", "f32"):
                for mode in ("bilinear", "bicubic"):
                    name = "resize_%s%s_%s_%s" % ("cuda_" if dev == "cuda" else "", mode, dt, tag)
                    if not want(name):
                        continue
                    x = image(shape, dt).to(dev)
                    fn = lambda: F.resize(x, size, IM[mode], antialias=True)
                    if dev == "cuda":
                        report(name, cuda_time_ms(fn, 20) / 1e3)
                    else:
                        report(name, timeit(fn, n))
    batch = image((16, 3, 256, 256), "u8")
    t = T.Compose([T.RandomResizedCrop(224, antialias=True), T.RandomHorizontalFlip()])
    for name in ("rrc_flip_b16_per_sample", "rrc_flip_b16_loop"):
        if want(name):
            report(name, timeit(lambda: [t(batch[i]) for i in range(16)], 5))


if __name__ == "__main__":
    with torch.no_grad():
        main()
