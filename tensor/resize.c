/* resize.c -- image resampling (resize.h): checks the arguments, computes
 * the per-axis tap windows and weights of the interpolation (PyTorch's
 * formulas: upsample_*2d for the plain modes, _upsample_*_aa for the
 * antialiased ones) and runs the separable kernel (cpu/resize_kernels.c,
 * cuda/resize.c; on CUDA a plain resize's windows and weights are
 * computed on the GPU, by the same formulas: see cuda/resize.cu).
 * float16/bfloat16 are computed in float32. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu/resize_kernels.h"
#include "cuda/cuda_vision.h"
#include "cuda/mt_cuda.h"
#include "reduce_util.h"
#include "resize.h"


/* The weights of one axis: windows and weights of `out` outputs. */
typedef struct axis {
  int k;
  int64_t *start;
  int32_t *n;
  double *w;
} axis;

/* PyTorch's antialias filters: triangle, and cubic with a = -0.5 */
static double aa_filter(int mode, double x) {
  x = fabs(x);
  if (mode == MT_RS_BILINEAR) return x < 1 ? 1 - x : 0;
  const double a = -0.5;
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}

/* the cubic convolution of upsample_bicubic2d (A = -0.75) for |x| <= 1 and 1 < |x| < 2 */
static double cubic1(double x, double A) { return ((A + 2) * x - (A + 3)) * x * x + 1; }
static double cubic2(double x, double A) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; }

/* the number of taps an output of the axis in -> out needs at most */
static int taps_of(int64_t in, int64_t out, int mode, bool aa) {
  if (mode <= MT_RS_NEAREST_EXACT) return 1;
  if (!aa) return mode == MT_RS_BILINEAR ? 2 : 4;
  double scale = (double)in / (double)out, support = (mode == MT_RS_BILINEAR ? 1.0 : 2.0) * (scale >= 1 ? scale : 1);
  return (int)ceil(support) * 2 + 1;
}

/* antialiased window of output o into s, n, w (k slots). cuda/resize.cu
 * repeats this and plain_window for the GPU's tables: change both. */
static void aa_window(int64_t in, int64_t out, int mode, int64_t o, int64_t *s, int32_t *n, double *w) {
  double scale = (double)in / (double)out, sup = (mode == MT_RS_BILINEAR ? 1.0 : 2.0) * (scale >= 1 ? scale : 1);
  double inv = scale >= 1 ? 1 / scale : 1, center = scale * ((double)o + 0.5), total = 0;
  int64_t lo = (int64_t)(center - sup + 0.5), hi = (int64_t)(center + sup + 0.5);
  if (lo < 0) lo = 0;
  if (hi > in) hi = in;
  for (int64_t j = 0; j < hi - lo; j++) total += w[j] = aa_filter(mode, ((double)(j + lo) - center + 0.5) * inv);
  for (int64_t j = 0; j < hi - lo; j++) w[j] = total != 0 ? w[j] / total : 0;
  *s = lo, *n = (int32_t)(hi - lo);
}

/* plain (align_corners=false) window of output o: taps clamped to the
 * axis, the weights of equal taps added */
