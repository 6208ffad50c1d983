/* cublas_api.h -- the few cuBLAS declarations moontorch uses, written from
 * NVIDIA's documented C API (cublas_v2.h, library_types.h) so that no CUDA
 * headers are needed at build time; blas.c fills the table by dlopen/dlsym. */
#ifndef MT_CUBLAS_API_H
#define MT_CUBLAS_API_H

typedef struct cublasContext *cublasHandle_t;
typedef int cublasStatus_t; /* 0: CUBLAS_STATUS_SUCCESS */

#include "gpu_port.h" /* make HIP=1: hipBLAS's names for what follows */
#ifndef MT_HIP

/* cublasOperation_t */
#define MT_CUBLAS_OP_N 0
#define MT_CUBLAS_OP_T 1
/* cudaDataType_t */
#define MT_CUDA_R_32F 0
#define MT_CUDA_R_64F 1
#define MT_CUDA_R_16F 2
#define MT_CUDA_R_16BF 14
/* cublasComputeType_t */
#define MT_CUBLAS_COMPUTE_32F 68
#define MT_CUBLAS_COMPUTE_64F 70
#define MT_CUBLAS_COMPUTE_32F_FAST_TF32 77
/* cublasGemmAlgo_t */
#define MT_CUBLAS_GEMM_DEFAULT (-1)

/* X(return, name, symbol, params) */
#define MT_CUBLAS_FUNCS(X)                                                                                             \
  X(cublasStatus_t, Create, "cublasCreate_v2", (cublasHandle_t * h))                                                   \
  X(cublasStatus_t, SetStream, "cublasSetStream_v2", (cublasHandle_t h, void *stream))                                 \
  X(const char *, GetStatusString, "cublasGetStatusString", (cublasStatus_t s))                                        \
  X(cublasStatus_t, GemmEx, "cublasGemmEx",                                                                            \
    (cublasHandle_t h, int transa, int transb, int m, int n, int k, const void *alpha, const void *A, int Atype,       \
     int lda, const void *B, int Btype, int ldb, const void *beta, void *C, int Ctype, int ldc, int computeType,       \
     int algo))                                                                                                        \
  X(cublasStatus_t, GemmStridedBatchedEx, "cublasGemmStridedBatchedEx",                                                \
    (cublasHandle_t h, int transa, int transb, int m, int n, int k, const void *alpha, const void *A, int Atype,       \
     int lda, long long strideA, const void *B, int Btype, int ldb, long long strideB, const void *beta, void *C,      \
     int Ctype, int ldc, long long strideC, int batchCount, int computeType, int algo))
#endif

#endif
