// sort.cu -- stable row sorts and the selections made from sorted rows.
// sort.c (cuda side) prepends T (the element type), DESC (1 descending),
// ISNAN(v) and, for the block sort, PB (the padded row length, a power of
// two up to 2048). Elements are (value, position) pairs ordered by value,
// NaN largest, and equal values by position: a total order, so a bitonic
// network gives exactly the CPU's stable merge sort (tensor/sort.c).
// Padding positions (>= L) sort after everything.

__device__ __forceinline__ bool vbefore(T a, T b) {
#if DESC
  return a > b || (ISNAN(a) && !ISNAN(b));
#else
  return a < b || (!ISNAN(a) && ISNAN(b));
#endif
}

// pair (a, ia) goes before (b, ib)
__device__ __forceinline__ bool pbefore(T a, long long ia, T b, long long ib, long long L) {
  if (ib >= L) return ia < L || ia < ib;
  if (ia >= L) return false;
  return vbefore(a, b) || (!vbefore(b, a) && ia < ib);
}

#ifdef PB
// One block per row, the whole padded row in shared memory.
extern "C" __global__ void mt_sort_block(const T *x, T *vals, long long *idx, long long M, long long L, long long k) {
  __shared__ T sv[PB];
  __shared__ int si[PB];
  for (long long r = blockIdx.x; r < M; r += gridDim.x) {
    for (int i = threadIdx.x; i < PB; i += blockDim.x) {
      si[i] = i;
      if (i < L) sv[i] = x[r * L + i];
    }
    __syncthreads();
    for (int s = 2; s <= PB; s <<= 1)
      for (int j = s >> 1; j > 0; j >>= 1) {
        for (int i = threadIdx.x; i < PB; i += blockDim.x) {
          int l = i ^ j;
          if (l > i) {
            bool up = (i & s) == 0;
            bool sw = up ? pbefore(sv[l], si[l], sv[i], si[i], L) : pbefore(sv[i], si[i], sv[l], si[l], L);
            if (sw) {
              T tv = sv[i];
              sv[i] = sv[l];
              sv[l] = tv;
              int ti = si[i];
              si[i] = si[l];
              si[l] = ti;
            }
          }
        }
        __syncthreads();
      }
    for (long long i = threadIdx.x; i < k; i += blockDim.x) {
      vals[r * k + i] = sv[i];
      idx[r * k + i] = si[i] + 1;
    }
    __syncthreads();
  }
}
#endif

// Long rows: the padded rows [M, P] live in global scratch (sv, si);
// mt_sort_fill loads them, mt_sort_step runs one (s, j) stage of the
// network over all rows, mt_sort_take writes the first k.
extern "C" __global__ void mt_sort_fill(const T *x, T *sv, long long *si, long long M, long long L, long long P) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < M * P; e += step) {
    long long r = e / P, i = e % P;
    si[e] = i;
    if (i < L) sv[e] = x[r * L + i];
  }
}

extern "C" __global__ void mt_sort_step(T *sv, long long *si, long long M, long long L, long long P, long long s,
                                        long long j) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < M * P; e += step) {
    long long i = e % P, l = i ^ j;
    if (l <= i) continue;
    long long a = e, b = e - i + l;
    bool up = (i & s) == 0;
    bool sw = up ? pbefore(sv[b], si[b], sv[a], si[a], L) : pbefore(sv[a], si[a], sv[b], si[b], L);
    if (sw) {
      T tv = sv[a];
      sv[a] = sv[b];
      sv[b] = tv;
      long long ti = si[a];
      si[a] = si[b];
      si[b] = ti;
    }
  }
}

extern "C" __global__ void mt_sort_take(const T *sv, const long long *si, T *vals, long long *idx, long long M,
                                        long long P, long long k) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < M * k; e += step) {
    long long r = e / k, i = e % k;
    vals[e] = sv[r * P + i];
    idx[e] = si[r * P + i] + 1;
  }
}

// One thread per ascending sorted row: MODE 0 the position p, 1 median (the
// first NaN if any, else the lower middle), 2 nanmedian (the lower middle
// of the non-NaN values), 3 mode (the longest run of equal values, the
// first on ties, with the largest input position inside it).
extern "C" __global__ void mt_pick(const T *vals, const long long *idx, T *pv, long long *pi, long long M, long long L,
                                   long long p) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < M; r += step) {
    const T *v = vals + r * L;
    const long long *ix = idx + r * L;
    long long q = p, out;
#if MODE == 1 || MODE == 2
    long long nn = 0;
    while (nn < L && ISNAN(v[L - 1 - nn])) nn++;
    long long c = L - nn;
    q = (MODE == 1 && nn > 0) ? c : (c > 0 ? (c - 1) / 2 : 0);
    out = ix[q];
#elif MODE == 3
    long long best = 0, blen = 0;
    for (long long s = 0; s < L;) {
      long long e = s + 1;
      while (e < L && v[e] == v[s]) e++;
      if (e - s > blen) best = s, blen = e - s;
      s = e;
    }
    q = best;
    out = ix[best];
    for (long long t = best + 1; t < best + blen; t++)
      if (ix[t] > out) out = ix[t];
#else
    out = ix[q];
#endif
    pv[r] = v[q];
    pi[r] = out;
  }
}
