/* resize.c (cuda) -- the separable image resampling of tensor/resize.c on
 * CUDA tensors through resize.cu. A plain resize's tables are computed on
 * the GPU (one launch); a crop's plan comes from the host, packed into one
 * buffer and sent in one asynchronous copy (the driver stages pageable
 * memory before the call returns, so nothing waits). Then one launch per
 * pass (a plain resize's take several rows a block; the adjoint: two
 * passes with atomics). Inputs are contiguous uint8, float32 or float64. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/resize_kernels.h"
#include "cu_api.h"
#include "cuda_vision.h"
#include "mt_cuda.h"

typedef unsigned long long dptr;

extern const char mt_cuda_resize_cu[];

/* Matches struct mt_rsgeo in resize.cu. */
typedef struct rsgeo {
  int64_t planes, group, ih, iw, oh, ow, ntab, kx, ky, wts;
} rsgeo;

/* The tables of p in resize.cu's layout (weights of wsize bytes: float or
 * double) in a new malloc'ed buffer of *bytes; g->wts gets the weights'
 * offset. NULL when out of memory. */
static void *pack(const mt_rs_plan *p, size_t wsize, rsgeo *g, size_t *bytes) {
  int64_t T = p->ntab, ni = 2 * T + 2 * T * (p->ow + p->oh), nw = T * (p->ow * p->kx + p->oh * p->ky);
  size_t wts = ((size_t)ni * 4 + 7) / 8 * 8;
  char *buf = malloc(wts + (size_t)nw * wsize);
  if (!buf) return NULL;
  int32_t *q = (int32_t *)buf;
  for (int64_t i = 0; i < T; i++) *q++ = (int32_t)p->row0[i];
  for (int64_t i = 0; i < T; i++) *q++ = (int32_t)p->nrows[i];
  for (int64_t i = 0; i < T * p->ow; i++) *q++ = (int32_t)p->sx[i];
  for (int64_t i = 0; i < T * p->oh; i++) *q++ = (int32_t)p->sy[i];
  memcpy(q, p->nx, sizeof(int32_t) * (size_t)(T * p->ow)), q += T * p->ow;
  memcpy(q, p->ny, sizeof(int32_t) * (size_t)(T * p->oh));
  float *wf = (float *)(buf + wts);
  double *wd = (double *)(buf + wts);
  int64_t j = 0;
  for (int64_t t = 0; t < T; t++) /* wx transposed: [t][k][o] */
    for (int64_t k = 0; k < p->kx; k++)
      for (int64_t o = 0; o < p->ow; o++, j++) {
        double w = p->wx[(t * p->ow + o) * p->kx + k];
        if (wsize == 4) wf[j] = (float)w;
        else wd[j] = w;
      }
  for (int64_t i = 0; i < T * p->oh * p->ky; i++, j++) {
    if (wsize == 4) wf[j] = (float)p->wy[i];
    else wd[j] = p->wy[i];
  }
  g->wts = (int64_t)wts;
  *bytes = wts + (size_t)nw * wsize;
  return buf;
}

/* The packed tables of p on the device (*tabs, a uint8 tensor). */
static mt_status upload(const mt_rs_plan *p, mt_device dev, size_t wsize, rsgeo *g, mt_tensor **tabs) {
  size_t n = 0;
  void *buf = pack(p, wsize, g, &n);
  if (!buf) return mt_fail(MT_ENOMEM, "resize: out of memory for the weights");
  int64_t len = (int64_t)n;
  mt_status st = mt_empty(&len, 1, MT_UINT8, dev, tabs);
  if (!st) {
    mt_cuda_stream s = mt_cuda_current_stream(dev.index);
    st = mt_cuda_check(mt_cu.MemcpyHtoDAsync((CUdeviceptr)(uintptr_t)mt_data(*tabs), buf, n, s.handle), dev.index,
                       "resize");
  }
  free(buf); /* staged by the driver before MemcpyHtoDAsync returned */
  return st;
}

/* One pass: a block per rpb rows (of `rows`), threads along rows of `len`. */
static mt_status launch(int dev, const char *defs, const char *name, int64_t rows, int64_t len, dptr a, dptr b,
                        dptr tabs, rsgeo *g, int rpb) {
  void *fn = NULL;
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_resize_cu, name, &fn);
  if (st) return st;
  void *args[] = {&a, &b, &tabs, g, &rpb};
  int threads = len >= 256 ? 256 : (int)(len + 31) / 32 * 32;
  return mt_cuda_launch_grid(dev, fn, (rows + rpb - 1) / rpb, threads, args, "resize");
}

/* Rows per block of a plain pass: resize.cu's RS_ROWS once that still
 * leaves a block for each multiprocessor (an H200 has 132). */
static int rows_per_block(int64_t rows) { return rows >= 4 * 132 ? 4 : 1; }

/* The defines of dtype dt's members. */
static void defs_of(mt_dtype dt, char *defs, size_t n) {
  snprintf(defs, n, "#define TI %s\n#define TC %s\n#define STORE(v) %s\n",
           dt == MT_UINT8 ? "unsigned char" : dt == MT_FLOAT64 ? "double" : "float",
           dt == MT_FLOAT64 ? "double" : "float", dt == MT_UINT8 ? "rs_u8(v)" : "(v)");
}

