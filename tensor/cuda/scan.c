/* scan.c (cuda) -- cumsum, cumprod, cummax, cummin on CUDA tensors
 * (scan.cu). tensor/scan.c converts x to the compute dtype, makes it
 * contiguous and allocates the results exactly as for the CPU, then calls
 * mt_cuda_scan instead of its loops. Many columns: one thread walks each
 * (the CPU's rounding exactly); few long ones: chunked (floating sums and
 * products then round differently, in the last bits). */
#include <stdio.h>

#include "mt_cuda.h"

extern const char mt_cuda_scan_cu[];

/* Few columns of at least CHUNK_LEN elements are scanned in chunks of
 * about sqrt(L) elements (three launches, see scan.cu). */
#define CHUNK_COLS 2048
#define CHUNK_LEN 8192

static mt_status chunked(int dev, const char *defs, int kind, const char *op, const mt_tensor *x,
                         unsigned long long px, unsigned long long py, unsigned long long pi, long long O, long long L,
                         long long K) {
  long long C = 256, cols = O * K;
  while (C * C < L) C <<= 1;
  long long nc = (L + C - 1) / C;
  int64_t shape[2] = {cols, nc};
  mt_tensor *sa = NULL, *sv = NULL, *si = NULL;
  mt_dtype acc = mt_is_floating((mt_dtype)x->dtype) ? MT_FLOAT64 : MT_INT64;
  mt_status st = kind < 2 ? mt_empty(shape, 2, acc, mt_tdevice(x), &sa)
                          : mt_empty(shape, 2, (mt_dtype)x->dtype, mt_tdevice(x), &sv);
  if (!st && kind >= 2) st = mt_empty(shape, 2, MT_INT64, mt_tdevice(x), &si);
  unsigned long long psa = sa ? (uintptr_t)mt_data(sa) : 0, psv = sv ? (uintptr_t)mt_data(sv) : 0;
  unsigned long long psi = si ? (uintptr_t)mt_data(si) : 0;
  void *fn = NULL;
  int64_t work = cols * nc;
  void *a1[] = {&px, &psa, &psv, &psi, &O, &L, &K, &C, &nc};
  void *a2[] = {&psa, &psv, &psi, &cols, &nc};
  void *a3[] = {&px, &py, &pi, &psa, &psv, &psi, &O, &L, &K, &C, &nc};
  if (!st) st = mt_cuda_family(dev, defs, mt_cuda_scan_cu, "mt_scan_part", &fn);
  if (!st) st = mt_cuda_launch_grid(dev, fn, (work + 127) / 128, 128, a1, op);
  if (!st) st = mt_cuda_family(dev, defs, mt_cuda_scan_cu, "mt_scan_carry", &fn);
  if (!st) st = mt_cuda_launch_grid(dev, fn, (cols + 31) / 32, 32, a2, op);
  if (!st) st = mt_cuda_family(dev, defs, mt_cuda_scan_cu, "mt_scan_fin", &fn);
  if (!st) st = mt_cuda_launch_grid(dev, fn, (work + 127) / 128, 128, a3, op);
  mt_release(sa);
  mt_release(sv);
  mt_release(si);
  return st;
}

mt_status mt_cuda_scan(int kind, const mt_tensor *x, int dim, mt_tensor *y, mt_tensor *yi) {
  static const char *const names[] = {"cumsum", "cumprod", "cummax", "cummin"};
  int64_t O = 1, L = x->ndim ? x->shape[dim] : 1, K = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (d < dim) O *= x->shape[d];
    if (d > dim) K *= x->shape[d];
  }
  if (O == 0 || L == 0 || K == 0) return MT_OK;
  mt_dtype dt = (mt_dtype)x->dtype;
  bool fl = dt == MT_FLOAT32 || dt == MT_FLOAT64;
  if (dt == MT_FLOAT16 || dt == MT_BFLOAT16)
    return mt_fail(MT_EDTYPE, "%s: expected float32/float64 or integers on CUDA, got %s", names[kind], mt_dtype_name(dt));
  const char *acc = fl ? "double" : "unsigned long long"; /* wrapping integer sums, as on the CPU */
  char defs[256];
  snprintf(defs, sizeof defs, "#define T %s\n#define ACC %s\n#define KIND %d\n#define ISNAN(v) %s\n",
           mt_cuda_dt(dt)->store, acc, kind, fl ? "((v) != (v))" : "false");
  int dev = mt_tdevice(x).index;
  void *fn = NULL;
  unsigned long long px = (uintptr_t)mt_data(x), py = (uintptr_t)mt_data(y), pi = yi ? (uintptr_t)mt_data(yi) : 0;
  long long o = O, l = L, k = K, cols = O * K;
  if (cols >= CHUNK_COLS || L < CHUNK_LEN) { /* enough columns: one thread each */
    mt_status st = mt_cuda_family(dev, defs, mt_cuda_scan_cu, "mt_scan", &fn);
    if (st) return st;
    void *args[] = {&px, &py, &pi, &o, &l, &k};
    int64_t threads = cols < 128 ? 32 : 128;
    return mt_cuda_launch_grid(dev, fn, (cols + threads - 1) / threads, (int)threads, args, names[kind]);
  }
  return chunked(dev, defs, kind, names[kind], x, px, py, pi, o, l, k);
}
