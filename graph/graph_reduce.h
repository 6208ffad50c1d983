/* graph_reduce.h -- recorded ops of the reduce family (graph/reduce.c,
 * graph/select.c), with the engine's signatures (tensor/reduce.h); included
 * by graph.h, which also declares sum, mean, softmax and log_softmax. */
#ifndef MTG_GRAPH_REDUCE_H
#define MTG_GRAPH_REDUCE_H

/* reductions over dims (reduce.c) */
mt_status mtg_prod(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
mt_status mtg_nansum(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
mt_status mtg_nanmean(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
mt_status mtg_var(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **out);
mt_status mtg_std(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **out);
mt_status mtg_var_mean(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **var,
                       mt_tensor **mean);
mt_status mtg_std_mean(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **std,
                       mt_tensor **mean);
mt_status mtg_norm(const mt_tensor *x, double p, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out);
mt_status mtg_logsumexp(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
mt_status mtg_amax(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
mt_status mtg_amin(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out);
mt_status mtg_aminmax(const mt_tensor *x, const int *dim, bool keepdim, mt_tensor **min, mt_tensor **max);
mt_status mtg_max_all(const mt_tensor *x, mt_tensor **out);
mt_status mtg_min_all(const mt_tensor *x, mt_tensor **out);
mt_status mtg_median_all(const mt_tensor *x, bool ignore_nan, mt_tensor **out);

/* scans (reduce.c, select.c) */
mt_status mtg_cumsum(const mt_tensor *x, int dim, int dtype, mt_tensor **out);
mt_status mtg_cumprod(const mt_tensor *x, int dim, int dtype, mt_tensor **out);
mt_status mtg_cummax(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices);
mt_status mtg_cummin(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices);

/* values picked along a dim, with 1-based indices (select.c) */
mt_status mtg_max_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);
mt_status mtg_min_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);
mt_status mtg_sort(const mt_tensor *x, int dim, bool descending, bool stable, mt_tensor **values, mt_tensor **indices);
mt_status mtg_topk(const mt_tensor *x, int64_t k, int dim, bool largest, bool sorted, mt_tensor **values,
                   mt_tensor **indices);
mt_status mtg_kthvalue(const mt_tensor *x, int64_t k, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);
mt_status mtg_median_dim(const mt_tensor *x, int dim, bool keepdim, bool ignore_nan, mt_tensor **values,
                         mt_tensor **indices);
mt_status mtg_mode(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices);

#endif
