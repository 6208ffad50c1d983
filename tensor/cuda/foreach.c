/* foreach.c (cuda) -- the multi-tensor kernels of foreach.cu: norms of a
 * list of tensors in two launches per FE_NT tensors (partial sums per
 * chunk, then per-tensor norms and the total), and an in-place scale by a
 * number or a device scalar in one launch per FE_NT tensors. The callers
 * (tensor/foreach.c) check the list: contiguous floating tensors of one
 * dtype on one device. Nothing here reads device memory on the host. */
#include <stdio.h>

#include "mt_cuda.h"

extern const char mt_cuda_foreach_cu[];

#define FE_NT 128 /* as in foreach.cu */
#define FE_CHUNK 16384
#define FE_THREADS 256

typedef struct {
  unsigned long long ptr[FE_NT];
  long long n[FE_NT];
  int start[FE_NT + 1];
  int nt;
} fe_table;

/* The member of the family for dtype dt (mode: norms' kind), scale dtype ts. */
static mt_status member(int dev, mt_dtype dt, int mode, mt_dtype ts, const char *name, void **fn) {
  const mt_cuda_dtinfo *d = mt_cuda_dt(dt), *s = mt_cuda_dt(ts);
  char defs[768];
  snprintf(defs, sizeof defs,
           "#define TX %s\n#define CT %s\n#define LOAD(x) %s\n#define WRITE(v) %s\n#define ACC %s\n#define MODE %d\n"
           "#define TS %s\n#define LOADS(x) %s\n",
           d->store, d->compute, d->load, d->write, dt == MT_FLOAT64 ? "double" : "float", mode, s->store, s->load);
  return mt_cuda_family(dev, defs, mt_cuda_foreach_cu, name, fn);
}

/* Fills tab with ts[first, first + k) (at most FE_NT); returns the next first. */
static int fill_table(mt_tensor *const *ts, int n, int first, fe_table *tab) {
  int k = 0, blocks = 0;
  for (; first < n && k < FE_NT; first++, k++) {
    int64_t m = mt_numel(ts[first]);
    tab->ptr[k] = (unsigned long long)(uintptr_t)mt_data(ts[first]);
    tab->n[k] = (long long)m;
    tab->start[k] = blocks;
    blocks += (int)((m + FE_CHUNK - 1) / FE_CHUNK);
  }
  tab->start[k] = blocks;
  tab->nt = k;
  return first;
}

static int64_t blocks_of(mt_tensor *const *ts, int n) {
  int64_t b = 0;
  for (int i = 0; i < n; i++) b += (mt_numel(ts[i]) + FE_CHUNK - 1) / FE_CHUNK;
  return b;
}

mt_status mt_cuda_foreach_norm(mt_tensor *const *ts, int n, int mode, mt_tensor *norms, mt_tensor *total) {
  const char *op = "_foreach_norm";
  mt_device d = mt_tdevice(norms);
  int dev = d.index;
  mt_dtype dt = (mt_dtype)norms->dtype, acc = dt == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  void *fp = NULL, *ff = NULL;
  mt_status st = mt_cuda_check_device(d, op);
  if (!st) st = member(dev, dt, mode, MT_FLOAT32, "mt_fe_partial", &fp);
  if (!st) st = member(dev, dt, mode, MT_FLOAT32, "mt_fe_finish", &ff);
  int64_t nb = blocks_of(ts, n), nn = n;
  mt_tensor *partial = NULL, *raw = NULL;
  if (!st) st = mt_empty(&nb, 1, acc, d, &partial);
  if (!st) st = mt_empty(&nn, 1, acc, d, &raw);
  fe_table tab;
  int pbase = 0;
  for (int first = 0; !st && first < n;) {
    int rbase = first;
    first = fill_table(ts, n, first, &tab);
    unsigned long long pp = (unsigned long long)(uintptr_t)mt_data(partial), pr = (unsigned long long)(uintptr_t)mt_data(raw),
                       pn = (unsigned long long)(uintptr_t)mt_data(norms), pt = (unsigned long long)(uintptr_t)mt_data(total);
    int last = first == n ? n : 0;
    void *a1[] = {&tab, &pp, &pbase};
    st = mt_cuda_launch_grid(dev, fp, tab.start[tab.nt], FE_THREADS, a1, op);
    void *a2[] = {&tab, &pp, &pbase, &pr, &pn, &rbase, &last, &pt};
    if (!st) st = mt_cuda_launch_grid(dev, ff, 1, FE_THREADS, a2, op);
    pbase += tab.start[tab.nt];
  }
  mt_release(partial); /* the cache hands these blocks out again only in stream order */
  mt_release(raw);
  return st;
}

mt_status mt_cuda_foreach_scale_(mt_tensor *const *ts, int n, const mt_tensor *scale, double sv) {
  const char *op = "_foreach_mul_";
  if (n == 0) return MT_OK;
  mt_device d = mt_tdevice(ts[0]);
  int dev = d.index;
  mt_dtype dt = (mt_dtype)ts[0]->dtype;
  void *fn = NULL;
  mt_status st = mt_cuda_check_device(d, op);
  if (!st) st = member(dev, dt, 0, scale ? (mt_dtype)scale->dtype : MT_FLOAT32, "mt_fe_scale", &fn);
  unsigned long long sp = scale ? (unsigned long long)(uintptr_t)mt_data(scale) : 0;
  fe_table tab;
  for (int first = 0; !st && first < n;) {
    first = fill_table(ts, n, first, &tab);
    void *args[] = {&tab, &sp, &sv};
    st = mt_cuda_launch_grid(dev, fn, tab.start[tab.nt], FE_THREADS, args, op);
  }
  return st;
}
