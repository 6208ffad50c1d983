/* linalg_cuda.h -- the CUDA half of linalg.c and linalg_norm.c (see
 * linalg_cuda.c). linalg.c keeps every check, shape and the column-major
 * ("fortran") buffers: a contiguous (..., cols, rows) tensor holding each
 * rows x cols matrix column by column, here on a CUDA device; these run
 * cuSOLVER over nb such matrices and report failures as the CPU does. */
#ifndef MT_LINALG_CUDA_H
#define MT_LINALG_CUDA_H

#include "mt.h"

static inline bool mt_la_on_cuda(const mt_tensor *t) { return mt_tdevice(t).type == MT_CUDA; }

/* *inv: a new fortran buffer with the inverse of each matrix of f (n x n;
 * f is overwritten by its LU factors). Singular: the CPU's error. */
mt_status mt_la_cuda_inv(const char *op, mt_tensor *f, int n, int64_t nb, mt_tensor **inv);
/* sign (+-1, 0 if singular) and log|det| of each matrix of f (overwritten). */
mt_status mt_la_cuda_lu_logdet(const char *op, mt_tensor *f, int n, int64_t nb, double *sign, double *logabs);
/* fb (n x nrhs each) = fa^-1 fb; fa is overwritten. */
mt_status mt_la_cuda_solve(const char *op, mt_tensor *fa, mt_tensor *fb, int n, int nrhs, int64_t nb);
/* f = its Cholesky factor (the other triangle zeroed). */
mt_status mt_la_cuda_cholesky(const char *op, mt_tensor *f, bool upper, int n, int64_t nb);
/* fr (rrows x n each) = R, fq (m x qcols each, or NULL) = Q of f (m x n,
 * overwritten); k = min(m, n) > 0. */
mt_status mt_la_cuda_qr(const char *op, mt_tensor *f, mt_tensor *fr, mt_tensor *fq, int m, int n, int64_t nb);
/* S (k each) and, unless fu is NULL, fu (m x ucols) and fvt (vtrows x n),
 * fortran buffers, of f (m x n, overwritten); k = min(m, n) > 0. */
mt_status mt_la_cuda_svd(const char *op, mt_tensor *f, bool full, mt_tensor *S, mt_tensor *fu, mt_tensor *fvt, int m,
                         int n, int64_t nb);
/* W (n each, ascending) and, with vectors, the eigenvectors in f. */
mt_status mt_la_cuda_eigh(const char *op, mt_tensor *f, mt_tensor *W, bool vectors, char uplo, int n, int64_t nb);
/* A copy of t on the CPU (a new reference when it is there already). */
mt_status mt_la_to_host(const mt_tensor *t, mt_tensor **out);
/* *t (released) replaced by its copy on dev. */
mt_status mt_la_move(mt_tensor **t, mt_device dev);

#endif
