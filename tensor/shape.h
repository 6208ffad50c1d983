/* shape.h -- movement ops built on views and mt_copy_ (shape.c): cat, stack,
 * flip, roll, rot90, tril/triu, diag, repeat/tile, and view helpers
 * (movedim, squeeze of several dims, unflatten, atleast_nd, broadcast_to,
 * meshgrid). Dims are 0-based and already wrapped unless noted; results
 * follow mt.h's `mt_tensor **out` convention. */
#ifndef MT_SHAPE_H
#define MT_SHAPE_H

#include "mt.h"

/* Concatenates n tensors along dim (0-based; negative counts from the end).
 * 1-D empty tensors are skipped, as in PyTorch; dtypes promote. */
mt_status mt_cat(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out);
/* Stacks n same-shape tensors along a new dim (0..ndim, negative allowed). */
mt_status mt_stack(mt_tensor *const *ts, int n, int64_t dim, mt_tensor **out);
/* hstack / vstack / dstack: cat after atleast_1d / 2d / 3d (PyTorch rules). */
mt_status mt_hstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mt_vstack(mt_tensor *const *ts, int n, mt_tensor **out);
mt_status mt_dstack(mt_tensor *const *ts, int n, mt_tensor **out);

/* Copy of t with the order of elements reversed along each of dims. */
mt_status mt_flip(const mt_tensor *t, const int *dims, int n, mt_tensor **out);
/* Copy of t rolled by shifts[i] along dims[i]; n == 0 rolls the flattened
 * tensor by shifts[0]. Repeated dims add their shifts. */
mt_status mt_roll(const mt_tensor *t, const int64_t *shifts, const int *dims, int n, mt_tensor **out);
/* Copy of t rotated by k quarter turns in the plane (d0, d1), d0 -> d1. */
mt_status mt_rot90(const mt_tensor *t, int64_t k, int d0, int d1, mt_tensor **out);

/* Lower / upper triangle of the last two dims (others zeroed). *out may be
 * t itself for the in-place forms. */
mt_status mt_tril(const mt_tensor *t, int64_t diagonal, mt_tensor **out);
mt_status mt_triu(const mt_tensor *t, int64_t diagonal, mt_tensor **out);
/* 1-D -> square matrix with t on diagonal k; 2-D -> copy of diagonal k. */
mt_status mt_diag(const mt_tensor *t, int64_t diagonal, mt_tensor **out);
/* Matrices (in dims d0, d1 of the result, 0..ndim) whose diagonal `offset`
 * holds the last dim of t. */
mt_status mt_diag_embed(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out);

/* Tensor.repeat: n >= ndim counts, t padded with leading size-1 dims. */
mt_status mt_repeat(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out);
/* numpy tile: like repeat, but fewer counts than dims are padded with 1s. */
mt_status mt_tile(const mt_tensor *t, const int64_t *reps, int n, mt_tensor **out);

/* Views (new references sharing t's storage). */
mt_status mt_movedim(const mt_tensor *t, const int *src, const int *dst, int n, mt_tensor **out);
/* Drops those of dims[0..n) that have size 1. */
mt_status mt_squeeze_dims(const mt_tensor *t, const int *dims, int n, mt_tensor **out);
/* Splits dim into sizes[0..n) (one may be -1). */
mt_status mt_unflatten(const mt_tensor *t, int dim, const int64_t *sizes, int n, mt_tensor **out);
/* t with size-1 dims added until it has at least rank (1..3) dims. */
mt_status mt_atleast(const mt_tensor *t, int rank, mt_tensor **out);
/* expand under the name broadcast_to (-1 keeps a size). */
mt_status mt_broadcast_to(const mt_tensor *t, const int64_t *shape, int n, mt_tensor **out);
/* n 0-D or 1-D tensors -> n expanded grids in outs[0..n) (NULL on entry);
 * xy swaps the first two output dims. Nothing is left in outs on failure. */
mt_status mt_meshgrid(mt_tensor *const *ts, int n, bool xy, mt_tensor **outs);

#endif
