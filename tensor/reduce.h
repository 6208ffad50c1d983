/* reduce.h -- reductions, scans, sorting and softmax (engine API beside
 * mt.h). Dims are 0-based (negative from the end; 0 dims listed = all dims);
 * index VALUES (argmax, sort, ...) are 1-based int64, as tensor/index.c reads
 * them. Outputs follow mt.h's `out` convention, for each result of two-result
 * ops; a `dtype` of -1 means "the default". */
#ifndef MT_REDUCE_H
#define MT_REDUCE_H

#include "mt.h"

/* ---- reductions over a set of dims (reduce.c) ---- */
/* sum/prod: integer and bool inputs give int64; dtype >= 0 casts x first. */
mt_status mt_sum(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
mt_status mt_prod(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
/* mean: floating inputs only unless dtype names a floating type. */
mt_status mt_mean(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
/* amax/amin: same dtype; NaN propagates; an empty reduced dim is an error. */
mt_status mt_amax(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
mt_status mt_amin(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
/* max/min of all elements as a 0-dim tensor (amax/amin named max/min) */
mt_status mt_max_all(const mt_tensor *x, mt_tensor **out);
mt_status mt_min_all(const mt_tensor *x, mt_tensor **out);
/* all/any: bool result (uint8 for uint8 inputs). */
mt_status mt_all(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
mt_status mt_any(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
/* max/min along one dim: values (x's dtype) and indices of the first
 * extreme (the first NaN if any). */
mt_status mt_max_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);
mt_status mt_min_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);
/* argmax/argmin: dim NULL gives the flat index into x as a 0-dim tensor
 * (or all-1 shape with keepdim). */
mt_status mt_argmax(const mt_tensor *x, const int *dim, bool keepdim, mt_tensor **out);
mt_status mt_argmin(const mt_tensor *x, const int *dim, bool keepdim, mt_tensor **out);

/* ---- reductions built from the primitives (reduce_stats.c) ---- */
mt_status mt_nansum(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
mt_status mt_nanmean(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
/* var/std: divisor max(0, N - correction); floating inputs only. */
mt_status mt_var(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **out);
mt_status mt_std(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **out);
mt_status mt_var_mean(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **var,
                      mt_tensor **mean);
mt_status mt_std_mean(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **std,
                      mt_tensor **mean);
/* p-norm: p = 2 (also 'fro'), 1, 0 (count of non-zeros), +-INFINITY or any
 * other real; floating inputs only (dtype >= 0 casts x first). */
mt_status mt_norm(const mt_tensor *x, double p, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
/* log(sum(exp(x))) computed stably; integer inputs give the default float. */
mt_status mt_logsumexp(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
/* number of non-zero elements, int64 */
mt_status mt_count_nonzero(const mt_tensor *x, const int *dims, int ndims, mt_tensor **out);
mt_status mt_aminmax(const mt_tensor *x, const int *dim, bool keepdim, mt_tensor **min, mt_tensor **max);

/* ---- scans along one dim (scan.c) ---- */
/* cumsum/cumprod: integer and bool inputs give int64; dtype >= 0 casts x. */
mt_status mt_cumsum(const mt_tensor *x, int dim, int dtype, mt_tensor **out);
mt_status mt_cumprod(const mt_tensor *x, int dim, int dtype, mt_tensor **out);
/* running max/min with the index of the latest extreme (NaN sticks). */
mt_status mt_cummax(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices);
mt_status mt_cummin(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices);

/* ---- sorting and selection along one dim (sort.c) ---- */
/* NaN sorts as the largest value. Sorting is always stable. */
mt_status mt_sort(const mt_tensor *x, int dim, bool descending, bool stable, mt_tensor **values, mt_tensor **indices);
mt_status mt_argsort(const mt_tensor *x, int dim, bool descending, bool stable, mt_tensor **out);
mt_status mt_topk(const mt_tensor *x, int64_t k, int dim, bool largest, bool sorted, mt_tensor **values,
                  mt_tensor **indices);
/* k-th smallest, k counted from 1 */
mt_status mt_kthvalue(const mt_tensor *x, int64_t k, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);
/* Lower median. The _all forms flatten x and give a 0-dim value. median
 * gives NaN (and the first NaN's index) for rows holding NaN; nanmedian
 * ignores NaN. */
mt_status mt_median_all(const mt_tensor *x, bool ignore_nan, mt_tensor **out);
mt_status mt_median_dim(const mt_tensor *x, int dim, bool keepdim, bool ignore_nan, mt_tensor **values,
                        mt_tensor **indices);
/* most frequent value (the smallest on ties) and its last index */
mt_status mt_mode(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);

/* ---- unique (unique.c) ---- */
/* Sorted unique values of flattened x (dim NULL) or unique slices along
 * *dim. inverse/counts may be NULL when not wanted; inverse holds positions
 * into the output (x's shape, or 1-D along *dim). */
mt_status mt_unique(const mt_tensor *x, const int *dim, mt_tensor **out, mt_tensor **inverse, mt_tensor **counts);

/* ---- softmax (softmax.c) ---- */
/* Numerically stable; floating inputs only (dtype >= 0 casts x first). */
mt_status mt_softmax(const mt_tensor *x, int dim, int dtype, mt_tensor **out);
mt_status mt_log_softmax(const mt_tensor *x, int dim, int dtype, mt_tensor **out);

#endif
