/* cudnn_api.h -- the few cuDNN declarations moontorch uses (the legacy
 * convolution API, present in cuDNN 8 and 9, and the backend (graph) API
 * that cudnn_attn.c builds attention with), written from NVIDIA's
 * documented C API (cudnn_graph.h, cudnn_cnn.h) so that no cuDNN headers
 * are needed at build time; cudnn.c fills the table by dlopen/dlsym. */
#ifndef MT_CUDNN_API_H
#define MT_CUDNN_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct cudnnContext *cudnnHandle_t;
typedef struct cudnnTensorStruct *cudnnTensorDescriptor_t;
typedef struct cudnnFilterStruct *cudnnFilterDescriptor_t;
typedef struct cudnnConvolutionStruct *cudnnConvolutionDescriptor_t;
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

/* The loaded entry points (cudnn.c). */
typedef struct mt_cudnn_fns {
#define MT_CUDNN_FIELD(R, name, sym, params) R(*name) params;
  MT_CUDNN_FUNCS(MT_CUDNN_FIELD)
#undef MT_CUDNN_FIELD
  void (*GetLastErrorString)(char *buf, size_t n); /* cuDNN 9 only; NULL before */
} mt_cudnn_fns;

/* The table once cuDNN is loaded, else NULL (*why says why). */
const mt_cudnn_fns *mt_cudnn_api(const char **why);
/* dev's handle (made on first use), bound to dev's current stream. */
cudnnStatus_t mt_cudnn_handle(int dev, cudnnHandle_t *out);

#endif
