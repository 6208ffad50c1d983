#!/usr/bin/python3
"""tests/domains/vision/png_ref.py -- an independent PNG reader (zlib +
struct: tests/domains/pngread.py) for test_image.lua: prints a
Lua table {[path] = {c, h, w, pixels (flat HWC)}} for the given files that
are 8-bit (with a first argument --16: also 16-bit), non-interlaced and at
most 65536 pixels; palettes (with tRNS) are expanded to RGB(A), as
read_image's UNCHANGED mode does."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pngread import decode  # noqa: E402 (tests/domains/pngread.py)


DEPTHS = (8, 16) if sys.argv[1:2] == ["--16"] else (8,)


def read(data):
    """decode's result for the files this test compares, else None."""
    try:
        r = decode(data, DEPTHS)
    except ValueError:
        return None
    return r if r[1] * r[2] <= 65536 else None


print("return {")
for path in sys.argv[1 + (DEPTHS != (8,)):]:
    with open(path, "rb") as f:
        r = read(f.read())
    if r:
        print("[%r] = {%d, %d, %d, {%s}}," % (path, r[0], r[1], r[2], ",".join(map(str, r[3]))))
print("}")
