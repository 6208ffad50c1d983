"""bench/peers/vision_pipeline.py -- the torchvision peer of
bench/vision_pipeline.lua: the same JPEG folder through torchvision's
ImageFolder with torchvision.io.decode_jpeg as the loader (tensors, no PIL),
RandomResizedCrop(224, antialias) + RandomHorizontalFlip + ColorJitter(0.4,
0.4, 0.4, 0.1) + ToDtype(float32, scale) + Normalize per image (v2 where
torchvision has it, else the v1 tensor transforms), batches of 32, 2 worker
processes. Both rows are torchvision's per-image pipeline (it has no
per_sample batch form)."""
import os
import sys
import time

import torch
import torchvision
from torchvision.io import ImageReadMode, decode_jpeg, read_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import report, setup  # noqa: E402

ROOT = os.path.join(os.environ.get("TMPDIR", "/tmp"), "moontorch_bench_pipeline")
WORKERS, BATCH = 2, 32
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def make_files():
    if os.path.exists(os.path.join(ROOT, "done")):
        return
    g = torch.Generator().manual_seed(0)
    for i in range(256):
        d = os.path.join(ROOT, "class%d" % (i % 4))
        os.makedirs(d, exist_ok=True)
        img = torch.randint(0, 256, (3, 300 + (i * 37) % 340, 300 + (i * 53) % 340), dtype=torch.uint8, generator=g)
        torchvision.io.write_jpeg(img, os.path.join(d, "img%04d.jpg" % i), 90)
    open(os.path.join(ROOT, "done"), "w").close()


def load(path):
    return decode_jpeg(read_file(path), mode=ImageReadMode.RGB)


def transforms():
    try:
        from torchvision.transforms import v2 as T
        return T.Compose([T.RandomResizedCrop(224, antialias=True), T.RandomHorizontalFlip(),
                          T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.ToDtype(torch.float32, scale=True),
                          T.Normalize(MEAN, STD)])
    except ImportError:
        import torchvision.transforms as T
        return T.Compose([T.RandomResizedCrop(224, antialias=True), T.RandomHorizontalFlip(),
                          T.ColorJitter(0.4, 0.4, 0.4, 0.1), T.ConvertImageDtype(torch.float32),
                          T.Normalize(MEAN, STD)])


def rate():
    ds = torchvision.datasets.ImageFolder(ROOT, transform=transforms(), loader=load)
    loader = torch.utils.data.DataLoader(ds, batch_size=BATCH, shuffle=True, num_workers=WORKERS,
                                         persistent_workers=True)

    def one_pass():
        n = 0
        for x, _ in loader:
            n += x.shape[0]
        return n
    one_pass()
    t0 = time.perf_counter()
    n = one_pass()
    return (time.perf_counter() - t0) / n


def main():
    want = setup()
    make_files()
    torch.manual_seed(0)
    for name in ("pipeline_image", "pipeline_batch"):
        if want(name):
            secs = rate()
            report(name, secs, 1 / secs, "images/s")


if __name__ == "__main__":
    main()
