/* resize_kernels.h -- the separable resampling of image planes behind
 * torch.vision's resize (tensor/resize.c builds the plan; resize_kernels.c
 * runs it on the CPU, cuda/resize.c on CUDA). Engine-internal. */
#ifndef MT_CPU_RESIZE_KERNELS_H
#define MT_CPU_RESIZE_KERNELS_H

#include "mt.h"

/* A resampling of planes [ih, iw] to [oh, ow]: first along x (rows row0 ..
 * row0 + nrows of the plane into a [nrows, ow] buffer), then along y.
 * Output pixel o of an axis reads taps start[o] .. start[o] + n[o] - 1 with
 * weights w[o * k ..]. Planes come in groups of `group` sharing one table
 * (table t = plane / group; ntab tables). The x pass of table t reads rows
 * row0[t] .. of the plane and writes rows 0 .. nrows[t] - 1 of the buffer,
 * which the y pass's starts count from. */
typedef struct mt_rs_plan {
  int64_t planes, group, ntab;
  int64_t ih, iw, oh, ow;
  int kx, ky;
  const int64_t *row0, *nrows;  /* [ntab] */
  const int64_t *sx, *sy;       /* [ntab * ow], [ntab * oh] */
  const int32_t *nx, *ny;       /* tap counts */
  const double *wx, *wy;        /* [ntab * ow * kx], [ntab * oh * ky] */
} mt_rs_plan;

/* y [planes, oh, ow] from contiguous x [planes, ih, iw]; x uint8, float32
 * or float64, y of x's dtype (uint8: rounded half to even and clamped).
 * One tap per window (nearest): a plain gather, any element size. */
mt_status mt_cpu_resize(mt_dtype dt, const mt_rs_plan *p, const void *x, void *y);
/* gx [planes, ih, iw] (written whole) from gy [planes, oh, ow]: the adjoint
 * of mt_cpu_resize (float32/float64, one table, no pass skipped). */
mt_status mt_cpu_resize_backward(mt_dtype dt, const mt_rs_plan *p, const void *gy, void *gx);

#endif
