/* scan.c (cuda) -- cumsum, cumprod, cummax, cummin on CUDA tensors
 * (scan.cu). tensor/scan.c converts x to the compute dtype, makes it
 * contiguous and allocates the results exactly as for the CPU, then calls
 * mt_cuda_scan instead of its loops. */
#include <stdio.h>

#include "mt_cuda.h"

extern const char mt_cuda_scan_cu[];

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
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_scan_cu, "mt_scan", &fn);
  if (st) return st;
  unsigned long long px = (uintptr_t)mt_data(x), py = (uintptr_t)mt_data(y), pi = yi ? (uintptr_t)mt_data(yi) : 0;
  long long o = O, l = L, k = K;
  void *args[] = {&px, &py, &pi, &o, &l, &k};
  int64_t cols = O * K, threads = cols < 128 ? 32 : 128;
  return mt_cuda_launch_grid(dev, fn, (cols + threads - 1) / threads, (int)threads, args, names[kind]);
}
