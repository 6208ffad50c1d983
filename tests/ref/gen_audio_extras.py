#!/usr/bin/python3
"""gen_audio_extras.py -- torchaudio references for the rest of
torch.audio.functional (tests/domains/audio/test_extras.lua):
detect_pitch_frequency, loudness, sliding_window_cmn, dither (TPDF, its
deterministic density), flanger, phaser, vad, edit_distance,
spectral_centroid, and the beamforming functions (psd, mvdr weights,
rtf_power, rtf_evd, apply_beamforming).

    cd tests/ref && /usr/bin/python3 gen_audio_extras.py   # writes audio_extras.lua

Uses Debian's torchaudio 0.13 / torch 1.13. Inputs: lcg signals (the Lua test
repeats tests/domains/audio/spectral_inputs.lua's lcg) and one second of
espeak-ng speech at 22050 Hz (stored as int16). vad follows torchaudio 2.x,
whose loop differs from 0.13's (frames end before the measuring position,
the result starts at that position, no trigger gives an empty result): the
2.x loop is written out below around 0.13's own _measure, which 2.x keeps."""
import math
import os

import torch
import torchaudio.functional as F
from torchaudio.functional.filtering import _measure
from reflib import espeak_int16, lcg, lua

torch.set_num_threads(1)


def speech():
    """1 s of espeak-ng speech at 22050 Hz as int16 values."""
    raw = espeak_int16("the quick brown fox jumps over the lazy dog")
    return torch.frombuffer(bytearray(raw), dtype=torch.int16)[:22050].clone()




def rand(shape, seed, dtype=torch.float32, scale=1.0):
    n = 1
    for d in shape:
        n *= d
    return ((torch.tensor(lcg(n, seed), dtype=torch.float64) * scale).reshape(shape)).to(dtype)


SPEECH = speech()
OUT = {}


def add(name, value, single=True):
    OUT[name] = lua(value.flatten() if torch.is_tensor(value) else value, single=single)


def sp(dtype, n=22050):
    return (SPEECH[:n].to(torch.float64) / 32768).to(dtype)


# detect_pitch_frequency ------------------------------------------------------
t = torch.arange(8000, dtype=torch.float64) / 8000
tone = 0.5 * torch.sin(2 * math.pi * 220 * t) + 0.3 * torch.sin(2 * math.pi * 440 * t)
tones = torch.stack([tone, tone * 0.5 + rand((8000,), 2, torch.float64, 0.05)]).to(torch.float32)
add("pitch_tones", F.detect_pitch_frequency(tones, 8000))
add("pitch_speech", F.detect_pitch_frequency(sp(torch.float32), 22050))
add("pitch_speech_opts", F.detect_pitch_frequency(sp(torch.float64), 22050, 0.02, 5, 100, 1000), single=False)
add("pitch_rand", F.detect_pitch_frequency(rand((2, 3, 1200), 3), 16000, win_length=3))

# loudness ---------------------------------------------------------------------
add("loud_rand", F.loudness(rand((2, 2, 16000), 4, scale=0.3), 16000))
add("loud_speech", F.loudness(sp(torch.float32).reshape(1, -1), 22050))
add("loud_5ch_f64", F.loudness(rand((5, 12000), 5, torch.float64, 0.2), 16000), single=False)
quiet = rand((1, 2, 16000), 6, scale=0.3)
quiet[..., :8000] *= 1e-4  # blocks under the gates
add("loud_gated", F.loudness(quiet, 16000))

# sliding_window_cmn --------------------------------------------------------------
spec = rand((2, 50, 7), 7, scale=3.0) + 2.0
spec64 = rand((2, 50, 7), 7, torch.float64, 3.0) + 2.0
add("cmn_default", F.sliding_window_cmn(spec))
add("cmn_small", F.sliding_window_cmn(spec, 10, 5))
add("cmn_center", F.sliding_window_cmn(spec, 9, 5, True))
add("cmn_vars", F.sliding_window_cmn(spec64, 12, 4, False, True), single=False)
add("cmn_center_vars", F.sliding_window_cmn(spec64, 8, 100, True, True), single=False)
add("cmn_2d", F.sliding_window_cmn(spec[0], 20, 30))

# dither (TPDF: deterministic) -----------------------------------------------------
dx = rand((2, 3, 100), 8, scale=0.9)
add("dither_tpdf", F.dither(dx.clone()))
add("dither_tpdf_shaped", F.dither(dx.clone(), "TPDF", True))
add("dither_tpdf_f64", F.dither(dx.double(), "TPDF"), single=False)

