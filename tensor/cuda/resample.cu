// resample.cu -- the polyphase resampling filter of tensor/resample.c on
// CUDA (cuda/resample.c prepends T, float or double). A thread per output
// sample: the dot product of its phase's non-zero taps with the input run
// they cover (zeros outside the row), as cpu/resample_kernels.c. The
// adjoint gathers instead of scattering: a thread per input sample sums
// the (output, tap) pairs that read it, so no atomics are needed. The
// tables come packed (struct mt_rsgeo): ints first, count of each phase,
// then the weights, kmax a phase, at byte offset wts.

struct mt_rsmpgeo {
  long long rows, in_len, out_len, pad_left;
  long long orig, nw, kmax, wts, blocks; // blocks: blocks of 256 threads a row
};

extern "C" __global__ void mt_resample_fwd(const T *x, T *y, const void *tabs, mt_rsmpgeo g) {
  long long row = blockIdx.x / g.blocks, j = (blockIdx.x % g.blocks) * 256 + threadIdx.x;
  if (j >= g.out_len) return;
  const int *first = (const int *)tabs, *count = first + g.nw;
  const T *w = (const T *)((const char *)tabs + g.wts);
  long long f = j / g.nw, ph = j % g.nw, L = g.in_len;
  long long s = f * g.orig - g.pad_left + first[ph], n = count[ph];
  const T *xr = x + row * L, *wp = w + ph * g.kmax;
  long long k0 = s < 0 ? -s : 0, k1 = s + n > L ? L - s : n;
  T acc = 0;
  for (long long k = k0; k < k1; k++) acc += __ldg(wp + k) * __ldg(xr + s + k);
  y[row * g.out_len + j] = acc;
}

// the adjoint: gx[i] = sum over phases ph and frames f with tap k = i +
// pad_left - f * orig - first[ph] in [0, count[ph]) and output f * nw + ph
// in range, of w[ph][k] * gy[f * nw + ph]
extern "C" __global__ void mt_resample_adj(const T *gy, T *gx, const void *tabs, mt_rsmpgeo g) {
  long long row = blockIdx.x / g.blocks, i = (blockIdx.x % g.blocks) * 256 + threadIdx.x;
  if (i >= g.in_len) return;
  const int *first = (const int *)tabs, *count = first + g.nw;
  const T *w = (const T *)((const char *)tabs + g.wts);
  const T *gr = gy + row * g.out_len;
  T acc = 0;
  for (long long ph = 0; ph < g.nw; ph++) {
    long long r = i + g.pad_left - first[ph], n = count[ph];
    if (r < 0 || n == 0) continue;
    long long fhi = r / g.orig, flo = r - n + 1 <= 0 ? 0 : (r - n + g.orig) / g.orig;
    for (long long f = flo; f <= fhi; f++) {
      long long j = f * g.nw + ph;
      if (j >= g.out_len) break;
      acc += w[ph * g.kmax + (r - f * g.orig)] * gr[j];
    }
  }
  gx[row * g.in_len + i] = acc;
}
