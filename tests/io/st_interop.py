#!/usr/bin/python3
"""tests/io/st_interop.py -- an independent safetensors reader and writer
(json + struct + PyTorch only, no moontorch code) for
tests/io/test_safetensors.lua. Debian 12 has no python3-safetensors, so this
follows the format specification directly and as strictly as the reference
implementation.

  st_interop.py DIR FILE...   writes DIR/py_*.safetensors, reads each FILE,
                              prints one Lua table literal:
  {written = {file = {name = {dtype=, shape=, values=}}},
   read = {FILE = {tensors = {name = {dtype=, shape=, values=, bits=}},
                   metadata = {...}, data_start = n, rounding = {...}}}}
Reading errors are reported in the table (read[FILE].error), never raised.
Run it from a directory without moontorch's torch.so (e.g. /tmp).
"""
import json
import math
import os
import struct
import sys

import torch

DT = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
      "I8": torch.int8, "I16": torch.int16, "I32": torch.int32, "I64": torch.int64,
      "U8": torch.uint8, "BOOL": torch.bool}
CODE = {v: k for k, v in DT.items()}
NAME = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
        torch.bfloat16: "bfloat16", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
        torch.int64: "int64", torch.uint8: "uint8", torch.bool: "bool"}


def lua(v):
    """A Lua literal for v (ints stay integers, including -2^63)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return "math.mininteger" if v == -2**63 else str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return repr(v)
    if isinstance(v, str):
        return '"' + "".join(chr(b) if (b < 128 and chr(b).isalnum()) or chr(b) in " ._-:/+#"
                             else "\\%03d" % b for b in v.encode()) + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x) for x in v) + "}"
    if isinstance(v, dict):
        return "{" + ", ".join("[" + lua(k) + "] = " + lua(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def bits_of(t):
    """The raw bit patterns of a 16-bit float tensor, as unsigned ints."""
    return [b & 0xFFFF for b in t.contiguous().view(torch.int16).flatten().tolist()]


def describe(t):
    d = {"dtype": NAME[t.dtype], "shape": list(t.shape)}
    if t.dtype in (torch.float16, torch.bfloat16):
        d["values"] = t.float().flatten().tolist()
        d["bits"] = bits_of(t)
    else:
        d["values"] = t.flatten().tolist()
    return d


def from_bits(bits, dtype):
    return torch.tensor([b - 65536 if b >= 32768 else b for b in bits], dtype=torch.int16).view(dtype)


def write_file(path, tensors, metadata=None, reverse_layout=True, pad=False):
    """A spec-conforming file: data laid out in the reverse of the key order."""
    order = list(tensors)
    layout = list(reversed(order)) if reverse_layout else order
    blobs, offsets, at = [], {}, 0
    for name in layout:
        raw = tensors[name].contiguous().reshape(-1).view(torch.uint8).numpy().tobytes() \
            if tensors[name].numel() else b""
        offsets[name] = [at, at + len(raw)]
        at += len(raw)
        blobs.append(raw)
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in order:
        t = tensors[name]
        header[name] = {"dtype": CODE[t.dtype], "shape": list(t.shape), "data_offsets": offsets[name]}
    text = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def py_files():
    f16 = [0x3C00, 0x7BFF, 0x0001, 0x8000, 0x7C00, 0xFC00, 0x3555, 0xC000, 0x03FF]
    bf16 = [0x3F80, 0x7F7F, 0x0001, 0x8000, 0x7F80, 0xFF80, 0x3EAB, 0xC049, 0x0080]
    dtypes = {
        "f32": torch.tensor([[1.5, -2.25, 3.0e38], [1e-40, math.inf, -0.0]], dtype=torch.float32),
        "f64": torch.tensor([math.pi, -1e300, 5e-324], dtype=torch.float64),
        "f16": from_bits(f16, torch.float16),
        "bf16": from_bits(bf16, torch.bfloat16).view(3, 3),
        "i8": torch.tensor([-128, 127, 0, -1], dtype=torch.int8),
        "i16": torch.tensor([[[-32768, 32767], [258, 0]], [[1, -2], [3, -4]]], dtype=torch.int16),
        "i32": torch.tensor([-2**31, 2**31 - 1, 65536], dtype=torch.int32),
        "i64": torch.tensor([-2**63, 2**63 - 1, 2**40 + 1], dtype=torch.int64),
        "u8": torch.tensor([0, 255, 128], dtype=torch.uint8),
        "flags": torch.tensor([True, False, True], dtype=torch.bool),
        "scalar": torch.tensor(2.5, dtype=torch.float64),
        "empty": torch.zeros(0, 3, dtype=torch.float32),
    }
    return {"py_dtypes.safetensors": (dtypes, {"format": "pt"}, True, False),
            "py_padded.safetensors": ({"layer.weight": torch.arange(6, dtype=torch.float32).view(2, 3),
                                       "layer.bias": torch.tensor([0.5, -0.5], dtype=torch.float32)},
                                      None, False, True)}


class Bad(Exception):
    pass


def no_dups(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise Bad("duplicate key in the header")
    return dict(pairs)


def read_file(path):
    """Loads a file the way safetensors.torch.load_file would, checking the spec."""
    raw = open(path, "rb").read()
    if len(raw) < 8:
        raise Bad("shorter than 8 bytes")
    (n,) = struct.unpack("<Q", raw[:8])
    if n > len(raw) - 8:
        raise Bad("header length beyond the file")
    text = raw[8:8 + n]
    if not text.startswith(b"{"):
        raise Bad("header does not start with {")
    header = json.loads(text.decode("utf-8"), object_pairs_hook=no_dups)
    meta = header.pop("__metadata__", {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()):
        raise Bad("metadata must map strings to strings")
    buf = raw[8 + n:]
    spans = sorted((info["data_offsets"][0], info["data_offsets"][1], name) for name, info in header.items())
    at = 0
    for b, e, name in spans:
        if b != at:
            raise Bad("tensor %s does not start where the previous one ends" % name)
        at = e
    if at != len(buf):
        raise Bad("the tensors do not cover the data buffer exactly")
    out = {}
    for name, info in header.items():
        if set(info) != {"dtype", "shape", "data_offsets"}:
            raise Bad("unexpected fields for " + name)
        dt = DT[info["dtype"]]
        shape = info["shape"]
        b, e = info["data_offsets"]
        numel = math.prod(shape)
        if (e - b) != numel * torch.empty(0, dtype=dt).element_size():
            raise Bad("size mismatch for " + name)
        if numel:
            t = torch.frombuffer(bytearray(buf[b:e]), dtype=dt).reshape(shape)
        else:
            t = torch.empty(shape, dtype=dt)
        out[name] = t
    return out, meta, 8 + n


def rounding(tensors):
    """Our float16/bfloat16/float32 conversions of 'src' against PyTorch's, bit for bit."""
    res = {}
    src = tensors.get("src")
    if src is None:
        return res
    for name, dt in (("half", torch.float16), ("bf16", torch.bfloat16), ("f32", torch.float32)):
        if name not in tensors:
            continue
        want, got = src.to(dt), tensors[name]
        if dt == torch.float32:
            wb = want.view(torch.int32).tolist()
            gb = got.view(torch.int32).tolist()
        else:
            wb, gb = bits_of(want), bits_of(got)
        bad = ["%r: want 0x%x got 0x%x" % (src[i].item(), wb[i] & 0xFFFFFFFF, gb[i] & 0xFFFFFFFF)
               for i in range(len(wb)) if wb[i] != gb[i]]
        res[name] = {"checked": len(wb), "bad": bad}
    return res


def main():
    out_dir, files = sys.argv[1], sys.argv[2:]
    written = {}
    for fname, (tensors, meta, rev, pad) in py_files().items():
        write_file(os.path.join(out_dir, fname), tensors, meta, rev, pad)
        written[fname] = {k: describe(t) for k, t in tensors.items()}
    read = {}
    for path in files:
        try:
            tensors, meta, start = read_file(path)
            read[path] = {"tensors": {k: describe(t) for k, t in tensors.items()}, "metadata": meta,
                          "data_start": start, "rounding": rounding(tensors)}
        except Exception as e:  # reported to the Lua test, which fails with it
            read[path] = {"error": "%s: %s" % (type(e).__name__, e)}
    print("return " + lua({"written": written, "read": read}))


if __name__ == "__main__":
    main()
