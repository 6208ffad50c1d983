/* roi.c -- RoI Align and RoI pooling (vision.h): argument checks, the
 * problem's geometry, and the dispatch to the CPU loops (cpu/roi_kernels.c)
 * or the CUDA kernels (cuda/roi.c). float16 and bfloat16 run in float32.
 * Nothing here knows autograd: graph/vision.c records these ops. */
#include <stdio.h>

#include "cuda/cuda_vision.h"
#include "vision.h"

static char *shp(const int64_t *s, int nd, char *buf) { return mt_shape_str(s, nd, buf, 96); }

/* The compute dtype of a floating dtype (16-bit floats: float32). */
static mt_dtype compute_dt(mt_dtype dt) { return dt == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32; }

/* Checks rois: (K, 5), floating, on dev. */
static mt_status check_rois(const char *op, const mt_tensor *rois, mt_device dev) {
  char a[96];
  if (rois->ndim != 2 || rois->shape[1] != 5)
    return mt_fail(MT_ESHAPE, "%s: rois must be a K x 5 tensor (batch, x1, y1, x2, y2), got %s", op,
                   shp(rois->shape, rois->ndim, a));
  if (!mt_is_floating((mt_dtype)rois->dtype))
    return mt_fail(MT_EDTYPE, "%s: rois must be floating, got %s", op, mt_dtype_name((mt_dtype)rois->dtype));
  if (!mt_same_device(mt_tdevice(rois), dev))
    return mt_fail(MT_EDEVICE, "%s: input and rois must be on the same device", op);
  return MT_OK;
}

/* Every batch number of r (contiguous, compute dtype, CPU) is in 1..N. */
static mt_status check_batch(const char *op, const mt_tensor *r, int64_t N) {
  for (int64_t k = 0; k < r->shape[0]; k++) {
    double b = r->dtype == MT_FLOAT64 ? ((const double *)mt_data(r))[k * 5] : ((const float *)mt_data(r))[k * 5];
    if (!(b >= 1 && (int64_t)b <= N))
      return mt_fail(MT_EINDEX, "%s: roi %lld has batch index %g, outside 1..%lld (the batch column is 1-based)", op,
                     (long long)k + 1, b, (long long)N);
  }
  return MT_OK;
}

static mt_status check_opts(const char *op, const mt_roi_opts *o) {
  if (o->ph < 1 || o->pw < 1)
    return mt_fail(MT_EARG, "%s: output_size must be positive, got (%lld, %lld)", op, (long long)o->ph,
                   (long long)o->pw);
  if (!(o->scale > 0) && !(o->scale == 0))
    return mt_fail(MT_EARG, "%s: spatial_scale must be a finite number >= 0, got %g", op, o->scale);
  return MT_OK;
}

/* The input (or the shape of the gradient's result): (N, C, H, W), every
 * dim positive, floating. */
static mt_status check_image(const char *op, const char *what, const int64_t *s, int nd, mt_dtype dt) {
  char a[96];
  if (nd != 4) return mt_fail(MT_ESHAPE, "%s: %s must be 4-D (N, C, H, W), got %s", op, what, shp(s, nd, a));
  for (int i = 0; i < 4; i++)
    if (s[i] < 1) return mt_fail(MT_ESHAPE, "%s: %s %s has an empty dimension", op, what, shp(s, nd, a));
  if (!mt_is_floating(dt)) return mt_fail(MT_EDTYPE, "%s: %s must be floating, got %s", op, what, mt_dtype_name(dt));
  return MT_OK;
}

static mt_roi_geo geo_of(const mt_roi_opts *o, int64_t K, const int64_t *xs) {
  mt_roi_geo g = {K, xs[0], xs[1], xs[2], xs[3], o->ph, o->pw, o->sampling_ratio, o->aligned, o->scale};
  return g;
}

/* Contiguous copies of a and (unless NULL) rois in the compute dtype cdt
 * (new references), rois' batch numbers checked on the CPU. */
