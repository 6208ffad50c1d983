/* cublaslt_api.h -- the few cuBLASLt declarations moontorch uses, written
 * from NVIDIA's documented C API (cublasLt.h) so that no CUDA headers are
 * needed at build time; blaslt.c fills the table by dlopen/dlsym. Only the
 * CUDA build uses it: make HIP=1 compiles the Lt path out (hipBLASLt is not
 * wired yet) and every product takes the cuBLAS/hipBLAS path. */
#ifndef MT_CUBLASLT_API_H
#define MT_CUBLASLT_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct cublasLtContext *cublasLtHandle_t;
typedef void *cublasLtMatmulDesc_t;
typedef void *cublasLtMatrixLayout_t;
typedef void *cublasLtMatmulPreference_t;
typedef struct {
  uint64_t data[8];
} cublasLtMatmulAlgo_t;
typedef struct {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  int state; /* cublasStatus_t */
  float wavesCount;
  int reserved[4];
} cublasLtMatmulHeuristicResult_t;

/* cublasLtMatmulDescAttributes_t */
#define MT_LT_DESC_TRANSA 3
#define MT_LT_DESC_TRANSB 4
#define MT_LT_DESC_EPILOGUE 7
#define MT_LT_DESC_BIAS_POINTER 8
#define MT_LT_DESC_EPILOGUE_AUX_POINTER 11
#define MT_LT_DESC_EPILOGUE_AUX_LD 12
/* cublasLtMatmulPreferenceAttributes_t */
#define MT_LT_PREF_MAX_WORKSPACE_BYTES 1
#define MT_LT_PREF_MIN_ALIGNMENT_A_BYTES 5 /* then B, C, D: 6, 7, 8 */
/* cublasLtEpilogue_t */
#define MT_LT_EPI_DEFAULT 1
#define MT_LT_EPI_RELU_BIAS 6
#define MT_LT_EPI_BIAS 4
#define MT_LT_EPI_RELU_AUX_BIAS 134
#define MT_LT_EPI_GELU_BIAS 36 /* GELU is the tanh approximation */
#define MT_LT_EPI_GELU_AUX_BIAS 164
#define MT_LT_EPI_BGRADB 512

/* X(return, name, symbol, params) */
#define MT_CUBLASLT_FUNCS(X)                                                                                           \
  X(int, Create, "cublasLtCreate", (cublasLtHandle_t * h))                                                             \
  X(int, DescCreate, "cublasLtMatmulDescCreate", (cublasLtMatmulDesc_t * d, int computeType, int scaleType))           \
  X(int, DescDestroy, "cublasLtMatmulDescDestroy", (cublasLtMatmulDesc_t d))                                           \
  X(int, DescSet, "cublasLtMatmulDescSetAttribute", (cublasLtMatmulDesc_t d, int attr, const void *buf, size_t n))     \
  X(int, LayoutCreate, "cublasLtMatrixLayoutCreate",                                                                   \
    (cublasLtMatrixLayout_t * l, int type, uint64_t rows, uint64_t cols, int64_t ld))                                  \
  X(int, LayoutDestroy, "cublasLtMatrixLayoutDestroy", (cublasLtMatrixLayout_t l))                                     \
  X(int, PrefCreate, "cublasLtMatmulPreferenceCreate", (cublasLtMatmulPreference_t * p))                               \
  X(int, PrefDestroy, "cublasLtMatmulPreferenceDestroy", (cublasLtMatmulPreference_t p))                               \
  X(int, PrefSet, "cublasLtMatmulPreferenceSetAttribute",                                                              \
    (cublasLtMatmulPreference_t p, int attr, const void *buf, size_t n))                                               \
  X(int, Heuristic, "cublasLtMatmulAlgoGetHeuristic",                                                                  \
    (cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,                   \
     cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t dd, cublasLtMatmulPreference_t p, int requested,                 \
     cublasLtMatmulHeuristicResult_t *results, int *returned))                                                         \
  X(int, Matmul, "cublasLtMatmul",                                                                                     \
    (cublasLtHandle_t h, cublasLtMatmulDesc_t d, const void *alpha, const void *A, cublasLtMatrixLayout_t la,          \
     const void *B, cublasLtMatrixLayout_t lb, const void *beta, const void *C, cublasLtMatrixLayout_t lc, void *D,    \
     cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo, void *workspace, size_t wsize, void *stream))

#endif
