// resize.cu -- the separable image resampling on CUDA (resize.c (cuda)
// prepends TI, the image type; TC, the compute type, also the weights';
// STORE(v), the conversion of a computed value to TI): a pass along x into
// a buffer of TC, a pass along y into the output, and the adjoint's two
// passes with atomics. One block per row (of the buffer or the output),
// its threads along the row. The tables (cpu/resize_kernels.h's plan) come
// packed in one buffer (see struct mt_rsgeo): ints row0, nrows, sx, sy,
// nx, ny; then the weights, wx as [table][tap][ox] (a tap's weights of
// neighbouring outputs side by side) and wy as [table][oy][tap]. A crop's
// tables come from the host; a plain resize's (one table) are computed
// here by mt_rs_tables, with resize.c's formulas (plain_window and
// aa_window: keep the two in step), in double as there.

struct mt_rsgeo {
  long long planes, group, ih, iw, oh, ow;
  long long ntab, kx, ky;
  long long wts; // byte offset of the weights in the tables
};

// uint8 results: rounded half to even, clamped
__device__ __forceinline__ unsigned char rs_u8(float v) {
  int r = __float2int_rn(v);
  return (unsigned char)(r < 0 ? 0 : r > 255 ? 255 : r);
}

// The table views of a packed upload.
struct mt_rstab {
  const int *row0, *nrows, *sx, *sy, *nx, *ny;
  const TC *wx, *wy;
};

__device__ __forceinline__ mt_rstab rs_tables(const void *tabs, const mt_rsgeo &g) {
  mt_rstab t;
  const int *p = (const int *)tabs;
  t.row0 = p, t.nrows = p + g.ntab, t.sx = p + 2 * g.ntab, t.sy = t.sx + g.ntab * g.ow;
  t.nx = t.sy + g.ntab * g.oh, t.ny = t.nx + g.ntab * g.ow;
  t.wx = (const TC *)((const char *)tabs + g.wts), t.wy = t.wx + g.ntab * g.kx * g.ow;
  return t;
}

// ---- the tables of a plain resize ----

enum { RS_NEAREST, RS_NEAREST_EXACT, RS_BILINEAR, RS_BICUBIC }; // resize.h's modes

// PyTorch's antialias filters: triangle, and cubic with a = -0.5
__device__ __forceinline__ double rs_aa_filter(int mode, double x) {
  x = fabs(x);
  if (mode == RS_BILINEAR) return x < 1 ? 1 - x : 0;
  const double a = -0.5;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

// Output o of the axis in -> out, antialiased: window start and taps into
// *s, *n, weights w[tap * step]
__device__ void rs_aa_window(long long in, long long out, int mode, long long o, int *s, int *n, TC *w, long long step) {
  double scale = (double)in / (double)out, sup = (mode == RS_BILINEAR ? 1.0 : 2.0) * (scale >= 1 ? scale : 1);
  double inv = scale >= 1 ? 1 / scale : 1, center = scale * ((double)o + 0.5), total = 0;
  long long lo = (long long)(center - sup + 0.5), hi = (long long)(center + sup + 0.5);
  if (lo < 0) lo = 0;
  if (hi > in) hi = in;
  for (long long j = 0; j < hi - lo; j++) total += rs_aa_filter(mode, ((double)(j + lo) - center + 0.5) * inv);
  for (long long j = 0; j < hi - lo; j++)
    w[j * step] = (TC)(total != 0 ? rs_aa_filter(mode, ((double)(j + lo) - center + 0.5) * inv) / total : 0);
  *s = (int)lo, *n = (int)(hi - lo);
}

__device__ __forceinline__ double rs_cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
__device__ __forceinline__ double rs_cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

// The same for the plain (align_corners=false) modes: taps clamped to the
// axis, the weights of equal taps added
__device__ void rs_plain_window(long long in, long long out, int mode, long long o, int *s, int *n, TC *w,
                                long long step) {
  if (mode <= RS_NEAREST_EXACT) {
    float scale = (float)in / (float)out, f = mode == RS_NEAREST ? (float)o : (float)o + 0.5f;
    long long i = (long long)floorf(f * scale);
    *s = (int)(i < in - 1 ? i : in - 1), *n = 1, w[0] = 1;
    return;
  }
  double scale = (double)in / (double)out, src = scale * ((double)o + 0.5) - 0.5, tw[4];
  long long taps[4];
  int nt = mode == RS_BILINEAR ? 2 : 4;
  if (mode == RS_BILINEAR) {
    if (src < 0) src = 0;
    long long i0 = (long long)src;
    double l = src - (double)i0;
    taps[0] = i0, taps[1] = i0 + (i0 < in - 1), taps[2] = taps[3] = i0, tw[0] = 1 - l, tw[1] = l, tw[2] = tw[3] = 0;
  } else {
    double f = floor(src), t = src - f;
    const double A = -0.75;
#pragma unroll
    for (int k = 0; k < 4; k++) taps[k] = (long long)f - 1 + k;
    tw[0] = rs_cubic2(t + 1, A), tw[1] = rs_cubic1(t, A), tw[2] = rs_cubic1(1 - t, A), tw[3] = rs_cubic2(2 - t, A);
  }
  long long lo = in, hi = -1;
#pragma unroll
  for (int k = 0; k < 4; k++) {
    taps[k] = taps[k] < 0 ? 0 : taps[k] > in - 1 ? in - 1 : taps[k];
    if (k < nt && taps[k] < lo) lo = taps[k];
    if (k < nt && taps[k] > hi) hi = taps[k];
  }
  for (long long j = 0; j <= hi - lo; j++) {
    double acc = 0;
#pragma unroll
    for (int k = 0; k < 4; k++)
      if (k < nt && taps[k] - lo == j) acc += tw[k];
    w[j * step] = (TC)acc;
  }
  *s = (int)lo, *n = (int)(hi - lo + 1);
}

// The one table of a plain resize into tabs (layout as rs_tables reads it):
// a thread per output of the x axis (ow), then of the y axis (oh).
extern "C" __global__ void mt_rs_tables(void *tabs, mt_rsgeo g, int mode, int aa) {
  int *p = (int *)tabs;
  TC *wx = (TC *)((char *)tabs + g.wts), *wy = wx + g.kx * g.ow;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < g.ow + g.oh; e += (long long)gridDim.x * blockDim.x) {
    if (e == 0) p[0] = 0, p[1] = (int)g.ih;
    bool x = e < g.ow;
    long long o = x ? e : e - g.ow, in = x ? g.iw : g.ih, out = x ? g.ow : g.oh;
    int *s = x ? p + 2 + o : p + 2 + g.ow + o, *n = s + g.ow + g.oh;
    TC *w = x ? wx + o : wy + o * g.ky;
    long long step = x ? g.ow : 1;
    if (aa && mode >= RS_BILINEAR) rs_aa_window(in, out, mode, o, s, n, w, step);
    else rs_plain_window(in, out, mode, o, s, n, w, step);
  }
}

