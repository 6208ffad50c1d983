// port_check.cc -- `make HIP=1` compiles this (syntax only, nothing is
// linked or run) against the installed HIP headers to prove that
// gpu_port.h, which the HIP build uses instead of those headers, agrees
// with them: every constant, hipDeviceProp_t's size and the offset of
// gcnArchName, and the calling shape of every HIP runtime and hiprtc entry
// point we dlsym (same number of arguments, and each argument and the
// result of the same size and register class: integer or pointer, floating,
// or none; enums count as integers, as they do in the C ABI). hipBLAS has
// no package in Debian 12, so its part of gpu_port.h is checked against
// nothing here (it follows hipBLAS's documented 5.x API).
#define __HIP_PLATFORM_AMD__ 1
#define __HIP_DISABLE_CPP_FUNCTIONS__ 1 // only the C functions, no overloads
#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

#include <cstddef>
#include <type_traits>

#ifndef MT_HIP
#error "port_check.cc checks the HIP build: compile with -DMT_HIP"
#endif
extern "C" {
#include "cu_api.h"
}

namespace {

// 0: void, 1: integer, enum or pointer (general registers), 2: floating
template <class T> constexpr int abi_class() {
  if constexpr (std::is_void_v<T>) return 0;
  else if constexpr (std::is_floating_point_v<T>) return 2;
  else if constexpr (std::is_integral_v<T> || std::is_enum_v<T> || std::is_pointer_v<T>) return 1;
  else return -1; // a struct by value: not expected in these lists
}
template <class T> constexpr size_t abi_size() {
  if constexpr (std::is_void_v<T>) return 0;
  else return sizeof(T);
}
template <class T, class U> constexpr bool same_slot() {
  return abi_class<T>() >= 0 && abi_class<T>() == abi_class<U>() && abi_size<T>() == abi_size<U>();
}

template <class... A> struct list {};
template <bool SameLength, class L1, class L2> struct args_match : std::false_type {};
template <class... A1, class... A2>
struct args_match<true, list<A1...>, list<A2...>> : std::bool_constant<(same_slot<A1, A2>() && ... && true)> {};

template <class F, class G> struct same_abi : std::false_type {};
template <class R1, class... A1, class R2, class... A2>
struct same_abi<R1 (*)(A1...), R2 (*)(A2...)>
    : std::bool_constant<same_slot<R1, R2>() &&
                         args_match<sizeof...(A1) == sizeof...(A2), list<A1...>, list<A2...>>::value> {};

#define MT_CHECK_SIG(R, name, sym, params)                                                                             \
  static_assert(same_abi<decltype(&sym), R(*) params>::value, #sym ": gpu_port.h disagrees with HIP's declaration");
MT_CU_FUNCS(MT_CHECK_SIG)
MT_NVRTC_FUNCS(MT_CHECK_SIG)

static_assert(CUDA_SUCCESS == hipSuccess && HIPRTC_SUCCESS == 0, "success codes");
static_assert(CUDA_ERROR_OUT_OF_MEMORY == hipErrorOutOfMemory, "hipErrorOutOfMemory");
static_assert(CUDA_ERROR_NOT_READY == hipErrorNotReady, "hipErrorNotReady");
static_assert(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT == hipDeviceAttributeMultiprocessorCount, "attribute");
static_assert(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == hipDeviceAttributeComputeCapabilityMajor, "attribute");
static_assert(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == hipDeviceAttributeComputeCapabilityMinor, "attribute");
static_assert(CU_STREAM_NON_BLOCKING == hipStreamNonBlocking, "hipStreamNonBlocking");
static_assert(CU_EVENT_DEFAULT == hipEventDefault && CU_EVENT_DISABLE_TIMING == hipEventDisableTiming, "events");
static_assert(CU_MEMHOSTALLOC_PORTABLE == hipHostMallocPortable, "hipHostMallocPortable");
static_assert(MT_HIP_PROP_SIZE == sizeof(hipDeviceProp_t), "hipDeviceProp_t's size");
static_assert(MT_HIP_PROP_ARCH_OFFSET == offsetof(hipDeviceProp_t, gcnArchName), "gcnArchName's offset");
static_assert(sizeof(((hipDeviceProp_t *)0)->gcnArchName) == 256, "gcnArchName's size");
static_assert(sizeof(CUdeviceptr) == sizeof(hipDeviceptr_t) && sizeof(CUresult) == sizeof(hipError_t), "sizes");

} // namespace
