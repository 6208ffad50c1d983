// amp.cu -- GradScaler's fused unscale and inf/NaN check over a contiguous
// gradient. amp.c prepends TX (storage type), CT (compute type), LOAD(x) and
// WRITE(v). Every thread that meets a non-finite result writes 1 to *found:
// the same value, so no atomics are needed.

extern "C" __global__ void mt_amp_unscale(TX *x, long long n, double inv, float *found) {
  long long step = (long long)gridDim.x * blockDim.x;
  bool bad = false;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
    CT v = LOAD(x[i]) * (CT)inv;
    bad |= !(v - v == v - v); // NaN or +-inf
    x[i] = WRITE(v);
  }
  if (bad) *found = 1.0f;
}
