// roi.cu -- RoI Align and RoI pooling, forward and backward (cuda/roi.c),
// with the CPU's rules (cpu/roi_kernels.c). RoI Align runs one thread per
// (roi, bin, group of ROI_CPT channels): the bin's geometry (sample points,
// taps, weights) is computed once and used for every channel of the group,
// whose loads are independent. RoI pooling runs a thread per output.
// The backward kernels add into the zeroed input gradient with atomics.
// roi.c prepends T (float or double) and MUL(a, b), a product rounded on
// its own (no fused multiply-add), as the CPU computes. A roi whose batch
// number is outside 1..N gives zeros (and no gradient).

#define ROI_CPT 8

struct mt_rgeo {
  long long K, N, C, H, W, ph, pw, sr;
  int aligned, small; // small: the kernel's threads fit 32-bit index arithmetic
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

// One thread's share: roi k, bin (i, j) and channels c0 .. c0 + nc - 1.
struct mt_rjob {
  long long k, i, j, c0;
  int nc;
};

// Thread o's share when each takes cpt channels of a bin (bins vary
// fastest, then channel groups, then rois), in index type I.
template <typename I> __device__ __forceinline__ mt_rjob roi_job_in(const mt_rgeo &g, I o, int cpt) {
  I pw = (I)g.pw, bins = (I)(g.ph * g.pw), groups = (I)((g.C + cpt - 1) / cpt), bin = o % bins, q = o / bins;
  mt_rjob r;
  r.i = bin / pw, r.j = bin % pw, r.k = q / groups, r.c0 = (long long)(q % groups) * cpt;
  r.nc = g.C - r.c0 < cpt ? (int)(g.C - r.c0) : cpt;
  return r;
}

// 32-bit division where it is enough: 64-bit division is a long routine
__device__ __forceinline__ mt_rjob roi_job(const mt_rgeo &g, long long o, int cpt) {
  return g.small ? roi_job_in<unsigned>(g, (unsigned)o, cpt) : roi_job_in<unsigned long long>(g, o, cpt);
}

// threads of roi_job(cpt) over the problem
#define ROI_LOOP(g, cpt)                                                                                               \
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x,                                                \
                 n_ = g.K * ((g.C + (cpt) - 1) / (cpt)) * g.ph * g.pw, step_ = (long long)gridDim.x * blockDim.x;     \
       o < n_; o += step_)

// The output offset of channel c0 of a job (channel c adds (c - c0) * ph * pw).
__device__ __forceinline__ long long roi_out(const mt_rgeo &g, const mt_rjob &r) {
  return ((r.k * g.C + r.c0) * g.ph + r.i) * g.pw + r.j;
}

extern "C" __global__ void mt_roi_align_fwd(const T *x, const T *rois, T *y, mt_rgeo g) {
  ROI_LOOP(g, ROI_CPT) {
    mt_rjob r = roi_job(g, o, ROI_CPT);
    mt_rbin q = roi_bin(g, rois + r.k * 5);
    T acc[ROI_CPT];
#pragma unroll
    for (int u = 0; u < ROI_CPT; u++) acc[u] = 0;
    if (q.b >= 0 && q.b < g.N) {
      long long hw = g.H * g.W;
      const T *xp = x + (q.b * g.C + r.c0) * hw;
      for (long long sy = 0; sy < q.gh; sy++) {
        mt_ax a = roi_axis(sample_y(q, r.i, sy), g.H);
        if (!a.ok) continue;
        for (long long sx = 0; sx < q.gw; sx++) {
          mt_ax bx = roi_axis(sample_x(q, r.j, sx), g.W);
          if (!bx.ok) continue;
          T w1 = MUL(a.h, bx.h), w2 = MUL(a.h, bx.l), w3 = MUL(a.l, bx.h), w4 = MUL(a.l, bx.l);
          long long o1 = a.lo * g.W + bx.lo, o2 = a.lo * g.W + bx.hi, o3 = a.hi * g.W + bx.lo, o4 = a.hi * g.W + bx.hi;
#pragma unroll
          for (int u = 0; u < ROI_CPT; u++)
            if (u < r.nc) {
              const T *p = xp + u * hw;
              acc[u] += MUL(w1, p[o1]) + MUL(w2, p[o2]) + MUL(w3, p[o3]) + MUL(w4, p[o4]);
            }
        }
      }
    }
    long long at = roi_out(g, r), plane = g.ph * g.pw;
#pragma unroll
    for (int u = 0; u < ROI_CPT; u++)
      if (u < r.nc) y[at + u * plane] = acc[u] / q.count;
  }
}

