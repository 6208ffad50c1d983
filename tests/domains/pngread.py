"""tests/domains/pngread.py -- an independent PNG reader for the tests
(zlib + struct, the PNG specification's chunk CRCs and section 9 filters;
nothing from moontorch), shared by vision/png_ref.py and
experiment/tensorboard/tb_decode.py. 8-bit (and, when asked, 16-bit)
non-interlaced images; palettes (with tRNS) expand to RGB(A) and a tRNS
colour adds an alpha channel, as torch.vision.io's UNCHANGED mode does."""
import struct
import zlib

CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def chunks(data):
    """The (kind, body) chunks of PNG bytes; ValueError on a bad signature or CRC."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos = 8
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack_from(">I", data, pos + 8 + n)
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise ValueError("bad PNG chunk CRC")
        yield kind, body
        pos += 12 + n


def unfilter(raw, w, h, c):
    """The pixel rows of the decompressed IDAT stream, flat HWC bytes; c is
    the bytes per pixel (channels times bytes per sample)."""
    stride, prev, out = w * c, bytearray(w * c), bytearray()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f > 4:
            raise ValueError(f"bad PNG filter {f}")
        for i in range(stride):
            a = line[i - c] if i >= c else 0
            b, d = prev[i], (prev[i - c] if i >= c else 0)
            line[i] = (line[i] + [0, a, b, (a + b) // 2, paeth(a, b, d)][f]) & 255
        out += line
        prev = line
    return out


def decode(data, depths=(8,)):
    """(channels, height, width, flat HWC list of ints); ValueError for a
    malformed file or one outside what this reader takes (bit depths other
    than those in depths; 16-bit samples are read big-endian, 0..65535)."""
    idat, plte, trns, hdr = b"", None, None, None
    for kind, body in chunks(data):
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            plte = body
        elif kind == b"tRNS":
            trns = body
        elif kind == b"IDAT":
            idat += body
    w, h, depth, ctype, _, _, interlace = hdr
    if depth not in depths or depth not in (8, 16) or interlace or ctype not in CHANNELS or (ctype == 3 and depth != 8):
        raise ValueError("unexpected PNG depth, colour type or interlace")
    c, nb = CHANNELS[ctype], depth // 8
    out = unfilter(zlib.decompress(idat), w, h, c * nb)
    out = list(out) if nb == 1 else [(out[i] << 8) | out[i + 1] for i in range(0, len(out), 2)]
    top = (1 << depth) - 1
    if ctype == 0 and trns:  # a gray value made transparent
        g, out, c = struct.unpack(">H", trns[:2])[0], [v for p in out for v in (p, 0 if p == g else top)], 2
    elif ctype == 2 and trns:
        t = struct.unpack(">HHH", trns[:6])
        px = [tuple(out[i:i + 3]) for i in range(0, len(out), 3)]
        out, c = [v for p in px for v in p + ((0,) if p == t else (top,))], 4
    elif ctype == 3:
        c = 4 if trns else 3
        out = [v for i in out for v in tuple(plte[3 * i:3 * i + 3]) + ((trns[i] if i < len(trns) else 255,) if trns else ())]
    return c, h, w, out