static mt_status inputs(const char *op, const mt_tensor *a, const mt_tensor *rois, mt_dtype cdt, int64_t N,
                        mt_tensor **ac, mt_tensor **rc) {
  mt_tensor *t = NULL;
  *ac = NULL;
  if (rc) *rc = NULL;
  mt_status st = mt_to_dtype(a, cdt, false, &t);
  if (!st) st = mt_contiguous(t, ac);
  mt_release(t), t = NULL;
  if (!st && rois) st = mt_to_dtype(rois, cdt, false, &t);
  if (!st && rois) st = mt_contiguous(t, rc);
  mt_release(t);
  if (!st && rois && mt_tdevice(rois).type == MT_CPU) st = check_batch(op, *rc, N);
  if (st) {
    mt_release(*ac), *ac = NULL;
    if (rc) mt_release(*rc), *rc = NULL;
  }
  return st;
}

/* Runs kind (cuda_vision.h's numbering) on the CPU or the GPU into y (and
 * argmax), both allocated here in the compute dtype; then hands y over in
 * dtype dt under the out convention. */
static mt_status run(int kind, const char *op, const mt_roi_geo *g, const mt_tensor *a, const mt_tensor *b,
                     const int64_t *ys, mt_dtype dt, mt_tensor **out, mt_tensor **argmax) {
  mt_dtype cdt = (mt_dtype)a->dtype;
  mt_device dev = mt_tdevice(a);
  mt_tensor *y = NULL, *ix = NULL, *r = NULL;
  mt_status st = mt_empty(ys, 4, cdt, dev, &y);
  if (!st && kind == 2) st = mt_empty(ys, 4, MT_INT64, dev, &ix);
  if (!st && dev.type == MT_CUDA) st = mt_cuda_roi(kind, g, a, b, y, ix);
  else if (!st && kind == 0) st = mt_cpu_roi_align(cdt, g, mt_data(a), mt_data(b), mt_data(y));
  else if (!st && kind == 1) st = mt_cpu_roi_align_backward(cdt, g, mt_data(a), mt_data(b), mt_data(y));
  else if (!st && kind == 2) st = mt_cpu_roi_pool(cdt, g, mt_data(a), mt_data(b), mt_data(y), (int64_t *)mt_data(ix));
  else if (!st) st = mt_cpu_roi_pool_backward(cdt, g, mt_data(a), (const int64_t *)mt_data(b), mt_data(y));
  if (!st && dt != cdt) st = mt_to_dtype(y, dt, false, &r);
  else if (!st) r = mt_retain(y);
  mt_release(y);
  if (st) {
    mt_release(ix);
    return st;
  }
  if (argmax) *argmax = ix;
  return mt_deliver(op, r, out);
}

/* Shared by the forwards: checks, then run(kind). */
static mt_status forward(int kind, const char *op, const mt_tensor *x, const mt_tensor *rois, const mt_roi_opts *o,
                         mt_tensor **out, mt_tensor **argmax) {
  mt_status st = check_image(op, "input", x->shape, x->ndim, (mt_dtype)x->dtype);
  if (!st) st = check_rois(op, rois, mt_tdevice(x));
  if (!st) st = check_opts(op, o);
  if (st) return st;
  mt_roi_geo g = geo_of(o, rois->shape[0], x->shape);
  int64_t ys[4] = {g.K, g.C, g.ph, g.pw};
  mt_tensor *xc = NULL, *rc = NULL;
  st = inputs(op, x, rois, compute_dt((mt_dtype)x->dtype), g.N, &xc, &rc);
  if (!st) st = run(kind, op, &g, xc, rc, ys, (mt_dtype)x->dtype, out, argmax);
  mt_release(xc), mt_release(rc);
  return st;
}

mt_status mt_roi_align(const mt_tensor *x, const mt_tensor *rois, const mt_roi_opts *o, mt_tensor **out) {
  return forward(0, "roi_align", x, rois, o, out, NULL);
}

mt_status mt_roi_pool(const mt_tensor *x, const mt_tensor *rois, const mt_roi_opts *o, mt_tensor **out,
                      mt_tensor **argmax) {
  return forward(2, "roi_pool", x, rois, o, out, argmax);
}

