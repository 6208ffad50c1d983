"""bench/peers/train_fashion_mnist.py -- the PyTorch version of
scripts/train_fashion_mnist.lua: the same CNN (or MLP), Adam, batch size,
learning rate and data, printing test accuracy after each epoch, so the two
accuracy trends can be compared.
    /usr/bin/python3 bench/peers/train_fashion_mnist.py [--epochs 5] [--batch-size 64]
        [--lr 0.001] [--model cnn|mlp] [--threads N] [--data DIR] [--schedule cosine|none]"""
import argparse
import gzip
import os
import struct
import time

import torch
import torch.nn as nn


def read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return torch.frombuffer(bytearray(raw[4 + 4 * ndim:]), dtype=torch.uint8).reshape(dims)


def load(root, split):
    def find(stem):
        for name in (stem + ".gz", stem):
            if os.path.exists(os.path.join(root, name)):
                return os.path.join(root, name)
        raise FileNotFoundError(stem)
    x = read_idx(find(split + "-images-idx3-ubyte")).float().div_(255).unsqueeze(1)
    y = read_idx(find(split + "-labels-idx1-ubyte")).long()
    return x, y


def build(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--model", default="cnn")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--schedule", default="cosine")
    a = ap.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    xtr, ytr = load(a.data, "train")
    xte, yte = load(a.data, "t10k")
    model = build(a.model)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    loss_fn = nn.CrossEntropyLoss()
    steps = (len(xtr) + a.batch_size - 1) // a.batch_size
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, a.epochs * steps) if a.schedule == "cosine" else None
    for epoch in range(1, a.epochs + 1):
        t0 = time.perf_counter()
        perm = torch.randperm(len(xtr))
        for i in range(0, len(xtr), a.batch_size):
            idx = perm[i:i + a.batch_size]
            loss = loss_fn(model(xtr[idx]), ytr[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if sched:
                sched.step()
        secs = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            acc = sum((model(xte[i:i + 1000]).argmax(1) == yte[i:i + 1000]).sum().item()
                      for i in range(0, len(xte), 1000)) / len(xte)
        model.train()
        print(f"epoch {epoch}: test accuracy {100 * acc:.2f}%, {secs:.1f} s ({len(xtr) / secs:.0f} samples/s)")


if __name__ == "__main__":
    main()
