"""tests/ref/reflib.py -- shared by the reference generators: writes Python
values (from PyTorch results) as Lua literals the test runner's ref() loads.
NaN becomes 0/0 and infinities math.huge (the loader provides `math`)."""
import math
import os
import re
import subprocess
import tempfile
import wave

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key(k):
    """A Lua table key: bare if an identifier, else ["..."]."""
    k = str(k)
    return k if _IDENT.match(k) else "[" + lua(k) + "]"


def lua(v, single=False, indent=None):
    """A Lua literal for v: bool, int, float, str, list/tuple, dict or tensor.
    single: floats are float32 values, written with 9 significant digits.
    indent: a string to lay dicts out one field per line (None: one line)."""
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        return lua(v.tolist(), single, indent)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "0/0"
        if math.isinf(v):
            return "math.huge" if v > 0 else "-math.huge"
        return ("%.9g" % v) if single else repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "{" + ", ".join(lua(x, single, indent) for x in v) + "}"
    if isinstance(v, dict):
        if indent is None:
            return "{" + ", ".join(key(k) + " = " + lua(x) for k, x in v.items()) + "}"
        inner = indent + "  "
        items = [f"{inner}{key(k)} = {lua(x, False, inner)}," for k, x in v.items()]
        return "{\n" + "\n".join(items) + "\n" + indent + "}"
    raise TypeError(type(v))


def gen_image(shape, seed, dtype, mods=None):
    """The color tests' inputs (the Lua tests repeat it): values
    (k*k*31 + k*17 + seed*101) % 256 for uint8, % 1000 / 999 for floats, k
    the flat index; mods "const" makes the first channel plane of every
    image one value (77, or 0.3). dtype: "uint8", "float32" or "float64"."""
    import torch
    n = 1
    for s in shape:
        n *= s
    if dtype == "uint8":
        vals = [(k * k * 31 + k * 17 + seed * 101) % 256 for k in range(n)]
    else:
        vals = [((k * k * 31 + k * 17 + seed * 101) % 1000) / 999 for k in range(n)]
    t = torch.tensor(vals, dtype=torch.float64).reshape(shape).to(getattr(torch, dtype))
    if mods == "const":
        t[..., 0, :, :] = 77 if dtype == "uint8" else 0.3
    return t


def lcg(n, seed):
    """n uniform values in [-1, 1) from a 64-bit LCG (the Lua tests repeat
    it exactly: integer arithmetic wraps mod 2^64 there too)."""
    s, out = seed, []
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
        out.append((s >> 11) / 2.0**53 * 2 - 1)
    return out


def espeak_int16(text):
    """espeak-ng speaking text: its 16-bit mono samples (bytes) at 22050 Hz."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "speech.wav")
        subprocess.run(["espeak-ng", "-w", path, text], check=True)
        with wave.open(path) as w:
            assert w.getframerate() == 22050 and w.getsampwidth() == 2 and w.getnchannels() == 1
            return w.readframes(w.getnframes())
