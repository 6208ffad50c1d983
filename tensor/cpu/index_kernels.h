/* index_kernels.h -- CPU kernels of the index ops (engine-internal). They run
 * under the iterator: an index tensor is first turned into an int64 tensor
 * of element offsets, then gathers and scatters move elements through that
 * offset operand. Kernels that only move bytes exist per element size. */
#ifndef MT_CPU_INDEX_KERNELS_H
#define MT_CPU_INDEX_KERNELS_H

#include "index.h"
#include "iter.h"

/* Operands (off int64, idx int64): off += position(idx) * stride, where
 * position maps 1-based idx (and -size..-1 when neg) to 0..size-1. With
 * flat_ndim > 0 the position is a row-major position in a tensor of
 * flat_shape / flat_strides and is turned into an element offset. Bad
 * indices set `bad` and leave garbage offsets. */
typedef struct mt_offset_ctx {
  int64_t size, stride;
  bool neg;
  int flat_ndim;
  const int64_t *flat_shape, *flat_strides;
  int bad;
} mt_offset_ctx;
void mt_cpu_offsets(char **d, const int64_t *s, int64_t n, void *ctx);

/* Operands (out, src, off): out = element of src at off elements further. */
mt_loop_fn mt_cpu_gather_kernel(size_t elsize);

/* Operands (dst, src, off): the element of dst at off elements further
 * becomes src, dst + alpha * src, or dst * src. ctx: mt_scatter_ctx. */
typedef struct mt_scatter_ctx {
  double alpha_f;
  int64_t alpha_i;
} mt_scatter_ctx;
/* NULL when the dtype does not support the reduction. */
mt_loop_fn mt_cpu_scatter_kernel(mt_reduce r, mt_dtype dt);

/* Operands (x, mask, value): x = value where mask. */
mt_loop_fn mt_cpu_masked_fill_kernel(size_t elsize);
/* Operand (mask): adds the number of true values to *(int64_t *)ctx
 * (atomically, so it may run in parallel). */
void mt_cpu_count_true(char **d, const int64_t *s, int64_t n, void *ctx);
/* Operands (x, mask), run serially; ctx points to a char * cursor. select:
 * copies selected x to the cursor; scatter: copies from the cursor to
 * selected x. The cursor advances by one element per selected value. */
mt_loop_fn mt_cpu_masked_select_kernel(size_t elsize);
mt_loop_fn mt_cpu_masked_scatter_kernel(size_t elsize);

#endif
