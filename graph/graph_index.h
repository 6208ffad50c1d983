/* graph_index.h -- recorded ops of the index family (graph/index.c), with the
 * engine's signatures (tensor/index.h); included by graph.h. Index tensors
 * and masks never get gradients. The in-place forms (names ending in _)
 * rewrite the history of x: an error for a leaf that requires grad, a
 * CopySlices node on the base when x is a view. The functional forms are a
 * recorded clone followed by the in-place form. */
#ifndef MTG_GRAPH_INDEX_H
#define MTG_GRAPH_INDEX_H

/* gathers */
mt_status mtg_index_select(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out);
mt_status mtg_gather(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out);
mt_status mtg_take(const mt_tensor *x, const mt_tensor *index, mt_tensor **out);
mt_status mtg_index(const mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, mt_tensor **out);
mt_status mtg_masked_select(const mt_tensor *x, const mt_tensor *mask, mt_tensor **out);

/* scatters, in place; reduce='multiply' cannot be recorded (an error) */
mt_status mtg_scatter_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_reduce r);
mt_status mtg_scatter_value_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v, mt_reduce r);
mt_status mtg_index_add_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_scalar alpha);
mt_status mtg_index_copy_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src);
mt_status mtg_index_fill_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v);
mt_status mtg_put_(mt_tensor *x, const mt_tensor *index, const mt_tensor *src, bool accumulate);
mt_status mtg_index_put_(mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, const mt_tensor *values,
                         bool accumulate);
mt_status mtg_masked_fill_(mt_tensor *x, const mt_tensor *mask, mt_scalar v);
mt_status mtg_masked_scatter_(mt_tensor *x, const mt_tensor *mask, const mt_tensor *src);

#endif
