#!/usr/bin/python3
"""tests/domains/vision/png_ref.py -- an independent PNG reader (zlib +
struct, PNG specification section 9 filters) for test_image.lua: prints a
Lua table {[path] = {c, h, w, pixels (flat HWC)}} for the given files that
are 8-bit, non-interlaced and at most 65536 pixels; palettes (with tRNS)
are expanded to RGB(A), as read_image's UNCHANGED mode does."""
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def decode(data):
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos, idat, plte, trns, hdr = 8, b"", None, None, None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            plte = body
        elif kind == b"tRNS":
            trns = body
        elif kind == b"IDAT":
            idat += body
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or interlace or ctype not in CHANNELS or w * h > 65536:
        return None
    c = CHANNELS[ctype]
    raw, stride, prev, out = zlib.decompress(idat), w * c, bytearray(w * c), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - c] if i >= c else 0
            b, d = prev[i], (prev[i - c] if i >= c else 0)
            line[i] = (line[i] + [0, a, b, (a + b) // 2, paeth(a, b, d)][f]) & 255
        out.extend(line)
        prev = line
    if ctype == 0 and trns:  # a gray value made transparent
        g, out, c = struct.unpack(">H", trns[:2])[0], [v for p in out for v in (p, 0 if p == g else 255)], 2
    elif ctype == 2 and trns:
        t = struct.unpack(">HHH", trns[:6])
        px = [tuple(out[i:i + 3]) for i in range(0, len(out), 3)]
        out, c = [v for p in px for v in p + ((0,) if p == t else (255,))], 4
    elif ctype == 3:
        c = 4 if trns else 3
        out = [v for i in out for v in tuple(plte[3 * i:3 * i + 3]) + ((trns[i] if i < len(trns) else 255,) if trns else ())]
    return c, h, w, out


print("return {")
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        r = decode(f.read())
    if r:
        print("[%r] = {%d, %d, %d, {%s}}," % (path, r[0], r[1], r[2], ",".join(map(str, r[3]))))
print("}")
