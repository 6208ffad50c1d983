/* lfilter.c (cuda) -- launches lfilter.cu's kernels for tensor/lfilter.c,
 * which checked the arguments and made every operand contiguous in one of
 * float32 and float64. */
#include <stdio.h>

#include "cuda_audio.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_lfilter_cu[];

/* Matches struct mt_lfgeo in lfilter.cu. */
typedef struct lfgeo {
  int64_t N, C, T, K;
  int32_t mode, reverse;
} lfgeo;

static dptr addr(const mt_tensor *t) { return t ? (dptr)(uintptr_t)mt_data(t) : 0; }

static mt_status kernel(const mt_tensor *t, const char *name, void **fn) {
  const char *defs = t->dtype == MT_FLOAT64 ? "#define T double\n" : "#define T float\n";
  return mt_cuda_family(mt_tdevice(t).index, defs, mt_cuda_lfilter_cu, name, fn);
}

mt_status mt_cuda_lfilter(const mt_lf_geo *g, const mt_tensor *x, const mt_tensor *a, const mt_tensor *b,
                          const mt_tensor *zi, mt_tensor *y) {
  void *fn = NULL;
  mt_status st = kernel(x, "mt_lfilter_fwd", &fn);
  if (st) return st;
  lfgeo r = {g->N, g->C, g->len, g->K, g->mode, g->reverse};
  dptr px = addr(x), pa = addr(a), pb = addr(b), pz = addr(zi), py = addr(y);
  void *args[] = {&px, &pa, &pb, &pz, &py, &r};
  int64_t n = g->N * g->C;
  return mt_cuda_launch_grid(mt_tdevice(x).index, fn, (n + 127) / 128, 128, args, "lfilter");
}

mt_status mt_cuda_lfilter_corr(const mt_lf_geo *g, const mt_tensor *w, const mt_tensor *x, mt_tensor *out) {
  void *fn = NULL;
  mt_status st = kernel(x, "mt_lfilter_corr", &fn);
  if (st) return st;
  lfgeo r = {g->N, g->C, g->len, g->K, g->mode, g->reverse};
  dptr pw = addr(w), px = addr(x), po = addr(out);
  void *args[] = {&pw, &px, &po, &r};
  return mt_cuda_launch_grid(mt_tdevice(x).index, fn, g->C * g->K, 256, args, "lfilter_corr");
}
