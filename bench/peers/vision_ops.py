"""bench/peers/vision_ops.py -- torchvision's side of bench/vision_ops.lua:
the same inputs (the same integer hash), timed the same way; the roi_align
backward row is torchvision's _roi_align_backward op."""
import sys

import torch
import torchvision.ops as O
from benchlib import report, setup, timeit


def hash_(k, a):
    return ((k * a + 12345) % 1000003).double() / 1000003


def detections(n, classes=1):
    k = torch.arange(n)
    obj = k % 200
    cx, cy = hash_(obj, 7919) * 900 + 50, hash_(obj, 104729) * 900 + 50
    w, h = hash_(obj, 1299709) * 100 + 20, hash_(obj, 15485863) * 100 + 20
    jx, jy = (hash_(k, 32452843) - 0.5) * 0.3 * w, (hash_(k, 49979687) - 0.5) * 0.3 * h
    sw, sh = 1 + (hash_(k, 86028121) - 0.5) * 0.4, 1 + (hash_(k, 122949829) - 0.5) * 0.4
    x1, y1 = cx + jx - w * sw / 2, cy + jy - h * sh / 2
    boxes = torch.stack([x1, y1, x1 + w * sw, y1 + h * sh], 1).float()
    return boxes, hash_(k, 179424673).float(), (hash_(k, 2038074743) * classes).floor().long()


def rois(k, n, hw):
    i = torch.arange(k)
    x1, y1 = hash_(i, 7919) * (hw - 8), hash_(i, 104729) * (hw - 8)
    w, h = hash_(i, 1299709) * 20 + 4, hash_(i, 15485863) * 20 + 4
    return torch.stack([(i % n).double(), x1, y1, (x1 + w).clamp(max=hw - 1), (y1 + h).clamp(max=hw - 1)], 1).float()


def suite(want, dev, sfx):
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)

    def timed(fn, n):
        return timeit(lambda: (fn(), sync()), n)

    for n in (10000, 50000):
        name = "nms_%dk%s" % (n // 1000, sfx)
        if want(name):
            b, s, _ = detections(n)
            b, s = b.to(dev), s.to(dev)
            report(name, timed(lambda: O.nms(b, s, 0.5), 2 if n > 20000 else 5))
    if want("batched_nms_10k" + sfx):
        b, s, c = (t.to(dev) for t in detections(10000, 80))
        report("batched_nms_10k" + sfx, timed(lambda: O.batched_nms(b, s, c, 0.5), 5))
    x, r = torch.randn(2, 256, 50, 50).to(dev), rois(512, 2, 50).to(dev)
    if want("roi_align_fwd" + sfx):
        report("roi_align_fwd" + sfx, timed(lambda: O.roi_align(x, r, 7, 1.0, 2, True), 5))
    if want("roi_align_bwd" + sfx):
        g = torch.randn(512, 256, 7, 7).to(dev)
        bw = torch.ops.torchvision._roi_align_backward
        report("roi_align_bwd" + sfx, timed(lambda: bw(g, r, 1.0, 7, 7, 2, 256, 50, 50, 2, True), 5))
    if want("roi_pool_fwd" + sfx):
        report("roi_pool_fwd" + sfx, timed(lambda: O.roi_pool(x, r, 7, 1.0), 5))
    if want("box_iou_1000" + sfx):
        b = detections(1000)[0].to(dev)
        report("box_iou_1000" + sfx, timed(lambda: O.box_iou(b, b), 20))


def main():
    named = setup()
    cuda_only = sys.argv[1:2] == ["cuda"]  # the CUDA rows alone, as bench/vision_ops.lua
    want = (lambda name: name.endswith("_cuda")) if cuda_only else named
    if not cuda_only:
        suite(want, "cpu", "")
    if torch.cuda.is_available():
        suite(want, "cuda", "_cuda")


if __name__ == "__main__":
    with torch.no_grad():
        main()
