#!/usr/bin/python3
"""gen_audio_filters.py -- torchaudio 0.13 reference values for
tests/domains/audio/test_filters.lua and test_functional_misc.lua
(torch.audio.functional's filters and effects, and their transforms).

    cd tests/ref && /usr/bin/python3 gen_audio_filters.py   # writes audio_filters.lua

Inputs are drawn here with a fixed seed and stored with the outputs. The
real-speech case synthesizes a fixed sentence with espeak-ng (deterministic
for one espeak-ng version) into a temporary directory; the Lua test does
the same and checks the input's sum and length before comparing outputs at
stored positions. Functions torchaudio 0.13 lacks (preemphasis, convolve,
add_noise) are referenced by their definition: numpy/scipy convolution,
the SNR formula in float64."""
import math
import os
import subprocess
import tempfile
import wave

import numpy as np
import scipy.signal
import torch
import torchaudio.functional as AF
import torchaudio.transforms as AT
from reflib import lua

SPEECH_TEXT = "the quick brown fox jumps over the lazy dog"
OUT = {}


def put(name, v, single=True):
    OUT[name] = (v, single)


def speech():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.wav")
        subprocess.run(["espeak-ng", "-w", path, SPEECH_TEXT], check=True)
        w = wave.open(path)
        n, sr = w.getnframes(), w.getframerate()
        pcm = np.frombuffer(w.readframes(n), dtype="<i2").astype(np.float64) / 32768.0
    return torch.tensor(pcm, dtype=torch.float32).unsqueeze(0), sr


def filters():
    torch.manual_seed(0)
    x = (torch.rand(2, 3, 128) - 0.5) * 1.6
    put("x", x)
    a = torch.tensor([1.0, -0.6, 0.25])
    b = torch.tensor([0.3, 0.2, -0.1])
    put("lfilter", AF.lfilter(x, a, b))
    put("lfilter_noclamp", AF.lfilter(x, a, b, clamp=False))
    a2 = torch.tensor([[1.0, -0.6, 0.25], [2.0, 0.5, 0.1], [1.0, 0.0, 0.0]])
    b2 = torch.tensor([[0.3, 0.2, -0.1], [1.0, 1.5, 0.5], [0.5, -0.5, 0.25]])
    put("a2", a2)
    put("b2", b2)
    put("lfilter_batched", AF.lfilter(x, a2, b2, clamp=False))
    put("lfilter_nobatch", AF.lfilter(x[0, 0], a2, b2, clamp=False, batching=False))
    a5 = torch.tensor([1.0, -0.3, 0.1, 0.05, -0.02])
    b5 = torch.tensor([0.2, 0.1, 0.3, -0.2, 0.1])
    put("lfilter_k5", AF.lfilter(x, a5, b5, clamp=False))
    x64 = x.double()
    put("lfilter_f64", AF.lfilter(x64, a.double(), b.double(), clamp=False), False)
    put("filtfilt", AF.filtfilt(x, a, b))
    put("filtfilt_noclamp", AF.filtfilt(x, a, b, clamp=False))
    # torchaudio's gradients of sum(y * w) (float64)
    xg, ag, bg = x64[:, :2].clone().requires_grad_(), a2[:2].double().requires_grad_(), b2[:2].double().requires_grad_()
    wt = torch.linspace(-1, 1, 128, dtype=torch.float64)
    (AF.lfilter(xg, ag, bg, clamp=False) * wt).sum().backward()
    put("grad_x", xg.grad, False)
    put("grad_a", ag.grad, False)
    put("grad_b", bg.grad, False)


