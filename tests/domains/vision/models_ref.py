#!/usr/bin/python3
"""models_ref.py -- torchvision's side of the live model cross-checks in
test_models.lua (run by the test when /usr/bin/python3 has torchvision).

    models_ref.py export DIR NAME[:SIZE] ...   torchvision NAME with seeded random weights (constant
                                               parameters such as zeroed heads refilled, BatchNorm running
                                               statistics drawn) -> DIR/NAME.safetensors (its state dict) and
                                               DIR/NAME.io.safetensors (input x: 2x3xSIZExSIZE, logits y)
    models_ref.py check DIR NAME[:SIZE] ...    load DIR/NAME.ours.safetensors (a state dict written by
                                               moontorch) with load_state_dict(strict=True), run the input x of
                                               DIR/NAME.ours_in.safetensors, write DIR/NAME.ours_out.safetensors (y)

A NAME may carry builder options after a comma: vit_b_16,image_size=64.
Models run in eval mode, float32, one thread. Writes safetensors itself
(stdlib only besides torch), so no safetensors package is needed."""
import json
import struct
import sys

import torch
import torchvision

DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64", torch.int32: "I32", torch.uint8: "U8",
          torch.bool: "BOOL", torch.float16: "F16", torch.bfloat16: "BF16"}
BACK = {v: k for k, v in DTYPES.items()}


def save(tensors, path):
    """Writes a name -> tensor dict as a safetensors file."""
    header, blobs, off = {}, [], 0
    for k in sorted(tensors):
        t = tensors[k].detach().contiguous().cpu()
        b = t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes()
        header[k] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def load(path):
    """Reads a safetensors file into a name -> tensor dict."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for k, v in header.items():
        if k == "__metadata__":
            continue
        a, b = v["data_offsets"]
        buf = bytearray(data[8 + n + a:8 + n + b])
        dt = BACK[v["dtype"]]
        t = torch.frombuffer(buf, dtype=dt) if len(buf) else torch.empty(0, dtype=dt)
        out[k] = t.reshape(v["shape"]).clone()
    return out


def parse(spec):
    """'vit_b_16,image_size=64:64' -> ('vit_b_16', {'image_size': 64}, 64)"""
    size = 64
    if ":" in spec:
        spec, s = spec.rsplit(":", 1)
        size = int(s)
    parts = spec.split(",")
    kw = {}
    for p in parts[1:]:
        k, v = p.split("=")
        kw[k] = int(v) if v.lstrip("-").isdigit() else float(v)
    return parts[0], kw, size


def gen(shape, seed):
    """The input formula test_models.lua repeats: ((37 k + 11 seed) % 101 - 50) / 32."""
    n = 1
    for s in shape:
        n *= s
    k = torch.arange(n, dtype=torch.int64)
    return (((37 * k + 11 * seed) % 101 - 50).double() / 32).float().reshape(shape)


def randomize(model):
    """Constant parameters (zeroed heads, unit norms, ConvNeXt's 1e-6 layer scales) become random, and
    BatchNorm running statistics are drawn, so every weight matters for the logits."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.numel() > 0 and bool((p == p.flatten()[0]).all()):
                if name.endswith("weight") and p.dim() == 1:
                    p.uniform_(0.5, 1.5)
                else:
                    p.normal_(0, 0.1)
        for name, b in model.named_buffers():
            if name.endswith("running_mean"):
                b.uniform_(-0.1, 0.1)
            elif name.endswith("running_var"):
                b.uniform_(0.5, 1.5)


def main():
    torch.set_num_threads(1)
    mode, d, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    for spec in specs:
        name, kw, size = parse(spec)
        tag = spec.split(":")[0]
        torch.manual_seed(0)
        model = torchvision.models.get_model(name, **kw).eval()
        if mode == "export":
            randomize(model)
            x = gen((2, 3, size, size), 5)
            with torch.no_grad():
                y = model(x)
            save(model.state_dict(), f"{d}/{tag}.safetensors")
            save({"x": x, "y": y}, f"{d}/{tag}.io.safetensors")
        elif mode == "check":
            model.load_state_dict(load(f"{d}/{tag}.ours.safetensors"), strict=True)
            x = load(f"{d}/{tag}.ours_in.safetensors")["x"]
            with torch.no_grad():
                y = model(x)
            save({"y": y}, f"{d}/{tag}.ours_out.safetensors")
        else:
            raise SystemExit("models_ref.py: unknown mode " + mode)
        print("ok", spec)


if __name__ == "__main__":
    main()
