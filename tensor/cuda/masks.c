/* masks.c (cuda) -- compaction by a bool mask on CUDA (masks.cu): a count
 * per chunk of the mask, a scan of the counts (whose total comes down to the
 * host: the result's size), then one pass that sends the k-th true position
 * to slot k. masked_select, masked_scatter_ and nonzero in tensor/index.c
 * use it. */
#include <stdio.h>
#include <string.h>

#include "cuda_index.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_masks_cu[];

#define THREADS 256
#define CHUNK (THREADS * 4) /* THREADS * ITEMS in masks.cu */

/* Matches struct mt_mgeo in masks.cu. */
typedef struct mgeo {
  int32_t nd, pad;
  int64_t n, nchunks;
  int64_t size[MT_MAXDIM], mst[MT_MAXDIM], xst[MT_MAXDIM];
} mgeo;

static void make_geo(const mt_tensor *mask, const mt_tensor *x, mgeo *g) {
  memset(g, 0, sizeof *g);
  g->nd = mask->ndim;
  g->n = mt_numel(mask);
  g->nchunks = (g->n + CHUNK - 1) / CHUNK;
  for (int d = 0; d < mask->ndim; d++) {
    g->size[d] = mask->shape[d];
    g->mst[d] = mask->strides[d];
    g->xst[d] = x ? x->strides[d] : 0;
  }
}

static mt_status member(int dev, size_t elsize, int mode, const char *name, void **fn) {
  char defs[256];
  const char *tx = elsize == 1   ? "unsigned char"
                   : elsize == 2 ? "unsigned short"
                   : elsize == 4 ? "unsigned int"
                                 : "unsigned long long";
  snprintf(defs, sizeof defs, "#define TX %s\n#define MODE %d\n", tx, mode);
  return mt_cuda_family(dev, defs, mt_cuda_masks_cu, name, fn);
}

mt_status mt_cuda_mask_count(const char *op, const mt_tensor *mask, mt_tensor **counts, int64_t *total) {
  int dev = mt_tdevice(mask).index;
  mgeo g;
  make_geo(mask, NULL, &g);
  int64_t len = g.nchunks + 1;
  *counts = NULL;
  *total = 0;
  mt_tensor *c = NULL, *last = NULL;
  void *fcount = NULL, *fscan = NULL;
  mt_status st = mt_zeros(&len, 1, MT_INT64, mt_tdevice(mask), &c);
  if (!st && g.n == 0) {
    *counts = c;
    return MT_OK;
  }
  if (!st) st = member(dev, 1, 0, "mt_mask_count", &fcount);
  if (!st) st = member(dev, 1, 0, "mt_mask_scan", &fscan);
  dptr pm = (dptr)(uintptr_t)mt_data(mask), pc = c ? (dptr)(uintptr_t)mt_data(c) : 0;
  long long nb = g.nchunks;
  if (!st) {
    void *args[] = {&pm, &pc, &g};
    st = mt_cuda_launch_grid(dev, fcount, g.nchunks, THREADS, args, op);
  }
  if (!st) {
    void *args[] = {&pc, &nb};
    st = mt_cuda_launch_grid(dev, fscan, 1, 1024, args, op);
  }
  mt_scalar v;
  if (!st) st = mt_as_strided(c, 0, NULL, NULL, c->offset + nb, &last);
  if (!st) st = mt_item(last, &v);
  mt_release(last);
  if (st) {
    mt_release(c);
    return st;
  }
  *total = mt_scalar_i(v);
  *counts = c;
  return MT_OK;
}

mt_status mt_cuda_mask_apply(const char *op, int mode, const mt_tensor *mask, const mt_tensor *counts, mt_tensor *x,
                             mt_tensor *buf) {
  int dev = mt_tdevice(mask).index;
  mgeo g;
  make_geo(mask, mode == 2 ? NULL : x, &g);
  if (g.n == 0) return MT_OK;
  void *fn = NULL;
  mt_status st = member(dev, mode == 2 ? 8 : mt_elsize(x), mode, "mt_mask_apply", &fn);
  if (st) return st;
  dptr pm = (dptr)(uintptr_t)mt_data(mask), pc = (dptr)(uintptr_t)mt_data(counts);
  dptr px = mode == 2 ? 0 : (dptr)(uintptr_t)mt_data(x), pb = (dptr)(uintptr_t)mt_data(buf);
  dptr pnz = mode == 2 ? pb : 0;
  if (mode == 2) pb = 0;
  void *args[] = {&pm, &pc, &px, &pb, &pnz, &g};
  mt_bump_version(mode == 1 ? x : buf);
  return mt_cuda_launch_grid(dev, fn, g.nchunks, THREADS, args, op);
}
