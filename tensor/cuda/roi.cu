// roi.cu -- RoI Align and RoI pooling, forward and backward (cuda/roi.c),
// with the CPU's rules (cpu/roi_kernels.c): one thread per output element;
// the backward kernels add into the zeroed input gradient with atomics.
// roi.c prepends T (float or double) and MUL(a, b), a product rounded on
// its own (no fused multiply-add), as the CPU computes. A roi whose batch
// number is outside 1..N gives zeros (and no gradient).

struct mt_rgeo {
  long long K, N, C, H, W, ph, pw, sr;
  int aligned, pad;
  double scale;
};

// One axis of a bilinear sample (see axis_T in cpu/roi_kernels.c).
struct mt_ax {
  long long lo, hi;
  T l, h;
  bool ok;
};

__device__ __forceinline__ mt_ax roi_axis(T v, long long size) {
  mt_ax a;
  a.ok = !(v < (T)-1.0 || v > (T)size);
  a.lo = a.hi = 0;
  a.l = a.h = 0;
  if (!a.ok) return a;
  if (v <= 0) v = 0;
  a.lo = (long long)v;
  if (a.lo >= size - 1) {
    a.lo = a.hi = size - 1;
    v = (T)a.lo;
  } else {
    a.hi = a.lo + 1;
  }
  a.l = v - (T)a.lo;
  a.h = (T)1 - a.l;
  return a;
}

// The geometry of roi r for bin (i, j): start corner, bin size, grid and count.
struct mt_rbin {
  long long b, gh, gw;
  T y0, x0, bh, bw, count;
};

__device__ __forceinline__ mt_rbin roi_bin(const mt_rgeo &g, const T *r) {
  mt_rbin q;
  T sc = (T)g.scale, off = g.aligned ? (T)0.5 : (T)0;
  T x0 = MUL(r[1], sc) - off, y0 = MUL(r[2], sc) - off, x1 = MUL(r[3], sc) - off, y1 = MUL(r[4], sc) - off;
  T rw = x1 - x0, rh = y1 - y0;
  if (!g.aligned) rw = rw > (T)1 ? rw : (T)1, rh = rh > (T)1 ? rh : (T)1;
  q.b = (long long)r[0] - 1;
  q.y0 = y0, q.x0 = x0, q.bh = rh / (T)g.ph, q.bw = rw / (T)g.pw;
  q.gh = g.sr > 0 ? g.sr : (long long)ceil(rh / (T)g.ph);
  q.gw = g.sr > 0 ? g.sr : (long long)ceil(rw / (T)g.pw);
  long long c = q.gh * q.gw;
  q.count = (T)(c > 1 ? c : 1);
  if (q.gh < 0) q.gh = 0;
  if (q.gw < 0) q.gw = 0;
  return q;
}

__device__ __forceinline__ T sample_y(const mt_rbin &q, long long i, long long s) {
  return q.y0 + MUL((T)i, q.bh) + MUL((T)(s + .5f), q.bh) / (T)q.gh;
}
__device__ __forceinline__ T sample_x(const mt_rbin &q, long long j, long long s) {
  return q.x0 + MUL((T)j, q.bw) + MUL((T)(s + .5f), q.bw) / (T)q.gw;
}

extern "C" __global__ void mt_roi_align_fwd(const T *x, const T *rois, T *y, mt_rgeo g) {
  long long n = g.K * g.C * g.ph * g.pw, step = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += step) {
    long long j = o % g.pw, i = (o / g.pw) % g.ph, c = (o / (g.pw * g.ph)) % g.C, k = o / (g.pw * g.ph * g.C);
    mt_rbin q = roi_bin(g, rois + k * 5);
    T acc = 0;
    if (q.b >= 0 && q.b < g.N) {
      const T *xp = x + (q.b * g.C + c) * g.H * g.W;
      for (long long sy = 0; sy < q.gh; sy++) {
        mt_ax a = roi_axis(sample_y(q, i, sy), g.H);
        if (!a.ok) continue;
        for (long long sx = 0; sx < q.gw; sx++) {
          mt_ax bx = roi_axis(sample_x(q, j, sx), g.W);
          if (!bx.ok) continue;
          acc += MUL(MUL(a.h, bx.h), xp[a.lo * g.W + bx.lo]) + MUL(MUL(a.h, bx.l), xp[a.lo * g.W + bx.hi]) +
                 MUL(MUL(a.l, bx.h), xp[a.hi * g.W + bx.lo]) + MUL(MUL(a.l, bx.l), xp[a.hi * g.W + bx.hi]);
        }
      }
    }
    y[o] = acc / q.count;
  }
}

