/* reduce.c (cuda) -- reductions and softmax on CUDA tensors through the
 * kernel families reduce.cu and softmax.cu. tensor/reduce.c and
 * tensor/softmax.c check arguments and shape the results; this file only
 * lays out the launch: kept and reduced dims merged where contiguous, then
 * one block per output, one warp per output (many rows of up to 4096),
 * one thread per output (rows of up to 16 elements, or when the outputs are
 * the contiguous dim), or two passes (few outputs of many elements). */
#include <stdio.h>
#include <string.h>

#include "mt_cuda.h"
#include "reduce_util.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_reduce_cu[];
extern const char mt_cuda_softmax_cu[];

/* Matches struct mt_rgeo in reduce.cu. */
typedef struct rgeo {
  int32_t nk, nr;
  int64_t nout, nred, chunk, cpr;
  double div;
  int64_t ksize[MT_MAXDIM], kstride[MT_MAXDIM], rsize[MT_MAXDIM], rstride[MT_MAXDIM];
} rgeo;


/* Reduced dims stay in x's order, so a flat index over them is row-major
 * (argmax over all dims gives the flat index into x). */
static void make_geo(const mt_tensor *x, uint32_t mask, rgeo *g) {
  memset(g, 0, sizeof *g);
  g->nout = g->nred = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (mask & (1u << d)) {
      g->nred *= x->shape[d];
      if (x->shape[d] != 1) mt_push_dim(g->rsize, g->rstride, &g->nr, x->shape[d], x->strides[d]);
    } else {
      g->nout *= x->shape[d];
      if (x->shape[d] != 1) mt_push_dim(g->ksize, g->kstride, &g->nk, x->shape[d], x->strides[d]);
    }
  }
  g->chunk = g->nred;
  g->cpr = 1;
  g->div = 1;
}

static int block_threads(int64_t n) {
  int t = 32;
  while (t < 256 && t < n) t *= 2;
  return t;
}

static const char *const kind_names[] = {"sum", "prod", "max", "min", "argmax", "argmin"};

static mt_status kernel_of(int dev, int kind, mt_dtype dt, const char *name, void **fn) {
  const mt_cuda_dtinfo *d = mt_cuda_dt(dt);
  bool fl = mt_is_floating(dt);
  char defs[512];
  snprintf(defs, sizeof defs, "#define TX %s\n#define LX(x) %s\n#define ACC %s\n#define KIND %d\n#define ISFLOAT %d\n",
           d->store, d->load, fl ? "double" : "long long", kind, fl);
  return mt_cuda_family(dev, defs, mt_cuda_reduce_cu, name, fn);
}

/* A reduction over outer dims (mt_red_cols): enough (outputs/32 x row
 * chunks) blocks to fill the GPU, partials folded by mt_red_combine. */
static mt_status reduce_cols(int dev, int kind, const mt_tensor *x, rgeo *g, mt_tensor *acc, mt_tensor *idx) {
  const char *op = kind_names[kind];
  int64_t nob = (g->nout + 31) / 32, want = 4 * 132;
  g->cpr = (want + nob - 1) / nob;
  if (g->cpr > (g->nred + 63) / 64) g->cpr = (g->nred + 63) / 64;
  if (g->cpr < 1) g->cpr = 1;
  g->chunk = (g->nred + g->cpr - 1) / g->cpr;
  dptr px = (dptr)(uintptr_t)mt_data(x), pv = (dptr)(uintptr_t)mt_data(acc);
  dptr pi = idx ? (dptr)(uintptr_t)mt_data(idx) : 0;
  void *fn = NULL;
  mt_status st = kernel_of(dev, kind, (mt_dtype)x->dtype, "mt_red_cols", &fn);
  if (st || g->cpr == 1) {
    void *args[] = {&px, &pv, &pi, g};
    return st ? st : mt_cuda_launch_grid(dev, fn, nob, 256, args, op);
  }
  mt_tensor *tv = NULL, *ti = NULL;
  int64_t np = g->nout * g->cpr;
  st = mt_empty(&np, 1, (mt_dtype)acc->dtype, mt_tdevice(x), &tv);
  if (!st && idx) st = mt_empty(&np, 1, MT_INT64, mt_tdevice(x), &ti);
  if (!st) {
    dptr qv = (dptr)(uintptr_t)mt_data(tv), qi = ti ? (dptr)(uintptr_t)mt_data(ti) : 0;
    void *args[] = {&px, &qv, &qi, g};
    st = mt_cuda_launch_grid(dev, fn, nob * g->cpr, 256, args, op);
    if (!st) st = kernel_of(dev, kind, (mt_dtype)x->dtype, "mt_red_combine", &fn);
    void *args2[] = {&qv, &qi, &pv, &pi, g};
    if (!st) st = mt_cuda_launch_grid(dev, fn, g->nout, block_threads(g->cpr), args2, op);
  }
  mt_release(tv);
  mt_release(ti);
  return st;
}

