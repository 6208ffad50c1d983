/* pool_kernels.h -- CPU pooling loops (pool_kernels.c; engine-internal).
 * Inputs are contiguous planes (N*C of them) seen as 3-D (unused dims have
 * size 1 and a 1-wide window); float32 or float64. */
#ifndef MT_CPU_POOL_KERNELS_H
#define MT_CPU_POOL_KERNELS_H

#include "mt.h"

typedef struct mt_pool_problem {
  int64_t planes;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
  bool adaptive, count_include_pad;
  int64_t divisor; /* 0: PyTorch's rule */
} mt_pool_problem;

/* idx (int64, 1-based flat positions in the plane) may be NULL. */
mt_status mt_cpu_max_pool(mt_dtype dt, const mt_pool_problem *p, const void *x, void *y, int64_t *idx);
/* gx is written whole: zeros, plus gy summed at idx; MT_EINDEX for an
 * index outside the plane of in_plane elements. */
mt_status mt_cpu_max_pool_backward(mt_dtype dt, int64_t planes, int64_t in_plane, int64_t out_plane, const void *gy,
                                   const int64_t *idx, void *gx);
mt_status mt_cpu_avg_pool(mt_dtype dt, const mt_pool_problem *p, const void *x, void *y);
/* gx is written whole (not accumulated into). */
mt_status mt_cpu_avg_pool_backward(mt_dtype dt, const mt_pool_problem *p, const void *gy, void *gx);

/* Pools whose windows tile the plane (2-D, stride == kernel, no padding
 * or dilation, at most 256 window positions): the JIT's compact form. */
bool mt_cpu_max_pool_tiles(const mt_pool_problem *p);
/* y and, per output, the position of its maximum inside its window
 * (kh * KW + kw; the element PyTorch's index names), one byte each. */
mt_status mt_cpu_max_pool_local(mt_dtype dt, const mt_pool_problem *p, const void *x, void *y, uint8_t *loc);
/* gx written whole: zeros and each gy at its window position. */
mt_status mt_cpu_max_pool_local_backward(mt_dtype dt, const mt_pool_problem *p, const void *gy, const uint8_t *loc,
                                         void *gx);

#endif