// ---- the passes ----

// tmp[plane][r][o] for r < nrows of the plane's table: block = plane row
extern "C" __global__ void mt_rs_xpass(const TI *x, TC *tmp, const void *tabs, mt_rsgeo g) {
  mt_rstab tb = rs_tables(tabs, g);
  for (long long row = blockIdx.x; row < g.planes * g.ih; row += gridDim.x) {
    long long plane = row / g.ih, r = row - plane * g.ih, t = plane / g.group;
    if (r >= tb.nrows[t]) continue;
    const TI *s = x + (plane * g.ih + tb.row0[t] + r) * g.iw;
    const int *sx = tb.sx + t * g.ow, *nx = tb.nx + t * g.ow;
    const TC *w = tb.wx + t * g.kx * g.ow;
    for (long long o = threadIdx.x; o < g.ow; o += blockDim.x) {
      const TI *sp = s + sx[o];
      TC acc = 0;
      for (int k = 0, n = nx[o]; k < n; k++) acc += w[k * g.ow + o] * (TC)sp[k];
      tmp[row * g.ow + o] = acc;
    }
  }
}

// y[plane][oy][xo]: block = output row
extern "C" __global__ void mt_rs_ypass(const TC *tmp, TI *y, const void *tabs, mt_rsgeo g) {
  mt_rstab tb = rs_tables(tabs, g);
  for (long long row = blockIdx.x; row < g.planes * g.oh; row += gridDim.x) {
    long long plane = row / g.oh, oy = row - plane * g.oh, e = plane / g.group * g.oh + oy;
    const TC *s = tmp + (plane * g.ih + tb.sy[e]) * g.ow, *w = tb.wy + e * g.ky;
    int n = tb.ny[e];
    for (long long xo = threadIdx.x; xo < g.ow; xo += blockDim.x) {
      TC acc = 0;
      for (int k = 0; k < n; k++) acc += w[k] * s[k * g.ow + xo];
      y[row * g.ow + xo] = STORE(acc);
    }
  }
}

// The passes of a plain resize (one table, every row of every plane):
// a block takes rpb (1 or RS_ROWS) consecutive rows, each thread a column
// of all of them, so that the rows' loads are in flight together and the
// column's window is read once.
#define RS_ROWS 4

