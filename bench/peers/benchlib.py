"""bench/peers/benchlib.py -- timing helpers of the PyTorch peers, matching
bench/common.lua: median seconds per call over batches after a warm-up, and
the RESULT lines bench/run reads."""
import os
import sys
import time

import torch


def timeit(fn, n, reps=7):
    """Median seconds per call over reps batches of n calls; with
    BENCH_STAT=min, the fastest single call of the n * reps (as common.lua)."""
    for _ in range(n):
        fn()
    if os.environ.get("BENCH_STAT") == "min":
        best = float("inf")
        for _ in range(n * reps):
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        return best
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


def cuda_time_ms(fn, reps, inner=1):
    """Median milliseconds per call of fn on the GPU: reps batches of inner
    calls, each batch timed by a pair of CUDA events, after 3 warm-up calls."""
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(inner): fn()
        b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) / inner)
    return sorted(ts)[(len(ts) - 1) // 2]
