/* resize.c (cuda) -- the separable image resampling of tensor/resize.c on
 * CUDA tensors through resize.cu: the plan's tables are packed and copied
 * to the device, then one launch per pass (the adjoint: two passes with
 * atomics). Inputs are contiguous uint8, float32 or float64. */
#include <stdio.h>
#include <string.h>

#include "../cpu/resize_kernels.h"
#include "mt_cuda.h"

typedef unsigned long long dptr;

extern const char mt_cuda_resize_cu[];

/* Matches struct mt_rsgeo in resize.cu. */
typedef struct rsgeo {
  int64_t planes, group, ih, iw, oh, ow, ntab, kx, ky;
} rsgeo;

/* the plan's tables as a device int64 tensor (row0, nrows, sx, sy, nx, ny)
 * and a float64 tensor (wx, wy) */
static mt_status upload(const mt_rs_plan *p, mt_device dev, mt_tensor **ints, mt_tensor **wts) {
  int64_t T = p->ntab, ni = 2 * T + 2 * T * (p->ow + p->oh), nw = T * (p->ow * p->kx + p->oh * p->ky);
  mt_tensor *hi = NULL, *hw = NULL;
  mt_status st = mt_empty(&ni, 1, MT_INT64, mt_cpu(), &hi);
  if (!st) st = mt_empty(&nw, 1, MT_FLOAT64, mt_cpu(), &hw);
  if (!st) {
    int64_t *q = (int64_t *)mt_data(hi);
    memcpy(q, p->row0, sizeof(int64_t) * (size_t)T), q += T;
    memcpy(q, p->nrows, sizeof(int64_t) * (size_t)T), q += T;
    memcpy(q, p->sx, sizeof(int64_t) * (size_t)(T * p->ow)), q += T * p->ow;
    memcpy(q, p->sy, sizeof(int64_t) * (size_t)(T * p->oh)), q += T * p->oh;
    for (int64_t i = 0; i < T * p->ow; i++) *q++ = p->nx[i];
    for (int64_t i = 0; i < T * p->oh; i++) *q++ = p->ny[i];
    double *w = (double *)mt_data(hw);
    memcpy(w, p->wx, sizeof(double) * (size_t)(T * p->ow * p->kx));
    memcpy(w + T * p->ow * p->kx, p->wy, sizeof(double) * (size_t)(T * p->oh * p->ky));
  }
  if (!st) st = mt_empty(&ni, 1, MT_INT64, dev, ints);
  if (!st) st = mt_empty(&nw, 1, MT_FLOAT64, dev, wts);
  if (!st) st = mt_copy_(*ints, hi);
  if (!st) st = mt_copy_(*wts, hw);
  mt_release(hi), mt_release(hw);
  return st;
}

static mt_status launch(int dev, const char *defs, const char *name, int64_t n, dptr a, dptr b, dptr ints, dptr wts,
                        rsgeo *g) {
  void *fn = NULL;
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_resize_cu, name, &fn);
  if (st) return st;
  void *args[] = {&a, &b, &ints, &wts, g};
  int64_t blocks = (n + 255) / 256;
  return mt_cuda_launch_grid(dev, fn, blocks < 65536 ? blocks : 65536, 256, args, "resize");
}

mt_status mt_cuda_resize(const mt_rs_plan *p, bool back, const mt_tensor *in, mt_tensor *out) {
  mt_device d = mt_tdevice(in);
  int dev = d.index;
  mt_dtype dt = (mt_dtype)in->dtype;
  rsgeo g = {p->planes, p->group, p->ih, p->iw, p->oh, p->ow, p->ntab, p->kx, p->ky};
  char defs[160];
  snprintf(defs, sizeof defs, "#define TI %s\n#define TC %s\n#define STORE(v) %s\n",
           dt == MT_UINT8 ? "unsigned char" : dt == MT_FLOAT64 ? "double" : "float",
           dt == MT_FLOAT64 ? "double" : "float", dt == MT_UINT8 ? "rs_u8(v)" : "(v)");
  mt_tensor *ints = NULL, *wts = NULL, *tmp = NULL;
  int64_t ts = p->planes * p->ih * p->ow;
  mt_status st = upload(p, d, &ints, &wts);
  if (!st) st = mt_empty(&ts, 1, dt == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32, d, &tmp);
  if (!st && back) st = mt_fill_(tmp, mt_sint(0));
  if (!st && back) st = mt_fill_(out, mt_sint(0));
  if (st) goto done;
  dptr pi = (dptr)(uintptr_t)mt_data(in), po = (dptr)(uintptr_t)mt_data(out), pt = (dptr)(uintptr_t)mt_data(tmp);
  dptr qi = (dptr)(uintptr_t)mt_data(ints), qw = (dptr)(uintptr_t)mt_data(wts);
  if (!back) st = launch(dev, defs, "mt_rs_xpass", p->planes * p->ih * p->ow, pi, pt, qi, qw, &g);
  if (!st && !back) st = launch(dev, defs, "mt_rs_ypass", p->planes * p->oh * p->ow, pt, po, qi, qw, &g);
  if (back) st = launch(dev, defs, "mt_rs_ypass_bwd", p->planes * p->oh * p->ow, pi, pt, qi, qw, &g);
  if (!st && back) st = launch(dev, defs, "mt_rs_xpass_bwd", p->planes * p->ih * p->ow, pt, po, qi, qw, &g);
done:
  mt_release(ints), mt_release(wts), mt_release(tmp);
  return st;
}
