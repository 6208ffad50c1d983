/* linalg.h -- the engine's matrix products (matmul.c), einsum (einsum.c),
 * LAPACK-based linear algebra (linalg.c) and norms (linalg_norm.c).
 * Same conventions as mt.h: 0-based dims, mt_status results, `**out`
 * (NULL: allocate; else write into it). Matrices are the last two dims;
 * leading dims are a batch (broadcast where PyTorch broadcasts). */
#ifndef MT_LINALG_H
#define MT_LINALG_H

#include "mt.h"

/* ---- products (matmul.c). Both operands must have the same dtype;
 * float16/bfloat16 compute in float32, integers in a plain loop. ---- */
/* PyTorch's matmul: 1-D/2-D/batched with broadcasting of batch dims. */
mt_status mt_matmul(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* act(a @ b + bias) in one call (the JIT's matmul epilogue): a (..., m, k),
 * b (k, n), bias (n) or NULL; float32 runs one oneDNN matmul primitive that
 * adds the bias and applies act as it writes, other cases the plain ops
 * one after another. alpha: act's parameter. *out must be NULL. */
mt_status mt_matmul_act(const mt_tensor *a, const mt_tensor *b, const mt_tensor *bias, mt_act act, double alpha,
                        mt_tensor **out);
/* A linear layer's weight and bias gradients from the output gradient g
 * (m, n) and input x (m, k) in one cuBLASLt call (CUDA, float32/16/bf16):
 * gw = g^T x (n, k; contiguous), gb = g summed over rows (n). MT_EARG
 * without a message when that path does not apply (the caller computes
 * them as two ops). */
mt_status mt_linear_wgrad(const mt_tensor *g, const mt_tensor *x, mt_tensor **gw, mt_tensor **gb);
mt_status mt_mm(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
mt_status mt_bmm(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
mt_status mt_mv(const mt_tensor *a, const mt_tensor *v, mt_tensor **out);
/* 1-D . 1-D -> 0-dim (vdot is the same for real dtypes). */
mt_status mt_dot(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* inner product over the last dims: shape a[:-1] + b[:-1]. */
mt_status mt_inner(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* Outer product of two 1-D tensors (types promoted). */
mt_status mt_outer(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);
/* beta * input + alpha * (m1 @ m2); input broadcasts to the product's shape;
 * with beta == 0 input is ignored (NaNs in it do not propagate). */
mt_status mt_addmm(const mt_tensor *input, const mt_tensor *m1, const mt_tensor *m2, double beta, double alpha,
                   mt_tensor **out);
mt_status mt_addmv(const mt_tensor *input, const mt_tensor *mat, const mt_tensor *vec, double beta, double alpha,
                   mt_tensor **out);
mt_status mt_baddbmm(const mt_tensor *input, const mt_tensor *b1, const mt_tensor *b2, double beta, double alpha,
                     mt_tensor **out);
/* beta * input + alpha * sum_i b1[i] @ b2[i] */
mt_status mt_addbmm(const mt_tensor *input, const mt_tensor *b1, const mt_tensor *b2, double beta, double alpha,
                    mt_tensor **out);
/* Kronecker product (types promoted); at most 4 dims. */
mt_status mt_kron(const mt_tensor *a, const mt_tensor *b, mt_tensor **out);

/* A one-line description of the libraries in use (cpu/blas.c). */
const char *mt_blas_info(void);

/* ---- einsum (einsum.c) ---- */
/* equation like "bij,bjk->bik", "ii", "...ij,...jk"; n operands. */
mt_status mt_einsum(const char *equation, mt_tensor *const *ops, int n, mt_tensor **out);

/* ---- LAPACK-based (linalg.c): float32/float64, batched over leading dims.
 * Multi-output functions always allocate their outputs. ---- */
mt_status mt_linalg_inv(const mt_tensor *a, mt_tensor **out);
mt_status mt_linalg_det(const mt_tensor *a, mt_tensor **out);
mt_status mt_linalg_slogdet(const mt_tensor *a, mt_tensor **sign, mt_tensor **logabsdet);
/* Solves A X = B (left) or X A = B; B may be a vector (shape A[:-1]). */
mt_status mt_linalg_solve(const mt_tensor *a, const mt_tensor *b, bool left, mt_tensor **out);
mt_status mt_linalg_cholesky(const mt_tensor *a, bool upper, mt_tensor **out);
/* mode: "reduced", "complete" or "r" (q is then an empty tensor). */
mt_status mt_linalg_qr(const mt_tensor *a, const char *mode, mt_tensor **q, mt_tensor **r);
/* A = U diag(S) Vh; u and vh may be NULL (singular values only). */
mt_status mt_linalg_svd(const mt_tensor *a, bool full_matrices, mt_tensor **u, mt_tensor **s, mt_tensor **vh);
/* Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices,
 * reading the triangle uplo ('L' or 'U'); v may be NULL. */
mt_status mt_linalg_eigh(const mt_tensor *a, char uplo, mt_tensor **w, mt_tensor **v);
/* Least squares min |A X - B|. rcond < 0: machine eps * max(m, n). driver:
 * "gelsy" (default) or "gelsd". residuals and singular values are empty
 * tensors unless the driver computes them (as in PyTorch). */
mt_status mt_linalg_lstsq(const mt_tensor *a, const mt_tensor *b, double rcond, const char *driver,
                          mt_tensor **solution, mt_tensor **residuals, mt_tensor **rank, mt_tensor **sv);
/* Tolerance max(atol, rtol * largest singular value); rtol < 0 means
 * PyTorch's default (eps * max(m, n) when atol is 0, else 0). */
mt_status mt_linalg_pinv(const mt_tensor *a, double atol, double rtol, bool hermitian, mt_tensor **out);
mt_status mt_linalg_matrix_rank(const mt_tensor *a, double atol, double rtol, bool hermitian, mt_tensor **out);

/* ---- norms and cross (linalg_norm.c) ---- */
/* sum(|x|^ord)^(1/ord) over dims (ndims == 0: all); ord may be +-INFINITY
 * or 0 (count of non-zeros). Result dtype dt (float), or x's when dt < 0. */
mt_status mt_linalg_vector_norm(const mt_tensor *x, double ord, const int *dims, int ndims, bool keepdim, int dt,
                                mt_tensor **out);
/* Matrix norm over (d0, d1): sord "fro" or "nuc", or sord NULL and a numeric
 * ord of +-1, +-2, +-INFINITY. */
mt_status mt_linalg_matrix_norm(const mt_tensor *x, const char *sord, double ord, int d0, int d1, bool keepdim,
                                mt_tensor **out);
/* torch.linalg.norm: has_ord false means the default (2-norm / Frobenius). */
mt_status mt_linalg_norm(const mt_tensor *x, bool has_ord, const char *sord, double ord, const int *dims, int ndims,
                         bool keepdim, mt_tensor **out);
/* Cross product of 3-vectors along dim (broadcasting; types promoted). */
mt_status mt_linalg_cross(const mt_tensor *a, const mt_tensor *b, int dim, mt_tensor **out);

#endif
