/* cudnn_api.h -- the few cuDNN declarations moontorch uses (the legacy
 * convolution API, present in cuDNN 8 and 9, the legacy pooling and
 * batch-norm calls of cudnn_ops, deprecated but present in 9.x, and the
 * backend (graph) API that cudnn_attn.c builds attention with), written
 * from NVIDIA's documented C API (cudnn_graph.h, cudnn_cnn.h, cudnn_ops.h)
 * so that no cuDNN headers are needed at build time; cudnn.c fills the
 * table by dlopen/dlsym (the ops entries are optional: NULL when absent). */
#ifndef MT_CUDNN_API_H
#define MT_CUDNN_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
typedef struct cudnnPoolingStruct *cudnnPoolingDescriptor_t;
typedef int cudnnStatus_t; /* 0: CUDNN_STATUS_SUCCESS */

/* cudnnDataType_t */
#define MT_CUDNN_DATA_FLOAT 0
#define MT_CUDNN_DATA_DOUBLE 1
#define MT_CUDNN_DATA_HALF 2
#define MT_CUDNN_DATA_BFLOAT16 9
/* cudnnTensorFormat_t */
#define MT_CUDNN_TENSOR_NCHW 0
/* cudnnConvolutionMode_t */
#define MT_CUDNN_CROSS_CORRELATION 1
/* cudnnMathType_t */
#define MT_CUDNN_DEFAULT_MATH 0
#define MT_CUDNN_TENSOR_OP_MATH 1
#define MT_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION 2
#define MT_CUDNN_FMA_MATH 3
/* cudnnDeterminism_t */
#define MT_CUDNN_DETERMINISTIC 1
/* cudnnPoolingMode_t */
#define MT_CUDNN_POOLING_MAX 0
#define MT_CUDNN_POOLING_AVG_INCLUDE_PAD 1
#define MT_CUDNN_POOLING_AVG_EXCLUDE_PAD 2
#define MT_CUDNN_POOLING_MAX_DETERMINISTIC 3
/* cudnnNanPropagation_t */
#define MT_CUDNN_PROPAGATE_NAN 1
/* cudnnBatchNormMode_t */
#define MT_CUDNN_BATCHNORM_SPATIAL 1
#define MT_CUDNN_BATCHNORM_SPATIAL_PERSISTENT 2

/* cudnnConvolutionFwdAlgoPerf_t, ...BwdDataAlgoPerf_t and
 * ...BwdFilterAlgoPerf_t share this layout (algo is the direction's enum). */
typedef struct mt_cudnn_perf {
  int algo;
  cudnnStatus_t status;
  float time;
  size_t memory;
  int determinism;
  int mathType;
  int reserved[3];
} mt_cudnn_perf;

typedef void *cudnnBackendDescriptor_t;
typedef cudnnBackendDescriptor_t BD;
typedef cudnnTensorDescriptor_t TD;
typedef cudnnFilterDescriptor_t FD;
typedef cudnnConvolutionDescriptor_t CD;
typedef cudnnPoolingDescriptor_t PD;

