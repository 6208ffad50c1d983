#!/usr/bin/python3
"""gen_vision_datasets.py -- torchvision references for
tests/domains/vision/test_datasets.lua:

    cd /tmp && /usr/bin/python3 /path/to/tests/ref/gen_vision_datasets.py   # writes tests/ref/vision_datasets.lua

- ImageFolder over /usr/share/tuxpaint/stamps (Debian tuxpaint-stamps-default):
  classes, class_to_idx, every sample's path (relative to root) and target,
  and for a few samples the RGB pixels torchvision's default loader gives
  (shape, per-channel sums, values at fixed positions).
- DatasetFolder over a small tree made by tree() (the Lua test makes the same
  tree): the sample order of torchvision's walk, with extensions and with
  is_valid_file.
- MNIST, KMNIST, EMNIST (letters, balanced) over tiny idx files and CIFAR10,
  CIFAR100 over tiny batches written from pixel()/label() (repeated in the
  Lua test, which writes the binary layout; here torchvision reads the pickle
  layout of the same values). Each sample's ToTensor() image is summarised.
Targets and class indices are written 1-based (moontorch's rule)."""
import os
import pickle
import struct
import tempfile

import numpy as np
import torch
import torchvision
import torchvision.datasets.cifar as tvcifar
from torchvision import datasets, transforms
from reflib import lua

HERE = os.path.dirname(os.path.abspath(__file__))
STAMPS = "/usr/share/tuxpaint/stamps"
TOTENSOR = transforms.ToTensor()


def pixel(i, k, seed):
    """byte k of sample i (both 0-based) of a dataset seeded with seed"""
    return (7 * i + 13 * k + (k * k) % 5 + seed) % 256


def label(i, seed, n):
    return (3 * i + seed) % n


def positions(numel):
    """the flat positions summarised per image: 16 spread over it"""
    return [(p * 191 + 5) % numel for p in range(16)]


def summary(img):
    """a float C x H x W image in [0, 1] as {shape, sum of its bytes, bytes at positions()}"""
    b = (img * 255).round().to(torch.int64)
    flat = b.flatten()
    return {"shape": list(b.shape), "sum": int(flat.sum()), "at": [int(flat[p]) for p in positions(flat.numel())]}


def tree(root):
    """the DatasetFolder tree; a file's content is its own relative path"""
    files = ["b/x.txt", "b/a.TXT", "b/sub/z.txt", "b/sub-dir/y.txt", "b/sub.x/w.txt", "b/sub/deeper/v.txt",
             "b/.hidden.txt", "b/c.dat", "a/1.txt", "a/10.txt", "a/2.txt", "a/B.txt", "a/b.txt", "a_b/q.txt",
             "A/upper.txt", "top.txt"]
    for f in files:
        p = os.path.join(root, f)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as fh:
            fh.write(f)


def narrow(r):
    """is_valid_file's test of a path relative to the root (the Lua test repeats it)"""
    return "sub" in r or r.endswith("1.txt")


def valid(r):
    return narrow(r) or "q" in r or "upper" in r


def rel(root, samples):
    return [[os.path.relpath(p, root), t + 1] for p, t in samples]


def write_idx(path, arr):
    arr = np.asarray(arr, dtype=np.uint8)
    with open(path, "wb") as f:
        f.write(struct.pack(">I", 0x800 + arr.ndim))
        for s in arr.shape:
            f.write(struct.pack(">I", s))
        f.write(arr.tobytes())


def idx_data(n, h, w, seed, nclasses, first=0):
    x = np.array([[pixel(i, k, seed) for k in range(h * w)] for i in range(n)], dtype=np.uint8).reshape(n, h, w)
    y = np.array([label(i, seed, nclasses) + first for i in range(n)], dtype=np.uint8)
    return x, y


out = {"torchvision": torchvision.__version__}

# ---- ImageFolder over the tuxpaint stamps
tv = datasets.ImageFolder(STAMPS)
picks = [1, 2, 100, 400, len(tv)]
out["stamps"] = {
    "classes": tv.classes,
    "class_to_idx": {c: k + 1 for c, k in tv.class_to_idx.items()},
    "samples": rel(STAMPS, tv.samples),
    "picks": {str(i): summary(TOTENSOR(tv[i - 1][0])) for i in picks},
}

