// norm.cu -- batch norm (statistics per channel over N and the spatial
// dims) and row norms (layer and group norm: statistics per contiguous row
// of L elements), forward and backward. norm.c (cuda) prepends T (float or
// double: inputs come in their compute dtype, contiguous). As on the CPU
// (cpu/norm_kernels.c) statistics take two passes in double and the sums
// accumulate in double; a block owns a channel or a row (no atomics, fixed
// order within a block). Null pointers: no weight, bias or output.
// x of batch norm is (N, C, S): element i of channel c is at
// ((i / S) * C + c) * S + i % S. Row norms: row r's element j uses
// parameter (r % G) * Cg + j / S.

// Sum over the block (blockDim a power of two, <= 256); every thread gets it.
__device__ double block_sum(double v) {
  __shared__ double s[256];
  unsigned t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) s[t] += s[t + h];
    __syncthreads();
  }
  v = s[0];
  __syncthreads();
  return v;
}

__device__ __forceinline__ long long bn_at(long long i, long long c, long long C, long long S) {
  return ((i / S) * C + c) * S + i % S;
}

extern "C" __global__ void mt_bn_fwd(const T *x, const T *w, const T *b, long long N, long long C, long long S,
                                     int stats, double eps, double *mean, double *var, double *inv, T *y) {
  long long cnt = N * S;
  for (long long c = blockIdx.x; c < C; c += gridDim.x) {
    double m, iv;
    if (stats) {
      double s = 0, q = 0;
      for (long long i = threadIdx.x; i < cnt; i += blockDim.x) s += (double)x[bn_at(i, c, C, S)];
      s = block_sum(s);
      m = cnt ? s / (double)cnt : 0;
      for (long long i = threadIdx.x; i < cnt; i += blockDim.x) {
        double d = (double)x[bn_at(i, c, C, S)] - m;
        q += d * d;
      }
      q = block_sum(q);
      double v = cnt ? q / (double)cnt : 0;
      iv = 1.0 / sqrt(v + eps);
      if (threadIdx.x == 0) mean[c] = m, var[c] = v, inv[c] = iv;
    } else {
      m = mean[c], iv = inv[c];
    }
    double a = iv * (w ? (double)w[c] : 1.0), sh = b ? (double)b[c] : 0.0;
    for (long long i = threadIdx.x; i < cnt; i += blockDim.x) {
      long long at = bn_at(i, c, C, S);
      y[at] = (T)(((double)x[at] - m) * a + sh);
    }
  }
}

extern "C" __global__ void mt_bn_bwd(const T *gy, const T *x, const T *w, const double *mean, const double *inv,
                                     long long N, long long C, long long S, int training, T *gx, double *gw,
                                     double *gb) {
  long long cnt = N * S;
  for (long long c = blockIdx.x; c < C; c += gridDim.x) {
    double m = mean[c], iv = inv[c], sg = 0, sgx = 0;
    for (long long i = threadIdx.x; i < cnt; i += blockDim.x) {
      long long at = bn_at(i, c, C, S);
      sg += (double)gy[at];
      sgx += (double)gy[at] * ((double)x[at] - m);
    }
    sg = block_sum(sg);
    sgx = block_sum(sgx);
    if (threadIdx.x == 0) {
      if (gw) gw[c] = sgx * iv;
      if (gb) gb[c] = sg;
    }
    if (!gx) continue;
    double wc = w ? (double)w[c] : 1.0;
    double mg = cnt ? sg / (double)cnt : 0, k = cnt ? sgx * iv * iv / (double)cnt : 0;
    for (long long i = threadIdx.x; i < cnt; i += blockDim.x) {
      long long at = bn_at(i, c, C, S);
      gx[at] = training ? (T)(((double)gy[at] - mg - ((double)x[at] - m) * k) * iv * wc) : (T)((double)gy[at] * iv * wc);
    }
  }
}