/* The two passes of g with the device tables tabs: out from in, or (back)
 * the adjoint, out zeroed first. plain: the tables are a plain resize's. */
static mt_status passes(int dev, const char *defs, rsgeo *g, bool back, bool plain, const mt_tensor *in,
                        mt_tensor *out, const mt_tensor *tabs) {
  mt_device d = mt_tdevice(in);
  mt_tensor *tmp = NULL;
  int64_t ts = g->planes * g->ih * g->ow;
  mt_status st = mt_empty(&ts, 1, in->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32, d, &tmp);
  if (!st && back) st = mt_fill_(tmp, mt_sint(0));
  if (!st && back) st = mt_fill_(out, mt_sint(0));
  if (st) {
    mt_release(tmp);
    return st;
  }
  dptr pi = (dptr)(uintptr_t)mt_data(in), po = (dptr)(uintptr_t)mt_data(out), pt = (dptr)(uintptr_t)mt_data(tmp);
  dptr pq = (dptr)(uintptr_t)mt_data(tabs);
  int64_t xr = g->planes * g->ih, yr = g->planes * g->oh;
  if (!back && plain) {
    st = launch(dev, defs, "mt_rs_xpass_plain", xr, g->ow, pi, pt, pq, g, rows_per_block(xr));
    if (!st) st = launch(dev, defs, "mt_rs_ypass_plain", yr, g->ow, pt, po, pq, g, rows_per_block(yr));
  } else if (!back) {
    st = launch(dev, defs, "mt_rs_xpass", xr, g->ow, pi, pt, pq, g, 1);
    if (!st) st = launch(dev, defs, "mt_rs_ypass", yr, g->ow, pt, po, pq, g, 1);
  } else {
    st = launch(dev, defs, "mt_rs_ypass_bwd", yr, g->ow, pi, pt, pq, g, 1);
    if (!st) st = launch(dev, defs, "mt_rs_xpass_bwd", xr, g->ow, pt, po, pq, g, 1);
  }
  mt_release(tmp);
  return st;
}

static mt_status check_size(int64_t ih, int64_t iw, int64_t oh, int64_t ow) {
  if (ih > INT32_MAX || iw > INT32_MAX || oh > INT32_MAX || ow > INT32_MAX)
    return mt_fail(MT_ESHAPE, "resize: images of more than 2^31 rows or columns are not supported on CUDA");
  return MT_OK;
}

mt_status mt_cuda_resize(const mt_rs_plan *p, bool back, const mt_tensor *in, mt_tensor *out) {
  mt_device d = mt_tdevice(in);
  mt_dtype dt = (mt_dtype)in->dtype;
  rsgeo g = {p->planes, p->group, p->ih, p->iw, p->oh, p->ow, p->ntab, p->kx, p->ky, 0};
  char defs[160];
  defs_of(dt, defs, sizeof defs);
  mt_status st = check_size(p->ih, p->iw, p->oh, p->ow);
  mt_tensor *tabs = NULL;
  if (!st) st = upload(p, d, dt == MT_FLOAT64 ? 8 : 4, &g, &tabs);
  if (!st) st = passes(d.index, defs, &g, back, false, in, out, tabs);
  mt_release(tabs);
  return st;
}

mt_status mt_cuda_resize_plain(const mt_rs_shape *r, bool back, const mt_tensor *in, mt_tensor *out) {
  mt_device d = mt_tdevice(in);
  mt_dtype dt = (mt_dtype)in->dtype;
  size_t wsize = dt == MT_FLOAT64 ? 8 : 4;
  int64_t ni = 2 + 2 * (r->ow + r->oh), wts = (ni * 4 + 7) / 8 * 8;
  rsgeo g = {r->planes, r->planes > 0 ? r->planes : 1, r->ih, r->iw, r->oh, r->ow, 1, r->kx, r->ky, wts};
  int64_t bytes = wts + (r->ow * r->kx + r->oh * r->ky) * (int64_t)wsize;
  char defs[160];
  defs_of(dt, defs, sizeof defs);
  mt_tensor *tabs = NULL;
  void *fn = NULL;
  mt_status st = check_size(r->ih, r->iw, r->oh, r->ow);
  if (!st) st = mt_empty(&bytes, 1, MT_UINT8, d, &tabs);
  if (!st) st = mt_cuda_family(d.index, defs, mt_cuda_resize_cu, "mt_rs_tables", &fn);
  if (!st) {
    dptr pq = (dptr)(uintptr_t)mt_data(tabs);
    int mode = r->mode, aa = r->antialias;
    void *args[] = {&pq, &g, &mode, &aa};
    st = mt_cuda_launch_grid(d.index, fn, (r->ow + r->oh + 127) / 128, 128, args, "resize");
  }
  if (!st) st = passes(d.index, defs, &g, back, true, in, out, tabs);
  mt_release(tabs);
  return st;
}