static void plain_window(int64_t in, int64_t out, int mode, int64_t o, int64_t *s, int32_t *n, double *w) {
  if (mode <= MT_RS_NEAREST_EXACT) {
    float scale = (float)in / (float)out, f = mode == MT_RS_NEAREST ? (float)o : (float)o + 0.5f;
    int64_t i = (int64_t)floorf(f * scale);
    *s = i < in - 1 ? i : in - 1, *n = 1, w[0] = 1;
    return;
  }
  double scale = (double)in / (double)out, src = scale * ((double)o + 0.5) - 0.5, tw[4];
  int64_t taps[4], nt;
  if (mode == MT_RS_BILINEAR) {
    if (src < 0) src = 0;
    int64_t i0 = (int64_t)src;
    double l = src - (double)i0;
    taps[0] = i0, taps[1] = i0 + (i0 < in - 1), tw[0] = 1 - l, tw[1] = l, nt = 2;
  } else {
    double f = floor(src), t = src - f;
    const double A = -0.75;
    for (int k = 0; k < 4; k++) taps[k] = (int64_t)f - 1 + k;
    tw[0] = cubic2(t + 1, A), tw[1] = cubic1(t, A), tw[2] = cubic1(1 - t, A), tw[3] = cubic2(2 - t, A), nt = 4;
  }
  int64_t lo = in, hi = -1;
  for (int k = 0; k < nt; k++) {
    taps[k] = taps[k] < 0 ? 0 : taps[k] > in - 1 ? in - 1 : taps[k];
    if (taps[k] < lo) lo = taps[k];
    if (taps[k] > hi) hi = taps[k];
  }
  for (int64_t j = 0; j <= hi - lo; j++) w[j] = 0;
  for (int k = 0; k < nt; k++) w[taps[k] - lo] += tw[k];
  *s = lo, *n = (int32_t)(hi - lo + 1);
}

/* fills table t (out entries, k slots each) of a for in -> out, starts
 * shifted by off */
static void fill_axis(axis *a, int64_t t, int64_t in, int64_t out, int64_t off, int mode, bool aa) {
  for (int64_t o = 0; o < out; o++) {
    int64_t i = t * out + o;
    double *w = a->w + i * a->k;
    memset(w, 0, sizeof(double) * (size_t)a->k);
    if (aa && mode >= MT_RS_BILINEAR) aa_window(in, out, mode, o, &a->start[i], &a->n[i], w);
    else plain_window(in, out, mode, o, &a->start[i], &a->n[i], w);
    a->start[i] += off;
  }
}

static mt_status axis_alloc(axis *a, int64_t ntab, int64_t out, int k) {
  a->k = k;
  a->start = malloc(sizeof(int64_t) * (size_t)(ntab * out));
  a->n = malloc(sizeof(int32_t) * (size_t)(ntab * out));
  a->w = malloc(sizeof(double) * (size_t)(ntab * out * k));
  return a->start && a->n && a->w ? MT_OK : mt_fail(MT_ENOMEM, "resize: out of memory for the weights");
}

static void axis_free(axis *a) { free(a->start), free(a->n), free(a->w); }

/* the checks every form shares: rank, dtype, mode, sizes */
static mt_status check(const char *op, const mt_tensor *x, int minrank, int64_t oh, int64_t ow, int mode) {
  char b[96];
  if (x->ndim < minrank)
    return mt_fail(MT_ESHAPE, "%s: expected an image of at least %d dims [..., H, W], got shape %s", op, minrank,
                   mt_shape_str(x->shape, x->ndim, b, sizeof b));
  mt_dtype dt = (mt_dtype)x->dtype;
  if (dt != MT_UINT8 && !mt_is_floating(dt))
    return mt_fail(MT_EDTYPE, "%s: expected a uint8 or floating image, got %s", op, mt_dtype_name(dt));
  if (mode < 0 || mode >= MT_RS_NMODES) return mt_fail(MT_EARG, "%s: unknown interpolation mode %d", op, mode);
  if (oh < 1 || ow < 1)
    return mt_fail(MT_EARG, "%s: the output size must be positive, got %lld x %lld", op, (long long)oh, (long long)ow);
  if (x->shape[x->ndim - 2] < 1 || x->shape[x->ndim - 1] < 1)
    return mt_fail(MT_ESHAPE, "%s: the image has no pixels (shape %s)", op,
                   mt_shape_str(x->shape, x->ndim, b, sizeof b));
  return MT_OK;
}

/* runs plan p (or, on CUDA and given, the plain resize r, whose tables
 * the GPU makes) from x into a new [lead..., oh, ow] tensor *out (x's
 * dtype) */
