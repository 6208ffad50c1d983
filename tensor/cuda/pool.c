/* pool.c (cuda) -- average pools (plain and adaptive) and their backward on
 * CUDA tensors through pool.cu: one thread per output, the backward adding
 * each output's share to its window with atomics. tensor/pool.c checks the
 * arguments, sizes the results and upcasts float16/bfloat16; this file sees
 * contiguous float32/float64 tensors. (Max pools: conv.c.) */
#include <stdio.h>
#include <string.h>

#include "../cpu/pool_kernels.h"
#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_pool_cu[];

/* Matches struct mt_ageo in pool.cu. */
typedef struct ageo {
  int64_t n, in[3], out[3], k[3], stride[3], pad[3], divisor;
  int32_t adaptive, include_pad;
} ageo;

mt_status mt_cuda_avg_pool(const struct mt_pool_problem *p, bool back, const mt_tensor *in, mt_tensor *out) {
  int dev = mt_tdevice(in).index;
  ageo g;
  memset(&g, 0, sizeof g);
  g.n = p->planes;
  for (int d = 0; d < 3; d++) {
    g.in[d] = p->in[d], g.out[d] = p->out[d], g.k[d] = p->k[d], g.stride[d] = p->stride[d], g.pad[d] = p->pad[d];
    g.n *= p->out[d];
  }
  g.divisor = p->divisor, g.adaptive = p->adaptive, g.include_pad = p->count_include_pad;
  const char *op = back ? "avg_pool_backward" : "avg_pool";
  mt_status st = back ? mt_fill_(out, mt_sint(0)) : MT_OK;
  if (st || g.n == 0) return st;
  char defs[64];
  snprintf(defs, sizeof defs, "#define T %s\n", in->dtype == MT_FLOAT64 ? "double" : "float");
  void *fn = NULL;
  if ((st = mt_cuda_family(dev, defs, mt_cuda_pool_cu, back ? "mt_avg_pool_bwd" : "mt_avg_pool", &fn))) return st;
  dptr pi = (dptr)(uintptr_t)mt_data(in), po = (dptr)(uintptr_t)mt_data(out);
  void *args[] = {&pi, &po, &g};
  int64_t blocks = (g.n + 255) / 256;
  return mt_cuda_launch_grid(dev, fn, blocks < 65536 ? blocks : 65536, 256, args, op);
}
