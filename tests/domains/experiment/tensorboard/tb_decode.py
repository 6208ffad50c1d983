#!/usr/bin/env python3
"""tb_decode.py -- an independent reader of TensorBoard event files for the
moontorch tests. For each file named on the command line it checks the
TFRecord framing and both masked CRC-32Cs of every record (a textbook
bitwise CRC-32C below, nothing from moontorch), decodes the protobuf wire
format generically and the Event/Summary fields the tests need, decodes PNG
images with zlib (chunk CRCs, filters) to raw pixels, and prints the result
as a Lua table literal (`return {...}`) for the test to compare. Only the
standard library is used. Exits 1 with a message on any malformed byte."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from pngread import decode  # noqa: E402 (tests/domains/pngread.py)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def fail(msg):
    sys.stderr.write("tb_decode: " + msg + "\n")
    sys.exit(1)


def records(path):
    data = open(path, "rb").read()
    pos, out = 0, []
    while pos < len(data):
        if pos + 12 > len(data):
            fail(f"{path}: truncated record header at byte {pos}")
        (n,) = struct.unpack_from("<Q", data, pos)
        (hcrc,) = struct.unpack_from("<I", data, pos + 8)
        if masked(crc32c(data[pos:pos + 8])) != hcrc:
            fail(f"{path}: bad length CRC at byte {pos}")
        body = data[pos + 12:pos + 12 + n]
        if len(body) != n or pos + 16 + n > len(data):
            fail(f"{path}: truncated record at byte {pos}")
        (dcrc,) = struct.unpack_from("<I", data, pos + 12 + n)
        if masked(crc32c(body)) != dcrc:
            fail(f"{path}: bad data CRC at byte {pos}")
        out.append(body)
        pos += 16 + n
    return out


def varint(buf, pos):
    shift = result = 0
    while True:
        if pos >= len(buf):
            fail("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return result, pos


def fields(buf):
    """Generic wire-format decode: {field_number: [raw values]}; varints as
    ints, fixed64/fixed32 as bytes, length-delimited as bytes."""
    out, pos = {}, 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, pos = varint(buf, pos)
        elif wt == 1:
            v, pos = buf[pos:pos + 8], pos + 8
        elif wt == 5:
            v, pos = buf[pos:pos + 4], pos + 4
        elif wt == 2:
            n, pos = varint(buf, pos)
            v, pos = buf[pos:pos + n], pos + n
        else:
            fail(f"unsupported wire type {wt}")
        if pos > len(buf):
            fail("field runs past the end of its message")
        out.setdefault(num, []).append((wt, v))
    return out


def one(f, num, default=None):
    return f[num][-1][1] if num in f else default


def dbl(b):
    return struct.unpack("<d", b)[0]


def packed_doubles(f, num):
    out = []
    for wt, v in f.get(num, []):
        if wt == 2:
            out.extend(struct.unpack("<%dd" % (len(v) // 8), v))
        else:
            out.append(dbl(v))
    return out


def png_pixels(png):
    try:
        c, h, w, pix = decode(png)
    except ValueError as e:
        fail(str(e))
    return w, h, c, bytes(pix)


def lua_str(b):
    if isinstance(b, str):
        b = b.encode("utf-8")
    return '"' + "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else "\\%03d" % c for c in b) + '"'


def lua_num(x):
    if x != x:
        return "(0/0)"
    if x in (float("inf"), float("-inf")):
        return "math.huge" if x > 0 else "-math.huge"
    return repr(float(x))


def pb_value(buf):
    f = fields(buf)
    if 2 in f:
        return lua_num(dbl(one(f, 2)))
    if 3 in f:
        return lua_str(one(f, 3))
    if 4 in f:
        return "true" if one(f, 4) else "false"
    return "nil"


def hparams(content):
    f = fields(content)
    parts = ["version=%d" % one(f, 1, 0)]
    if 2 in f:
        e = fields(one(f, 2))
        hps = []
        for _, info in e.get(4, []):
            i = fields(info)
            dd = ""
            if 5 in i:
                dd = ", discrete={" + ", ".join(pb_value(v) for _, v in fields(one(i, 5)).get(1, [])) + "}"
            hps.append("{name=%s, type=%d%s}" % (lua_str(one(i, 1, b"")), one(i, 4, 0), dd))
        mts = []
        for _, m in e.get(5, []):
            name = fields(one(fields(m), 1, b""))
            mts.append(lua_str(one(name, 2, b"")))
        parts.append("experiment={hparams={%s}, metrics={%s}}" % (", ".join(hps), ", ".join(mts)))
    if 3 in f:
        s = fields(one(f, 3))
        kv = []
        for _, entry in s.get(1, []):
            en = fields(entry)
            kv.append("[%s]=%s" % (lua_str(one(en, 1, b"")), pb_value(one(en, 2, b""))))
        parts.append("session_start={%s}" % ", ".join(kv))
    if 4 in f:
        parts.append("session_end={status=%d}" % one(fields(one(f, 4)), 1, 0))
    return "{" + ", ".join(parts) + "}"


def value(buf):
    f = fields(buf)
    parts = ["tag=" + lua_str(one(f, 1, b""))]
    if 9 in f:
        pd = fields(one(fields(one(f, 9)), 1, b""))
        plugin = one(pd, 1, b"")
        parts.append("plugin=" + lua_str(plugin))
        if plugin == b"hparams":
            parts.append("hparams=" + hparams(one(pd, 2, b"")))
    if 2 in f:
        parts.append("kind='scalar', value=" + lua_num(struct.unpack("<f", one(f, 2))[0]))
    if 5 in f:
        h = fields(one(f, 5))
        parts.append("kind='histogram', min=%s, max=%s, num=%s, sum=%s, sum_squares=%s" % tuple(
            lua_num(dbl(one(h, k, b"\0" * 8))) for k in (1, 2, 3, 4, 5)))
        parts.append("bucket_limit={%s}" % ", ".join(lua_num(x) for x in packed_doubles(h, 6)))
        parts.append("bucket={%s}" % ", ".join(lua_num(x) for x in packed_doubles(h, 7)))
    if 4 in f:
        im = fields(one(f, 4))
        w, h, ch, pix = png_pixels(one(im, 4))
        parts.append("kind='image', height=%d, width=%d, colorspace=%d" % (one(im, 1, 0), one(im, 2, 0), one(im, 3, 0)))
        parts.append("png_width=%d, png_height=%d, png_channels=%d, pixels=%s" % (w, h, ch, lua_str(pix)))
    if 8 in f:
        t = fields(one(f, 8))
        dims = [one(fields(d), 1, 0) for _, d in fields(one(t, 2, b"")).get(2, [])]
        parts.append("kind='tensor', dtype=%d, dims={%s}, strings={%s}" % (
            one(t, 1, 0), ", ".join(map(str, dims)), ", ".join(lua_str(s) for _, s in t.get(8, []))))
    return "{" + ", ".join(parts) + "}"


def event(buf):
    f = fields(buf)
    parts = ["wall_time=" + lua_num(dbl(one(f, 1, b"\0" * 8))), "step=%d" % one(f, 2, 0)]
    if 3 in f:
        parts.append("file_version=" + lua_str(one(f, 3)))
    if 5 in f:
        vals = [value(v) for _, v in fields(one(f, 5)).get(1, [])]
        parts.append("values={%s}" % ", ".join(vals))
    return "{" + ", ".join(parts) + "}"


def main():
    out = []
    for path in sys.argv[1:]:
        evs = [event(r) for r in records(path)]
        out.append("[%s]={%s}" % (lua_str(path), ",\n".join(evs)))
    print("return {" + ",\n".join(out) + "}")


if __name__ == "__main__":
    main()
