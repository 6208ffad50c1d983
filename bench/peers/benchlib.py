"""bench/peers/benchlib.py -- timing helpers of the PyTorch peers, matching
bench/common.lua: median seconds per call over batches after a warm-up, and
the RESULT lines bench/run reads."""
import sys
import time

import torch


def timeit(fn, n, reps=7):
    for _ in range(n):
        fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        ts.append((time.perf_counter() - t0) / n)
    ts.sort()
    return ts[(reps - 1) // 2]


def report(name, secs, extra=None, unit=None):
    if extra is None:
        print(f"RESULT {name} {secs:.9g}")
    else:
        print(f"RESULT {name} {secs:.9g} {extra:.6g} {unit}")


def setup():
    """Thread count from argv[2]; returns want(name) for the argv[1] filter."""
    torch.set_num_threads(int(sys.argv[2]) if len(sys.argv) > 2 else torch.get_num_threads())
    only = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "all" else None
    return lambda name: only is None or only == name
