/* graph_linalg.h -- recorded ops of the linalg family (graph/linalg.c,
 * einsum.c, linalg_lapack.c, linalg_norm.c), with the engine's signatures;
 * included by graph.h. out= (a non-NULL *out) is an error when an input
 * requires grad, except for the add-products called in place (*out ==
 * input), which are recorded as the product followed by copy_. */
#ifndef MTG_GRAPH_LINALG_H
#define MTG_GRAPH_LINALG_H

/* products (mm, bmm, mv, dot, inner, outer, kron, the addmm family) go
 * through mtg_call (graph.h); matmul records 1-D operands as views */

/* einsum (einsum.c) */
mt_status mtg_einsum(const char *equation, mt_tensor *const *ops, int n, mt_tensor **out);

/* LAPACK-based (linalg_lapack.c): inv, det, solve, cholesky and pinv go
 * through mtg_call (graph.h); these record several results */
mt_status mtg_linalg_slogdet(const mt_tensor *a, mt_tensor **sign, mt_tensor **logabsdet);
mt_status mtg_linalg_qr(const mt_tensor *a, const char *mode, mt_tensor **q, mt_tensor **r);
mt_status mtg_linalg_svd(const mt_tensor *a, bool full_matrices, mt_tensor **u, mt_tensor **s, mt_tensor **vh);
mt_status mtg_linalg_eigh(const mt_tensor *a, char uplo, mt_tensor **w, mt_tensor **v);
mt_status mtg_linalg_lstsq(const mt_tensor *a, const mt_tensor *b, double rcond, const char *driver,
                           mt_tensor **solution, mt_tensor **residuals, mt_tensor **rank, mt_tensor **sv);

/* norms (linalg_norm.c); cross goes through mtg_call */
mt_status mtg_linalg_vector_norm(const mt_tensor *x, double ord, const int *dims, int ndims, bool keepdim, int dt,
                                 mt_tensor **out);
mt_status mtg_linalg_matrix_norm(const mt_tensor *x, const char *sord, double ord, int d0, int d1, bool keepdim,
                                 mt_tensor **out);
mt_status mtg_linalg_norm(const mt_tensor *x, bool has_ord, const char *sord, double ord, const int *dims, int ndims,
                          bool keepdim, mt_tensor **out);

#endif
