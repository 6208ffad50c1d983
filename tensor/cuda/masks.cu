// masks.cu -- compaction by a bool mask (cuda/masks.c): masked_select,
// masked_scatter_ and nonzero. The mask's positions are cut into chunks of
// CHUNK in row-major order; mt_mask_count counts the true values of each
// chunk, mt_mask_scan turns the counts into each chunk's first output slot
// (and the total, read by the host to size the result), and mt_mask_apply
// walks each chunk again, ranking its true values with warp ballots so that
// the k-th true value of the mask (row-major) goes to slot k. A member is
// specialised by TX (an unsigned type of the element's size) and MODE (0
// select: buf[k] = x; 1 scatter: x = buf[k]; 2 nonzero: coords, 1-based).

#define THREADS 256
#define ITEMS 4
#define CHUNK (THREADS * ITEMS)

struct mt_mgeo {
  int nd, pad;
  long long n, nchunks;
  long long size[8];
  long long mst[8]; // the mask's strides
  long long xst[8]; // x's strides (select, scatter)
};

extern "C" __global__ void mt_mask_count(const unsigned char *m, long long *counts, mt_mgeo g) {
  for (long long b = blockIdx.x; b < g.nchunks; b += gridDim.x) {
    int total = 0;
    for (int k = 0; k < ITEMS; k++) {
      long long e = b * CHUNK + k * THREADS + threadIdx.x, r = e, mo = 0;
      int p = 0;
      if (e < g.n) {
        for (int d = g.nd - 1; d >= 0; d--) {
          mo += (r % g.size[d]) * g.mst[d];
          r /= g.size[d];
        }
        p = m[mo] != 0;
      }
      total += __syncthreads_count(p);
    }
    if (threadIdx.x == 0) counts[b] = total;
  }
}

// One block of blockDim.x threads: counts[0..nb) become exclusive prefix
// sums, counts[nb] the total.
extern "C" __global__ void mt_mask_scan(long long *counts, long long nb) {
  __shared__ long long part[1024];
  long long per = (nb + blockDim.x - 1) / blockDim.x;
  long long lo = threadIdx.x * per, hi = lo + per < nb ? lo + per : nb, s = 0;
  for (long long j = lo; j < hi; j++) s += counts[j];
  part[threadIdx.x] = s;
  __syncthreads();
  for (unsigned off = 1; off < blockDim.x; off <<= 1) {
    long long v = threadIdx.x >= off ? part[threadIdx.x - off] : 0;
    __syncthreads();
    part[threadIdx.x] += v;
    __syncthreads();
  }
  long long run = part[threadIdx.x] - s;
  for (long long j = lo; j < hi; j++) {
    long long c = counts[j];
    counts[j] = run;
    run += c;
  }
  if (threadIdx.x == blockDim.x - 1) counts[nb] = part[threadIdx.x];
}

extern "C" __global__ void mt_mask_apply(const unsigned char *m, const long long *counts, TX *x, TX *buf,
                                         long long *nz, mt_mgeo g) {
  __shared__ int wsum[THREADS / 32];
  int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  for (long long b = blockIdx.x; b < g.nchunks; b += gridDim.x) {
    long long base = counts[b];
    for (int k = 0; k < ITEMS; k++) {
      long long e = b * CHUNK + k * THREADS + threadIdx.x, r = e, mo = 0, xo = 0;
      long long coord[8];
      int p = 0;
      if (e < g.n) {
        for (int d = g.nd - 1; d >= 0; d--) {
          long long c = r % g.size[d];
          r /= g.size[d];
          coord[d] = c;
          mo += c * g.mst[d];
          xo += c * g.xst[d];
        }
        p = m[mo] != 0;
      }
      unsigned bal = mt_ballot32(p);
      int rank = __popc(bal & ((1u << lane) - 1u));
      if (lane == 0) wsum[w] = __popc(bal);
      __syncthreads();
      int before = 0, tot = 0;
      for (int j = 0; j < THREADS / 32; j++) {
        int c = wsum[j];
        if (j < w) before += c;
        tot += c;
      }
      if (p) {
        long long pos = base + before + rank;
#if MODE == 0
        buf[pos] = x[xo];
#elif MODE == 1
        x[xo] = buf[pos];
#else
        for (int d = 0; d < g.nd; d++) nz[pos * g.nd + d] = coord[d] + 1;
#endif
      }
      base += tot;
      __syncthreads();
    }
  }
}
