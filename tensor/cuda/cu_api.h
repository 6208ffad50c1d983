/* cu_api.h -- our own declarations of the few CUDA driver API and NVRTC
 * entry points moontorch calls, written from the documented interfaces so
 * that building needs no CUDA headers. The functions are reached through the
 * tables `mt_cu` and `mt_nvrtc`, filled by dlopen/dlsym at first use (device.c,
 * nvrtc.c); nothing here links against CUDA. Engine-internal. */
#ifndef MT_CU_API_H
#define MT_CU_API_H

#include <stddef.h>

#include "gpu_port.h" /* make HIP=1: HIP's names for the lists below */

typedef int CUresult; /* 0 is CUDA_SUCCESS */
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphExec_st *CUgraphExec;

#ifndef MT_HIP
#define CUDA_SUCCESS 0
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_READY 600
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_STREAM_NON_BLOCKING 1
#define CU_EVENT_DEFAULT 0
#define CU_EVENT_DISABLE_TIMING 2
#define CU_MEMHOSTALLOC_PORTABLE 1
#define CU_STREAM_CAPTURE_MODE_RELAXED 2

/* The driver entry points: X(return, name, symbol, params). The symbol is
 * the one the driver exports (versioned where the API was revised). */
#define MT_CU_FUNCS(X)                                                                                                 \
  X(CUresult, Init, "cuInit", (unsigned flags))                                                                        \
  X(CUresult, DriverGetVersion, "cuDriverGetVersion", (int *v))                                                        \
  X(CUresult, GetErrorName, "cuGetErrorName", (CUresult e, const char **s))                                            \
  X(CUresult, GetErrorString, "cuGetErrorString", (CUresult e, const char **s))                                        \
  X(CUresult, DeviceGetCount, "cuDeviceGetCount", (int *n))                                                            \
  X(CUresult, DeviceGet, "cuDeviceGet", (CUdevice * d, int ordinal))                                                   \
  X(CUresult, DeviceGetName, "cuDeviceGetName", (char *name, int len, CUdevice d))                                     \
  X(CUresult, DeviceGetAttribute, "cuDeviceGetAttribute", (int *v, int attr, CUdevice d))                              \
  X(CUresult, DeviceTotalMem, "cuDeviceTotalMem_v2", (size_t * bytes, CUdevice d))                                     \
  X(CUresult, DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", (CUcontext * c, CUdevice d))                         \
  X(CUresult, CtxSetCurrent, "cuCtxSetCurrent", (CUcontext c))                                                         \
  X(CUresult, CtxSynchronize, "cuCtxSynchronize", (void))                                                              \
  X(CUresult, MemAlloc, "cuMemAlloc_v2", (CUdeviceptr * p, size_t n))                                                  \
  X(CUresult, MemFree, "cuMemFree_v2", (CUdeviceptr p))                                                                \
  X(CUresult, MemGetInfo, "cuMemGetInfo_v2", (size_t * free, size_t *total))                                           \
  X(CUresult, MemHostAlloc, "cuMemHostAlloc", (void **p, size_t n, unsigned flags))                                    \
  X(CUresult, MemFreeHost, "cuMemFreeHost", (void *p))                                                                 \
  X(CUresult, MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", (CUdeviceptr d, const void *h, size_t n, CUstream s))           \
  X(CUresult, MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", (void *h, CUdeviceptr d, size_t n, CUstream s))                 \
  X(CUresult, MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st))          \
  X(CUresult, MemsetD8Async, "cuMemsetD8Async", (CUdeviceptr d, unsigned char v, size_t n, CUstream s))                \
  X(CUresult, StreamCreate, "cuStreamCreate", (CUstream * s, unsigned flags))                                          \
  X(CUresult, StreamDestroy, "cuStreamDestroy_v2", (CUstream s))                                                       \
  X(CUresult, StreamSynchronize, "cuStreamSynchronize", (CUstream s))                                                  \
  X(CUresult, StreamQuery, "cuStreamQuery", (CUstream s))                                                              \
  X(CUresult, StreamWaitEvent, "cuStreamWaitEvent", (CUstream s, CUevent e, unsigned flags))                           \
  X(CUresult, EventCreate, "cuEventCreate", (CUevent * e, unsigned flags))                                             \
  X(CUresult, EventDestroy, "cuEventDestroy_v2", (CUevent e))                                                          \
  X(CUresult, EventRecord, "cuEventRecord", (CUevent e, CUstream s))                                                   \
  X(CUresult, EventSynchronize, "cuEventSynchronize", (CUevent e))                                                     \
  X(CUresult, EventQuery, "cuEventQuery", (CUevent e))                                                                 \
  X(CUresult, EventElapsedTime, "cuEventElapsedTime", (float *ms, CUevent a, CUevent b))                               \
  X(CUresult, ModuleLoadData, "cuModuleLoadData", (CUmodule * m, const void *image))                                   \
  X(CUresult, ModuleGetFunction, "cuModuleGetFunction", (CUfunction * f, CUmodule m, const char *name))                \
  X(CUresult, StreamBeginCapture, "cuStreamBeginCapture_v2", (CUstream s, int mode))                                 \
  X(CUresult, StreamEndCapture, "cuStreamEndCapture", (CUstream s, CUgraph * g))                                      \
  X(CUresult, GraphInstantiate, "cuGraphInstantiateWithFlags", (CUgraphExec * e, CUgraph g, unsigned long long flags)) \
  X(CUresult, GraphLaunch, "cuGraphLaunch", (CUgraphExec e, CUstream s))                                              \
  X(CUresult, GraphExecDestroy, "cuGraphExecDestroy", (CUgraphExec e))                                                \
  X(CUresult, GraphDestroy, "cuGraphDestroy", (CUgraph g))                                                            \
  X(CUresult, LaunchKernel, "cuLaunchKernel",                                                                          \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,       \
     CUstream s, void **params, void **extra))
#endif

typedef struct mt_cu_api {
#define MT_CU_FIELD(R, name, sym, params) R(*name) params;
  MT_CU_FUNCS(MT_CU_FIELD)
#undef MT_CU_FIELD
} mt_cu_api;

/* Filled by mt_cuda_load (device.c); valid only after it succeeded. */
extern mt_cu_api mt_cu;

/* NVRTC */
typedef int nvrtcResult; /* 0 is NVRTC_SUCCESS */
typedef struct _nvrtcProgram *nvrtcProgram;

#ifndef MT_HIP
#define MT_NVRTC_FUNCS(X)                                                                                              \
  X(nvrtcResult, Version, "nvrtcVersion", (int *major, int *minor))                                                    \
  X(const char *, GetErrorString, "nvrtcGetErrorString", (nvrtcResult r))                                              \
  X(nvrtcResult, CreateProgram, "nvrtcCreateProgram",                                                                  \
    (nvrtcProgram * p, const char *src, const char *name, int nh, const char *const *headers,                          \
     const char *const *include_names))                                                                                \
  X(nvrtcResult, DestroyProgram, "nvrtcDestroyProgram", (nvrtcProgram * p))                                            \
  X(nvrtcResult, CompileProgram, "nvrtcCompileProgram", (nvrtcProgram p, int nopt, const char *const *opts))           \
  X(nvrtcResult, GetProgramLogSize, "nvrtcGetProgramLogSize", (nvrtcProgram p, size_t *n))                             \
  X(nvrtcResult, GetProgramLog, "nvrtcGetProgramLog", (nvrtcProgram p, char *log))                                     \
  X(nvrtcResult, GetCUBINSize, "nvrtcGetCUBINSize", (nvrtcProgram p, size_t *n))                                       \
  X(nvrtcResult, GetCUBIN, "nvrtcGetCUBIN", (nvrtcProgram p, char *cubin))
#endif

typedef struct mt_nvrtc_api {
#define MT_NVRTC_FIELD(R, name, sym, params) R(*name) params;
  MT_NVRTC_FUNCS(MT_NVRTC_FIELD)
#undef MT_NVRTC_FIELD
} mt_nvrtc_api;

extern mt_nvrtc_api mt_nvrtc;

#endif
