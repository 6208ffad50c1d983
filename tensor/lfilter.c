/* lfilter.c -- the audio filter ops (audio.h): argument checks and the
 * dispatch to the CPU loops (cpu/lfilter_kernels.c) or the CUDA kernels
 * (cuda/lfilter.c). Nothing here knows autograd: graph/audio.c records
 * these ops. */
#include <stdio.h>

#include "audio.h"
#include "cuda/cuda_audio.h"

static char *shp(const mt_tensor *t, char *buf) { return mt_shape_str(t->shape, t->ndim, buf, 96); }

/* t is float32 or float64 of dtype dt on dev (what names it in messages). */
static mt_status check_like(const char *op, const char *what, const mt_tensor *t, mt_dtype dt, mt_device dev) {
  if (t->dtype != MT_FLOAT32 && t->dtype != MT_FLOAT64)
    return mt_fail(MT_EDTYPE, "%s: %s must be float32 or float64, got %s", op, what,
                   mt_dtype_name((mt_dtype)t->dtype));
  if ((mt_dtype)t->dtype != dt)
    return mt_fail(MT_EDTYPE, "%s: %s is %s but the waveform is %s", op, what, mt_dtype_name((mt_dtype)t->dtype),
                   mt_dtype_name(dt));
  if (!mt_same_device(mt_tdevice(t), dev)) return mt_fail(MT_EDEVICE, "%s: %s is on another device", op, what);
  return MT_OK;
}

/* x [N, C, T], a and b [C, K] (one shape), zi NULL or [N, C, 2(K-1)]. */
static mt_status check_filter(const mt_tensor *x, const mt_tensor *a, const mt_tensor *b, const mt_tensor *zi) {
  const char *op = "lfilter";
  char s1[96], s2[96];
  mt_dtype dt = (mt_dtype)x->dtype;
  mt_device dev = mt_tdevice(x);
  if (x->ndim != 3) return mt_fail(MT_ESHAPE, "%s: waveform must be [N, C, T], got %s", op, shp(x, s1));
  mt_status st = check_like(op, "waveform", x, dt, dev);
  if (!st) st = check_like(op, "a_coeffs", a, dt, dev);
  if (!st) st = check_like(op, "b_coeffs", b, dt, dev);
  if (st) return st;
  if (a->ndim != 2 || b->ndim != 2 || a->shape[0] != b->shape[0] || a->shape[1] != b->shape[1] || a->shape[1] < 1)
    return mt_fail(MT_ESHAPE, "%s: a_coeffs %s and b_coeffs %s must be one shape [C, K], K >= 1", op, shp(a, s1),
                   shp(b, s2));
  if (a->shape[0] != x->shape[1])
    return mt_fail(MT_ESHAPE, "%s: %lld filters for waveform %s with %lld channels", op, (long long)a->shape[0],
                   shp(x, s1), (long long)x->shape[1]);
  if (!zi) return MT_OK;
  if ((st = check_like(op, "state", zi, dt, dev))) return st;
  if (zi->ndim != 3 || zi->shape[0] != x->shape[0] || zi->shape[1] != x->shape[1] ||
      zi->shape[2] != 2 * (a->shape[1] - 1))
    return mt_fail(MT_ESHAPE, "%s: state %s must be [%lld, %lld, %lld] for waveform %s", op, shp(zi, s1),
                   (long long)x->shape[0], (long long)x->shape[1], (long long)(2 * (a->shape[1] - 1)), shp(x, s2));
  return MT_OK;
}

/* Every a0 of a (contiguous) is nonzero; a CUDA a is read through a host
 * copy (a few coefficients: one small synchronous copy per filter call). */
static mt_status check_a0(const mt_tensor *a) {
  if (mt_tdevice(a).type == MT_CUDA) {
    mt_tensor *h = NULL;
    mt_status st = mt_empty(a->shape, a->ndim, (mt_dtype)a->dtype, mt_cpu(), &h);
    if (!st) st = mt_copy_(h, a);
    if (!st) st = check_a0(h);
    mt_release(h);
    return st;
  }
  for (int64_t c = 0; c < a->shape[0]; c++) {
    double a0 = a->dtype == MT_FLOAT64 ? ((const double *)mt_data(a))[c * a->shape[1]]
                                       : ((const float *)mt_data(a))[c * a->shape[1]];
    if (a0 == 0) return mt_fail(MT_EARG, "lfilter: a_coeffs[%lld][1] (a0) is 0: the filter is undefined", (long long)c + 1);
  }
  return MT_OK;
}