extern "C" __global__ void mt_roi_align_bwd(const T *gy, const T *rois, T *gx, mt_rgeo g) {
  long long n = g.K * g.C * g.ph * g.pw, step = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += step) {
    long long j = o % g.pw, i = (o / g.pw) % g.ph, c = (o / (g.pw * g.ph)) % g.C, k = o / (g.pw * g.ph * g.C);
    mt_rbin q = roi_bin(g, rois + k * 5);
    if (q.b < 0 || q.b >= g.N) continue;
    T v = gy[o] / q.count, *xp = gx + (q.b * g.C + c) * g.H * g.W;
    for (long long sy = 0; sy < q.gh; sy++) {
      mt_ax a = roi_axis(sample_y(q, i, sy), g.H);
      if (!a.ok) continue;
      for (long long sx = 0; sx < q.gw; sx++) {
        mt_ax bx = roi_axis(sample_x(q, j, sx), g.W);
        if (!bx.ok) continue;
        atomicAdd(&xp[a.lo * g.W + bx.lo], MUL(v, MUL(a.h, bx.h)));
        atomicAdd(&xp[a.lo * g.W + bx.hi], MUL(v, MUL(a.h, bx.l)));
        atomicAdd(&xp[a.hi * g.W + bx.lo], MUL(v, MUL(a.l, bx.h)));
        atomicAdd(&xp[a.hi * g.W + bx.hi], MUL(v, MUL(a.l, bx.l)));
      }
    }
  }
}

__device__ __forceinline__ long long clampll(long long v, long long lo, long long hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

extern "C" __global__ void mt_roi_pool_fwd(const T *x, const T *rois, T *y, long long *argmax, mt_rgeo g) {
  long long n = g.K * g.C * g.ph * g.pw, step = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += step) {
    long long j = o % g.pw, i = (o / g.pw) % g.ph, c = (o / (g.pw * g.ph)) % g.C, k = o / (g.pw * g.ph * g.C);
    const T *r = rois + k * 5, sc = (T)g.scale;
    long long b = (long long)r[0] - 1, x0 = (long long)round(MUL(r[1], sc)), y0 = (long long)round(MUL(r[2], sc));
    long long rw = (long long)round(MUL(r[3], sc)) - x0 + 1, rh = (long long)round(MUL(r[4], sc)) - y0 + 1;
    rw = rw > 1 ? rw : 1, rh = rh > 1 ? rh : 1;
    T bh = (T)rh / (T)g.ph, bw = (T)rw / (T)g.pw;
    long long hs = clampll((long long)floor(MUL((T)i, bh)) + y0, 0, g.H);
    long long he = clampll((long long)ceil(MUL((T)(i + 1), bh)) + y0, 0, g.H);
    long long ws = clampll((long long)floor(MUL((T)j, bw)) + x0, 0, g.W);
    long long we = clampll((long long)ceil(MUL((T)(j + 1), bw)) + x0, 0, g.W);
    bool empty = he <= hs || we <= ws || b < 0 || b >= g.N;
    T m = empty ? (T)0 : (T)-3.402823466e+38;
    long long at = -1, base = (b * g.C + c) * g.H * g.W;
    for (long long h = hs; h < he && !empty; h++)
      for (long long w = ws; w < we; w++)
        if (x[base + h * g.W + w] > m) m = x[base + h * g.W + w], at = base + h * g.W + w;
    y[o] = m;
    argmax[o] = at + 1;
  }
}

extern "C" __global__ void mt_roi_pool_bwd(const T *gy, const long long *argmax, T *gx, mt_rgeo g) {
  long long n = g.K * g.C * g.ph * g.pw, step = (long long)gridDim.x * blockDim.x;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < n; o += step)
    if (argmax[o] > 0) atomicAdd(&gx[argmax[o] - 1], gy[o]);
}
