// scan.cu -- cumulative ops along one dim of a contiguous x seen as
// [O, L, K]. scan.c (cuda side) prepends T (the element type), KIND (0 sum,
// 1 product: accumulated in ACC; 2 running max, 3 running min, with 1-based
// indices; ties and NaNs move the index to the latest position, once a NaN
// is seen it stays) and ISNAN(v).
//
// mt_scan: one thread per (outer, inner) column walks the L elements in
// order, so sums and products round exactly as the CPU's loop does
// (tensor/scan.c). Few long columns are cut into chunks of C elements
// instead: mt_scan_part summarises each chunk (its sum or product, or its
// running extreme and that extreme's index), mt_scan_carry turns each
// column's summaries into what precedes each chunk (a short sequential
// walk), and mt_scan_fin walks each chunk from there. Extremes come out
// exactly as the sequential walk's; sums and products are reassociated
// (chunk by chunk, in ACC).

__device__ __forceinline__ void col_of(long long c, long long K, long long L, long long *base) {
  *base = (c / K) * L * K + c % K;
}

#if KIND >= 2
// does v (at its position) replace the running extreme best?
__device__ __forceinline__ bool takes(T v, T best) {
#if KIND == 2
  return ISNAN(v) || (!ISNAN(best) && v >= best);
#else
  return ISNAN(v) || (!ISNAN(best) && v <= best);
#endif
}
#endif

// Walks elements [i0, i1) of the column at base from the running state
// (a, or best/bi; has: whether anything precedes), writing y (and yi).
__device__ __forceinline__ void walk(const T *x, T *y, long long *yi, long long base, long long K, long long i0,
                                     long long i1, ACC a, T best, long long bi, bool has) {
  for (long long i = i0; i < i1; i++) {
    long long p = base + i * K;
#if KIND == 0
    a = a + (ACC)x[p];
    y[p] = (T)a;
#elif KIND == 1
    a = a * (ACC)x[p];
    y[p] = (T)a;
#else
    T v = x[p];
    if (!has || takes(v, best)) {
      best = v;
      bi = i + 1;
      has = true;
    }
    y[p] = best;
    yi[p] = bi;
#endif
  }
}

#define IDENT (KIND == 1 ? (ACC)1 : (ACC)0)

extern "C" __global__ void mt_scan(const T *x, T *y, long long *yi, long long O, long long L, long long K) {
  long long step = (long long)gridDim.x * blockDim.x, base;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < O * K; c += step) {
    col_of(c, K, L, &base);
    walk(x, y, yi, base, K, 0, L, IDENT, x[base], 0, false);
  }
}

// Chunk summaries: sa (ACC) or sv/si (extreme and 1-based index, si 0 for
// none), laid out [O * K, nc].
extern "C" __global__ void mt_scan_part(const T *x, ACC *sa, T *sv, long long *si, long long O, long long L,
                                        long long K, long long C, long long nc) {
  long long step = (long long)gridDim.x * blockDim.x, base;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < O * K * nc; e += step) {
    long long c = e / nc, ch = e % nc, i0 = ch * C, i1 = i0 + C < L ? i0 + C : L;
    col_of(c, K, L, &base);
#if KIND < 2
    ACC a = IDENT;
    for (long long i = i0; i < i1; i++) {
#if KIND == 0
      a = a + (ACC)x[base + i * K];
#else
      a = a * (ACC)x[base + i * K];
#endif
    }
    sa[e] = a;
#else
    T best = x[base + i0 * K];
    long long bi = i0 + 1;
    for (long long i = i0 + 1; i < i1; i++) {
      T v = x[base + i * K];
      if (takes(v, best)) best = v, bi = i + 1;
    }
    sv[e] = best;
    si[e] = bi;
#endif
  }
}

// Per column: summaries -> the state before each chunk (si 0: nothing).
extern "C" __global__ void mt_scan_carry(ACC *sa, T *sv, long long *si, long long cols, long long nc) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += step) {
#if KIND < 2
    ACC a = IDENT;
    for (long long ch = 0; ch < nc; ch++) {
      ACC s = sa[c * nc + ch];
      sa[c * nc + ch] = a;
#if KIND == 0
      a = a + s;
#else
      a = a * s;
#endif
    }
#else
    T best = sv[c * nc];
    long long bi = 0;
    for (long long ch = 0; ch < nc; ch++) {
      T v = sv[c * nc + ch];
      long long vi = si[c * nc + ch];
      sv[c * nc + ch] = best;
      si[c * nc + ch] = bi;
      if (bi == 0 || takes(v, best)) best = v, bi = vi;
    }
#endif
  }
}

extern "C" __global__ void mt_scan_fin(const T *x, T *y, long long *yi, const ACC *sa, const T *sv, const long long *si,
                                       long long O, long long L, long long K, long long C, long long nc) {
  long long step = (long long)gridDim.x * blockDim.x, base;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < O * K * nc; e += step) {
    long long c = e / nc, ch = e % nc, i0 = ch * C, i1 = i0 + C < L ? i0 + C : L;
    col_of(c, K, L, &base);
#if KIND < 2
    walk(x, y, yi, base, K, i0, i1, sa[e], x[base], 0, false);
#else
    walk(x, y, yi, base, K, i0, i1, IDENT, sv[e], si[e], si[e] != 0);
#endif
  }
}
