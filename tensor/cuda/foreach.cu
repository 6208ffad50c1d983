// foreach.cu -- multi-tensor kernels over a list of contiguous tensors of one
// dtype (torch._foreach_norm, torch._foreach_mul_): a launch covers up to
// FE_NT tensors, described by a table passed by value (no upload, so
// nothing waits and a CUDA graph could capture it). Tensor t owns blocks
// [start[t], start[t+1]); block b - start[t] of it covers elements
// [(b - start[t]) * FE_CHUNK, ... + FE_CHUNK). foreach.c prepends TX
// (storage type), CT (compute type), LOAD(x), WRITE(v), ACC (accumulator:
// float, double for float64) and MODE (norms: 0 sum of squares, 1 sum of
// |x|, 2 max of |x|).

#define FE_NT 128
#define FE_CHUNK 16384
#define FE_THREADS 256

struct mt_fe_table {
  unsigned long long ptr[FE_NT];
  long long n[FE_NT];
  int start[FE_NT + 1];
  int nt;
};

// the tensor that block b belongs to (start is ascending; empty tensors own no block)
__device__ __forceinline__ int fe_owner(const mt_fe_table &T, int b) {
  int lo = 0, hi = T.nt - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (T.start[mid] <= b) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

__device__ __forceinline__ ACC fe_term(ACC v) {
#if MODE == 0
  return v * v;
#else
  return v < (ACC)0 ? -v : v;
#endif
}

__device__ __forceinline__ ACC fe_join(ACC a, ACC b) {
#if MODE == 2
  return (a != a || b != b) ? a + b : (a > b ? a : b); // NaN wins, as in max
#else
  return a + b;
#endif
}

// v joined over the block (FE_THREADS threads); thread 0 gets the result
__device__ __forceinline__ ACC fe_block(ACC v) {
  __shared__ ACC sh[FE_THREADS];
  sh[threadIdx.x] = v;
  __syncthreads();
  for (unsigned o = FE_THREADS / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o) sh[threadIdx.x] = fe_join(sh[threadIdx.x], sh[threadIdx.x + o]);
    __syncthreads();
  }
  ACC r = sh[0];
  __syncthreads(); // sh is reused by the next call
  return r;
}

// partial[pbase + b]: the block's sum of terms (or max) over its chunk
extern "C" __global__ void mt_fe_partial(mt_fe_table T, ACC *partial, int pbase) {
  int b = blockIdx.x, t = fe_owner(T, b);
  const TX *x = (const TX *)T.ptr[t];
  long long lo = (long long)(b - T.start[t]) * FE_CHUNK, hi = lo + FE_CHUNK;
  if (hi > T.n[t]) hi = T.n[t];
  ACC acc = (ACC)0;
#pragma unroll 4
  for (long long i = lo + threadIdx.x; i < hi; i += FE_THREADS) acc = fe_join(acc, fe_term((ACC)LOAD(x[i])));
  acc = fe_block(acc);
  if (threadIdx.x == 0) partial[pbase + b] = acc;
}

__device__ __forceinline__ float fe_sqrt(float v) { return sqrtf(v); }
__device__ __forceinline__ double fe_sqrt(double v) { return sqrt(v); }
__device__ __forceinline__ ACC fe_finish(ACC s) {
#if MODE == 0
  return fe_sqrt(s);
#else
  return s;
#endif
}

// One block: for each tensor t of the launch, raw[rbase + t] = its blocks'
// partials joined and norms[rbase + t] its norm (in TX); when last > 0, the
// total over raw[0, last) goes to *total (ACC) as a norm.
extern "C" __global__ void mt_fe_finish(mt_fe_table T, const ACC *partial, int pbase, ACC *raw, TX *norms, int rbase,
                                        int last, ACC *total) {
  for (int t = 0; t < T.nt; t++) {
    ACC acc = (ACC)0;
    for (int k = T.start[t] + threadIdx.x; k < T.start[t + 1]; k += FE_THREADS) acc = fe_join(acc, partial[pbase + k]);
    acc = fe_block(acc);
    if (threadIdx.x == 0) {
      raw[rbase + t] = acc;
      norms[rbase + t] = WRITE(fe_finish(acc));
    }
  }
  __syncthreads(); // raw, written by thread 0, is read by all below
  if (last > 0) {
    ACC acc = (ACC)0;
    for (int k = threadIdx.x; k < last; k += FE_THREADS) acc = fe_join(acc, raw[k]);
    acc = fe_block(acc);
    if (threadIdx.x == 0) *total = fe_finish(acc);
  }
}

// x *= s over each tensor's chunk; s is *sp (of type TS, loaded by LOADS)
// when sp is not null, else sv
extern "C" __global__ void mt_fe_scale(mt_fe_table T, const TS *sp, double sv) {
  int b = blockIdx.x, t = fe_owner(T, b);
  TX *x = (TX *)T.ptr[t];
  CT s = sp ? (CT)LOADS(*sp) : (CT)sv;
  long long lo = (long long)(b - T.start[t]) * FE_CHUNK, hi = lo + FE_CHUNK;
  if (hi > T.n[t]) hi = T.n[t];
#pragma unroll 4
  for (long long i = lo + threadIdx.x; i < hi; i += FE_THREADS) x[i] = WRITE(LOAD(x[i]) * s);
}
