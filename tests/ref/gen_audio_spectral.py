#!/usr/bin/python3
"""gen_audio_spectral.py -- torchaudio references for the spectral part of
torch.audio (tests/domains/audio/test_mel.lua, test_spectral.lua,
test_kaldi.lua): filter banks, DCT, MelScale, the Spectrogram family,
Griffin-Lim, the phase vocoder, spectral centroid, pitch shift and
compliance.kaldi.

    cd tests/ref && /usr/bin/python3 gen_audio_spectral.py   # writes audio_spectral.lua

Uses Debian's torchaudio 0.13 / torch 1.13. Inputs: random signals drawn
with fixed seeds (stored as values) and a real speech clip synthesized by
espeak-ng (stored as int16 sample values; the test divides by 32768).
InverseMelScale follows torchaudio 2.x (relu of lstsq's solution), which
torch 1.13's torch.linalg.lstsq computes here; gen_audio_spectral_2x.py
checks the same cases against torchaudio 2.x itself."""
import os

import torch
import torchaudio.compliance.kaldi as K
import torchaudio.functional as F
import torchaudio.transforms as T
from reflib import espeak_int16, lcg, lua

torch.set_num_threads(1)


def speech():
    """0.5 s of espeak-ng speech at 22050 Hz as int16 values."""
    raw = espeak_int16("the quick brown fox jumps over the lazy dog")
    x = torch.frombuffer(bytearray(raw), dtype=torch.int16)[:11025]
    return x




def rand(shape, seed, dtype=torch.float32, scale=1.0, absolute=False):
    """The test's random input: lcg values times scale (their absolute
    values when absolute), in dtype; x._desc describes it for the test."""
    n = 1
    for d in shape:
        n *= d
    x = (torch.tensor(lcg(n, seed), dtype=torch.float64) * scale).reshape(shape)
    if absolute:
        x = x.abs()
    x = x.to(dtype)
    x._desc = {"shape": list(shape), "seed": seed, "dtype": str(dtype)[6:], "scale": scale, "abs": absolute}
    return x


def crand(shape, seed):
    """A complex128 input: real parts from lcg(seed), imaginary from lcg(seed + 1)."""
    z = torch.complex(rand(shape, seed, torch.float64), rand(shape, seed + 1, torch.float64))
    z._desc = {"shape": list(shape), "seed": seed, "dtype": "complex128", "scale": 1.0, "abs": False}
    return z


class Default:
    """with Default(dtype): modules built inside make their filter banks,
    windows and DCT matrices in dtype (the Lua test builds them under
    torch.set_default_dtype the same way)."""

    def __init__(self, dtype):
        self.dtype = dtype

    def __enter__(self):
        torch.set_default_dtype(self.dtype)

    def __exit__(self, *a):
        torch.set_default_dtype(torch.float32)


def run(dtype, make, x):
    """make() built and applied to x under default dtype dtype."""
    with Default(dtype):
        return make()(x)


def flat(t):
    if t.is_complex():
        return {"re": t.real.flatten(), "im": t.imag.flatten()}
    return t.flatten()


def single(t):
    return t.dtype in (torch.float32, torch.complex64)


OUT = {}
SPEECH = speech()
S32 = SPEECH.to(torch.float32) / 32768
S64 = SPEECH.to(torch.float64) / 32768


def add(group, case, x=None, y=None):
    """x: the input's description {shape, dtype, seed[, scale, complex]}."""
    if x is not None:
        case["x"] = x._desc
    if y is not None:
        case["y_shape"] = list(y.shape)
        case["y"] = flat(y)
        case["_single"] = single(y)
    OUT.setdefault(group, []).append(case)


def speech_case(case, dtype, n=11025):
    """the first n samples of the speech clip in dtype"""
    case["input"], case["n"], case["dtype"] = "speech", n, str(dtype)[6:]
    return case, (S32 if dtype == torch.float32 else S64)[:n]