// inv = 1 / sqrt(var + eps) (evaluation: the running variance normalizes).
extern "C" __global__ void mt_bn_invstd(const double *var, double eps, double *inv, long long C) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < C; c += step) inv[c] = 1.0 / sqrt(var[c] + eps);
}

// run = (1 - mom) run + mom stat (unbias: stat * cnt / (cnt - 1)).
extern "C" __global__ void mt_bn_running(double *run, const double *stat, long long C, double mom, int unbias,
                                         double cnt) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < C; c += step)
    run[c] = (1 - mom) * run[c] + mom * (unbias ? stat[c] * cnt / (cnt - 1) : stat[c]);
}

extern "C" __global__ void mt_rows_fwd(const T *x, const T *w, const T *b, long long R, long long L, long long G,
                                       long long Cg, long long S, double eps, double *mean, double *rstd, T *y) {
  for (long long r = blockIdx.x; r < R; r += gridDim.x) {
    const T *xr = x + r * L;
    T *yr = y + r * L;
    double s = 0, q = 0;
    for (long long i = threadIdx.x; i < L; i += blockDim.x) s += (double)xr[i];
    s = block_sum(s);
    double m = L ? s / (double)L : 0;
    for (long long i = threadIdx.x; i < L; i += blockDim.x) q += ((double)xr[i] - m) * ((double)xr[i] - m);
    q = block_sum(q);
    double rs = 1.0 / sqrt((L ? q / (double)L : 0) + eps);
    if (threadIdx.x == 0) mean[r] = m, rstd[r] = rs;
    long long c0 = (r % G) * Cg;
    for (long long i = threadIdx.x; i < L; i += blockDim.x) {
      long long ch = c0 + i / S;
      yr[i] = (T)(((double)xr[i] - m) * rs * (w ? (double)w[ch] : 1.0) + (b ? (double)b[ch] : 0.0));
    }
  }
}

extern "C" __global__ void mt_rows_bwd(const T *gy, const T *x, const T *w, const double *mean, const double *rstd,
                                       long long R, long long L, long long G, long long Cg, long long S, T *gx) {
  for (long long r = blockIdx.x; r < R; r += gridDim.x) {
    const T *xr = x + r * L, *gr = gy + r * L;
    T *gxr = gx + r * L;
    double m = mean[r], rs = rstd[r], a = 0, bs = 0;
    long long c0 = (r % G) * Cg;
    for (long long i = threadIdx.x; i < L; i += blockDim.x) {
      double g = (double)gr[i] * (w ? (double)w[c0 + i / S] : 1.0);
      a += g;
      bs += g * ((double)xr[i] - m) * rs;
    }
    a = block_sum(a) / (double)L;
    bs = block_sum(bs) / (double)L;
    for (long long i = threadIdx.x; i < L; i += blockDim.x) {
      double g = (double)gr[i] * (w ? (double)w[c0 + i / S] : 1.0);
      gxr[i] = (T)(rs * (g - a - ((double)xr[i] - m) * rs * bs));
    }
  }
}

// Per parameter channel c (G * Cg of them): sums over the rows using it.
extern "C" __global__ void mt_rows_param(const T *gy, const T *x, const double *mean, const double *rstd, long long R,
                                         long long L, long long G, long long Cg, long long S, double *gw, double *gb) {
  long long n = (R / G) * S;
  for (long long c = blockIdx.x; c < G * Cg; c += gridDim.x) {
    long long g = c / Cg, off = (c % Cg) * S;
    double sw = 0, sb = 0;
    for (long long k = threadIdx.x; k < n; k += blockDim.x) {
      long long r = g + (k / S) * G, at = r * L + off + k % S;
      sw += (double)gy[at] * ((double)x[at] - mean[r]) * rstd[r];
      sb += (double)gy[at];
    }
    sw = block_sum(sw);
    sb = block_sum(sb);
    if (threadIdx.x == 0) {
      if (gw) gw[c] = sw;
      if (gb) gb[c] = sb;
    }
  }
}