# flanger -----------------------------------------------------------------------
fx = rand((2, 2, 600), 9, scale=0.8)
FLANGER = {
    "default": {},
    "fb": {"delay": 1.0, "regen": 30.0},
    "fb_quad": {"regen": -50.0, "modulation": "triangular", "interpolation": "quadratic"},
    "wide": {"delay": 2.0, "depth": 5.0, "width": 40.0, "speed": 2.0, "phase": 60.0, "interpolation": "quadratic"},
}
for name, o in FLANGER.items():
    add("flanger_" + name, F.flanger(fx, 8000, **o))
add("flanger_4ch_f64", F.flanger(rand((4, 400), 10, torch.float64, 0.8), 8000, regen=20.0, phase=10.0), single=False)

# phaser --------------------------------------------------------------------------
px = rand((2, 1000), 11, scale=0.8)
add("phaser_default", F.phaser(px, 8000))
add("phaser_tri", F.phaser(px, 8000, 0.6, 0.9, 5.0, 0.9, 2.0, False))
add("phaser_speech", F.phaser(sp(torch.float32, 11025), 22050))
add("phaser_f64", F.phaser(px.double(), 8000, decay=0.7, delay_ms=1.0), single=False)


# vad (torchaudio 2.x's loop around 0.13's _measure) ----------------------------------
def vad2(waveform, sample_rate, trigger_level=7.0, trigger_time=0.25, search_time=1.0, allowed_gap=0.25,
         pre_trigger_time=0.0, boot_time=0.35, noise_up_time=0.1, noise_down_time=0.01,
         noise_reduction_amount=1.35, measure_freq=20.0, measure_smooth_time=0.4, hp_filter_freq=50.0,
         lp_filter_freq=6000.0, hp_lifter_freq=150.0, lp_lifter_freq=2000.0):
    L = int(sample_rate * 2.0 / measure_freq + 0.5)
    dft = 16
    while dft < L:
        dft *= 2
    period = int(sample_rate / measure_freq + 0.5)
    n = math.ceil(search_time * measure_freq)
    gap = int(allowed_gap * measure_freq + 0.5)
    samples_len = int(pre_trigger_time * sample_rate + 0.5) + n * period + L
    swin = torch.full((L,), 2.0 / math.sqrt(L)) * torch.hann_window(L)
    ss = max(int(hp_filter_freq / sample_rate * dft + 0.5), 1)
    se = min(int(lp_filter_freq / sample_rate * dft + 0.5), dft // 2)
    cwin = torch.full((se - ss,), 2.0 / math.sqrt(se - ss)) * torch.hann_window(se - ss)
    cs = math.ceil(sample_rate * 0.5 / lp_lifter_freq)
    ce = min(math.floor(sample_rate * 0.5 / hp_lifter_freq), dft // 4)
    up, down = math.exp(-1.0 / (noise_up_time * measure_freq)), math.exp(-1.0 / (noise_down_time * measure_freq))
    smooth = math.exp(-1.0 / (measure_smooth_time * measure_freq))
    tmult = math.exp(-1.0 / (trigger_time * measure_freq))
    boot_max = int(boot_time * measure_freq - 0.5)
    boot = index = 0
    shape = waveform.size()
    w = waveform.reshape(-1, shape[-1])
    C, T = w.size()
    mean = torch.zeros(C)
    spectrum, noise = torch.zeros(C, dft), torch.zeros(C, dft)
    measures = torch.zeros(C, n)
    triggered, flush, pos = False, 0, 0
    for pos in range(L, T, period):
        for i in range(C):
            m = _measure(L, w[i, pos - L:pos].float(), spectrum[i], noise[i], swin, ss, se, cwin, cs, ce,
                         noise_reduction_amount, smooth, up, down, 0, boot)
            measures[i, index] = m
            mean[i] = mean[i] * tmult + m * (1.0 - tmult)
            triggered = triggered or bool(mean[i] >= trigger_level)
            if triggered:
                k, jt, jz = index, n, n
                for j in range(n):
                    if measures[i, k] >= trigger_level and j <= jt + gap:
                        jz = jt = j
                    elif measures[i, k] == 0 and jt >= jz:
                        jz = j
                    k = (k + n - 1) % n
                flush = min(max(flush, min(j, jz)), n)
        index = (index + 1) % n
        if boot >= 0:
            boot = -1 if boot == boot_max else boot + 1
        if triggered:
            break
    if not triggered:
        return {"start": T, "length": 0}
    start = pos - samples_len + (n - flush) * period
    if start < 0:
        start = max(0, T + start)
    return {"start": start, "length": T - start}


pre = rand((13230,), 12, scale=0.002)  # 0.6 s of faint noise before the speech
vs = torch.cat([pre, sp(torch.float32)])
OUT["vad_speech"] = lua(vad2(vs, 22050))
OUT["vad_speech_opts"] = lua(vad2(vs, 22050, trigger_level=5.0, pre_trigger_time=0.1, search_time=0.5,
                                  allowed_gap=0.1, boot_time=0.2))
OUT["vad_2ch"] = lua(vad2(torch.stack([vs * 0.5, torch.cat([pre, pre, sp(torch.float32)])[:vs.numel()]]), 22050))
OUT["vad_noise"] = lua(vad2(rand((8000,), 13, scale=0.01), 16000))
assert F.vad(vs, 22050).numel() > 0  # 0.13 triggers too

# edit_distance ---------------------------------------------------------------------
PAIRS = [("kitten", "sitting"), ("", "abc"), ("flaw", "lawn"), ("abc", "abc")]
OUT["edit_strings"] = lua([[a, b, F.edit_distance(a, b)] for a, b in PAIRS])
wa, wb = "the cat sat on the mat".split(), "a cat sat on mat today".split()
OUT["edit_words"] = lua([wa, wb, F.edit_distance(wa, wb)])

# spectral_centroid (functional, float32, an explicit window) ------------------------
cx = rand((2, 3000), 14)
OUT["centroid"] = lua(F.spectral_centroid(cx, 16000, 0, torch.hamming_window(256), 256, 128, 256).flatten(),
                      single=True)

# beamforming (complex128; reference channels 0-based here, 1-based in Lua) -------
def crand(shape, seed, scale=1.0):
    return torch.complex(rand(shape, seed, torch.float64, scale), rand(shape, seed + 1, torch.float64, scale))


def cflat(z):
    return {"re": z.real.flatten(), "im": z.imag.flatten()}


bspec = crand((2, 3, 5, 40), 30)  # [batch, channel, freq, time]
bmask = rand((2, 5, 40), 32, torch.float64).abs()
bnoise = rand((2, 5, 40), 33, torch.float64).abs()
psd_s = F.psd(bspec, bmask)
psd_n = F.psd(bspec, bnoise) + 0.1 * torch.eye(3, dtype=torch.complex128)
OUT["bf_psd"] = lua(cflat(psd_s))
OUT["bf_psd_n"] = lua(cflat(psd_n))
OUT["bf_psd_nomask"] = lua(cflat(F.psd(bspec)))
OUT["bf_psd_unnorm"] = lua(cflat(F.psd(bspec, bmask, normalize=False)))
OUT["bf_souden"] = lua(cflat(F.mvdr_weights_souden(psd_s, psd_n, 1)))
refw = rand((2, 3), 34, torch.float64).abs()
OUT["bf_souden_tensor"] = lua(cflat(F.mvdr_weights_souden(psd_s, psd_n, refw, diagonal_loading=False)))
rtf = F.rtf_power(psd_s, psd_n, 0)
OUT["bf_rtf_power"] = lua(cflat(rtf))
OUT["bf_rtf_power_1"] = lua(cflat(F.rtf_power(psd_s, psd_n, 2, n_iter=1)))
OUT["bf_rtf_power_5"] = lua(cflat(F.rtf_power(psd_s, psd_n, refw, n_iter=5, diagonal_loading=False)))
OUT["bf_rtf_evd"] = lua(cflat(F.rtf_evd(psd_s)))
OUT["bf_mvdr_rtf"] = lua(cflat(F.mvdr_weights_rtf(rtf, psd_n)))
OUT["bf_mvdr_rtf_ref"] = lua(cflat(F.mvdr_weights_rtf(rtf, psd_n, 1)))
OUT["bf_mvdr_rtf_tensor"] = lua(cflat(F.mvdr_weights_rtf(rtf, psd_n, refw)))
w = F.mvdr_weights_souden(psd_s, psd_n, 1)
OUT["bf_apply"] = lua(cflat(F.apply_beamforming(w, bspec)))
OUT["bf_apply_f32"] = lua(cflat(F.apply_beamforming(w.to(torch.complex64), bspec.to(torch.complex64))), single=True)

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "audio_extras.lua")
with open(path, "w") as f:
    f.write("-- generated by tests/ref/gen_audio_extras.py (torchaudio 0.13 / torch 1.13); do not edit\n")
    f.write("return {\n")
    f.write("  speech = {sample_rate = 22050, int16 = " + lua(SPEECH) + "},\n")
    for k, v in OUT.items():
        f.write("  " + k + " = " + v + ",\n")
    f.write("}\n")
print("wrote", path)