# filter banks, DCT --------------------------------------------------------
for args in [(201, 0.0, 8000.0, 40, 16000, None, "htk"), (129, 20.0, 7600.0, 48, 16000, "slaney", "slaney"),
             (129, 100.0, 4000.0, 23, 8000, None, "slaney"), (65, 0.0, 11025.0, 10, 22050, "slaney", "htk")]:
    with Default(torch.float64):
        fb = F.melscale_fbanks(*args)
    add("melscale_fbanks", {"args": list(args[:5]), "norm": args[5] or False, "mel_scale": args[6]}, y=fb)
for args in [(201, 0.0, 8000.0, 32, 16000), (129, 50.0, 3000.0, 10, 8000)]:
    with Default(torch.float64):
        add("linear_fbanks", {"args": list(args)}, y=F.linear_fbanks(*args))
for args in [(13, 40, "ortho"), (20, 64, None), (40, 40, "ortho")]:
    with Default(torch.float64):
        add("create_dct", {"args": [args[0], args[1]], "norm": args[2] or False}, y=F.create_dct(*args))
for f in [0.0, 440.0, 999.0, 1000.0, 4321.5]:
    for scale in ["htk", "slaney"]:
        add("hz_to_mel", {"hz": f, "mel_scale": scale, "mel": F.functional._hz_to_mel(f, scale)})

