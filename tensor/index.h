/* index.h -- the engine API of the index ops: gathers (index_select, gather,
 * take, advanced indexing, masked_select), scatters (scatter, index_add,
 * index_copy, index_fill, put_, index_put_, masked_fill_, masked_scatter_)
 * and nonzero. Dims are 0-based here, but index VALUES are 1-based, exactly
 * as the Lua user sees them (API.md rule 2): index tensors are int64 and are
 * read as given, never copied to convert them. */
#ifndef MT_INDEX_H
#define MT_INDEX_H

#include "mt.h"

/* How a scatter combines a source value with the element it lands on. */
typedef enum mt_reduce { MT_REDUCE_NONE, MT_REDUCE_ADD, MT_REDUCE_MUL } mt_reduce;

/* out = x with dimension dim restricted to the positions in index (1-D or
 * 0-dim; 1..size). The output shape is x's with size(dim) = numel(index). */
mt_status mt_index_select(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out);
/* out[i][j][k] = x[i][index[i][j][k]][k] (dim 1 shown); index has x's rank
 * and is no larger than x outside dim; out has index's shape. */
mt_status mt_gather(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out);
/* out = x's elements at flat (row-major) positions index; negative indices
 * count from the end; out has index's shape. */
mt_status mt_take(const mt_tensor *x, const mt_tensor *index, mt_tensor **out);

/* x[i][index[i][j][k]][k] (op)= src[i][j][k] (dim 1 shown). src has x's dtype
 * and rank; index is no larger than src, nor than x outside dim. Duplicate
 * positions are applied in row-major order of index. */
mt_status mt_scatter_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_reduce r);
/* Same with one value for every position of index. */
mt_status mt_scatter_value_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v, mt_reduce r);
/* x.select(dim, index[j]) += alpha * src.select(dim, j); src has x's dtype and
 * x's shape except size(dim) = numel(index). */
mt_status mt_index_add_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_scalar alpha);
/* x.select(dim, index[j]) = src.select(dim, j); shapes as in mt_index_add_. */
mt_status mt_index_copy_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src);
/* x.select(dim, index[j]) = v; negative indices count from the end. */
mt_status mt_index_fill_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v);
/* x's elements at flat positions index = src (+= src when accumulate); src
 * has x's dtype and as many elements as index; negative indices allowed. */
mt_status mt_put_(mt_tensor *x, const mt_tensor *index, const mt_tensor *src, bool accumulate);

/* Advanced indexing, x[indices]: indices[d] (d < n <= x->ndim) is NULL for a
 * whole dimension or an int64 tensor (negative counts from the end). The
 * index tensors broadcast together to a shape B; B takes the place of the
 * indexed dims when they are adjacent, else it comes first (PyTorch rule).
 * labels (may be NULL) renumbers dims in messages: dim d is called
 * labels[d] + 1, for callers that removed dims before (x[{2, idx}]). */
mt_status mt_index(const mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, mt_tensor **out);
/* x[indices] = values (+= when accumulate), values broadcast to the shape
 * mt_index would return and converted to x's dtype. */
mt_status mt_index_put_(mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, const mt_tensor *values,
                        bool accumulate);

/* x = v where mask (bool, broadcast to x's shape) is true. */
mt_status mt_masked_fill_(mt_tensor *x, const mt_tensor *mask, mt_scalar v);
/* 1-D tensor of x's elements where mask is true (x and mask broadcast). */
mt_status mt_masked_select(const mt_tensor *x, const mt_tensor *mask, mt_tensor **out);
/* Copies src's elements, in order, to the positions where mask (broadcast to
 * x) is true; src has x's dtype and at least as many elements. */
mt_status mt_masked_scatter_(mt_tensor *x, const mt_tensor *mask, const mt_tensor *src);
/* int64 n x ndim tensor of the 1-based positions of x's non-zero elements,
 * in row-major order (NaN counts as non-zero). */
mt_status mt_nonzero(const mt_tensor *x, mt_tensor **out);

#endif
