"""bench/peers/fft.py -- PyTorch's side of bench/fft.lua: the same
transforms, stft and istft on the same shapes (CPU, float32)."""
import torch
from benchlib import report, setup, timeit


def main():
    want = setup()
    torch.manual_seed(0)
    sig = torch.randn(16, 16000)
    spec = torch.fft.rfft(sig)
    x4096 = torch.randn(64, 4096)
    img = torch.randn(8, 256, 256)
    audio = torch.randn(8, 16000)
    w = torch.hann_window(400)
    st = torch.stft(audio, 400, hop_length=160, window=w, return_complex=True)
    xg = torch.randn(16, 16000, requires_grad=True)

    def backward():
        torch.view_as_real(torch.fft.rfft(xg)).sum().backward()
        xg.grad = None

    rows = [
        ("rfft_b16_16000", lambda: torch.fft.rfft(sig), 50),
        ("irfft_b16_16000", lambda: torch.fft.irfft(spec, n=16000), 50),
        ("fft_b64_4096", lambda: torch.fft.fft(x4096), 50),
        ("rfft2_b8_256", lambda: torch.fft.rfft2(img), 20),
        ("stft_b8_16000_n400_h160", lambda: torch.stft(audio, 400, hop_length=160, window=w, return_complex=True), 50),
        ("istft_b8_16000_n400_h160", lambda: torch.istft(st, 400, hop_length=160, window=w, length=16000), 20),
        ("rfft_backward_b16_16000", backward, 20),
    ]
    for name, fn, n in rows:
        if want(name):
            report(name, timeit(fn, n))


if __name__ == "__main__":
    main()
