/* reduce_util.h -- helpers shared by the reduction, scan, sort and softmax
 * files (engine-internal): dims lists to bitmasks, reduced shapes, and
 * moving one dim last so that per-row kernels see contiguous rows. */
#ifndef MT_REDUCE_UTIL_H
#define MT_REDUCE_UTIL_H

#include "reduce.h"

/* Bitmask of the dims listed (0 dims: every dim of x). MT_EINDEX for a dim
 * out of range, MT_EARG for a repeated dim; messages count dims from 1. */
mt_status mt_dims_mask(const char *op, const int *dims, int ndims, int rank, uint32_t *mask);
/* Shape of x reduced over mask: 1s with keepdim, else the dims removed.
 * Returns the rank. */
int mt_reduced_shape(const mt_tensor *x, uint32_t mask, bool keepdim, int64_t *shape);
/* Reference to x viewed with a shape (a view; contiguous x only, which the
 * callers guarantee: fresh results). */
mt_status mt_reshape_new(mt_tensor *x, const int64_t *shape, int ndim, mt_tensor **out);
/* Contiguous tensor with dim moved last (x itself, retained, if it already
 * is); 0-dim x is treated as shape {1}. */
mt_status mt_rows_of(const mt_tensor *x, int dim, mt_tensor **rows);
/* Inverse of mt_rows_of for a result r laid out as rows: a contiguous
 * tensor whose last dim moves to position dim of a rank-`rank` shape
 * (rank 0 gives a 0-dim result). Consumes r. */
mt_status mt_unrows(mt_tensor *r, int dim, int rank, mt_tensor **out);
/* float16 and bfloat16 (which the kernels do not handle) converted to
 * float32; any other x retained. A new reference either way. */
mt_status mt_upcast_half(const mt_tensor *x, mt_tensor **out);

/* Appends a dim (size, stride in elements) to a group, merging it into the
 * previous one when the two are contiguous with each other (the CPU and
 * CUDA reduction plans). */
void mt_push_dim(int64_t *size, int64_t *stride, int *n, int64_t sz, int64_t st);

#endif
