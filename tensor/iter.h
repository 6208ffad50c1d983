/* iter.h -- the broadcasting strided iterator shared by all elementwise-style
 * kernels (engine-internal). Operands are outputs first, then inputs; shapes
 * broadcast to the first operand's shape, and contiguous dimensions collapse
 * so kernels see a few simple loops. */
#ifndef MT_ITER_H
#define MT_ITER_H

#include "mt.h"

#define MT_ITER_MAXOPS 4

typedef struct mt_iter {
  int nops;
  int ndim; /* after collapsing; dim 0 is the innermost */
  int64_t numel;
  int64_t shape[MT_MAXDIM];
  int64_t strides[MT_ITER_MAXOPS][MT_MAXDIM]; /* bytes, per operand, innermost first */
  char *data[MT_ITER_MAXOPS];
} mt_iter;

/* Inner loop: n elements; data[k] advances by strides[k] bytes per element. */
typedef void (*mt_loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

/* Builds an iterator over ops[0..nops); ops[0] defines the iteration shape
 * and every other operand must broadcast to it. */
mt_status mt_iter_init(mt_iter *it, mt_tensor *const *ops, int nops, const char *opname);
/* Runs fn over all elements, in parallel when numel >= grain * 2. */
mt_status mt_iter_run(const mt_iter *it, mt_loop_fn fn, void *ctx, int64_t grain);
/* True if every operand is contiguous with its natural element stride. */
bool mt_iter_is_contiguous(const mt_iter *it, const size_t *elsizes);

#endif