extern "C" __global__ void mt_rs_xpass_plain(const TI *x, TC *tmp, const void *tabs, mt_rsgeo g, int rpb) {
  mt_rstab tb = rs_tables(tabs, g);
  long long rows = g.planes * g.ih;
  for (long long r0 = (long long)blockIdx.x * rpb; r0 < rows; r0 += (long long)gridDim.x * rpb) {
    for (long long o = threadIdx.x; o < g.ow; o += blockDim.x) {
      const TI *s = x + r0 * g.iw + tb.sx[o];
      const TC *w = tb.wx + o;
      int n = tb.nx[o];
      TC acc[RS_ROWS];
#pragma unroll
      for (int rr = 0; rr < RS_ROWS; rr++) acc[rr] = 0;
      for (int k = 0; k < n; k++) {
        TC wk = w[k * g.ow];
#pragma unroll
        for (int rr = 0; rr < RS_ROWS; rr++)
          if (rr < rpb && r0 + rr < rows) acc[rr] += wk * (TC)s[rr * g.iw + k];
      }
#pragma unroll
      for (int rr = 0; rr < RS_ROWS; rr++)
        if (rr < rpb && r0 + rr < rows) tmp[(r0 + rr) * g.ow + o] = acc[rr];
    }
  }
}

extern "C" __global__ void mt_rs_ypass_plain(const TC *tmp, TI *y, const void *tabs, mt_rsgeo g, int rpb) {
  mt_rstab tb = rs_tables(tabs, g);
  long long rows = g.planes * g.oh;
  for (long long r0 = (long long)blockIdx.x * rpb; r0 < rows; r0 += (long long)gridDim.x * rpb) {
    const TC *src[RS_ROWS], *w[RS_ROWS];
    int n[RS_ROWS], valid = 0;
    long long plane = r0 / g.oh, oy = r0 - plane * g.oh;
#pragma unroll
    for (int rr = 0; rr < RS_ROWS; rr++) { // output row r0 + rr: plane, oy
      bool ok = rr < rpb && r0 + rr < rows;
      src[rr] = tmp + (plane * g.ih + (ok ? tb.sy[oy] : 0)) * g.ow, w[rr] = tb.wy + oy * g.ky;
      n[rr] = ok ? tb.ny[oy] : 0, valid |= ok << rr;
      if (++oy == g.oh) oy = 0, plane++;
    }
    for (long long xo = threadIdx.x; xo < g.ow; xo += blockDim.x) {
      TC acc[RS_ROWS];
#pragma unroll
      for (int rr = 0; rr < RS_ROWS; rr++) acc[rr] = 0;
      for (int k = 0; k < g.ky; k++) {
#pragma unroll
        for (int rr = 0; rr < RS_ROWS; rr++)
          if (k < n[rr]) acc[rr] += w[rr][k] * src[rr][k * g.ow + xo];
      }
#pragma unroll
      for (int rr = 0; rr < RS_ROWS; rr++)
        if (valid >> rr & 1) y[(r0 + rr) * g.ow + xo] = STORE(acc[rr]);
    }
  }
}

// the adjoint (one table, TI == TC floating): gt (zeroed) += Wy^T gy, block = gy row
extern "C" __global__ void mt_rs_ypass_bwd(const TC *gy, TC *gt, const void *tabs, mt_rsgeo g) {
  mt_rstab tb = rs_tables(tabs, g);
  for (long long row = blockIdx.x; row < g.planes * g.oh; row += gridDim.x) {
    long long plane = row / g.oh, oy = row - plane * g.oh;
    TC *d = gt + (plane * g.ih + tb.sy[oy]) * g.ow;
    const TC *w = tb.wy + oy * g.ky;
    int n = tb.ny[oy];
    for (long long xo = threadIdx.x; xo < g.ow; xo += blockDim.x) {
      TC v = gy[row * g.ow + xo];
      for (int k = 0; k < n; k++) atomicAdd(d + k * g.ow + xo, w[k] * v);
    }
  }
}

// gx (zeroed) += gt Wx, block = gt row
extern "C" __global__ void mt_rs_xpass_bwd(const TC *gt, TC *gx, const void *tabs, mt_rsgeo g) {
  mt_rstab tb = rs_tables(tabs, g);
  for (long long row = blockIdx.x; row < g.planes * g.ih; row += gridDim.x) {
    TC *d = gx + row * g.iw;
    for (long long o = threadIdx.x; o < g.ow; o += blockDim.x) {
      TC v = gt[row * g.ow + o];
      for (int k = 0, n = tb.nx[o]; k < n; k++) atomicAdd(d + tb.sx[o] + k, tb.wx[k * g.ow + o] * v);
    }
  }
}