def biquads():
    x = OUT["x"][0]
    x64 = x[0].double()

    class Both:
        """fn(x, ...) on the float32 input, and on its first item in float64"""

        def __getattr__(self, name):
            fn = getattr(AF, name)

            def call(_, *args, **kw):
                put(name + "_f64_" + str(len([k for k in OUT if k.startswith(name + "_f64")])),
                    fn(x64, *args, **kw), False)
                return fn(x, *args, **kw)
            return call
    AF2 = Both()
    put("biquad", AF2.biquad(x, 0.4, 0.2, 0.1, 1.0, -0.3, 0.2))
    put("allpass_biquad", AF2.allpass_biquad(x, 16000, 1200.0, 0.9))
    put("band_biquad", AF2.band_biquad(x, 16000, 1500.0, 1.2))
    put("band_biquad_noise", AF2.band_biquad(x, 16000, 1500.0, 1.2, noise=True))
    put("bandpass_biquad", AF2.bandpass_biquad(x, 16000, 2000.0))
    put("bandpass_biquad_csg", AF2.bandpass_biquad(x, 16000, 2000.0, 0.5, const_skirt_gain=True))
    put("bandreject_biquad", AF2.bandreject_biquad(x, 16000, 2500.0, 2.0))
    put("bass_biquad", AF2.bass_biquad(x, 16000, 6.0))
    put("bass_biquad_args", AF2.bass_biquad(x, 16000, -4.0, 250.0, 1.1))
    put("treble_biquad", AF2.treble_biquad(x, 16000, -3.0))
    put("treble_biquad_args", AF2.treble_biquad(x, 16000, 5.0, 4000.0, 0.6))
    put("equalizer_biquad", AF2.equalizer_biquad(x, 16000, 1000.0, 4.0, 1.5))
    put("highpass_biquad", AF2.highpass_biquad(x, 16000, 500.0))
    put("lowpass_biquad", AF2.lowpass_biquad(x, 16000, 3000.0, 0.5))
    put("deemph_biquad_44100", AF2.deemph_biquad(x, 44100))
    put("deemph_biquad_48000", AF2.deemph_biquad(x, 48000))
    for sr in (44100, 48000, 88200, 96000):
        put("riaa_biquad_%d" % sr, AF2.riaa_biquad(x, sr))
    # torchaudio 2.x: deemphasis is lfilter([1, -coeff], [1, 0]) (clamped)
    put("deemphasis", AF.lfilter(x, torch.tensor([1.0, -0.97]), torch.tensor([1.0, 0.0])))
    put("deemphasis_08", AF.lfilter(x, torch.tensor([1.0, -0.8]), torch.tensor([1.0, 0.0])))
    pre = x.clone()
    pre[..., 1:] -= 0.97 * x[..., :-1]
    put("preemphasis", pre)


def effects():
    x = OUT["x"][0]
    put("contrast", AF.contrast(x))
    put("contrast_20", AF.contrast(x, 20.0))
    put("dcshift", AF.dcshift(x, 0.3))
    put("dcshift_lim_pos", AF.dcshift(x.clone(), 0.5, 0.05))
    put("dcshift_lim_neg", AF.dcshift(x.clone(), -0.4, 0.1))
    put("gain", AF.gain(x, 3.5))
    put("overdrive", AF.overdrive(x))
    put("overdrive_args", AF.overdrive(x, 5.0, 60.0))
    put("overdrive_f64", AF.overdrive(x[0].double(), 8.0, 30.0), False)
    put("mu_enc", AF.mu_law_encoding(x.clamp(-1, 1), 256))
    put("mu_enc_16", AF.mu_law_encoding(x.clamp(-1, 1), 16))
    codes = torch.arange(0, 256)
    put("mu_dec", AF.mu_law_decoding(codes, 256))
    spec = torch.rand(2, 3, 8, 20) * 10
    put("spec", spec)
    put("amp_db", AF.amplitude_to_DB(spec, 10.0, 1e-10, 0.0))
    put("amp_db_top", AF.amplitude_to_DB(spec, 20.0, 1e-10, math.log10(2.0), 30.0))
    put("amp_db_top_3d", AF.amplitude_to_DB(spec[0], 10.0, 1e-10, 0.0, 5.0))
    put("db_amp", AF.DB_to_amplitude(spec - 5, 2.0, 0.5))
    put("deltas", AF.compute_deltas(spec))
    put("deltas_7", AF.compute_deltas(spec, win_length=7))
    put("deltas_refl", AF.compute_deltas(spec, 3, "reflect"))
    put("vol_amp", AT.Vol(2.5)(x))
    put("vol_db", AT.Vol(-6.0, "db")(x))
    put("vol_power", AT.Vol(0.5, "power")(x))
    for shape in ("linear", "exponential", "logarithmic", "quarter_sine", "half_sine"):
        put("fade_" + shape, AT.Fade(40, 70, shape)(x))
    put("atodb_mag", AT.AmplitudeToDB("magnitude", 50.0)(spec))
    put("atodb_pow", AT.AmplitudeToDB()(spec))


