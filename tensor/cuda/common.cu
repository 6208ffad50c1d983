// common.cu -- helpers shared by the reduction, softmax and index kernel
// families (reduce.cu, softmax.cu, index.cu): the 16-bit float types and
// their conversions, with no CUDA headers (NVRTC needs none). kernels.c
// places this text after a member's #defines and before the family's body.
// It is also the portability prelude for HIP (make HIP=1, hiprtc): what
// differs there sits behind #ifdef __HIP__.

typedef unsigned short mt_half;
typedef unsigned short mt_bf16;

#ifdef __HIP__
// HIP (hiprtc, make HIP=1): clang's _Float16 converts as PTX cvt does
// (round to nearest even); the bits travel through a copy
__device__ __forceinline__ float h2f(mt_half h) {
  _Float16 v;
  __builtin_memcpy(&v, &h, 2);
  return (float)v;
}
__device__ __forceinline__ mt_half f2h(float f) {
  _Float16 v = (_Float16)f;
  mt_half h;
  __builtin_memcpy(&h, &v, 2);
  return h;
}
#else
__device__ __forceinline__ float h2f(mt_half h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
__device__ __forceinline__ mt_half f2h(float f) {
  mt_half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
#endif
__device__ __forceinline__ float b2f(mt_bf16 h) { return __uint_as_float(((unsigned)h) << 16); }
__device__ __forceinline__ mt_bf16 f2b(float f) {
  unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (mt_bf16)((u >> 16) | 0x40); // NaN stays NaN
  return (mt_bf16)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);                // round to nearest even
}

// mt_ballot32(p): the predicates of the calling thread's 32-lane warp (bit i
// from lane i = threadIdx.x & 31), as __ballot_sync(0xffffffff, p) on CUDA.
// Kernels call this rather than __ballot_sync, which HIP 5 lacks: on AMD
// GPUs with 64-lane wavefronts it cuts the wavefront's ballot into its two
// 32-lane halves, so code written for 32-lane warps works unchanged.
#ifdef __HIP__
__device__ __forceinline__ unsigned mt_ballot32(bool p) { return (unsigned)(__ballot(p) >> (__lane_id() & 32u)); }
#else
__device__ __forceinline__ unsigned mt_ballot32(bool p) { return __ballot_sync(0xffffffffu, p); }
#endif

// mt_shfl_down32(v, s): v of the lane s above this one within its 32-lane
// group, as __shfl_down_sync(0xffffffff, v, s, 32) on CUDA (HIP 5 lacks the
// _sync forms; its __shfl_down with width 32 keeps 64-lane wavefronts' halves
// apart). For the types both overload: int, long long, float, double.
#ifdef __HIP__
#define mt_shfl_down32(v, s) __shfl_down((v), (s), 32)
#else
#define mt_shfl_down32(v, s) __shfl_down_sync(0xffffffffu, (v), (s), 32)
#endif
