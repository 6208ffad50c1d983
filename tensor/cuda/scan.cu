// scan.cu -- cumulative ops along one dim of a contiguous x seen as
// [O, L, K]: one thread per (outer, inner) column walks the L elements in
// order, so sums and products round exactly as the CPU's loop does
// (tensor/scan.c). scan.c (cuda side) prepends T (the element type), KIND
// (0 sum, 1 product: accumulated in ACC; 2 running max, 3 running min, with
// 1-based indices; ties and NaNs move the index to the latest position)
// and ISNAN(v).

extern "C" __global__ void mt_scan(const T *x, T *y, long long *yi, long long O, long long L, long long K) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < O * K; c += step) {
    long long o = c / K, k = c % K, base = o * L * K + k;
#if KIND < 2
    ACC a = KIND == 0 ? (ACC)0 : (ACC)1;
    for (long long i = 0; i < L; i++) {
      long long p = base + i * K;
#if KIND == 0
      a = a + (ACC)x[p];
#else
      a = a * (ACC)x[p];
#endif
      y[p] = (T)a;
    }
#else
    T best = x[base];
    long long bi = 1;
    for (long long i = 0; i < L; i++) {
      long long p = base + i * K;
      T v = x[p];
#if KIND == 2
      if (i == 0 || ISNAN(v) || (!ISNAN(best) && v >= best)) {
#else
      if (i == 0 || ISNAN(v) || (!ISNAN(best) && v <= best)) {
#endif
        best = v;
        bi = i + 1;
      }
      y[p] = best;
      yi[p] = bi;
    }
#endif
  }
}