# MelScale, InverseMelScale (2.x: relu(lstsq(fb^T, mel).solution)) ----------
x = rand((2, 201, 7), 1, absolute=True)
add("MelScale", {"opts": {"n_mels": 32}}, x, T.MelScale(n_mels=32)(x))
x = rand((3, 65, 5), 2, torch.float64, absolute=True)
o = {"n_mels": 16, "sample_rate": 8000, "n_stft": 65, "norm": "slaney", "mel_scale": "slaney"}
add("MelScale", {"opts": o}, x, run(torch.float64, lambda: T.MelScale(**o), x))
for n_stft, n_mels, sr, dtype, seed in [(65, 16, 8000, torch.float64, 3), (33, 24, 16000, torch.float64, 4),
                                        (101, 40, 16000, torch.float32, 5)]:
    with Default(dtype):
        fb = F.melscale_fbanks(n_stft, 0.0, float(sr // 2), n_mels, sr, None, "htk")
    x = rand((2, n_mels, 6), seed, dtype, absolute=True)
    sol = torch.linalg.lstsq(fb.transpose(-1, -2)[None], x, driver="gelsd").solution
    add("InverseMelScale", {"n_stft": n_stft, "opts": {"n_mels": n_mels, "sample_rate": sr}}, x, torch.relu(sol))

# Spectrogram ----------------------------------------------------------------
SPEC = [
    ({}, (2, 2, 800), torch.float32),
    ({"n_fft": 256, "win_length": 200, "hop_length": 64, "power": 1.0, "normalized": True}, (2, 900), torch.float32),
    ({"n_fft": 128, "center": False, "pad": 10, "power": None}, (3, 500), torch.float64),
    ({"n_fft": 64, "hop_length": 16, "normalized": "frame_length", "pad_mode": "constant"}, (300,), torch.float64),
    ({"n_fft": 100, "hop_length": 30, "onesided": False, "power": 2.0}, (1, 300), torch.float64),
]
for i, (opts, shape, dtype) in enumerate(SPEC):
    x = rand(shape, 10 + i, dtype)
    add("Spectrogram", {"opts": {k: (False if v is None else v) for k, v in opts.items()}}, x,
        run(dtype, lambda: T.Spectrogram(**opts), x))
case, x = speech_case({"opts": {"n_fft": 256, "hop_length": 256}}, torch.float32)
add("Spectrogram", case, y=T.Spectrogram(n_fft=256, hop_length=256)(x))

# InverseSpectrogram: a complex spectrogram in, the signal out
for i, (opts, shape, length) in enumerate([({"n_fft": 64, "hop_length": 16}, (2, 33, 20), None),
                                          ({"n_fft": 128, "normalized": True}, (65, 12), 700),
                                          ({"n_fft": 64, "hop_length": 16, "pad": 5}, (33, 15), 220)]):
    z = crand(shape, 30 + 2 * i)
    with Default(torch.float64):
        y = T.InverseSpectrogram(**opts)(z, length)
    add("InverseSpectrogram", {"opts": opts, "length": length or False}, z, y)

# MelSpectrogram, MFCC, LFCC -------------------------------------------------
x = rand((2, 2000), 40)
add("MelSpectrogram", {"opts": {}}, x, T.MelSpectrogram()(x))
x = rand((2, 1500), 41, torch.float64)
o = {"sample_rate": 8000, "n_fft": 256, "hop_length": 80, "n_mels": 30, "norm": "slaney", "mel_scale": "slaney",
     "f_min": 50.0, "f_max": 3800.0, "power": 1.0}
add("MelSpectrogram", {"opts": o}, x, run(torch.float64, lambda: T.MelSpectrogram(**o), x))
o = {"sample_rate": 22050, "n_fft": 512, "hop_length": 256, "n_mels": 64}
case, x = speech_case({"opts": o}, torch.float32)
add("MelSpectrogram", case, y=T.MelSpectrogram(**o)(x))

x = rand((2, 4000), 42)
add("MFCC", {"opts": {}}, x, T.MFCC()(x))
x = rand((3000,), 43, torch.float64)
o = {"sample_rate": 8000, "n_mfcc": 20, "log_mels": True, "norm": None,
     "melkwargs": {"n_fft": 256, "hop_length": 100, "n_mels": 32}}
add("MFCC", {"opts": {**o, "norm": False}}, x, run(torch.float64, lambda: T.MFCC(**o), x))
o = {"sample_rate": 22050, "n_mfcc": 13, "melkwargs": {"n_fft": 512, "hop_length": 160, "n_mels": 40}}
case, x = speech_case({"opts": o}, torch.float64)
add("MFCC", case, y=run(torch.float64, lambda: T.MFCC(**o), x))

x = rand((2, 4000), 44)
add("LFCC", {"opts": {}}, x, T.LFCC()(x))
o = {"sample_rate": 22050, "n_filter": 64, "n_lfcc": 20, "f_min": 30.0, "log_lf": True,
     "speckwargs": {"n_fft": 512, "hop_length": 200}}
case, x = speech_case({"opts": o}, torch.float64)
add("LFCC", case, y=run(torch.float64, lambda: T.LFCC(**o), x))

# Griffin-Lim (zero initial phase: deterministic), phase vocoder ------------
spec = run(torch.float64, lambda: T.Spectrogram(n_fft=256, hop_length=64), S64[:2000])
o = {"n_fft": 256, "hop_length": 64, "n_iter": 8, "rand_init": False}
add("GriffinLim", {"opts": o, "input": "speech_spec"}, y=run(torch.float64, lambda: T.GriffinLim(**o), spec))
o = {"n_fft": 256, "hop_length": 64, "n_iter": 5, "rand_init": False, "momentum": 0.0, "length": 1990,
     "power": 1.0}
add("GriffinLim", {"opts": o, "input": "speech_spec_mag"},
    y=run(torch.float64, lambda: T.GriffinLim(**o), spec.sqrt()))

for i, (rate, shape) in enumerate([(1.3, (2, 33, 12)), (0.8, (33, 17)), (2.0, (1, 2, 17, 9))]):
    z = crand(shape, 50 + 2 * i)
    n_freq = shape[-2]
    hop = n_freq - 1
    y = run(torch.float64, lambda: T.TimeStretch(hop_length=hop, n_freq=n_freq, fixed_rate=rate), z)
    add("TimeStretch", {"opts": {"hop_length": hop, "n_freq": n_freq, "fixed_rate": rate}}, z, y)

# spectral centroid, pitch shift --------------------------------------------
x = rand((2, 2000), 60, torch.float64)
add("SpectralCentroid", {"opts": {"sample_rate": 16000}}, x,
    run(torch.float64, lambda: T.SpectralCentroid(16000), x))
o = {"sample_rate": 22050, "n_fft": 512, "hop_length": 256}
case, x = speech_case({"opts": o}, torch.float64)
add("SpectralCentroid", case, y=run(torch.float64, lambda: T.SpectralCentroid(**o), x))
x = rand((2, 1000), 61, torch.float64)
with Default(torch.float64):
    add("pitch_shift", {"sample_rate": 8000, "n_steps": -2, "opts": {}}, x, F.pitch_shift(x, 8000, -2))
    add("pitch_shift", {"sample_rate": 8000, "n_steps": 12, "opts": {"n_fft": 256}}, x,
        F.pitch_shift(x, 8000, 12, n_fft=256))

# compliance.kaldi -----------------------------------------------------------
KALDI = [
    ("fbank", {"sample_frequency": 22050.0}, "speech", torch.float32),
    ("fbank", {"sample_frequency": 22050.0, "use_energy": True, "htk_compat": True, "num_mel_bins": 40,
               "low_freq": 60.0, "high_freq": -400.0}, "speech", torch.float64),
    ("fbank", {"snip_edges": False, "use_power": False, "window_type": "hamming", "raw_energy": False,
               "use_energy": True}, "rand", torch.float64),
    ("fbank", {"use_log_fbank": False, "round_to_power_of_two": False, "window_type": "hanning",
               "remove_dc_offset": False, "preemphasis_coefficient": 0.0, "subtract_mean": True}, "rand",
     torch.float64),
    ("fbank", {"frame_length": 20.0, "frame_shift": 8.0, "window_type": "blackman", "energy_floor": 0.0,
               "use_energy": True}, "rand", torch.float32),
    ("mfcc", {"sample_frequency": 22050.0}, "speech", torch.float32),
    ("mfcc", {"sample_frequency": 22050.0, "use_energy": True, "num_ceps": 20, "num_mel_bins": 30,
              "cepstral_lifter": 0.0}, "speech", torch.float64),
    ("mfcc", {"htk_compat": True, "snip_edges": False, "window_type": "rectangular"}, "rand", torch.float64),
    ("mfcc", {"htk_compat": True, "use_energy": True, "subtract_mean": True}, "rand", torch.float64),
    ("spectrogram", {"sample_frequency": 22050.0}, "speech", torch.float64),
    ("spectrogram", {"subtract_mean": True, "raw_energy": False, "snip_edges": False}, "rand", torch.float64),
    ("spectrogram", {"round_to_power_of_two": False, "frame_shift": 25.0}, "rand", torch.float32),
]
KF = {"fbank": K.fbank, "mfcc": K.mfcc, "spectrogram": K.spectrogram}
for i, (fn, opts, src, dtype) in enumerate(KALDI):
    if src == "speech":
        n = 2500 if fn == "spectrogram" else 11025
        case, x = speech_case({"fn": fn, "opts": opts}, dtype, n)
        with Default(dtype):
            y = KF[fn](x.unsqueeze(0) * 32768, **opts)
        add("kaldi", case, y=y)
    else:
        x = rand((2, 2400), 70 + i, dtype, 1000.0)
        with Default(dtype):
            y = KF[fn](x, channel=1, **opts)
        add("kaldi", {"fn": fn, "opts": {**opts, "channel": 1}}, x, y)


def lua_values(v, dtype):
    """float32 results with 9 significant digits, float64 with 17"""
    return lua(v, single=(dtype == torch.float32))


path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "audio_spectral.lua")
with open(path, "w") as f:
    f.write("-- generated by tests/ref/gen_audio_spectral.py (torchaudio 0.13 / torch 1.13); do not edit\n")
    f.write("return {\n")
    f.write("  speech = {sample_rate = 22050, int16 = " + lua(SPEECH) + "},\n")
    for group, cases in OUT.items():
        f.write("  " + group + " = {\n")
        for c in cases:
            y = c.pop("y", None)
            text = lua(c)
            if y is not None:
                text = text[:-1] + ", y = " + lua(y, single=c.pop("_single", False)) + "}"
            f.write("    " + text + ",\n")
        f.write("  },\n")
    f.write("}\n")
print("wrote", path)
