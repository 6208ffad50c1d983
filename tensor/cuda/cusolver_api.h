/* cusolver_api.h -- the few cuSOLVER dense (cusolverDn) declarations
 * moontorch uses, written from NVIDIA's documented C API (cusolverDn.h) so
 * that no CUDA headers are needed at build time; solver.c fills the table
 * by dlopen/dlsym. The S (float) and D (double) routines differ only in
 * their element type, so both are declared with void pointers and kept in
 * pairs: X(return, name, float symbol, double symbol, params). */
#ifndef MT_CUSOLVER_API_H
#define MT_CUSOLVER_API_H

typedef struct cusolverDnContext *cusolverDnHandle_t;
typedef struct gesvdjInfo *gesvdjInfo_t;
typedef int cusolverStatus_t; /* 0: CUSOLVER_STATUS_SUCCESS */

/* cublasFillMode_t */
#define MT_CUSOLVER_FILL_LOWER 0
#define MT_CUSOLVER_FILL_UPPER 1
/* cublasOperation_t */
#define MT_CUSOLVER_OP_N 0
/* cusolverEigMode_t */
#define MT_CUSOLVER_EIG_NOVECTOR 0
#define MT_CUSOLVER_EIG_VECTOR 1

/* the handle and gesvdj's parameters: X(return, name, symbol, params) */
#define MT_CUSOLVER_FUNCS(X)                                                                                           \
  X(cusolverStatus_t, Create, "cusolverDnCreate", (cusolverDnHandle_t * h))                                            \
  X(cusolverStatus_t, SetStream, "cusolverDnSetStream", (cusolverDnHandle_t h, void *stream))                          \
  X(cusolverStatus_t, CreateGesvdjInfo, "cusolverDnCreateGesvdjInfo", (gesvdjInfo_t * info))                           \
  X(cusolverStatus_t, DestroyGesvdjInfo, "cusolverDnDestroyGesvdjInfo", (gesvdjInfo_t info))

/* per precision (S, D); lwork counts elements, info is a device int */
#define MT_CUSOLVER_TYPED(X)                                                                                           \
  X(cusolverStatus_t, getrf_size, "cusolverDnSgetrf_bufferSize", "cusolverDnDgetrf_bufferSize",                        \
    (cusolverDnHandle_t h, int m, int n, void *A, int lda, int *lwork))                                                \
  X(cusolverStatus_t, getrf, "cusolverDnSgetrf", "cusolverDnDgetrf",                                                   \
    (cusolverDnHandle_t h, int m, int n, void *A, int lda, void *work, int *ipiv, int *info))                          \
  X(cusolverStatus_t, getrs, "cusolverDnSgetrs", "cusolverDnDgetrs",                                                   \
    (cusolverDnHandle_t h, int trans, int n, int nrhs, const void *A, int lda, const int *ipiv, void *B, int ldb,      \
     int *info))                                                                                                       \
  X(cusolverStatus_t, potrf_size, "cusolverDnSpotrf_bufferSize", "cusolverDnDpotrf_bufferSize",                        \
    (cusolverDnHandle_t h, int uplo, int n, void *A, int lda, int *lwork))                                             \
  X(cusolverStatus_t, potrf, "cusolverDnSpotrf", "cusolverDnDpotrf",                                                   \
    (cusolverDnHandle_t h, int uplo, int n, void *A, int lda, void *work, int lwork, int *info))                       \
  X(cusolverStatus_t, geqrf_size, "cusolverDnSgeqrf_bufferSize", "cusolverDnDgeqrf_bufferSize",                        \
    (cusolverDnHandle_t h, int m, int n, void *A, int lda, int *lwork))                                                \
  X(cusolverStatus_t, geqrf, "cusolverDnSgeqrf", "cusolverDnDgeqrf",                                                   \
    (cusolverDnHandle_t h, int m, int n, void *A, int lda, void *tau, void *work, int lwork, int *info))               \
  X(cusolverStatus_t, orgqr_size, "cusolverDnSorgqr_bufferSize", "cusolverDnDorgqr_bufferSize",                        \
    (cusolverDnHandle_t h, int m, int n, int k, const void *A, int lda, const void *tau, int *lwork))                  \
  X(cusolverStatus_t, orgqr, "cusolverDnSorgqr", "cusolverDnDorgqr",                                                   \
    (cusolverDnHandle_t h, int m, int n, int k, void *A, int lda, const void *tau, void *work, int lwork, int *info))  \
  X(cusolverStatus_t, syevd_size, "cusolverDnSsyevd_bufferSize", "cusolverDnDsyevd_bufferSize",                        \
    (cusolverDnHandle_t h, int jobz, int uplo, int n, const void *A, int lda, const void *W, int *lwork))              \
  X(cusolverStatus_t, syevd, "cusolverDnSsyevd", "cusolverDnDsyevd",                                                   \
    (cusolverDnHandle_t h, int jobz, int uplo, int n, void *A, int lda, void *W, void *work, int lwork, int *info))    \
  X(cusolverStatus_t, gesvdj_size, "cusolverDnSgesvdj_bufferSize", "cusolverDnDgesvdj_bufferSize",                     \
    (cusolverDnHandle_t h, int jobz, int econ, int m, int n, const void *A, int lda, const void *S, const void *U,     \
     int ldu, const void *V, int ldv, int *lwork, gesvdjInfo_t params))                                                \
  X(cusolverStatus_t, gesvdj, "cusolverDnSgesvdj", "cusolverDnDgesvdj",                                                \
    (cusolverDnHandle_t h, int jobz, int econ, int m, int n, void *A, int lda, void *S, void *U, int ldu, void *V,     \
     int ldv, void *work, int lwork, int *info, gesvdjInfo_t params))

#endif