/* New contiguous references to the n tensors ts (NULL stays NULL). */
static mt_status contig(const mt_tensor *const *ts, mt_tensor **cs, int n) {
  mt_status st = MT_OK;
  for (int i = 0; i < n; i++) cs[i] = NULL;
  for (int i = 0; i < n && !st; i++)
    if (ts[i]) st = mt_contiguous(ts[i], &cs[i]);
  return st;
}

static void release(mt_tensor **cs, int n) {
  for (int i = 0; i < n; i++) mt_release(cs[i]);
}

mt_status mt_lfilter(const mt_tensor *x, const mt_tensor *a, const mt_tensor *b, const mt_tensor *zi,
                     mt_lf_mode mode, bool reverse, mt_tensor **out) {
  mt_status st = check_filter(x, a, b, zi);
  if (st) return st;
  if (mode < MT_LF_FULL || mode > MT_LF_IIR) return mt_fail(MT_EARG, "lfilter: unknown mode %d", (int)mode);
  mt_lf_geo g = {x->shape[0], x->shape[1], x->shape[2], a->shape[1], (int)mode, reverse};
  const mt_tensor *ins[4] = {x, a, b, zi};
  mt_tensor *c[4], *y = NULL;
  st = contig(ins, c, 4);
  bool cpu = mt_tdevice(x).type != MT_CUDA;
  if (!st && mode != MT_LF_FIR) st = check_a0(c[1]);
  if (!st) st = mt_empty(x->shape, 3, (mt_dtype)x->dtype, mt_tdevice(x), &y);
  if (!st && g.N * g.C * g.len > 0) {
    if (cpu)
      st = mt_cpu_lfilter((mt_dtype)x->dtype, &g, mt_data(c[0]), mt_data(c[1]), mt_data(c[2]),
                          c[3] ? mt_data(c[3]) : NULL, mt_data(y));
    else
      st = mt_cuda_lfilter(&g, c[0], c[1], c[2], c[3], y);
  }
  release(c, 4);
  if (st) {
    mt_release(y);
    return st;
  }
  return mt_deliver("lfilter", y, out);
}

mt_status mt_lfilter_corr(const mt_tensor *w, const mt_tensor *x, int64_t K, bool reverse, mt_tensor **out) {
  const char *op = "lfilter_corr";
  char s1[96], s2[96];
  if (w->ndim != 3 || x->ndim != 3 || w->shape[0] != x->shape[0] || w->shape[1] != x->shape[1] ||
      w->shape[2] != x->shape[2])
    return mt_fail(MT_ESHAPE, "%s: w %s and x %s must be one shape [N, C, T]", op, shp(w, s1), shp(x, s2));
  if (K < 1) return mt_fail(MT_EARG, "%s: K must be >= 1, got %lld", op, (long long)K);
  mt_status st = check_like(op, "w", w, (mt_dtype)x->dtype, mt_tdevice(x));
  if (!st) st = check_like(op, "x", x, (mt_dtype)x->dtype, mt_tdevice(x));
  if (st) return st;
  mt_lf_geo g = {x->shape[0], x->shape[1], x->shape[2], K, 0, reverse};
  const mt_tensor *ins[2] = {w, x};
  mt_tensor *c[2], *y = NULL;
  int64_t ys[2] = {g.C, K};
  st = contig(ins, c, 2);
  if (!st) st = mt_empty(ys, 2, (mt_dtype)x->dtype, mt_tdevice(x), &y);
  if (!st && g.C > 0) {
    if (mt_tdevice(x).type != MT_CUDA)
      st = mt_cpu_lfilter_corr((mt_dtype)x->dtype, &g, mt_data(c[0]), mt_data(c[1]), mt_data(y));
    else
      st = mt_cuda_lfilter_corr(&g, c[0], c[1], y);
  }
  release(c, 2);
  if (st) {
    mt_release(y);
    return st;
  }
  return mt_deliver(op, y, out);
}
