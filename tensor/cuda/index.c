/* index.c (cuda) -- gather and scatter along one dim on CUDA tensors
 * (index.cu). tensor/index.c checks dtypes, ranks and shapes; the index
 * values are checked here, on the host, from their minimum and maximum
 * (two small reductions and one wait), so that a bad index is reported at
 * once with its value instead of corrupting memory. */
#include <stdio.h>
#include <string.h>

#include "../reduce.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_index_cu[];

/* Matches struct mt_igeo in index.cu. */
typedef struct igeo {
  int32_t nd, dim;
  int64_t n;
  int64_t size[MT_MAXDIM], xst[MT_MAXDIM], ist[MT_MAXDIM], sst[MT_MAXDIM];
  int64_t xsize; /* x's size along dim: the kernel skips indices outside [1, xsize] */
} igeo;

/* Every value of index lies in [1, size]; else MT_EINDEX naming one bad value. */
static mt_status check_range(const char *op, const mt_tensor *index, int64_t size, int dim) {
  /* a CUDA graph being captured cannot read values (its replays skip bad indices in the kernel) */
  if (mt_numel(index) == 0 || mt_cuda_capturing(mt_tdevice(index).index)) return MT_OK;
  mt_tensor *lo = NULL, *hi = NULL;
  mt_scalar a, b;
  mt_status st = mt_amin(index, NULL, 0, false, &lo);
  if (!st) st = mt_amax(index, NULL, 0, false, &hi);
  if (!st) st = mt_item(lo, &a);
  if (!st) st = mt_item(hi, &b);
  mt_release(lo);
  mt_release(hi);
  if (st) return st;
  int64_t l = mt_scalar_i(a), h = mt_scalar_i(b);
  if (l < 1 || h > size)
    return mt_fail(MT_EINDEX, "%s: index %lld is out of bounds for dimension %d with size %lld (indices are 1-based)",
                   op, (long long)(l < 1 ? l : h), dim + 1, (long long)size);
  return MT_OK;
}

static mt_status launch(const char *op, int mode, mt_tensor *x, const mt_tensor *src, const mt_tensor *index,
                        mt_tensor *out, int dim) {
  int dev = mt_tdevice(x).index;
  mt_dtype dt = (mt_dtype)x->dtype;
  const char *add = "atomicAdd(p, v)";
  if (dt == MT_FLOAT16) add = "add16(p, h2f(v), false)";
  if (dt == MT_BFLOAT16) add = "add16(p, b2f(v), true)";
  if (dt == MT_INT64) add = "atomicAdd((unsigned long long *)(p), (unsigned long long)(v))";
  if (dt == MT_INT8 || dt == MT_UINT8 || dt == MT_INT16 || dt == MT_UINT16) add = "add_small(p, (long long)(v), false)";
  if (dt == MT_BOOL) add = "add_small(p, (long long)(v), true)";
  char defs[512];
  snprintf(defs, sizeof defs, "#define TX %s\n#define ADD(p, v) %s\n#define SCATTER %d\n", mt_cuda_dt(dt)->store,
           mode == 2 ? add : "", mode);
  igeo g;
  memset(&g, 0, sizeof g);
  g.nd = index->ndim;
  g.dim = dim;
  g.n = mt_numel(index);
  g.xsize = x->ndim ? x->shape[dim] : 1;
  for (int d = 0; d < index->ndim; d++) {
    g.size[d] = index->shape[d];
    g.xst[d] = x->strides[d];
    g.ist[d] = index->strides[d];
    g.sst[d] = src && src->ndim ? src->strides[d] : 0;
  }
  void *fn = NULL;
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_index_cu, "mt_index", &fn);
  if (st) return st;
  dptr px = (dptr)(uintptr_t)mt_data(x), ps = src ? (dptr)(uintptr_t)mt_data(src) : 0;
  dptr pi = (dptr)(uintptr_t)mt_data(index), po = out ? (dptr)(uintptr_t)mt_data(out) : 0;
  void *args[] = {&px, &ps, &pi, &po, &g};
  return mt_cuda_launch_grid(dev, fn, (g.n + 255) / 256, 256, args, op);
}

mt_status mt_cuda_gather(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out) {
  mt_status st = check_range("gather", index, x->ndim ? x->shape[dim] : 1, dim);
  mt_tensor *r = NULL;
  if (!st) st = mt_empty(index->shape, index->ndim, (mt_dtype)x->dtype, mt_tdevice(x), &r);
  if (!st) st = launch("gather", 0, (mt_tensor *)x, NULL, index, r, dim);
  if (!st) return mt_deliver("gather", r, out);
  mt_release(r);
  return st;
}

mt_status mt_cuda_scatter_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, bool add) {
  const char *op = add ? "scatter_add" : "scatter";
  mt_status st = check_range(op, index, x->ndim ? x->shape[dim] : 1, dim);
  mt_tensor *s = NULL;
  if (st) return st;
  /* a number (0-dim host tensor) or a src sharing x's memory goes to a fresh device tensor */
  if (mt_tdevice(src).type != MT_CUDA || src->storage == x->storage)
    st = mt_tdevice(src).type != MT_CUDA ? mt_cuda_to_device(src, mt_tdevice(x), false, &s) : mt_clone(src, &s);
  if (!st) {
    mt_bump_version(x);
    st = launch(op, add ? 2 : 1, x, s ? s : src, index, NULL, dim);
  }
  mt_release(s);
  return st;
}