mt_status mt_cuda_reduce(int kind, const mt_tensor *x, uint32_t mask, double div, mt_tensor *acc, mt_tensor *idx) {
  int dev = mt_tdevice(x).index;
  const char *op = kind_names[kind];
  rgeo g;
  make_geo(x, mask, &g);
  g.div = div;
  if (g.nout == 0) return MT_OK;
  dptr px = (dptr)(uintptr_t)mt_data(x), pv = (dptr)(uintptr_t)mt_data(acc);
  dptr pi = idx ? (dptr)(uintptr_t)mt_data(idx) : 0;
  void *fn = NULL;
  mt_status st;
  bool inner_contig = g.nr > 0 && g.rstride[g.nr - 1] == 1;
  if (g.nout < 128 && g.nred >= (1 << 16)) { /* two passes */
    g.cpr = (g.nred + (1 << 14) - 1) >> 14;
    int64_t most = 1024 / g.nout + 1;
    if (g.cpr > most) g.cpr = most;
    g.chunk = (g.nred + g.cpr - 1) / g.cpr;
    mt_tensor *tv = NULL, *ti = NULL;
    int64_t np = g.nout * g.cpr;
    st = mt_empty(&np, 1, (mt_dtype)acc->dtype, mt_tdevice(x), &tv);
    if (!st && idx) st = mt_empty(&np, 1, MT_INT64, mt_tdevice(x), &ti);
    if (!st) st = kernel_of(dev, kind, (mt_dtype)x->dtype, "mt_red_block", &fn);
    if (!st) {
      dptr qv = (dptr)(uintptr_t)mt_data(tv), qi = ti ? (dptr)(uintptr_t)mt_data(ti) : 0;
      void *args[] = {&px, &qv, &qi, &g};
      st = mt_cuda_launch_grid(dev, fn, np, 256, args, op);
      if (!st) st = kernel_of(dev, kind, (mt_dtype)x->dtype, "mt_red_combine", &fn);
      void *args2[] = {&qv, &qi, &pv, &pi, &g};
      if (!st) st = mt_cuda_launch_grid(dev, fn, g.nout, block_threads(g.cpr), args2, op);
    }
    mt_release(tv);
    mt_release(ti);
    return st;
  }
  void *args[] = {&px, &pv, &pi, &g};
  if (g.nred <= 16 && g.nout >= 256) { /* a thread per output */
    if ((st = kernel_of(dev, kind, (mt_dtype)x->dtype, "mt_red_thread", &fn))) return st;
    return mt_cuda_launch_grid(dev, fn, (g.nout + 255) / 256, 256, args, op);
  }
  if (!inner_contig && g.nred >= 64) return reduce_cols(dev, kind, x, &g, acc, idx);
  if (inner_contig && g.nred <= 4096 && g.nout >= 1024) { /* a warp per output */
    if ((st = kernel_of(dev, kind, (mt_dtype)x->dtype, "mt_red_warp", &fn))) return st;
    return mt_cuda_launch_grid(dev, fn, (g.nout + 7) / 8, 256, args, op);
  }
  if ((st = kernel_of(dev, kind, (mt_dtype)x->dtype, "mt_red_block", &fn))) return st;
  return mt_cuda_launch_grid(dev, fn, g.nout, block_threads(g.nred), args, op);
}

mt_status mt_cuda_softmax(const mt_tensor *x, mt_tensor *y, int64_t O, int64_t L, int64_t K, bool lg) {
  int dev = mt_tdevice(x).index;
  mt_dtype dt = (mt_dtype)x->dtype;
  const mt_cuda_dtinfo *d = mt_cuda_dt(dt);
  char defs[512];
  snprintf(defs, sizeof defs, "#define TX %s\n#define LX(x) %s\n#define WX(v) %s\n#define T %s\n#define LOG %d\n",
           d->store, d->load, d->write, d->compute, lg);
  void *fn = NULL;
  const char *op = lg ? "log_softmax" : "softmax";
  dptr px = (dptr)(uintptr_t)mt_data(x), py = (dptr)(uintptr_t)mt_data(y);
  long long o = O, l = L, k = K;
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_softmax_cu, K == 1 ? "mt_softmax_rows" : "mt_softmax_cols", &fn);
  if (st) return st;
  if (K == 1) {
    void *args[] = {&px, &py, &o, &l};
    return mt_cuda_launch_grid(dev, fn, O, block_threads(L), args, op);
  }
  void *args[] = {&px, &py, &o, &l, &k};
  return mt_cuda_launch_grid(dev, fn, (O * K + 255) / 256, 256, args, op);
}