def convolution():
    torch.manual_seed(1)
    cx = torch.randn(2, 3, 50, dtype=torch.float64)
    cy = torch.randn(1, 3, 9, dtype=torch.float64)
    put("cx", cx, False)
    put("cy", cy, False)
    for mode in ("full", "valid", "same"):
        r = np.zeros((2, 3, {"full": 58, "valid": 42, "same": 50}[mode]))
        for i in range(2):
            for j in range(3):
                r[i, j] = scipy.signal.convolve(cx[i, j].numpy(), cy[0, j].numpy(), mode=mode)
        put("conv_" + mode, torch.tensor(r), False)
    # the shorter operand first: torchaudio swaps, "same" keeps x's length
    r = np.zeros((2, 3, 9))
    for i in range(2):
        for j in range(3):
            full = np.convolve(cx[i, j].numpy(), cy[0, j].numpy())
            s = (full.shape[0] - 9) // 2
            r[i, j] = full[s:s + 9]
    put("conv_same_short", torch.tensor(r), False)
    noise = torch.randn(2, 3, 50, dtype=torch.float64)
    snr = torch.tensor([[10.0, 0.0, -5.0], [20.0, 3.0, 7.0]], dtype=torch.float64)
    lengths = torch.tensor([[50, 30, 10], [25, 50, 40]])
    put("noise", noise, False)
    put("snr", snr, False)
    put("lengths", lengths)

    def add_noise(w, nz, s, ln=None):
        mask = torch.ones_like(w) if ln is None else (torch.arange(50) < ln.unsqueeze(-1)).double()
        es = ((w * mask) ** 2).sum(-1)
        en = ((nz * mask) ** 2).sum(-1)
        scale = 10 ** ((10 * torch.log10(es / en) - s) / 20)
        return w + scale.unsqueeze(-1) * nz

    put("add_noise", add_noise(cx, noise, snr), False)
    put("add_noise_len", add_noise(cx, noise, snr, lengths), False)


def real_speech():
    s, sr = speech()
    y = AF.lowpass_biquad(s, sr, 1000.0)
    z = AF.highpass_biquad(s, sr, 300.0, 1.0)
    idx = list(range(0, s.shape[-1], 307))
    put("speech_n", s.shape[-1])
    put("speech_sr", sr)
    put("speech_sum", s.double().sum().item(), False)
    put("speech_idx", [i + 1 for i in idx])
    put("speech_lowpass", y[0, idx])
    put("speech_highpass", z[0, idx])
    put("speech_lowpass_sum", y.double().sum().item(), False)


filters()
biquads()
effects()
convolution()
real_speech()

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "audio_filters.lua"), "w") as f:
    f.write("-- generated by tests/ref/gen_audio_filters.py (torchaudio %s); do not edit\n"
            % __import__("torchaudio").__version__)
    f.write("return {\n")
    for k, (v, single) in OUT.items():
        f.write("  %s = %s,\n" % (k, lua(v, single)))
    f.write("}\n")