static mt_status run(const char *op, const mt_tensor *x, mt_rs_plan *p, const mt_rs_shape *r, mt_tensor **out) {
  mt_tensor *u = NULL, *c = NULL, *y = NULL, *res = NULL;
  mt_dtype dt = (mt_dtype)x->dtype;
  bool cuda = mt_tdevice(x).type == MT_CUDA;
  int64_t ys[MT_MAXDIM], planes = r ? r->planes : p->planes;
  memcpy(ys, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  ys[x->ndim - 2] = r ? r->oh : p->oh, ys[x->ndim - 1] = r ? r->ow : p->ow;
  mt_status st = dt == MT_UINT8 ? mt_contiguous(x, &c) : mt_upcast_half(x, &u);
  if (!st && !c) st = mt_contiguous(u, &c);
  if (!st) st = mt_empty(ys, x->ndim, (mt_dtype)c->dtype, mt_tdevice(x), &y);
  if (!st && planes > 0 && cuda)
    st = r ? mt_cuda_resize_plain(r, false, c, y) : mt_cuda_resize(p, false, c, y);
  else if (!st && planes > 0)
    st = mt_cpu_resize((mt_dtype)c->dtype, p, mt_data(c), mt_data(y));
  if (!st) st = mt_to_dtype(y, dt, false, &res);
  mt_release(u), mt_release(c), mt_release(y);
  return st ? st : mt_deliver(op, res, out);
}

static int64_t lead_planes(const mt_tensor *x) {
  int64_t n = 1;
  for (int i = 0; i < x->ndim - 2; i++) n *= x->shape[i];
  return n;
}

/* the plan of a plain resize ih x iw -> oh x ow (one table) */
static mt_status plain_plan(int64_t planes, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int mode, bool aa,
                            axis *ax, axis *ay, int64_t *zero, int64_t *rows, mt_rs_plan *p) {
  mt_status st = axis_alloc(ax, 1, ow, taps_of(iw, ow, mode, aa));
  if (!st) st = axis_alloc(ay, 1, oh, taps_of(ih, oh, mode, aa));
  if (st) return st;
  fill_axis(ax, 0, iw, ow, 0, mode, aa);
  fill_axis(ay, 0, ih, oh, 0, mode, aa);
  *zero = 0, *rows = ih;
  *p = (mt_rs_plan){.planes = planes, .group = planes > 0 ? planes : 1, .ntab = 1, .ih = ih, .iw = iw, .oh = oh,
                    .ow = ow, .kx = ax->k, .ky = ay->k, .row0 = zero, .nrows = rows, .sx = ax->start, .sy = ay->start,
                    .nx = ax->n, .ny = ay->n, .wx = ax->w, .wy = ay->w};
  return MT_OK;
}

/* The plain resize of x to oh x ow on CUDA, where no host plan is needed. */
static mt_rs_shape plain_shape(int64_t planes, int64_t ih, int64_t iw, int64_t oh, int64_t ow, int mode, bool aa) {
  return (mt_rs_shape){planes, ih, iw, oh, ow, mode, taps_of(iw, ow, mode, aa), taps_of(ih, oh, mode, aa), aa};
}

mt_status mt_image_resize(const mt_tensor *x, int64_t oh, int64_t ow, int mode, bool antialias, mt_tensor **out) {
  const char *op = "resize";
  mt_status st = check(op, x, 2, oh, ow, mode);
  if (st) return st;
  int64_t ih = x->shape[x->ndim - 2], iw = x->shape[x->ndim - 1], zero, rows;
  if (mt_tdevice(x).type == MT_CUDA) {
    mt_rs_shape r = plain_shape(lead_planes(x), ih, iw, oh, ow, mode, antialias);
    return run(op, x, NULL, &r, out);
  }
  axis ax = {0}, ay = {0};
  mt_rs_plan p;
  st = plain_plan(lead_planes(x), ih, iw, oh, ow, mode, antialias, &ax, &ay, &zero, &rows, &p);
  if (!st) st = run(op, x, &p, NULL, out);
  axis_free(&ax), axis_free(&ay);
  return st;
}

mt_status mt_image_resize_backward(const mt_tensor *g, int64_t ih, int64_t iw, int mode, bool antialias,
                                   mt_tensor **out) {
  const char *op = "resize_backward";
  if (!mt_is_floating((mt_dtype)g->dtype))
    return mt_fail(MT_EDTYPE, "%s: needs a floating gradient, got %s", op, mt_dtype_name((mt_dtype)g->dtype));
  mt_status st = check(op, g, 2, ih, iw, mode);
  if (st) return st;
  int64_t oh = g->shape[g->ndim - 2], ow = g->shape[g->ndim - 1], zero, rows, gs[MT_MAXDIM];
  bool cuda = mt_tdevice(g).type == MT_CUDA;
  mt_rs_shape r = plain_shape(lead_planes(g), ih, iw, oh, ow, mode, antialias);
  axis ax = {0}, ay = {0};
  mt_rs_plan p;
  mt_tensor *u = NULL, *c = NULL, *res = NULL, *gx = NULL;
  memcpy(gs, g->shape, sizeof(int64_t) * (size_t)g->ndim);
  gs[g->ndim - 2] = ih, gs[g->ndim - 1] = iw;
  if (!cuda) st = plain_plan(lead_planes(g), ih, iw, oh, ow, mode, antialias, &ax, &ay, &zero, &rows, &p);
  if (!st) st = mt_upcast_half(g, &u);
  if (!st) st = mt_contiguous(u, &c);
  if (!st) st = mt_empty(gs, g->ndim, (mt_dtype)c->dtype, mt_tdevice(g), &gx);
  if (!st && r.planes > 0)
    st = cuda ? mt_cuda_resize_plain(&r, true, c, gx)
              : mt_cpu_resize_backward((mt_dtype)c->dtype, &p, mt_data(c), mt_data(gx));
  if (!st) st = mt_to_dtype(gx, (mt_dtype)g->dtype, false, &res);
  axis_free(&ax), axis_free(&ay);
  mt_release(u), mt_release(c), mt_release(gx);
  return st ? st : mt_deliver(op, res, out);
}

/* the boxes as n rows of {top, left, height, width, hflip, vflip} on the
 * host (given as n x 4, or n x 6 with the flip flags), checked against the
 * image ih x iw */
static mt_status read_boxes(const char *op, const mt_tensor *boxes, int64_t n, int64_t ih, int64_t iw, int64_t *bx) {
  char b[96];
  if (boxes->dtype != MT_INT64 || boxes->ndim != 2 || boxes->shape[0] != n ||
      (boxes->shape[1] != 4 && boxes->shape[1] != 6))
    return mt_fail(MT_EARG, "%s: boxes must be an int64 tensor of shape [%lld, 4] (or [%lld, 6] with flip flags), got "
                   "%s of shape %s", op, (long long)n, (long long)n, mt_dtype_name((mt_dtype)boxes->dtype),
                   mt_shape_str(boxes->shape, boxes->ndim, b, sizeof b));
  int64_t cols = boxes->shape[1];
  mt_tensor *h = NULL, *c = NULL;
  mt_status st = MT_OK;
  if (mt_tdevice(boxes).type == MT_CUDA) {
    int64_t s[2] = {n, cols};
    st = mt_empty(s, 2, MT_INT64, mt_cpu(), &h);
    if (!st) st = mt_copy_(h, boxes);
  }
  if (!st) st = mt_contiguous(h ? h : boxes, &c);
  for (int64_t i = 0; i < n && !st; i++) {
    const int64_t *src = (const int64_t *)mt_data(c) + i * cols;
    int64_t *q = bx + 6 * i;
    for (int k = 0; k < 6; k++) q[k] = k < cols ? src[k] : 0;
  }
  mt_release(h), mt_release(c);
  for (int64_t i = 0; i < n && !st; i++) {
    const int64_t *q = bx + 6 * i;
    if (q[0] < 0 || q[1] < 0 || q[2] < 1 || q[3] < 1 || q[0] + q[2] > ih || q[1] + q[3] > iw)
      st = mt_fail(MT_EARG, "%s: box %lld (top %lld, left %lld, height %lld, width %lld) is not inside the %lld x %lld "
                   "image", op, (long long)i + 1, (long long)q[0], (long long)q[1], (long long)q[2], (long long)q[3],
                   (long long)ih, (long long)iw);
  }
  return st;
}

/* reverses the order of table t's out entries of a (a flip of the result:
 * the filters are symmetric, so output o of the flip is output out-1-o) */
static void flip_axis(axis *a, int64_t t, int64_t out) {
  for (int64_t i = t * out, j = t * out + out - 1; i < j; i++, j--) {
    int64_t s = a->start[i];
    int32_t m = a->n[i];
    a->start[i] = a->start[j], a->n[i] = a->n[j], a->start[j] = s, a->n[j] = m;
    for (int k = 0; k < a->k; k++) {
      double w = a->w[i * a->k + k];
      a->w[i * a->k + k] = a->w[j * a->k + k], a->w[j * a->k + k] = w;
    }
  }
}

mt_status mt_image_crop_resize(const mt_tensor *x, const mt_tensor *boxes, int64_t oh, int64_t ow, int mode,
                               bool antialias, mt_tensor **out) {
  const char *op = "crop_resize";
  mt_status st = check(op, x, 3, oh, ow, mode);
  if (st) return st;
  int64_t n = x->shape[0], ih = x->shape[x->ndim - 2], iw = x->shape[x->ndim - 1], planes = lead_planes(x);
  int64_t *bx = malloc(sizeof(int64_t) * (size_t)(6 * n + 1)), *row0 = malloc(sizeof(int64_t) * (size_t)(2 * n + 1));
  axis ax = {0}, ay = {0};
  if (!bx || !row0) st = mt_fail(MT_ENOMEM, "%s: out of memory", op);
  if (!st) st = read_boxes(op, boxes, n, ih, iw, bx);
  int kx = 1, ky = 1;
  for (int64_t i = 0; i < n && !st; i++) {
    int a = taps_of(bx[6 * i + 3], ow, mode, antialias), b = taps_of(bx[6 * i + 2], oh, mode, antialias);
    kx = a > kx ? a : kx, ky = b > ky ? b : ky;
  }
  if (!st) st = axis_alloc(&ax, n, ow, kx);
  if (!st) st = axis_alloc(&ay, n, oh, ky);
  if (!st && n > 0) {
    for (int64_t i = 0; i < n; i++) {
      const int64_t *q = bx + 6 * i;
      fill_axis(&ax, i, q[3], ow, q[1], mode, antialias);
      fill_axis(&ay, i, q[2], oh, 0, mode, antialias);
      if (q[4]) flip_axis(&ax, i, ow);
      if (q[5]) flip_axis(&ay, i, oh);
      row0[i] = q[0], row0[n + i] = q[2];
    }
    mt_rs_plan p = {.planes = planes, .group = planes / n, .ntab = n, .ih = ih, .iw = iw, .oh = oh, .ow = ow,
                    .kx = kx, .ky = ky, .row0 = row0, .nrows = row0 + n, .sx = ax.start, .sy = ay.start, .nx = ax.n,
                    .ny = ay.n, .wx = ax.w, .wy = ay.w};
    st = run(op, x, &p, NULL, out);
  } else if (!st) {
    mt_rs_plan p = {.planes = 0, .group = 1, .oh = oh, .ow = ow};
    st = run(op, x, &p, NULL, out);
  }
  free(bx), free(row0);
  axis_free(&ax), axis_free(&ay);
  return st;
}
