// softmax.cu -- softmax and log_softmax of a contiguous x seen as [O, L, K]
// along L. softmax.c prepends TX (storage type), LX(x) (load to T), WX(v)
// (store), T (float, or double for float64) and LOG (1: log_softmax).
// K == 1: one block per row; K > 1: one thread per (o, k) column.

__device__ __forceinline__ float m_exp(float x) { return expf(x); }
__device__ __forceinline__ double m_exp(double x) { return exp(x); }
__device__ __forceinline__ float m_log(float x) { return logf(x); }
__device__ __forceinline__ double m_log(double x) { return log(x); }
__device__ __forceinline__ T m_max(T a, T b) { return (a != a || a > b) ? a : b; }

// a block-wide fold (blockDim a power of two, <= 256); max when is_max, else sum
__device__ __forceinline__ T block_fold(T v, bool is_max) {
  __shared__ T s[256];
  unsigned t = threadIdx.x;
  s[t] = v;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (t < h) s[t] = is_max ? m_max(s[t], s[t + h]) : s[t] + s[t + h];
    __syncthreads();
  }
  v = s[0];
  __syncthreads();
  return v;
}

extern "C" __global__ void mt_softmax_rows(const TX *x, TX *y, long long O, long long L) {
  for (long long o = blockIdx.x; o < O; o += gridDim.x) {
    const TX *xr = x + o * L;
    TX *yr = y + o * L;
    T mx = (T)(-1.0 / 0.0);
    for (long long i = threadIdx.x; i < L; i += blockDim.x) mx = m_max(mx, (T)LX(xr[i]));
    mx = block_fold(mx, true);
    T sum = 0;
    for (long long i = threadIdx.x; i < L; i += blockDim.x) sum += m_exp((T)LX(xr[i]) - mx);
    sum = block_fold(sum, false);
#if LOG
    T lse = mx + m_log(sum);
    for (long long i = threadIdx.x; i < L; i += blockDim.x) yr[i] = WX((T)LX(xr[i]) - lse);
#else
    for (long long i = threadIdx.x; i < L; i += blockDim.x) yr[i] = WX(m_exp((T)LX(xr[i]) - mx) / sum);
#endif
  }
}

extern "C" __global__ void mt_softmax_cols(const TX *x, TX *y, long long O, long long L, long long K) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < O * K; c += step) {
    long long o = c / K, k = c % K;
    const TX *xr = x + o * L * K + k;
    TX *yr = y + o * L * K + k;
    T mx = (T)(-1.0 / 0.0), sum = 0;
    for (long long i = 0; i < L; i++) mx = m_max(mx, (T)LX(xr[i * K]));
    for (long long i = 0; i < L; i++) sum += m_exp((T)LX(xr[i * K]) - mx);
#if LOG
    T lse = mx + m_log(sum);
    for (long long i = 0; i < L; i++) yr[i * K] = WX((T)LX(xr[i * K]) - lse);
#else
    for (long long i = 0; i < L; i++) yr[i * K] = WX(m_exp((T)LX(xr[i * K]) - mx) / sum);
#endif
  }
}
