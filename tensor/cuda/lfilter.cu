// lfilter.cu -- the audio filter ops on the GPU (cuda/lfilter.c), with the
// CPU's rules (cpu/lfilter_kernels.c). lfilter runs a thread per channel
// over time (the recursion is sequential); the coefficient correlation a
// block per (filter, tap), reduced in double. lfilter.c prepends T (float
// or double).

struct mt_lfgeo {
  long long N, C, len, K; // len: samples per channel
  int mode, reverse; // mode: 0 full, 1 FIR (a unread), 2 IIR (b unread)
};

// Sample u (processing order; u < 0: the history zh, nearest last) of row r.
__device__ __forceinline__ T lf_at(const T *r, const T *zh, long long u, long long n, long long H, int rev) {
  if (u >= 0) return r[rev ? n - 1 - u : u];
  return zh ? zh[H + u] : (T)0;
}

extern "C" __global__ void mt_lfilter_fwd(const T *x, const T *a, const T *b, const T *zi, T *y, mt_lfgeo g) {
  long long ch = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (ch >= g.N * g.C) return;
  long long c = ch % g.C, K = g.K, H = K - 1, n = g.len;
  const T *ac = a + c * K, *bc = b + c * K;
  const T *xr = x + ch * n, *zx = zi ? zi + ch * 2 * H : 0, *zy = zi ? zx + H : 0;
  T *yr = y + ch * n;
  T a0 = g.mode == 1 ? (T)1 : ac[0];
  for (long long t = 0; t < n; t++) {
    T s = 0;
    for (long long k = 0; k < K; k++) {
      T bk = g.mode == 2 ? (T)(k == 0) : bc[k];
      if (bk != (T)0) s += bk * lf_at(xr, zx, t - k, n, H, g.reverse);
    }
    if (a0 != (T)1) s /= a0;
    if (g.mode != 1)
      for (long long k = 1; k < K; k++) s -= (ac[k] / a0) * lf_at(yr, zy, t - k, n, H, g.reverse);
    yr[g.reverse ? n - 1 - t : t] = s;
  }
}

#define LF_THREADS 256

extern "C" __global__ void mt_lfilter_corr(const T *w, const T *x, T *out, mt_lfgeo g) {
  __shared__ double part[LF_THREADS];
  long long c = blockIdx.x / g.K, k = blockIdx.x % g.K, n = g.len;
  double s = 0;
  for (long long i = threadIdx.x; i < g.N * n; i += blockDim.x) {
    long long b = i / n, t = i % n, u = g.reverse ? t + k : t - k;
    if (u < 0 || u >= n) continue;
    long long row = (b * g.C + c) * n;
    s += (double)w[row + t] * (double)x[row + u];
  }
  part[threadIdx.x] = s;
  __syncthreads();
  for (int h = LF_THREADS / 2; h > 0; h >>= 1) {
    if ((int)threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = (T)part[0];
}
