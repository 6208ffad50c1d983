/* gpu_port.h -- the one portability header of the GPU backend. The host
 * sources of tensor/cuda/ are written against the CUDA names of cu_api.h
 * (driver API, NVRTC) and cublas_api.h (cuBLAS): the tables `mt_cu`, `mt_nvrtc`
 * and blas.c's `cb`, filled by dlopen/dlsym. `make HIP=1` defines MT_HIP;
 * then cu_api.h and cublas_api.h take their entry-point lists and constants
 * from here instead, bound to HIP's libraries (libamdhip64, hiprtc,
 * hipBLAS), and the same sources build unchanged: the `cuda` device type
 * then talks to an AMD GPU. Nothing here needs HIP at build time either;
 * the declarations are written from HIP's documented C API (ROCm 5.x ABI),
 * and `make HIP=1` checks them against the installed HIP headers
 * (tests/hip/port_check.cc: constants, the one struct offset, and the
 * calling shape of every driver and hiprtc entry point).
 *
 * The list entries are X(return, field, symbol, params) as in cu_api.h;
 * the symbol is a bare identifier here (so the check can name it) and a
 * string there: loaders spell it MT_SYM(symbol).
 *
 * Kernel sources get their portability prelude from common.cu (#ifdef
 * __HIP__). Engine-internal. */
#ifndef MT_GPU_PORT_H
#define MT_GPU_PORT_H

#define MT_SYM_STR_(s) #s
#ifdef MT_HIP
#define MT_SYM(s) MT_SYM_STR_(s)
#else
#define MT_SYM(s) s
#endif

/* The libraries each loader tries (after $env), the directories besides the
 * loader's path, and the names used in messages. */
#ifdef MT_HIP
#define MT_GPU_DRIVER_ENV "MOONTORCH_HIP"
#define MT_GPU_DRIVER_LIBS "libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"
#define MT_GPU_DRIVER_DESC "HIP runtime"
#define MT_GPU_RTC_ENV "MOONTORCH_HIPRTC"
#define MT_GPU_RTC_NAME "hiprtc"
/* ROCm 5 keeps hiprtc inside libamdhip64; ROCm 6 splits it out */
#define MT_GPU_RTC_LIBS "libhiprtc.so", "libhiprtc.so.6", "libamdhip64.so", "libamdhip64.so.5"
#define MT_GPU_RTC_DESC "hiprtc (libhiprtc.so or libamdhip64.so.5)"
#define MT_GPU_BLAS_ENV "MOONTORCH_HIPBLAS"
#define MT_GPU_BLAS_LIBS "libhipblas.so", "libhipblas.so.2", "libhipblas.so.1", "libhipblas.so.0"
#define MT_GPU_BLAS_DESC "hipBLAS (libhipblas.so)"
#define MT_GPU_LIB_DIRS "/opt/rocm/lib/", "/usr/lib/x86_64-linux-gnu/"
/* hiprtc: the architecture is a gfx target ID ("gfx90a:sramecc+:xnack-") */
#define MT_GPU_ARCH_OPT "--offload-arch=%s"
#define MT_GPU_RTC_OPTS "-std=c++17"
#define MT_GPU_RTC_FAST_COMPILE 0 /* hipRTC has no -Ofc */
#else
#define MT_GPU_DRIVER_ENV "MOONTORCH_CUDA_DRIVER"
#define MT_GPU_DRIVER_LIBS "libcuda.so.1", "libcuda.so"
#define MT_GPU_DRIVER_DESC "CUDA driver"
#define MT_GPU_RTC_ENV "MOONTORCH_NVRTC"
#define MT_GPU_RTC_NAME "NVRTC"
#define MT_GPU_RTC_LIBS "libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"
#define MT_GPU_RTC_DESC "NVRTC (libnvrtc.so.13/.12)"
#define MT_GPU_BLAS_ENV "MOONTORCH_CUBLAS"
#define MT_GPU_BLAS_LIBS "libcublas.so.13", "libcublas.so.12", "libcublas.so"
#define MT_GPU_BLAS_DESC "cuBLAS (libcublas.so.13/.12)"
#define MT_GPU_LIB_DIRS                                                                                                \
  "/usr/local/cuda/lib64/", "/usr/local/cuda/targets/x86_64-linux/lib/", "/usr/lib/x86_64-linux-gnu/"
#define MT_GPU_ARCH_OPT "--gpu-architecture=%s"
#define MT_GPU_RTC_OPTS "-default-device", "--std=c++17"
#define MT_GPU_RTC_FAST_COMPILE 1 /* NVRTC's -Ofc=mid from 12.8 on (nvrtc.c) */
#endif

#ifdef MT_HIP
/* ---- HIP runtime in place of the CUDA driver (cu_api.h's types keep
 * their CUDA names: hipError_t, hipDevice_t are ints, hipDeviceptr_t is a
 * 64-bit address like CUdeviceptr, the handles are opaque pointers) ---- */
