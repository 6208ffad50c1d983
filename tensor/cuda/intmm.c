/* intmm.c (cuda) -- integer matrix products on CUDA tensors (intmm.cu):
 * tensor/matmul.c lays out the operands as for cuBLAS and sends integer
 * dtypes here. A plain kernel, one thread per output element: integer
 * products are for correctness (indices, counts), not speed. */
#include <stdio.h>
#include <string.h>

#include "mt_cuda.h"

typedef unsigned long long dptr; /* a device address as a kernel argument */

extern const char mt_cuda_intmm_cu[];

/* Matches struct mt_mmgeo in intmm.cu. */
typedef struct mmgeo {
  int32_t nb;
  int64_t m, n, k, total;
  int64_t bsize[8], ast[8], bst[8];
  int64_t ar, ac, br, bc;
  int64_t alpha, beta;
} mmgeo;

mt_status mt_cuda_int_gemm(const mt_tensor *a, const mt_tensor *b, mt_tensor *c, int nb, double alpha, double beta) {
  mt_dtype dt = (mt_dtype)c->dtype;
  if (nb > 8) return mt_fail(MT_ESHAPE, "matmul: at most 8 batch dimensions on CUDA");
  mmgeo g;
  memset(&g, 0, sizeof g);
  g.nb = nb;
  g.m = c->shape[nb];
  g.n = c->shape[nb + 1];
  g.k = a->shape[nb + 1];
  g.total = mt_numel(c);
  for (int d = 0; d < nb; d++) {
    g.bsize[d] = c->shape[d];
    g.ast[d] = a->shape[d] == 1 ? 0 : a->strides[d];
    g.bst[d] = b->shape[d] == 1 ? 0 : b->strides[d];
  }
  g.ar = a->strides[nb];
  g.ac = a->strides[nb + 1];
  g.br = b->strides[nb];
  g.bc = b->strides[nb + 1];
  g.alpha = (int64_t)alpha;
  g.beta = (int64_t)beta;
  if (g.total == 0) return MT_OK;
  char defs[128];
  snprintf(defs, sizeof defs, "#define TX %s\n", mt_cuda_dt(dt)->store);
  int dev = mt_tdevice(c).index;
  void *fn = NULL;
  mt_status st = mt_cuda_family(dev, defs, mt_cuda_intmm_cu, "mt_intmm", &fn);
  if (st) return st;
  dptr pa = (dptr)(uintptr_t)mt_data(a), pb = (dptr)(uintptr_t)mt_data(b), pc = (dptr)(uintptr_t)mt_data(c);
  void *args[] = {&pa, &pb, &pc, &g};
  int64_t blocks = (g.total + 255) / 256;
  st = mt_cuda_launch_grid(dev, fn, blocks > 65535 ? 65535 : blocks, 256, args, "matmul");
  mt_bump_version(c);
  return st;
}
