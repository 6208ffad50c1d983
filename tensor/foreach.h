/* foreach.h -- ops over a list of tensors at once (foreach.c): the norms
 * that clip_grad_norm_ needs and the in-place scale it applies, in O(1)
 * kernel launches on CUDA however many tensors there are. */
#ifndef MT_FOREACH_H
#define MT_FOREACH_H

#include "mt.h"

/* norms[i] (0-dim, ts[i]'s dtype, new references) = the ord-norm of ts[i];
 * *total, when total is not NULL, the ord-norm of all the elements together
 * (0-dim, the promoted dtype of the list; float32 on the CPU for n == 0).
 * Floating tensors on one device; any ord that linalg.vector_norm takes
 * (CUDA kernels for 2, 1 and inf, the per-tensor path for the others). */
mt_status mt_foreach_norm(mt_tensor *const *ts, int n, double ord, mt_tensor **norms, mt_tensor **total);
/* ts[i] *= scale in place: scale a 0-dim tensor on the tensors' device or
 * on the CPU, or (scale NULL) the number sv (an integer when integral, so
 * integer tensors take integral scales). Read on the device on CUDA
 * (no host sync); one launch per 128 contiguous floating tensors. */
mt_status mt_foreach_mul_(mt_tensor *const *ts, int n, const mt_tensor *scale, double sv);

#endif
