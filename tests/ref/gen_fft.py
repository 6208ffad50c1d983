#!/usr/bin/python3
"""gen_fft.py -- writes tests/ref/fft.lua: PyTorch 1.13's torch.fft results,
windows and stft/istft on random inputs, for tests/tensor/test_fft.lua and
tests/tensor/test_stft.lua.

    cd tests/ref && /usr/bin/python3 gen_fft.py

Inputs (float64, from torch.manual_seed) are written into the file. Complex
values are stored as their real views (..., 2). Dims are written 1-based.
Differentiable cases also hold the gradient of sum(view_as_real(out) * w)
wrt the input (real view for complex inputs), w[k] = cos(0.37 k + 0.1)."""
import math
import os

import torch
from reflib import lua

torch.manual_seed(1234)
cases, windows, stfts = [], [], []


def rv(t):
    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def flat(t):
    t = rv(t.detach())
    return {"shape": list(t.shape), "values": t.reshape(-1).tolist()}


def weights(shape):
    n = 1
    for s in shape:
        n *= s
    return torch.tensor([math.cos(0.37 * k + 0.1) for k in range(n)], dtype=torch.float64).reshape(shape)


def one_based(dim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        return [d + 1 if d >= 0 else d for d in dim]
    return dim + 1 if dim >= 0 else dim


def make_input(shape, cplx):
    x = torch.randn(*shape, 2 if cplx else 1, dtype=torch.float64)
    return torch.view_as_complex(x) if cplx else x[..., 0]


def case(fn, shape, cplx=False, **kw):
    x = make_input(shape, cplx).requires_grad_()
    pkw = dict(kw)
    out = getattr(torch.fft, fn)(x, **pkw)
    w = weights(rv(out).shape)
    (rv(out) * w).sum().backward()
    opts = {k: (one_based(v) if k == "dim" else v) for k, v in kw.items()}
    cases.append({"fn": fn, "complex": cplx, "x": flat(x), "opts": opts, "out": flat(out), "grad": flat(x.grad)})


case("fft", [7])
case("fft", [8], cplx=True)
case("fft", [3, 5], cplx=True, dim=0)
case("fft", [3, 5], n=8)
case("fft", [4, 6], cplx=True, n=4, norm="ortho")
case("fft", [5], cplx=True, norm="forward")
case("ifft", [6], cplx=True)
case("ifft", [3, 5], cplx=True, dim=-1, norm="forward", n=7)
case("ifft", [4, 3], dim=0, norm="ortho")
case("rfft", [8])
case("rfft", [9], norm="ortho")
case("rfft", [3, 10], dim=0)
case("rfft", [2, 10], n=12, norm="forward")
case("rfft", [2, 10], n=5)
case("irfft", [5], cplx=True)
case("irfft", [3, 6], cplx=True, n=9)
case("irfft", [3, 6], cplx=True, n=8, norm="ortho", dim=0)
case("irfft", [4, 5], cplx=True, norm="forward")
case("hfft", [5], cplx=True)
case("hfft", [2, 4], cplx=True, n=7, norm="ortho")
case("ihfft", [8])
case("ihfft", [2, 7], norm="forward")
case("fft2", [2, 4, 6], cplx=True)
case("fft2", [4, 6], s=[5, 3], norm="ortho")
case("ifft2", [3, 4], cplx=True, s=[4, 6])
case("fftn", [3, 4, 5], cplx=True)
case("fftn", [3, 4, 5], dim=[0, 2])
case("fftn", [3, 4, 5], cplx=True, s=[3, 6])
case("ifftn", [2, 3, 4], cplx=True, dim=[1, 2], norm="forward")
case("rfft2", [4, 6])
case("rfft2", [3, 5, 7], norm="ortho")
case("rfftn", [3, 4, 5])
case("rfftn", [3, 4, 5], dim=[2, 0])
case("rfftn", [4, 6], s=[5, 9])
case("irfft2", [4, 4], cplx=True)
case("irfft2", [3, 4, 5], cplx=True, s=[4, 7], norm="ortho")
case("irfftn", [3, 4, 5], cplx=True)
case("irfftn", [4, 5], cplx=True, dim=[1, 0], s=[6, 5])
case("hfft2", [3, 4], cplx=True)
case("hfftn", [2, 3, 4], cplx=True, s=[3, 7], norm="ortho")
case("hfftn", [4, 5], cplx=True, dim=[1, 0])
case("ihfft2", [4, 6])
case("ihfftn", [3, 4, 5], norm="forward")
case("ihfftn", [4, 6], dim=[1, 0], s=[5, 5])

# frequencies and shifts (no gradient)
misc = {
    "fftfreq5": torch.fft.fftfreq(5).tolist(),
    "fftfreq8": torch.fft.fftfreq(8, d=0.1).tolist(),
    "rfftfreq9": torch.fft.rfftfreq(9, 0.5).tolist(),
    "rfftfreq10": torch.fft.rfftfreq(10, dtype=torch.float64).tolist(),
    "shift5": torch.fft.fftshift(torch.arange(5)).tolist(),
    "ishift5": torch.fft.ifftshift(torch.arange(5)).tolist(),
    "shift34": torch.fft.fftshift(torch.arange(12).reshape(3, 4)).tolist(),
    "ishift34_d1": torch.fft.ifftshift(torch.arange(12).reshape(3, 4), dim=1).tolist(),
}

for name in ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]:
    for n in [0, 1, 2, 8, 9, 64]:
        for periodic in [True, False]:
            for dt in ["float32", "float64"]:
                w = getattr(torch, name)(n, periodic=periodic, dtype=getattr(torch, dt))
                windows.append({"fn": name, "n": n, "periodic": periodic, "dtype": dt, "values": w.tolist()})