# ---- DatasetFolder order
with tempfile.TemporaryDirectory() as d:
    tree(d)
    ds = datasets.DatasetFolder(d, loader=lambda p: p, extensions=(".txt",))
    out["tree"] = {"classes": ds.classes, "samples": rel(d, ds.samples)}
    try:  # classes A and a_b have no file passing this test
        datasets.DatasetFolder(d, loader=lambda p: p, is_valid_file=lambda p: narrow(os.path.relpath(p, d)))
    except FileNotFoundError as e:
        out["tree_empty_error"] = str(e)
    ds = datasets.DatasetFolder(d, loader=lambda p: p,
                                is_valid_file=lambda p: valid(os.path.relpath(p, d)))
    out["tree_valid"] = {"classes": ds.classes, "samples": rel(d, ds.samples)}
    ds = datasets.DatasetFolder(d, loader=lambda p: p, extensions=".txt")
    out["tree_str_ext"] = rel(d, ds.samples)

# ---- MNIST family over tiny idx files (torchvision looks in root/<Name>/raw)
fam = {}
with tempfile.TemporaryDirectory() as d:
    specs = [("MNIST", None, "train", 6, 5, 10, 0), ("MNIST", None, "t10k", 4, 9, 10, 0),
             ("KMNIST", None, "train", 5, 11, 10, 0), ("KMNIST", None, "t10k", 3, 12, 10, 0),
             ("EMNIST", "letters", "train", 5, 21, 26, 1), ("EMNIST", "balanced", "test", 4, 33, 47, 0)]
    for name, split, part, n, seed, ncls, first in specs:  # write every file first: MNIST checks all four
        raw = os.path.join(d, name, "raw")
        os.makedirs(raw, exist_ok=True)
        x, y = idx_data(n, 28, 28, seed, ncls, first)
        stem = f"emnist-{split}-{part}" if split else part
        write_idx(os.path.join(raw, stem + "-images-idx3-ubyte"), x)
        write_idx(os.path.join(raw, stem + "-labels-idx1-ubyte"), y)
    for name, split, part, n, seed, ncls, first in specs:
        train = part == "train"
        kw = {"split": split} if split else {}
        tvd = getattr(datasets, name)(d, train=train, transform=TOTENSOR, **kw)
        items = []
        for i in range(len(tvd)):
            img, t = tvd[i]
            items.append({"target": t + 1, "img": summary(img)})
        key = name + ("_" + split if split else "") + "_" + part
        fam[key] = {"n": n, "seed": seed, "nclasses": ncls, "first": first, "classes": tvd.classes,
                    "items": items}
out["idx"] = fam

# ---- CIFAR over tiny batches (torchvision reads the pickle layout of the same values)
tvcifar.check_integrity = lambda *a, **k: True
cif = {}
with tempfile.TemporaryDirectory() as d:
    for name, folder, train_files, test_files, per, seed, ncls in [
            ("CIFAR10", "cifar-10-batches-py", [f"data_batch_{k}" for k in range(1, 6)], ["test_batch"], 3, 7, 10),
            ("CIFAR100", "cifar-100-python", ["train"], ["test"], 5, 19, 100)]:
        os.makedirs(os.path.join(d, folder), exist_ok=True)
        cls = getattr(datasets, name)
        names = ["class%d" % k for k in range(ncls)]
        meta = {"label_names": names} if name == "CIFAR10" else {"fine_label_names": names}
        with open(os.path.join(d, folder, cls.meta["filename"]), "wb") as f:
            pickle.dump(meta, f)
        base = 0
        for f in train_files + test_files:
            rows = np.array([[pixel(base + i, k, seed) for k in range(3072)] for i in range(per)], dtype=np.uint8)
            fine = [label(base + i, seed, ncls) for i in range(per)]
            entry = {"data": rows}
            if name == "CIFAR10":
                entry["labels"] = fine
            else:
                entry["fine_labels"] = fine
                entry["coarse_labels"] = [label(base + i, seed + 1, 20) for i in range(per)]
            with open(os.path.join(d, folder, f), "wb") as fh:
                pickle.dump(entry, fh)
            base += per
        for train in (True, False):
            tvd = cls(d, train=train, transform=TOTENSOR)
            cif[name + ("_train" if train else "_test")] = {
                "n": len(tvd), "items": [{"target": tvd[i][1] + 1, "img": summary(tvd[i][0])} for i in range(len(tvd))]}
        cif[name + "_spec"] = {"per": per, "seed": seed, "nclasses": ncls, "files": len(train_files) + len(test_files)}
out["cifar"] = cif

with open(os.path.join(HERE, "vision_datasets.lua"), "w") as f:
    f.write("-- generated by tests/ref/gen_vision_datasets.py (torchvision " + torchvision.__version__
            + "); do not edit\n")
    f.write("return " + lua(out) + "\n")