#define CUDA_SUCCESS 0               /* hipSuccess */
#define CUDA_ERROR_OUT_OF_MEMORY 2   /* hipErrorOutOfMemory */
#define CUDA_ERROR_NOT_READY 600     /* hipErrorNotReady */
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 63     /* hipDeviceAttributeMultiprocessorCount */
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 23 /* hipDeviceAttributeComputeCapabilityMajor */
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 61 /* hipDeviceAttributeComputeCapabilityMinor */
#define CU_STREAM_NON_BLOCKING 1    /* hipStreamNonBlocking */
#define CU_EVENT_DEFAULT 0          /* hipEventDefault */
#define CU_EVENT_DISABLE_TIMING 2   /* hipEventDisableTiming */
#define CU_MEMHOSTALLOC_PORTABLE 1  /* hipHostMallocPortable */
#define CU_STREAM_CAPTURE_MODE_RELAXED 2 /* hipStreamCaptureModeRelaxed */
/* hipDeviceProp_t as the unversioned hipGetDeviceProperties fills it (ROCm
 * 6 keeps that symbol on the 5.x layout, beside hipGetDevicePropertiesR0600;
 * later 5.x releases appended fields after gcnArchName): its ROCm 5.2 size
 * and where gcnArchName, the gfx target ID, lies */
#define MT_HIP_PROP_SIZE 792
#define MT_HIP_PROP_ARCH_OFFSET 396

/* Same fields as cu_api.h's list; HIP reports errors by return value. */
#define MT_CU_FUNCS(X)                                                                                                 \
  X(CUresult, Init, hipInit, (unsigned flags))                                                                         \
  X(CUresult, DriverGetVersion, hipDriverGetVersion, (int *v))                                                         \
  X(const char *, ErrorName, hipGetErrorName, (CUresult e))                                                            \
  X(const char *, ErrorString, hipGetErrorString, (CUresult e))                                                        \
  X(CUresult, DeviceGetCount, hipGetDeviceCount, (int *n))                                                             \
  X(CUresult, DeviceGet, hipDeviceGet, (CUdevice * d, int ordinal))                                                    \
  X(CUresult, DeviceGetName, hipDeviceGetName, (char *name, int len, CUdevice d))                                      \
  X(CUresult, DeviceGetAttribute, hipDeviceGetAttribute, (int *v, int attr, CUdevice d))                               \
  X(CUresult, GetDeviceProperties, hipGetDeviceProperties, (void *prop, int d))                                        \
  X(CUresult, DeviceTotalMem, hipDeviceTotalMem, (size_t * bytes, CUdevice d))                                         \
  X(CUresult, DevicePrimaryCtxRetain, hipDevicePrimaryCtxRetain, (CUcontext * c, CUdevice d))                          \
  X(CUresult, CtxSetCurrent, hipCtxSetCurrent, (CUcontext c))                                                          \
  X(CUresult, CtxSynchronize, hipDeviceSynchronize, (void))                                                            \
  X(CUresult, MemAlloc, hipMalloc, (CUdeviceptr * p, size_t n))                                                        \
  X(CUresult, MemFree, hipFree, (CUdeviceptr p))                                                                       \
  X(CUresult, MemGetInfo, hipMemGetInfo, (size_t * free, size_t *total))                                               \
  X(CUresult, MemHostAlloc, hipHostMalloc, (void **p, size_t n, unsigned flags))                                       \
  X(CUresult, MemFreeHost, hipHostFree, (void *p))                                                                     \
  X(CUresult, MemcpyHtoDAsync, hipMemcpyHtoDAsync, (CUdeviceptr d, const void *h, size_t n, CUstream s))               \
  X(CUresult, MemcpyDtoHAsync, hipMemcpyDtoHAsync, (void *h, CUdeviceptr d, size_t n, CUstream s))                     \
  X(CUresult, MemcpyDtoDAsync, hipMemcpyDtoDAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st))              \
  X(CUresult, MemsetD8Async, hipMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream s))                 \
  X(CUresult, StreamCreate, hipStreamCreateWithFlags, (CUstream * s, unsigned flags))                                  \
  X(CUresult, StreamDestroy, hipStreamDestroy, (CUstream s))                                                           \
  X(CUresult, StreamSynchronize, hipStreamSynchronize, (CUstream s))                                                   \
  X(CUresult, StreamQuery, hipStreamQuery, (CUstream s))                                                               \
  X(CUresult, StreamWaitEvent, hipStreamWaitEvent, (CUstream s, CUevent e, unsigned flags))                            \
  X(CUresult, EventCreate, hipEventCreateWithFlags, (CUevent * e, unsigned flags))                                     \
  X(CUresult, EventDestroy, hipEventDestroy, (CUevent e))                                                              \
  X(CUresult, EventRecord, hipEventRecord, (CUevent e, CUstream s))                                                    \
  X(CUresult, EventSynchronize, hipEventSynchronize, (CUevent e))                                                      \
  X(CUresult, EventQuery, hipEventQuery, (CUevent e))                                                                  \
  X(CUresult, EventElapsedTime, hipEventElapsedTime, (float *ms, CUevent a, CUevent b))                                \
  X(CUresult, ModuleLoadData, hipModuleLoadData, (CUmodule * m, const void *image))                                    \
  X(CUresult, ModuleGetFunction, hipModuleGetFunction, (CUfunction * f, CUmodule m, const char *name))                 \
  X(CUresult, LaunchKernel, hipModuleLaunchKernel,                                                                     \
    (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,       \
     CUstream s, void **params, void **extra))                                                                         \
  X(CUresult, StreamBeginCapture, hipStreamBeginCapture, (CUstream s, int mode))                                       \
  X(CUresult, StreamEndCapture, hipStreamEndCapture, (CUstream s, CUgraph * g))                                        \
  X(CUresult, GraphInstantiate, hipGraphInstantiateWithFlags, (CUgraphExec * e, CUgraph g, unsigned long long flags))  \
  X(CUresult, GraphLaunch, hipGraphLaunch, (CUgraphExec e, CUstream s))                                                \
  X(CUresult, GraphExecDestroy, hipGraphExecDestroy, (CUgraphExec e))                                                  \
  X(CUresult, GraphDestroy, hipGraphDestroy, (CUgraph g))