windows.append({"fn": "hamming_window", "n": 10, "periodic": True, "dtype": "float64", "alpha": 0.6, "beta": 0.3,
                "values": torch.hamming_window(10, True, 0.6, 0.3, dtype=torch.float64).tolist()})
windows.append({"fn": "kaiser_window", "n": 11, "periodic": False, "dtype": "float64", "beta": 5.0,
                "values": torch.kaiser_window(11, False, 5.0, dtype=torch.float64).tolist()})


def stft_case(shape, n_fft, cplx=False, win=None, **kw):
    x = make_input(shape, cplx).requires_grad_()
    window = None
    if win is not None:
        window = getattr(torch, win[0])(win[1], dtype=torch.float64)
    out = torch.stft(x, n_fft, window=window, return_complex=True, **kw)
    w = weights(rv(out).shape)
    (rv(out) * w).sum().backward()
    stfts.append({"fn": "stft", "complex": cplx, "x": flat(x), "n_fft": n_fft, "window": win or False, "opts": kw,
                  "out": flat(out), "grad": flat(x.grad)})


def istft_case(spec_shape, n_fft, win=None, **kw):
    x = make_input(spec_shape, True).requires_grad_()
    window = None
    if win is not None:
        window = getattr(torch, win[0])(win[1], dtype=torch.float64)
    out = torch.istft(x, n_fft, window=window, **kw)
    w = weights(rv(out).shape)
    (rv(out) * w).sum().backward()
    stfts.append({"fn": "istft", "complex": True, "x": flat(x), "n_fft": n_fft, "window": win or False, "opts": kw,
                  "out": flat(out), "grad": flat(x.grad)})


stft_case([300], 64, win=["hann_window", 64], hop_length=16)
stft_case([2, 400], 100, win=["hamming_window", 80], hop_length=30, win_length=80, normalized=True)
stft_case([250], 32, center=False)
stft_case([2, 200], 40, win=["hann_window", 40], pad_mode="constant", hop_length=7)
stft_case([120], 16, win=["blackman_window", 16], onesided=False, hop_length=5)
stft_case([2, 90], 24, cplx=True, win=["hann_window", 24], hop_length=6)
stft_case([301], 63, win=["hann_window", 63], hop_length=20, pad_mode="replicate")
istft_case([33, 20], 64, win=["hann_window", 64], hop_length=16)
istft_case([2, 51, 12], 100, win=["hann_window", 80], hop_length=25, win_length=80, normalized=True)
istft_case([17, 15], 32, win=["hann_window", 32], hop_length=8, length=130)
istft_case([17, 15], 32, win=["hamming_window", 32], hop_length=8, center=False)
istft_case([16, 10], 16, win=["hann_window", 16], hop_length=4, onesided=False)
istft_case([16, 10], 16, win=["hann_window", 16], hop_length=4, onesided=False, return_complex=True)
istft_case([9, 12], 16, win=["hann_window", 16], hop_length=4, length=60)

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "fft.lua"), "w") as f:
    f.write("-- tests/ref/fft.lua -- generated by tests/ref/gen_fft.py from PyTorch %s. Do not edit.\n"
            % torch.__version__)
    f.write("return " + lua({"cases": cases, "misc": misc, "windows": windows, "stft": stfts}, indent="") + "\n")
