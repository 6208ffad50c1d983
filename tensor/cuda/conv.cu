// conv.cu -- im2col/col2im for convolutions run as cuBLAS products, and max
// pooling with its backward. conv.c (cuda) prepends TX (float or double:
// half inputs were upcast) and TA (the accumulation type). Every problem is
// seen as 3-D (a 1-D or 2-D one has leading spatial sizes of 1), so one
// kernel serves conv1d/2d/3d. They must not read the host or allocate.

struct mt_cgeo {
  long long n;                    // threads' work items
  long long C, in[3], out[3], k[3], stride[3], pad[3], dil[3];
};

// col (cn, C*k0*k1*k2, out0*out1*out2) from x (cn, C, in0, in1, in2); zeros
// where the window hangs over the padding.
extern "C" __global__ void mt_im2col(const TX *x, TX *col, mt_cgeo g) {
  long long step = (long long)gridDim.x * blockDim.x;
  long long L = g.out[0] * g.out[1] * g.out[2], KK = g.k[0] * g.k[1] * g.k[2];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += step) {
    long long l = i % L, r = i / L, kk = r % KK, nc = r / KK;  // nc: n * C + c
    long long o2 = l % g.out[2], o1 = (l / g.out[2]) % g.out[1], o0 = l / (g.out[2] * g.out[1]);
    long long k2 = kk % g.k[2], k1 = (kk / g.k[2]) % g.k[1], k0 = kk / (g.k[2] * g.k[1]);
    long long i0 = o0 * g.stride[0] - g.pad[0] + k0 * g.dil[0];
    long long i1 = o1 * g.stride[1] - g.pad[1] + k1 * g.dil[1];
    long long i2 = o2 * g.stride[2] - g.pad[2] + k2 * g.dil[2];
    TX v = 0;
    if (i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1] && i2 >= 0 && i2 < g.in[2])
      v = x[((nc * g.in[0] + i0) * g.in[1] + i1) * g.in[2] + i2];
    col[i] = v;
  }
}

// The adjoint: x (cn, C, in...) = the sum of the col entries each input
// element was copied to. One thread per input element, so no atomics and a
// fixed summation order.
extern "C" __global__ void mt_col2im(const TX *col, TX *x, mt_cgeo g) {
  long long step = (long long)gridDim.x * blockDim.x;
  long long L = g.out[0] * g.out[1] * g.out[2], KK = g.k[0] * g.k[1] * g.k[2];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += step) {
    long long i2 = i % g.in[2], i1 = (i / g.in[2]) % g.in[1], i0 = (i / (g.in[2] * g.in[1])) % g.in[0];
    long long nc = i / (g.in[2] * g.in[1] * g.in[0]);
    const TX *base = col + nc * KK * L;
    TA s = 0;
    for (long long k0 = 0; k0 < g.k[0]; k0++) {
      long long t0 = i0 + g.pad[0] - k0 * g.dil[0];
      if (t0 < 0 || t0 % g.stride[0]) continue;
      long long o0 = t0 / g.stride[0];
      if (o0 >= g.out[0]) continue;
      for (long long k1 = 0; k1 < g.k[1]; k1++) {
        long long t1 = i1 + g.pad[1] - k1 * g.dil[1];
        if (t1 < 0 || t1 % g.stride[1]) continue;
        long long o1 = t1 / g.stride[1];
        if (o1 >= g.out[1]) continue;
        for (long long k2 = 0; k2 < g.k[2]; k2++) {
          long long t2 = i2 + g.pad[2] - k2 * g.dil[2];
          if (t2 < 0 || t2 % g.stride[2]) continue;
          long long o2 = t2 / g.stride[2];
          if (o2 >= g.out[2]) continue;
          long long kk = (k0 * g.k[1] + k1) * g.k[2] + k2;
          s += (TA)base[kk * L + (o0 * g.out[1] + o1) * g.out[2] + o2];
        }
      }
    }
    x[i] = (TX)s;
  }
}

// Max pool: one thread per output of planes * out...; idx gets the 1-based
// flat position in the input plane of the first maximum (a NaN wins), as
// the CPU kernel does. adaptive: windows [floor(o*in/out), ceil((o+1)*in/out)).
struct mt_pgeo {
  long long n;
  long long in[3], out[3], k[3], stride[3], pad[3], dil[3];
  int adaptive;
};

__device__ __forceinline__ void pwin(const mt_pgeo &g, int d, long long o, long long *b, long long *e, long long *s) {
  if (g.adaptive) {
    *b = o * g.in[d] / g.out[d];
    *e = ((o + 1) * g.in[d] + g.out[d] - 1) / g.out[d];
    *s = 1;
  } else {
    *b = o * g.stride[d] - g.pad[d];
    *e = *b + (g.k[d] - 1) * g.dil[d] + 1;
    *s = g.dil[d];
  }
}

extern "C" __global__ void mt_max_pool(const TX *x, TX *y, long long *idx, mt_pgeo g) {
  long long step = (long long)gridDim.x * blockDim.x;
  long long so = g.out[0] * g.out[1] * g.out[2], si = g.in[0] * g.in[1] * g.in[2];
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += step) {
    long long r = i % so, pl = i / so;
    long long o2 = r % g.out[2], o1 = (r / g.out[2]) % g.out[1], o0 = r / (g.out[2] * g.out[1]);
    long long b0, e0, s0, b1, e1, s1, b2, e2, s2, best = -1;
    pwin(g, 0, o0, &b0, &e0, &s0);
    pwin(g, 1, o1, &b1, &e1, &s1);
    pwin(g, 2, o2, &b2, &e2, &s2);
    const TX *xp = x + pl * si;
    TX m = 0;  // replaced by the first element: no window is empty
    for (long long i0 = b0; i0 < e0; i0 += s0) {
      if (i0 < 0 || i0 >= g.in[0]) continue;
      for (long long i1 = b1; i1 < e1; i1 += s1) {
        if (i1 < 0 || i1 >= g.in[1]) continue;
        for (long long i2 = b2; i2 < e2; i2 += s2) {
          if (i2 < 0 || i2 >= g.in[2]) continue;
          long long at = (i0 * g.in[1] + i1) * g.in[2] + i2;
          TX v = xp[at];
          if (best < 0 || v > m || v != v) m = v, best = at;
        }
      }
    }
    y[i] = m;
    if (idx) idx[i] = best + 1;
  }
}

// gx (zeroed by the caller) += gy at the positions in idx; windows may
// overlap, hence the atomics. A position outside the plane is skipped (the
// caller checked the indices).
extern "C" __global__ void mt_max_pool_bwd(const TX *gy, const long long *idx, TX *gx, long long n,
                                           long long out_plane, long long in_plane) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    long long at = idx[i] - 1;
    if (at < 0 || at >= in_plane) continue;
    atomicAdd(&gx[(i / out_plane) * in_plane + at], gy[i]);
  }
}
