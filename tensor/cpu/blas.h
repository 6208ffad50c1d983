/* blas.h -- the engine's door to the math libraries (cpu/blas.c):
 * row-major GEMM that picks oneDNN or OpenBLAS per shape, and the LAPACK
 * routines (Fortran symbols, column-major) of OpenBLAS, loaded lazily.
 * Engine-internal: matmul.c, linalg.c, linalg_norm.c, attention.c and
 * cpu/attention_kernels.c include it. */
#ifndef MT_CPU_BLAS_H
#define MT_CPU_BLAS_H

#include <stddef.h>

#include "mt.h"

/* C = alpha * op(A) @ op(B) + beta * C, all row-major; op(A) is m x k and
 * stored transposed when ta (then A is k x m with leading dimension lda).
 * dt is MT_FLOAT32 or MT_FLOAT64. With beta == 0, C is not read. Threads:
 * all of mt_get_num_threads(), or one when called inside a parallel region. */
mt_status mt_blas_gemm(mt_dtype dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void *a,
                       int64_t lda, const void *b, int64_t ldb, double beta, void *c, int64_t ldc);

/* C = act(A @ B + bias) with oneDNN's matmul primitive (cpu/matmul_dnnl.c),
 * float32: A is m x k and B k x n, each with strides s[0] (rows) and s[1]
 * (columns) in elements; bias holds n values or is NULL; C is m x n,
 * contiguous. alpha: act's parameter. MT_EARG (message set) if oneDNN
 * cannot run the problem. */
mt_status mt_dnnl_linear(int64_t m, int64_t n, int64_t k, const float *a, const int64_t sa[2], const float *b,
                         const int64_t sb[2], const float *bias, mt_act act, double alpha, float *c);

/* Loads the libraries now (call before a parallel region that runs GEMMs,
 * so that the first use is not inside it). */
void mt_blas_load(void);

/* LAPACK routines of one precision. Data pointers are float* or double*
 * matching the table; scalar reals (rcond) point to the same type. Trailing
 * size_t arguments are the hidden lengths of Fortran character arguments. */
typedef void (*mt_la_getrf)(const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info);
typedef void (*mt_la_getri)(const int *n, void *a, const int *lda, const int *ipiv, void *work, const int *lwork,
                            int *info);
typedef void (*mt_la_getrs)(const char *trans, const int *n, const int *nrhs, const void *a, const int *lda,
                            const int *ipiv, void *b, const int *ldb, int *info, size_t);
typedef void (*mt_la_potrf)(const char *uplo, const int *n, void *a, const int *lda, int *info, size_t);
typedef void (*mt_la_geqrf)(const int *m, const int *n, void *a, const int *lda, void *tau, void *work,
                            const int *lwork, int *info);
typedef void (*mt_la_orgqr)(const int *m, const int *n, const int *k, void *a, const int *lda, const void *tau,
                            void *work, const int *lwork, int *info);
typedef void (*mt_la_gesdd)(const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s, void *u,
                            const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork, int *iwork,
                            int *info, size_t);
typedef void (*mt_la_syevd)(const char *jobz, const char *uplo, const int *n, void *a, const int *lda, void *w,
                            void *work, const int *lwork, int *iwork, const int *liwork, int *info, size_t, size_t);
typedef void (*mt_la_gelsy)(const int *m, const int *n, const int *nrhs, void *a, const int *lda, void *b,
                            const int *ldb, int *jpvt, const void *rcond, int *rank, void *work, const int *lwork,
                            int *info);
typedef void (*mt_la_gelsd)(const int *m, const int *n, const int *nrhs, void *a, const int *lda, void *b,
                            const int *ldb, void *s, const void *rcond, int *rank, void *work, const int *lwork,
                            int *iwork, int *info);

typedef struct mt_lapack {
  mt_la_getrf getrf;
  mt_la_getri getri;
  mt_la_getrs getrs;
  mt_la_potrf potrf;
  mt_la_geqrf geqrf;
  mt_la_orgqr orgqr;
  mt_la_gesdd gesdd;
  mt_la_syevd syevd;
  mt_la_gelsy gelsy;
  mt_la_gelsd gelsd;
} mt_lapack;

/* The LAPACK table for dt (float32/float64), loading the library on first
 * use; NULL with a message naming op when no LAPACK can be loaded. */
const mt_lapack *mt_lapack_get(mt_dtype dt, const char *op);

#endif
