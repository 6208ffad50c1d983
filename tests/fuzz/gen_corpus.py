#!/usr/bin/python3
"""tests/fuzz/gen_corpus.py -- writes the seed corpora of the fuzz targets
(tests/fuzz/corpus_safetensors/, corpus_idx/, corpus_inflate/) from the
format specifications, with the standard library only. The test suite
(tests/io/test_fuzz_replay.lua) replays them and mutations of them.

Run: /usr/bin/python3 tests/fuzz/gen_corpus.py   (from the repository root)
"""
import gzip
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = {"F32": 4, "F64": 8, "F16": 2, "BF16": 2, "I8": 1, "I16": 2, "I32": 4, "I64": 8, "U8": 1, "BOOL": 1}


def st(tensors, metadata=None, pad=False, raw_header=None):
    """tensors: list of (name, dtype, shape); data bytes are a counting pattern."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dt, shape in tensors:
        n = SIZES[dt]
        for d in shape:
            n *= d
        chunk = bytes((len(data) + i) % 2 if dt == "BOOL" else (len(data) + i) % 251 for i in range(n))
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [len(data), len(data) + n]}
        data += chunk
    text = raw_header.encode() if raw_header is not None else json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def structure(root):
    return {"moontorch.structure": json.dumps({"version": 1, "root": root}, separators=(",", ":"))}


def safetensors_seeds():
    s = {"empty": st([]),
         "meta_only": st([], {"format": "pt"}),
         "one_f32": st([("w", "F32", [2, 3])]),
         "scalar": st([("s", "F64", [])]),
         "zero_size": st([("z", "F32", [0, 4]), ("a", "I8", [3])]),
         "padded": st([("layer.weight", "F32", [4, 4]), ("layer.bias", "F32", [4])], {"format": "pt"}, pad=True),
         "unicode_names": st([("poids.\u00e9t\u00e9", "F16", [2]), ("\u6743\u91cd", "BF16", [2])]),
         "escapes": st([("a\"b\\c\n", "U8", [1])], {"k\u0001": "v\"\\/\b\f\n\r\t"}),
         "rank8": st([("r", "U8", [1, 2, 1, 2, 1, 2, 1, 2])]),
         "overlap": st([], raw_header='{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                      '"b":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}}') + b"\0" * 6,
         "bad_dtype": st([], raw_header='{"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}') + b"\0",
         "numbers": st([], raw_header='{"__metadata__":{"x":"1"},"a":{"dtype":"I64","shape":[1e0],'
                                      '"data_offsets":[-0,8.5]}}') + b"\0" * 8,
         }
    s["all_dtypes"] = st([("t_" + d.lower(), d, [2, 2]) for d in SIZES])
    s["nested"] = st([("model.w", "F32", [2, 2]), ("opt.m", "F64", [2])], structure(
        {"map": [[True, 1], [2.5, "x"], [3, {"bytes": "ff00"}],
                 ["model", {"map": [["w", {"tensor": "model.w"}]]}],
                 ["opt", {"map": [["m", {"tensor": "opt.m"}], ["lr", 0.001], ["step", 10],
                                  ["special", {"list": [{"float": "inf"}, {"float": "-inf"}, {"float": "nan"},
                                                        -0.0, 1e308]}]]}],
                 ["tied", {"tensor": "model.w"}], ["empty", {"list": []}]]}))
    s["lone"] = st([("tensor", "I32", [3])], structure({"tensor": "tensor"}))
    return s


def idx(code, dims, payload):
    return bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + payload


def idx_seeds():
    s = {"u8": idx(0x08, [2, 3], bytes(range(6))),
         "i8": idx(0x09, [4], struct.pack(">4b", -128, 127, 0, -1)),
         "i16": idx(0x0B, [3], struct.pack(">3h", -32768, 32767, 258)),
         "i32": idx(0x0C, [2], struct.pack(">2i", -2**31, 16909060)),
         "f32": idx(0x0D, [2, 2], struct.pack(">4f", 1.5, -0.0, float("inf"), 1e-45)),
         "f64": idx(0x0E, [2], struct.pack(">2d", 3.141592653589793, -1e300)),
         "scalar": idx(0x0C, [], struct.pack(">i", -5)),
         "empty": idx(0x0D, [0, 28], b""),
         "images": idx(0x08, [3, 28, 28], bytes((i * 7) % 256 for i in range(3 * 28 * 28))),
         "labels": idx(0x08, [10], bytes(range(10)))}
    for name in list(s):
        s[name + ".gz"] = gzip.compress(s[name], mtime=0)
    s["multi.gz"] = gzip.compress(s["labels"][:7], mtime=0) + gzip.compress(s["labels"][7:], mtime=0)
    return s


def inflate_seeds():
    """zlib streams of PNG-like rows (runs, near repeats, noise) made with every
    kind of block: stored, fixed and dynamic Huffman codes, flushes between,
    a small window; each after fuzz_inflate's two bytes (chunk and step size)."""
    rows = bytes((x * y // 7 + (x * 2654435761 >> 7) % 3) % 256 for y in range(40) for x in range(61))
    noise = bytes((i * 2654435761 >> 11) % 256 for i in range(3000))
    s = {}
    for name, data in (("rows", rows), ("noise", noise), ("zeros", bytes(5000)), ("short", b"abcabcabcabcab")):
        for level, strategy, wbits in ((0, zlib.Z_DEFAULT_STRATEGY, 15), (1, zlib.Z_FIXED, 15), (9, zlib.Z_RLE, 15),
                                       (6, zlib.Z_DEFAULT_STRATEGY, 9), (9, zlib.Z_FILTERED, 15)):
            c = zlib.compressobj(level, zlib.DEFLATED, wbits, 9, strategy)
            z = c.compress(data[:len(data) // 2]) + c.flush(zlib.Z_SYNC_FLUSH) + c.compress(data[len(data) // 2:])
            s["%s_l%d_s%d_w%d" % (name, level, strategy, wbits)] = bytes((7, 3)) + z + c.flush()
    s["one_chunk"] = bytes((0, 0)) + zlib.compress(rows, 6)
    return s


def write(sub, seeds, ext):
    d = os.path.join(HERE, sub)
    os.makedirs(d, exist_ok=True)
    for name, data in seeds.items():
        with open(os.path.join(d, name + ("" if name.endswith(".gz") else ext)), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    write("corpus_safetensors", safetensors_seeds(), ".safetensors")
    write("corpus_idx", idx_seeds(), ".idx")
    write("corpus_inflate", inflate_seeds(), ".z")
