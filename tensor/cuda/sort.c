/* sort.c (cuda) -- stable row sorts and the selections from sorted rows
 * (sort.cu) for tensor/sort.c's sort, argsort, topk, kthvalue, median,
 * nanmedian and mode. Rows of up to BLOCK_MAX elements are sorted by one
 * block each in shared memory (one launch); longer rows by the same bitonic
 * network run stage by stage over global scratch (log2(P)^2 / 2 launches
 * for padded length P). Either way the order is the CPU's: by value, NaN
 * largest, equal values by position. */
#include <stdio.h>

#include "mt_cuda.h"

extern const char mt_cuda_sort_cu[];

#define BLOCK_MAX 2048

typedef unsigned long long dptr;

static dptr addr(const mt_tensor *t) { return (dptr)(uintptr_t)mt_data(t); }

static mt_status check_dtype(mt_dtype dt, const char *op) {
  if (dt == MT_FLOAT16 || dt == MT_BFLOAT16)
    return mt_fail(MT_EDTYPE, "%s: 16-bit floats are sorted as float32 (internal error)", op);
  return MT_OK;
}

/* The family member for dt with the given extra definitions. */
static mt_status member(int dev, mt_dtype dt, bool desc, int64_t pb, int mode, const char *name, void **fn) {
  char defs[256];
  bool fl = dt == MT_FLOAT32 || dt == MT_FLOAT64;
  int n = snprintf(defs, sizeof defs, "#define T %s\n#define DESC %d\n#define ISNAN(v) %s\n#define MODE %d\n",
                   mt_cuda_dt(dt)->store, desc ? 1 : 0, fl ? "((v) != (v))" : "false", mode);
  if (pb) snprintf(defs + n, sizeof defs - (size_t)n, "#define PB %lld\n", (long long)pb);
  return mt_cuda_family(dev, defs, mt_cuda_sort_cu, name, fn);
}

static int64_t blocks_for(int64_t n) {
  int64_t b = (n + 255) / 256;
  return b > 65536 ? 65536 : b;
}

mt_status mt_cuda_sort_rows(const mt_tensor *rows, bool desc, int64_t k, mt_tensor *vals, mt_tensor *idx) {
  mt_dtype dt = (mt_dtype)rows->dtype;
  int dev = mt_tdevice(rows).index;
  mt_status st = check_dtype(dt, "sort");
  if (st) return st;
  long long L = rows->ndim ? rows->shape[rows->ndim - 1] : 1, M = L ? mt_numel(rows) / L : 0, K = k;
  if (M == 0 || L == 0 || k == 0) return MT_OK;
  long long P = 1;
  while (P < L) P <<= 1;
  dptr px = addr(rows), pv = addr(vals), pi = addr(idx);
  void *fn = NULL;
  if (P <= BLOCK_MAX) {
    /* two padded sizes only, so few members are compiled */
    long long pb = P <= 256 ? 256 : BLOCK_MAX;
    if ((st = member(dev, dt, desc, pb, 0, "mt_sort_block", &fn))) return st;
    void *args[] = {&px, &pv, &pi, &M, &L, &K};
    int threads = (int)(pb / 2);
    return mt_cuda_launch_grid(dev, fn, M < 65536 ? M : 65536, threads, args, "sort");
  }
  mt_tensor *sv = NULL, *si = NULL;
  int64_t shape[2] = {M, P};
  if ((st = mt_empty(shape, 2, dt, mt_tdevice(rows), &sv)) || (st = mt_empty(shape, 2, MT_INT64, mt_tdevice(rows), &si)))
    goto done;
  dptr psv = addr(sv), psi = addr(si);
  if ((st = member(dev, dt, desc, 0, 0, "mt_sort_fill", &fn))) goto done;
  void *fargs[] = {&px, &psv, &psi, &M, &L, &P};
  if ((st = mt_cuda_launch_grid(dev, fn, blocks_for(M * P), 256, fargs, "sort"))) goto done;
  if ((st = member(dev, dt, desc, 0, 0, "mt_sort_step", &fn))) goto done;
  for (long long s = 2; s <= P; s <<= 1)
    for (long long j = s >> 1; j > 0; j >>= 1) {
      void *sargs[] = {&psv, &psi, &M, &L, &P, &s, &j};
      if ((st = mt_cuda_launch_grid(dev, fn, blocks_for(M * P), 256, sargs, "sort"))) goto done;
    }
  if ((st = member(dev, dt, desc, 0, 0, "mt_sort_take", &fn))) goto done;
  void *targs[] = {&psv, &psi, &pv, &pi, &M, &P, &K};
  st = mt_cuda_launch_grid(dev, fn, blocks_for(M * K), 256, targs, "sort");
done:
  mt_release(sv);
  mt_release(si);
  return st;
}

mt_status mt_cuda_pick(int mode, int64_t p, const mt_tensor *vals, const mt_tensor *idx, mt_tensor *pv, mt_tensor *pi) {
  static const char *const names[] = {"kthvalue", "median", "nanmedian", "mode"};
  mt_dtype dt = (mt_dtype)vals->dtype;
  int dev = mt_tdevice(vals).index;
  mt_status st = check_dtype(dt, names[mode]);
  long long L = vals->ndim ? vals->shape[vals->ndim - 1] : 1, M = L ? mt_numel(vals) / L : 0, q = p;
  if (st || M == 0) return st;
  void *fn = NULL;
  if ((st = member(dev, dt, false, 0, mode, "mt_pick", &fn))) return st;
  dptr a = addr(vals), b = addr(idx), c = addr(pv), d = addr(pi);
  void *args[] = {&a, &b, &c, &d, &M, &L, &q};
  return mt_cuda_launch_grid(dev, fn, (M + 127) / 128, 128, args, names[mode]);
}
