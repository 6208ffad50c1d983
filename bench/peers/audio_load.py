"""bench/peers/audio_load.py -- the Python side of bench/audio_load.lua:
for each row, every reader present among scipy.io.wavfile, soundfile and
torchaudio.load, timed on the files the Lua side wrote to
$TMPDIR/moontorch_bench_audio_load/ (run it first), producing the same
result (float32 torch tensors [channels, time] in [-1, 1], or raw int16
[time, channels]); the fastest is reported, and named on stderr. The streaming row has a peer
only where soundfile is installed (sf.blocks; torchaudio's StreamReader
needs FFmpeg)."""
import os
import sys

import torch
from benchlib import report, setup, timeit

DIR = os.path.join(os.environ.get("TMPDIR", "/tmp"), "moontorch_bench_audio_load")
SECONDS = 60


def readers():
    """name -> (wav float loader, wav raw loader, flac loader, flac stream) for what is installed."""
    out = {}
    try:
        import scipy.io.wavfile as wavfile

        def wav_float(p):
            _, a = wavfile.read(p)
            return torch.from_numpy(a.T.astype("float32") / 32768.0)

        out["scipy.io.wavfile"] = (wav_float, lambda p: torch.from_numpy(wavfile.read(p)[1]), None, None)
    except ImportError:
        pass
    try:
        import soundfile as sf

        def sf_stream(p):
            for _ in sf.blocks(p, blocksize=48000, dtype="float32"):
                pass

        out["soundfile"] = (lambda p: torch.from_numpy(sf.read(p, dtype="float32")[0].T.copy()),
                            lambda p: torch.from_numpy(sf.read(p, dtype="int16")[0]),
                            lambda p: torch.from_numpy(sf.read(p, dtype="float32")[0].T.copy()), sf_stream)
    except ImportError:
        pass
    try:
        import warnings
        warnings.filterwarnings("ignore")
        import torchaudio

        out["torchaudio"] = (lambda p: torchaudio.load(p)[0],
                             lambda p: torchaudio.load(p, normalize=False, channels_first=False)[0],
                             lambda p: torchaudio.load(p)[0], None)
    except ImportError:
        pass
    return out


def main():
    want = setup()
    wav, flac = os.path.join(DIR, "minute.wav"), os.path.join(DIR, "minute.flac")
    if not os.path.exists(wav):
        sys.exit("audio_load.py: run bench/audio_load.lua first (it writes the files)")
    rows = [("load_wav16_48k_stereo", 0, wav), ("load_wav16_raw_int16", 1, wav),
            ("load_flac16_48k_stereo", 2, flac), ("stream_flac16_1s_chunks", 3, flac)]
    rs = readers()
    for name, k, path in rows:
        if not want(name):
            continue
        best = None
        for rname, fns in rs.items():
            fn = fns[k]
            if fn is None:
                continue
            try:  # torchaudio 2.9+ loads only through torchcodec, which may be absent
                t = timeit(lambda: fn(path), 2, 5)
            except Exception as e:  # noqa: BLE001 -- any reader failure just drops it from the race
                sys.stderr.write(f"audio_load.py: {name}: {rname} unavailable ({type(e).__name__}: {str(e)[:80]})\n")
                continue
            if best is None or t < best[0]:
                best = (t, rname)
        if best:
            sys.stderr.write(f"audio_load.py: {name}: fastest reader {best[1]}\n")
            report(name, best[0], SECONDS / best[0], "audio-s/s")


main()
