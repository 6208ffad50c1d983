/* graph_reduce.h -- recorded ops of the reduce family (graph/reduce.c,
 * graph/select.c), with the engine's signatures (tensor/reduce.h); included
 * by graph.h. */
#ifndef MTG_GRAPH_REDUCE_H
#define MTG_GRAPH_REDUCE_H

/* of all elements, as 0-dim results (reduce.c); reductions over dims go
 * through mtg_reduce (graph.h) */
mt_status mtg_max_all(const mt_tensor *x, mt_tensor **out);
mt_status mtg_min_all(const mt_tensor *x, mt_tensor **out);
mt_status mtg_median_all(const mt_tensor *x, bool ignore_nan, mt_tensor **out);

/* scans with indices (select.c); cumsum and cumprod go through mtg_along */
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
