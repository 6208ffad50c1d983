"""bench/peers/audio_spectral.py -- torchaudio's side of
bench/audio_spectral.lua: MelSpectrogram, MFCC and kaldi.fbank on the same
sizes, timed the same way."""
import torch
import torchaudio.compliance.kaldi as K
import torchaudio.transforms as T
from benchlib import cuda_time_ms, report, setup, timeit


def main():
    want = setup()
    torch.manual_seed(0)
    x = torch.randn(8, 160000)
    one = x[:1] * 1000
    mel = T.MelSpectrogram(sample_rate=16000, n_fft=400, hop_length=160, n_mels=80)
    mfcc = T.MFCC(sample_rate=16000, n_mfcc=40, melkwargs={"n_fft": 400, "hop_length": 160, "n_mels": 80})
    rows = [
        ("melspectrogram_8x10s", lambda: mel(x), 80),
        ("mfcc_8x10s", lambda: mfcc(x), 80),
        ("kaldi_fbank_10s", lambda: K.fbank(one, num_mel_bins=80), 10),
    ]
    with torch.no_grad():
        for name, fn, secs in rows:
            if want(name):
                t = timeit(fn, 2, 5)
                report(name, t, secs / t, "audio_s/s")
        if torch.cuda.is_available():
            xc, melc, mfccc = x.cuda(), mel.cuda(), mfcc.cuda()
            for name, fn in (("melspectrogram_cuda_8x10s", lambda: melc(xc)), ("mfcc_cuda_8x10s", lambda: mfccc(xc))):
                if want(name):
                    t = cuda_time_ms(fn, 20) / 1e3
                    report(name, t, 80 / t, "audio_s/s")


if __name__ == "__main__":
    main()