extern "C" __global__ void mt_roi_align_bwd(const T *gy, const T *rois, T *gx, mt_rgeo g) {
  ROI_LOOP(g, ROI_CPT) {
    mt_rjob r = roi_job(g, o, ROI_CPT);
    mt_rbin q = roi_bin(g, rois + r.k * 5);
    if (q.b < 0 || q.b >= g.N) continue;
    long long hw = g.H * g.W, at = roi_out(g, r), plane = g.ph * g.pw;
    T v[ROI_CPT];
#pragma unroll
    for (int u = 0; u < ROI_CPT; u++) v[u] = u < r.nc ? gy[at + u * plane] / q.count : (T)0;
    T *xp = gx + (q.b * g.C + r.c0) * hw;
    for (long long sy = 0; sy < q.gh; sy++) {
      mt_ax a = roi_axis(sample_y(q, r.i, sy), g.H);
      if (!a.ok) continue;
      for (long long sx = 0; sx < q.gw; sx++) {
        mt_ax bx = roi_axis(sample_x(q, r.j, sx), g.W);
        if (!bx.ok) continue;
        T w1 = MUL(a.h, bx.h), w2 = MUL(a.h, bx.l), w3 = MUL(a.l, bx.h), w4 = MUL(a.l, bx.l);
        long long o1 = a.lo * g.W + bx.lo, o2 = a.lo * g.W + bx.hi, o3 = a.hi * g.W + bx.lo, o4 = a.hi * g.W + bx.hi;
#pragma unroll
        for (int u = 0; u < ROI_CPT; u++)
          if (u < r.nc) {
            T *p = xp + u * hw;
            atomicAdd(&p[o1], MUL(v[u], w1));
            atomicAdd(&p[o2], MUL(v[u], w2));
            atomicAdd(&p[o3], MUL(v[u], w3));
            atomicAdd(&p[o4], MUL(v[u], w4));
          }
      }
    }
  }
}

__device__ __forceinline__ long long clampll(long long v, long long lo, long long hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

// One thread per output: the window's loads are few, and more threads
// hide their latency better than shared geometry would save.
extern "C" __global__ void mt_roi_pool_fwd(const T *x, const T *rois, T *y, long long *argmax, mt_rgeo g) {
  ROI_LOOP(g, 1) {
    mt_rjob r = roi_job(g, o, 1);
    const T *ro = rois + r.k * 5, sc = (T)g.scale;
    long long b = (long long)ro[0] - 1, x0 = (long long)round(MUL(ro[1], sc)), y0 = (long long)round(MUL(ro[2], sc));
    long long rw = (long long)round(MUL(ro[3], sc)) - x0 + 1, rh = (long long)round(MUL(ro[4], sc)) - y0 + 1;
    rw = rw > 1 ? rw : 1, rh = rh > 1 ? rh : 1;
    T bh = (T)rh / (T)g.ph, bw = (T)rw / (T)g.pw;
    long long hs = clampll((long long)floor(MUL((T)r.i, bh)) + y0, 0, g.H);
    long long he = clampll((long long)ceil(MUL((T)(r.i + 1), bh)) + y0, 0, g.H);
    long long ws = clampll((long long)floor(MUL((T)r.j, bw)) + x0, 0, g.W);
    long long we = clampll((long long)ceil(MUL((T)(r.j + 1), bw)) + x0, 0, g.W);
    bool empty = he <= hs || we <= ws || b < 0 || b >= g.N;
    T m = empty ? (T)0 : (T)-3.402823466e+38;
    long long at = -1, base = (b * g.C + r.c0) * g.H * g.W;
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
