// pool.cu -- average pools (plain and adaptive) and their backward, with
// PyTorch's window and divisor rules as the CPU applies them
// (cpu/pool_kernels.c): windows clipped to the input, the divisor counts
// the padding when count_include_pad (plain pools only) unless
// divisor_override is set. pool.c (cuda) prepends T (float or double: half
// inputs were upcast). Every problem is seen as 3-D (leading sizes 1).

struct mt_ageo {
  long long n;  // outputs: planes * out0 * out1 * out2
  long long in[3], out[3], k[3], stride[3], pad[3];
  long long divisor;  // 0: PyTorch's rule
  int adaptive, include_pad;
};

// Clipped window [*b, *e) of output o along d and its size up to the padded edge.
__device__ __forceinline__ void awin(const mt_ageo &g, int d, long long o, long long *b, long long *e, long long *full) {
  if (g.adaptive) {
    *b = o * g.in[d] / g.out[d];
    *e = ((o + 1) * g.in[d] + g.out[d] - 1) / g.out[d];
    *full = *e - *b;
    return;
  }
  long long s = o * g.stride[d] - g.pad[d], end = s + g.k[d];
  if (end > g.in[d] + g.pad[d]) end = g.in[d] + g.pad[d];
  *full = end - s;
  *b = s < 0 ? 0 : s;
  *e = end > g.in[d] ? g.in[d] : end;
}

// Window of output i (flat over planes and outputs); false when empty.
__device__ __forceinline__ bool window_of(const mt_ageo &g, long long i, long long *pl, long long *b, long long *e,
                                          double *div) {
  long long so = g.out[0] * g.out[1] * g.out[2], r = i % so, f[3];
  long long o[3] = {r / (g.out[2] * g.out[1]), (r / g.out[2]) % g.out[1], r % g.out[2]};
  *pl = i / so;
  for (int d = 0; d < 3; d++) awin(g, d, o[d], &b[d], &e[d], &f[d]);
  if (b[0] >= e[0] || b[1] >= e[1] || b[2] >= e[2]) return false;
  if (g.divisor) *div = (double)g.divisor;
  else if (g.include_pad && !g.adaptive) *div = (double)(f[0] * f[1] * f[2]);
  else *div = (double)((e[0] - b[0]) * (e[1] - b[1]) * (e[2] - b[2]));
  return true;
}

extern "C" __global__ void mt_avg_pool(const T *x, T *y, mt_ageo g) {
  long long step = (long long)gridDim.x * blockDim.x, si = g.in[0] * g.in[1] * g.in[2];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += step) {
    long long pl, b[3], e[3];
    double div, acc = 0;
    if (!window_of(g, i, &pl, b, e, &div)) {
      y[i] = 0;
      continue;
    }
    const T *xp = x + pl * si;
    for (long long i0 = b[0]; i0 < e[0]; i0++)
      for (long long i1 = b[1]; i1 < e[1]; i1++)
        for (long long i2 = b[2]; i2 < e[2]; i2++) acc += (double)xp[(i0 * g.in[1] + i1) * g.in[2] + i2];
    y[i] = (T)(acc / div);
  }
}

// gx (zeroed by the caller) += gy / divisor over each window; windows may
// overlap, hence the atomics.
extern "C" __global__ void mt_avg_pool_bwd(const T *gy, T *gx, mt_ageo g) {
  long long step = (long long)gridDim.x * blockDim.x, si = g.in[0] * g.in[1] * g.in[2];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += step) {
    long long pl, b[3], e[3];
    double div;
    if (!window_of(g, i, &pl, b, e, &div)) continue;
    T v = (T)((double)gy[i] / div);
    T *gp = gx + pl * si;
    for (long long i0 = b[0]; i0 < e[0]; i0++)
      for (long long i1 = b[1]; i1 < e[1]; i1++)
        for (long long i2 = b[2]; i2 < e[2]; i2++) atomicAdd(&gp[(i0 * g.in[1] + i1) * g.in[2] + i2], v);
  }
}
