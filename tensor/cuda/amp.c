/* amp.c (cuda) -- GradScaler's fused unscale and inf/NaN check on a
 * contiguous CUDA gradient (amp.cu): one launch per gradient, no host read. */
#include <stdio.h>

#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_amp_cu[];

mt_status mt_cuda_amp_unscale_(mt_tensor *x, double inv_scale, mt_tensor *found) {
  int dev = mt_tdevice(x).index;
  const mt_cuda_dtinfo *d = mt_cuda_dt((mt_dtype)x->dtype);
  char defs[512];
  snprintf(defs, sizeof defs, "#define TX %s\n#define CT %s\n#define LOAD(x) %s\n#define WRITE(v) %s\n", d->store,
           d->compute, d->load, d->write);
  void *fn = NULL;
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_amp_cu, "mt_amp_unscale", &fn);
  if (st) return st;
  dptr px = (dptr)(uintptr_t)mt_data(x), pf = (dptr)(uintptr_t)mt_data(found);
  long long n = (long long)mt_numel(x);
  void *args[] = {&px, &n, &inv_scale, &pf};
  return mt_cuda_launch(dev, fn, n, args, "_amp_foreach_non_finite_check_and_unscale_");
}
