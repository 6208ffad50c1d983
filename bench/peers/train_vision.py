"""bench/peers/train_vision.py -- the PyTorch peer of scripts/train_vision.lua:
torchvision's ResNet with the same 28x28 gray stem, the same augmentation
(a random 28x28 crop of the image padded by 4 and a random horizontal flip,
per image, in DataLoader workers as torchvision users do), the same SGD +
cosine schedule, batch size and data, printing test accuracy and the time
of each epoch.
    python bench/peers/train_vision.py [--arch resnet18] [--epochs 15] [--batch-size 128]
        [--lr 0.1] [--weight-decay 5e-4] [--device cpu|cuda] [--threads N] [--workers 2]
        [--data DIR] [--limit N] [--no-augment]"""
import argparse
import os
import sys
import time

import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_fashion_mnist import load  # noqa: E402  (idx files -> float [0, 1] images, labels)

MEAN, STD = 0.2860, 0.3530


def build(arch):
    model = getattr(torchvision.models, arch)(num_classes=10)
    model.conv1 = nn.Conv2d(1, 64, 3, padding=1, bias=False)
    model.maxpool = nn.Identity()
    return model


class Augmented(torch.utils.data.Dataset):
    """The training images, each cropped and flipped on its own when read."""

    def __init__(self, x, y, augment):
        self.x, self.y = x, y
        try:
            from torchvision.transforms import v2 as T
        except ImportError:
            import torchvision.transforms as T
        parts = [T.RandomCrop(28, padding=4), T.RandomHorizontalFlip()] if augment else []
        self.t = T.Compose(parts + [T.Normalize([MEAN], [STD])])

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.t(self.x[i]), self.y[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="resnet18")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--no-augment", action="store_true")
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    if a.limit:
        xtr, ytr = xtr[:a.limit], ytr[:a.limit]
    train = torch.utils.data.DataLoader(Augmented(xtr, ytr, not a.no_augment), batch_size=a.batch_size,
                                        shuffle=True, num_workers=a.workers, persistent_workers=a.workers > 0)
    dev = torch.device(a.device)
    model = build(a.arch).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=0.9, nesterov=True, weight_decay=a.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, a.epochs * len(train))
    loss_fn = nn.CrossEntropyLoss()
    print("peer: torch %s, torchvision %s, %s, %d threads, device %s" % (
        torch.__version__, torchvision.__version__, a.arch, torch.get_num_threads(), a.device), flush=True)
    xte_n = ((xte - MEAN) / STD).to(dev)
    yte = yte.to(dev)
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        for x, y in train:
            x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
            loss = loss_fn(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
        loss.item()
        secs = time.perf_counter() - t0
        model.eval()
        correct = 0
        with torch.no_grad():
            for i in range(0, len(yte), 1000):
                correct += (model(xte_n[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
        model.train()
        print("peer epoch %d: test accuracy %.2f%%, train %.1f s (%.0f images/s)" % (
            epoch, 100 * correct / len(yte), secs, len(ytr) / secs), flush=True)


if __name__ == "__main__":
    main()