/* g must be (K, C, ph, pw) for rois' K and x_shape's C. */
static mt_status check_grad(const char *op, const mt_tensor *g, int64_t K, const int64_t *xs, const mt_roi_opts *o) {
  char a[96], b[96];
  int64_t want[4] = {K, xs[1], o->ph, o->pw};
  if (!mt_is_floating((mt_dtype)g->dtype))
    return mt_fail(MT_EDTYPE, "%s: grad must be floating, got %s", op, mt_dtype_name((mt_dtype)g->dtype));
  if (g->ndim != 4 || g->shape[0] != want[0] || g->shape[1] != want[1] || g->shape[2] != want[2] ||
      g->shape[3] != want[3])
    return mt_fail(MT_ESHAPE, "%s: grad must be %s, got %s", op, shp(want, 4, a), shp(g->shape, g->ndim, b));
  return MT_OK;
}

mt_status mt_roi_align_backward(const mt_tensor *g, const mt_tensor *rois, const int64_t *x_shape,
                                const mt_roi_opts *o, mt_tensor **out) {
  const char *op = "roi_align_backward";
  mt_status st = check_image(op, "the input shape", x_shape, 4, (mt_dtype)g->dtype);
  if (!st) st = check_opts(op, o);
  if (!st) st = check_rois(op, rois, mt_tdevice(g));
  if (!st) st = check_grad(op, g, rois->shape[0], x_shape, o);
  if (st) return st;
  mt_roi_geo geo = geo_of(o, rois->shape[0], x_shape);
  mt_tensor *gc = NULL, *rc = NULL;
  st = inputs(op, g, rois, compute_dt((mt_dtype)g->dtype), geo.N, &gc, &rc);
  if (!st) st = run(1, op, &geo, gc, rc, x_shape, (mt_dtype)g->dtype, out, NULL);
  mt_release(gc), mt_release(rc);
  return st;
}

/* argmax (contiguous, CPU) holds positions in 0..n (0: none). */
static mt_status check_argmax(const char *op, const mt_tensor *ix, int64_t n) {
  const int64_t *p = (const int64_t *)mt_data(ix);
  for (int64_t i = 0, m = mt_numel(ix); i < m; i++)
    if (p[i] < 0 || p[i] > n)
      return mt_fail(MT_EINDEX, "%s: argmax holds %lld, outside 0..%lld", op, (long long)p[i], (long long)n);
  return MT_OK;
}

mt_status mt_roi_pool_backward(const mt_tensor *g, const mt_tensor *argmax, const int64_t *x_shape, mt_tensor **out) {
  const char *op = "roi_pool_backward";
  char a[96], b[96];
  mt_status st = check_image(op, "the input shape", x_shape, 4, (mt_dtype)g->dtype);
  if (st) return st;
  if (g->ndim != 4 || g->shape[1] != x_shape[1] || argmax->dtype != MT_INT64 || argmax->ndim != 4 ||
      mt_numel(argmax) != mt_numel(g) || argmax->shape[0] != g->shape[0] || argmax->shape[2] != g->shape[2])
    return mt_fail(MT_ESHAPE, "%s: grad %s and argmax %s (int64) must have one shape (K, C, ph, pw)", op,
                   shp(g->shape, g->ndim, a), shp(argmax->shape, argmax->ndim, b));
  if (!mt_same_device(mt_tdevice(argmax), mt_tdevice(g)))
    return mt_fail(MT_EDEVICE, "%s: grad and argmax must be on the same device", op);
  mt_roi_opts o = {g->shape[2], g->shape[3], 0, false, 1};
  mt_roi_geo geo = geo_of(&o, g->shape[0], x_shape);
  mt_tensor *gc = NULL, *ic = NULL;
  st = inputs(op, g, NULL, compute_dt((mt_dtype)g->dtype), geo.N, &gc, NULL);
  if (!st) st = mt_contiguous(argmax, &ic);
  if (!st && mt_tdevice(ic).type == MT_CPU) st = check_argmax(op, ic, mt_checked_numel(x_shape, 4));
  if (!st) st = run(3, op, &geo, gc, ic, x_shape, (mt_dtype)g->dtype, out, NULL);
  mt_release(gc), mt_release(ic);
  return st;
}