/* X(return, name, symbol, params) */
#define MT_CUDNN_FUNCS(X)                                                                                              \
  X(size_t, GetVersion, "cudnnGetVersion", (void))                                                                     \
  X(const char *, GetErrorString, "cudnnGetErrorString", (cudnnStatus_t s))                                            \
  X(cudnnStatus_t, Create, "cudnnCreate", (cudnnHandle_t * h))                                                         \
  X(cudnnStatus_t, SetStream, "cudnnSetStream", (cudnnHandle_t h, void *stream))                                       \
  X(cudnnStatus_t, CreateTensorDescriptor, "cudnnCreateTensorDescriptor", (TD * d))                                    \
  X(cudnnStatus_t, DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor", (TD d))                                    \
  X(cudnnStatus_t, SetTensorNdDescriptor, "cudnnSetTensorNdDescriptor",                                                \
    (TD d, int dataType, int nbDims, const int *dims, const int *strides))                                             \
  X(cudnnStatus_t, CreateFilterDescriptor, "cudnnCreateFilterDescriptor", (FD * d))                                    \
  X(cudnnStatus_t, DestroyFilterDescriptor, "cudnnDestroyFilterDescriptor", (FD d))                                    \
  X(cudnnStatus_t, SetFilterNdDescriptor, "cudnnSetFilterNdDescriptor",                                                \
    (FD d, int dataType, int format, int nbDims, const int *dims))                                                     \
  X(cudnnStatus_t, CreateConvolutionDescriptor, "cudnnCreateConvolutionDescriptor", (CD * d))                          \
  X(cudnnStatus_t, DestroyConvolutionDescriptor, "cudnnDestroyConvolutionDescriptor", (CD d))                          \
  X(cudnnStatus_t, SetConvolutionNdDescriptor, "cudnnSetConvolutionNdDescriptor",                                      \
    (CD d, int n, const int *pad, const int *stride, const int *dilation, int mode, int computeType))                  \
  X(cudnnStatus_t, SetConvolutionGroupCount, "cudnnSetConvolutionGroupCount", (CD d, int groups))                      \
  X(cudnnStatus_t, SetConvolutionMathType, "cudnnSetConvolutionMathType", (CD d, int mathType))                        \
  X(cudnnStatus_t, GetFwdAlgos, "cudnnGetConvolutionForwardAlgorithm_v7",                                              \
    (cudnnHandle_t h, TD x, FD w, CD c, TD y, int requested, int *returned, mt_cudnn_perf *perf))                      \
  X(cudnnStatus_t, GetBwdDataAlgos, "cudnnGetConvolutionBackwardDataAlgorithm_v7",                                     \
    (cudnnHandle_t h, FD w, TD dy, CD c, TD dx, int requested, int *returned, mt_cudnn_perf *perf))                    \
  X(cudnnStatus_t, GetBwdFilterAlgos, "cudnnGetConvolutionBackwardFilterAlgorithm_v7",                                 \
    (cudnnHandle_t h, TD x, TD dy, CD c, FD dw, int requested, int *returned, mt_cudnn_perf *perf))                    \
  X(cudnnStatus_t, FwdWorkspace, "cudnnGetConvolutionForwardWorkspaceSize",                                            \
    (cudnnHandle_t h, TD x, FD w, CD c, TD y, int algo, size_t *bytes))                                                \
  X(cudnnStatus_t, BwdDataWorkspace, "cudnnGetConvolutionBackwardDataWorkspaceSize",                                   \
    (cudnnHandle_t h, FD w, TD dy, CD c, TD dx, int algo, size_t *bytes))                                              \
  X(cudnnStatus_t, BwdFilterWorkspace, "cudnnGetConvolutionBackwardFilterWorkspaceSize",                               \
    (cudnnHandle_t h, TD x, TD dy, CD c, FD dw, int algo, size_t *bytes))                                              \
  X(cudnnStatus_t, Forward, "cudnnConvolutionForward",                                                                 \
    (cudnnHandle_t h, const void *alpha, TD xd, const void *x, FD wd, const void *w, CD c, int algo, void *ws,         \
     size_t wsbytes, const void *beta, TD yd, void *y))                                                                \
  X(cudnnStatus_t, BackwardData, "cudnnConvolutionBackwardData",                                                       \
    (cudnnHandle_t h, const void *alpha, FD wd, const void *w, TD dyd, const void *dy, CD c, int algo, void *ws,       \
     size_t wsbytes, const void *beta, TD dxd, void *dx))                                                              \
  X(cudnnStatus_t, BackwardFilter, "cudnnConvolutionBackwardFilter",                                                   \
    (cudnnHandle_t h, const void *alpha, TD xd, const void *x, TD dyd, const void *dy, CD c, int algo, void *ws,       \
     size_t wsbytes, const void *beta, FD dwd, void *dw))                                                              \
  X(cudnnStatus_t, BackendCreateDescriptor, "cudnnBackendCreateDescriptor", (int type, BD * d))                        \
  X(cudnnStatus_t, BackendDestroyDescriptor, "cudnnBackendDestroyDescriptor", (BD d))                                  \
  X(cudnnStatus_t, BackendSetAttribute, "cudnnBackendSetAttribute",                                                    \
    (BD d, int name, int type, int64_t count, const void *elems))                                                      \
  X(cudnnStatus_t, BackendGetAttribute, "cudnnBackendGetAttribute",                                                    \
    (BD d, int name, int type, int64_t requested, int64_t *count, void *elems))                                        \
  X(cudnnStatus_t, BackendFinalize, "cudnnBackendFinalize", (BD d))                                                    \
  X(cudnnStatus_t, BackendExecute, "cudnnBackendExecute", (cudnnHandle_t h, BD plan, BD variant_pack))

/* Optional (cudnn_ops): pooling and batch norm; a missing one leaves its
 * entry NULL and the native kernels run. */
#define MT_CUDNN_OPS_FUNCS(X)                                                                                          \
  X(cudnnStatus_t, CreatePoolingDescriptor, "cudnnCreatePoolingDescriptor", (PD * d))                                 \
  X(cudnnStatus_t, DestroyPoolingDescriptor, "cudnnDestroyPoolingDescriptor", (PD d))                                 \
  X(cudnnStatus_t, SetPooling2dDescriptor, "cudnnSetPooling2dDescriptor",                                             \
    (PD d, int mode, int nanOpt, int wh, int ww, int ph, int pw, int sh, int sw))                                     \
  X(cudnnStatus_t, PoolingForward, "cudnnPoolingForward",                                                             \
    (cudnnHandle_t h, PD p, const void *alpha, TD xd, const void *x, const void *beta, TD yd, void *y))               \
  X(cudnnStatus_t, PoolingBackward, "cudnnPoolingBackward",                                                           \
    (cudnnHandle_t h, PD p, const void *alpha, TD yd, const void *y, TD dyd, const void *dy, TD xd, const void *x,    \
     const void *beta, TD dxd, void *dx))                                                                             \
  X(cudnnStatus_t, DeriveBNTensorDescriptor, "cudnnDeriveBNTensorDescriptor", (TD bn, TD x, int mode))                \
  X(cudnnStatus_t, BNForwardTraining, "cudnnBatchNormalizationForwardTraining",                                       \
    (cudnnHandle_t h, int mode, const void *alpha, const void *beta, TD xd, const void *x, TD yd, void *y, TD bnd,     \
     const void *scale, const void *bias, double factor, void *runMean, void *runVar, double eps, void *saveMean,     \
     void *saveInvStd))                                                                                                \
  X(cudnnStatus_t, BNForwardInference, "cudnnBatchNormalizationForwardInference",                                     \
    (cudnnHandle_t h, int mode, const void *alpha, const void *beta, TD xd, const void *x, TD yd, void *y, TD bnd,     \
     const void *scale, const void *bias, const void *mean, const void *var, double eps))                             \
  X(cudnnStatus_t, BNBackward, "cudnnBatchNormalizationBackward",                                                     \
    (cudnnHandle_t h, int mode, const void *alphaData, const void *betaData, const void *alphaParam,                  \
     const void *betaParam, TD xd, const void *x, TD dyd, const void *dy, TD dxd, void *dx, TD bnd, const void *scale, \
     void *dScale, void *dBias, double eps, const void *saveMean, const void *saveInvStd))

/* The table cudnn.c fills (the cudnn_ops entries may be NULL). */
typedef struct mt_cudnn_fns {
#define MT_CUDNN_FIELD(R, name, sym, params) R(*name) params;
  MT_CUDNN_FUNCS(MT_CUDNN_FIELD)
  MT_CUDNN_OPS_FUNCS(MT_CUDNN_FIELD)
#undef MT_CUDNN_FIELD
  void (*GetLastErrorString)(char *buf, size_t n); /* cuDNN 9 only; NULL before */
} mt_cudnn_fns;

/* For cudnn_ops.c and cudnn_attn.c: the table once loaded, with the
 * version, or NULL when cuDNN is absent or switched off
 * (torch.backends.cudnn.enabled = false); *why (unless NULL) says which. */
const mt_cudnn_fns *mt_cudnn_lib(size_t *version, const char **why);
/* dev's handle (made on first use), bound to dev's current stream. */
cudnnStatus_t mt_cudnn_handle(int dev, cudnnHandle_t *h);

#endif
