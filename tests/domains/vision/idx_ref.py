#!/usr/bin/python3
"""tests/io/idx_ref.py -- an independent idx reader (gzip + struct only) for
tests/io/test_idx.lua: summarises idx files so the test can compare
torch.vision.io.read_idx against it.

  idx_ref.py FILE...   prints a Lua table literal, one entry per file:
  {[FILE] = {shape = {...}, type = code, sum = n, first = {...}, picks = {...},
             counts = {...}}}
first: the first 16 values; picks: values at flat positions 1000, 12345 and
the last (0-based positions; absent when out of range); counts: occurrences
of 0..9 (only for u8 files of one dimension, i.e. labels)."""
import gzip
import struct
import sys

FMT = {0x08: "B", 0x09: "b", 0x0B: "h", 0x0C: "i", 0x0D: "f", 0x0E: "d"}


def read(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    zero, code, ndim = struct.unpack(">HBB", raw[:4])
    assert zero == 0, "bad magic"
    shape = list(struct.unpack(">%dI" % ndim, raw[4:4 + 4 * ndim]))
    n = 1
    for d in shape:
        n *= d
    values = struct.unpack(">%d%s" % (n, FMT[code]), raw[4 + 4 * ndim:])
    return code, shape, values


def main():
    out = []
    for path in sys.argv[1:]:
        code, shape, v = read(path)
        picks = ["[%d] = %r" % (i, v[i]) for i in (1000, 12345, len(v) - 1) if 0 <= i < len(v)]
        fields = ["shape = {%s}" % ", ".join(map(str, shape)), "type = %d" % code,
                  "sum = %r" % sum(v), "first = {%s}" % ", ".join(repr(x) for x in v[:16]),
                  "picks = {%s}" % ", ".join(picks)]
        if code == 0x08 and len(shape) == 1:
            fields.append("counts = {%s}" % ", ".join(str(v.count(k)) for k in range(10)))
        out.append('["%s"] = {%s}' % (path, ", ".join(fields)))
    print("return {" + ",\n".join(out) + "}")


if __name__ == "__main__":
    main()
