"""bench/peers/audio_filters.py -- torchaudio's side of
bench/audio_filters.lua: the same filters on the same [16, 160000] float32
batch, timed the same way."""
import torch
import torchaudio.functional as AF
from benchlib import report, setup, timeit


def main():
    want = setup()
    torch.manual_seed(0)
    x = (torch.rand(16, 160000) - 0.5) * 0.5
    a3, b3 = torch.tensor([1.0, -1.6, 0.64]), torch.tensor([0.01, 0.02, 0.01])
    a8 = torch.tensor([1.0, -0.5, 0.2, -0.1, 0.05, -0.02, 0.01, -0.005])
    b8 = torch.tensor([0.1, 0.2, 0.3, 0.2, 0.1, 0.05, 0.02, 0.01])
    abank = torch.tensor([1.0, -1.6, 0.64]).reshape(1, 3).expand(16, 3).contiguous()
    bbank = torch.rand(16, 3)
    xg = x.clone().requires_grad_()

    def backward():
        with torch.enable_grad():
            y = AF.lfilter(xg, a3, b3, clamp=False)
            torch.autograd.grad(y.sum(), xg)

    rows = [
        ("lfilter_k3", lambda: AF.lfilter(x, a3, b3), 5),
        ("lfilter_k8", lambda: AF.lfilter(x, a8, b8), 3),
        ("lowpass_biquad", lambda: AF.lowpass_biquad(x, 16000, 1000.0), 5),
        ("filtfilt_k3", lambda: AF.filtfilt(x, a3, b3), 3),
        ("lfilter_bank16", lambda: AF.lfilter(x, abank, bbank), 5),
        ("lfilter_k3_backward", backward, 2),
    ]
    for name, fn, n in rows:
        if want(name):
            report(name, timeit(fn, n, 5))


if __name__ == "__main__":
    with torch.no_grad():
        main()
