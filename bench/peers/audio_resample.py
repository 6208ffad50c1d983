"""bench/peers/audio_resample.py -- torchaudio's side of
bench/audio_resample.lua: torchaudio.functional.resample (method
"sinc_interpolation", torchaudio 2.x's "sinc_interp_hann") on the same
[8, 10 s] float32 batches; the soxr rows' peer is the same sinc resample
(the fastest resampler torchaudio has)."""
import torch
import torchaudio.functional as F
from benchlib import cuda_time_ms, report, setup, timeit

CASES = [("48k_16k", 48000, 16000), ("44k_48k", 44100, 48000), ("16k_8k", 16000, 8000),
         ("soxr_48k_16k", 48000, 16000), ("soxr_44k_48k", 44100, 48000)]
SECONDS, BATCH = 10, 8


def main():
    want = setup()
    for dev in ("cpu", "cuda"):
        if dev == "cuda" and not torch.cuda.is_available():
            continue
        for tag, orig, new in CASES:
            name = "resample_%s%s" % ("cuda_" if dev == "cuda" else "", tag)
            if not want(name) or (dev == "cuda" and tag.startswith("soxr")):
                continue
            torch.manual_seed(0)
            x = torch.randn(BATCH, orig * SECONDS).to(dev)
            fn = lambda: F.resample(x, orig, new)
            secs = cuda_time_ms(fn, 20) / 1e3 if dev == "cuda" else timeit(fn, 3)
            report(name, secs, BATCH * SECONDS / secs, "audio_s/s")


if __name__ == "__main__":
    main()
