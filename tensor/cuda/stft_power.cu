// stft_power.cu -- the power spectrogram on the GPU (cuda/stft_power.c):
// frames cut from the signal with the window applied (reflect padding read
// in place), then, after cuFFT's r2c, |X|^power. stft_power.c prepends T
// (float or double).

struct mt_stftgeo {
  long long B, len, nfft, hop, nf, K, pad;
  double power;
};

// frames[r, k] = x[r / nf, reflect(f hop - pad + k)] * w[k], f = r % nf
extern "C" __global__ void mt_stft_frames(const T *x, const T *w, T *frames, mt_stftgeo g) {
  long long n = g.B * g.nf * g.nfft;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    long long r = i / g.nfft, k = i % g.nfft;
    long long t = (r % g.nf) * g.hop - g.pad + k;
    if (t < 0) t = -t;
    if (t >= g.len) t = 2 * (g.len - 1) - t;
    frames[i] = x[(r / g.nf) * g.len + t] * w[k];
  }
}

// out[i] = |spec[i]|^power over the interleaved (re, im) pairs of spec
extern "C" __global__ void mt_stft_pow(const T *spec, T *out, mt_stftgeo g) {
  long long n = g.B * g.nf * g.K;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
    T re = spec[2 * i], im = spec[2 * i + 1], p = re * re + im * im;
    out[i] = g.power == 2.0 ? p : g.power == 1.0 ? sqrt(p) : pow(p, (T)(g.power / 2));
  }
}