/* ---- hiprtc in place of NVRTC (the code object it returns is what
 * hipModuleLoadData takes; fields and types keep NVRTC's names:
 * nvrtcResult is hiprtcResult, 0 on success) ---- */
#define MT_NVRTC_FUNCS(X)                                                                                              \
  X(nvrtcResult, Version, hiprtcVersion, (int *major, int *minor))                                                     \
  X(const char *, GetErrorString, hiprtcGetErrorString, (nvrtcResult r))                                               \
  X(nvrtcResult, CreateProgram, hiprtcCreateProgram,                                                                   \
    (nvrtcProgram * p, const char *src, const char *name, int nh, const char **headers, const char **include_names))   \
  X(nvrtcResult, DestroyProgram, hiprtcDestroyProgram, (nvrtcProgram * p))                                             \
  X(nvrtcResult, CompileProgram, hiprtcCompileProgram, (nvrtcProgram p, int nopt, const char **opts))                  \
  X(nvrtcResult, GetProgramLogSize, hiprtcGetProgramLogSize, (nvrtcProgram p, size_t *n))                              \
  X(nvrtcResult, GetProgramLog, hiprtcGetProgramLog, (nvrtcProgram p, char *log))                                      \
  X(nvrtcResult, GetCUBINSize, hiprtcGetCodeSize, (nvrtcProgram p, size_t *n))                                         \
  X(nvrtcResult, GetCUBIN, hiprtcGetCode, (nvrtcProgram p, char *code))

/* ---- hipBLAS in place of cuBLAS (hipBLAS 0.5x, ROCm 5.x API: the
 * datatype enum doubles as the compute type; no TF32, so the fast mode
 * computes in float32; cublasHandle_t and cublasStatus_t stand for
 * hipblasHandle_t and hipblasStatus_t) ---- */
#define MT_CUBLAS_OP_N 111  /* HIPBLAS_OP_N */
#define MT_CUBLAS_OP_T 112  /* HIPBLAS_OP_T */
#define MT_CUDA_R_32F 151   /* HIPBLAS_R_32F */
#define MT_CUDA_R_64F 152   /* HIPBLAS_R_64F */
#define MT_CUDA_R_16F 150   /* HIPBLAS_R_16F */
#define MT_CUDA_R_16BF 168  /* HIPBLAS_R_16B */
#define MT_CUBLAS_COMPUTE_32F MT_CUDA_R_32F
#define MT_CUBLAS_COMPUTE_64F MT_CUDA_R_64F
#define MT_CUBLAS_COMPUTE_32F_FAST_TF32 MT_CUDA_R_32F
#define MT_CUBLAS_GEMM_DEFAULT 160 /* HIPBLAS_GEMM_DEFAULT */

#define MT_CUBLAS_FUNCS(X)                                                                                             \
  X(cublasStatus_t, Create, hipblasCreate, (cublasHandle_t * h))                                                       \
  X(cublasStatus_t, SetStream, hipblasSetStream, (cublasHandle_t h, void *stream))                                     \
  X(const char *, GetStatusString, hipblasStatusToString, (cublasStatus_t s))                                          \
  X(cublasStatus_t, GemmEx, hipblasGemmEx,                                                                             \
    (cublasHandle_t h, int transa, int transb, int m, int n, int k, const void *alpha, const void *A, int Atype,       \
     int lda, const void *B, int Btype, int ldb, const void *beta, void *C, int Ctype, int ldc, int computeType,       \
     int algo))                                                                                                        \
  X(cublasStatus_t, GemmStridedBatchedEx, hipblasGemmStridedBatchedEx,                                                 \
    (cublasHandle_t h, int transa, int transb, int m, int n, int k, const void *alpha, const void *A, int Atype,       \
     int lda, long long strideA, const void *B, int Btype, int ldb, long long strideB, const void *beta, void *C,      \
     int Ctype, int ldc, long long strideC, int batchCount, int computeType, int algo))
#endif /* MT_HIP */

#endif
