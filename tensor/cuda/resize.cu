// resize.cu -- the separable image resampling on CUDA (resize.c (cuda)
// prepends TI, the image type; TC, the compute type; STORE(v), the
// conversion of a computed value to TI): a pass along x into a buffer of TC,
// a pass along y into the output, and the adjoint's two passes with
// atomics. The tables (cpu/resize_kernels.h's plan) come packed: ints =
// row0, nrows, sx, sy, nx, ny; weights = wx, wy.

struct mt_rsgeo {
  long long planes, group, ih, iw, oh, ow;
  long long ntab, kx, ky;
};

// uint8 results: rounded half to even, clamped
__device__ __forceinline__ unsigned char rs_u8(float v) {
  int r = __float2int_rn(v);
  return (unsigned char)(r < 0 ? 0 : r > 255 ? 255 : r);
}

#define RS_LOOP(n)                                                                                                     \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x, step_ = (long long)gridDim.x * blockDim.x;     \
       i < (n); i += step_)

// tmp[plane][r][o] for r < nrows of the plane's table
extern "C" __global__ void mt_rs_xpass(const TI *x, TC *tmp, const long long *ints, const double *wts, mt_rsgeo g) {
  const long long *row0 = ints, *nrows = row0 + g.ntab, *sx = nrows + g.ntab;
  const long long *nx = sx + g.ntab * (g.ow + g.oh);
  RS_LOOP(g.planes * g.ih * g.ow) {
    long long o = i % g.ow, r = i / g.ow % g.ih, plane = i / (g.ow * g.ih), t = plane / g.group;
    if (r >= nrows[t]) continue;
    long long e = t * g.ow + o;
    const TI *s = x + (plane * g.ih + row0[t] + r) * g.iw + sx[e];
    const double *w = wts + e * g.kx;
    TC acc = 0;
    for (long long k = 0; k < nx[e]; k++) acc += (TC)w[k] * (TC)s[k];
    tmp[(plane * g.ih + r) * g.ow + o] = acc;
  }
}

extern "C" __global__ void mt_rs_ypass(const TC *tmp, TI *y, const long long *ints, const double *wts, mt_rsgeo g) {
  const long long *sy = ints + 2 * g.ntab + g.ntab * g.ow, *ny = sy + g.ntab * (g.oh + g.ow);
  const double *wy = wts + g.ntab * g.ow * g.kx;
  RS_LOOP(g.planes * g.oh * g.ow) {
    long long xo = i % g.ow, oy = i / g.ow % g.oh, plane = i / (g.ow * g.oh), t = plane / g.group;
    long long e = t * g.oh + oy;
    const TC *s = tmp + (plane * g.ih + sy[e]) * g.ow + xo;
    const double *w = wy + e * g.ky;
    TC acc = 0;
    for (long long k = 0; k < ny[e]; k++) acc += (TC)w[k] * s[k * g.ow];
    y[i] = STORE(acc);
  }
}

// the adjoint (one table, TI == TC floating): gt (zeroed) += Wy^T gy
extern "C" __global__ void mt_rs_ypass_bwd(const TC *gy, TC *gt, const long long *ints, const double *wts,
                                           mt_rsgeo g) {
  const long long *sy = ints + 2 + g.ow, *ny = sy + g.oh + g.ow;
  const double *wy = wts + g.ow * g.kx;
  RS_LOOP(g.planes * g.oh * g.ow) {
    long long xo = i % g.ow, oy = i / g.ow % g.oh, plane = i / (g.ow * g.oh);
    TC v = gy[i], *d = gt + (plane * g.ih + sy[oy]) * g.ow + xo;
    for (long long k = 0; k < ny[oy]; k++) atomicAdd(d + k * g.ow, (TC)wy[oy * g.ky + k] * v);
  }
}

// gx (zeroed) += gt Wx
extern "C" __global__ void mt_rs_xpass_bwd(const TC *gt, TC *gx, const long long *ints, const double *wts,
                                           mt_rsgeo g) {
  const long long *sx = ints + 2, *nx = sx + g.ow + g.oh;
  RS_LOOP(g.planes * g.ih * g.ow) {
    long long o = i % g.ow, r = i / g.ow;
    TC v = gt[i], *d = gx + r * g.iw + sx[o];
    for (long long k = 0; k < nx[o]; k++) atomicAdd(d + k, (TC)wts[o * g.kx + k] * v);
  }
}
