// reduce.cu -- the reduction kernel family: sum, prod, max, min, argmax,
// argmin of the elements of x over a set of dims. reduce.c prepends:
//   TX, LX(x)   x's storage type and its load into the accumulator type
//   ACC         double (floating x) or long long (integers and bool)
//   KIND        0 sum, 1 prod, 2 max, 3 min, 4 argmax, 5 argmin
//   ISFLOAT     1 when ACC is double (NaN rules apply)
// Outputs are 8-byte slots (ACC) and, for the arg kinds, 1-based indices
// into the reduced dims. A row may be cut in chunks (cpr > 1): the first
// pass then writes partials that mt_red_combine folds.

struct mt_rgeo {
  int nk, nr;              // kept and reduced dims, outermost first
  long long nout, nred;    // outputs, reduced elements per output
  long long chunk, cpr;    // elements per chunk, chunks per row
  double div;              // the final value is divided by it (mean), else 1
  long long ksize[8], kstride[8], rsize[8], rstride[8];
};

struct acc_t {
  ACC v;
  long long i;
};

__device__ __forceinline__ bool is_nan(ACC v) { return ISFLOAT && v != v; }

__device__ __forceinline__ acc_t identity() {
  acc_t a;
  a.i = 0x7fffffffffffffffLL;
#if KIND == 0
  a.v = (ACC)0;
#elif KIND == 1
  a.v = (ACC)1;
#elif (KIND == 2 || KIND == 4) && ISFLOAT
  a.v = (ACC)(-1.0 / 0.0);
#elif KIND == 2 || KIND == 4
  a.v = (ACC)(-0x7fffffffffffffffLL - 1);
#elif ISFLOAT
  a.v = (ACC)(1.0 / 0.0);
#else
  a.v = (ACC)0x7fffffffffffffffLL;
#endif
  return a;
}

// folds b into a; for the arg kinds the first extreme (the first NaN) wins
__device__ __forceinline__ void combine(acc_t &a, const acc_t &b) {
#if KIND == 0
  a.v += b.v;
#elif KIND == 1
  a.v *= b.v;
#elif KIND == 2
  if (!is_nan(a.v) && (is_nan(b.v) || b.v > a.v)) a.v = b.v;
#elif KIND == 3
  if (!is_nan(a.v) && (is_nan(b.v) || b.v < a.v)) a.v = b.v;
#else
  bool an = is_nan(a.v), bn = is_nan(b.v), take;
  if (an || bn)
    take = bn && (!an || b.i < a.i);
#if KIND == 4
  else
    take = b.v > a.v || (b.v == a.v && b.i < a.i);
#else
  else
    take = b.v < a.v || (b.v == a.v && b.i < a.i);
#endif
  if (take) a = b;
#endif
}

__device__ __forceinline__ long long kept_offset(const mt_rgeo &g, long long o) {
  long long off = 0;
  for (int d = g.nk - 1; d >= 0; d--) {
    off += (o % g.ksize[d]) * g.kstride[d];
    o /= g.ksize[d];
  }
  return off;
}

__device__ __forceinline__ long long red_offset(const mt_rgeo &g, long long r) {
  if (g.nr == 1) return r * g.rstride[0];
  long long off = 0;
  for (int d = g.nr - 1; d >= 0; d--) {
    off += (r % g.rsize[d]) * g.rstride[d];
    r /= g.rsize[d];
  }
  return off;
}

// elements [r0, r1) of output o, every step-th one
__device__ __forceinline__ acc_t run(const TX *x, const mt_rgeo &g, long long o, long long r0, long long r1,
                                     long long step) {
  acc_t a = identity();
  const TX *base = x + kept_offset(g, o);
  for (long long r = r0; r < r1; r += step) {
    acc_t b;
    b.v = (ACC)LX(base[red_offset(g, r)]);
    b.i = r;
    combine(a, b);
  }
  return a;
}

__device__ __forceinline__ void store(ACC *vals, long long *idx, long long o, acc_t a, double div) {
#if ISFLOAT
  if (div != 1.0) a.v = a.v / div;
#endif
  vals[o] = a.v;
  if (idx) idx[o] = a.i + 1;
}

// a block's threads fold their accumulators into thread 0's (blockDim a power of two, <= 256)
__device__ __forceinline__ acc_t block_fold(acc_t a) {
  __shared__ ACC sv[256];
  __shared__ long long si[256];
  unsigned t = threadIdx.x;
  sv[t] = a.v;
  si[t] = a.i;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) {
      acc_t b;
      b.v = sv[t + s];
      b.i = si[t + s];
      a.v = sv[t];
      a.i = si[t];
      combine(a, b);
      sv[t] = a.v;
      si[t] = a.i;
    }
    __syncthreads();
  }
  a.v = sv[0];
  a.i = si[0];
  __syncthreads();
  return a;
}

// one block per (output, chunk); with cpr > 1 the results are partials (0-based indices)
extern "C" __global__ void mt_red_block(const TX *x, ACC *vals, long long *idx, mt_rgeo g) {
  long long ntask = g.nout * g.cpr;
  for (long long t = blockIdx.x; t < ntask; t += gridDim.x) {
    long long o = t / g.cpr, c = t % g.cpr;
    long long r0 = c * g.chunk, r1 = r0 + g.chunk < g.nred ? r0 + g.chunk : g.nred;
    acc_t a = block_fold(run(x, g, o, r0 + threadIdx.x, r1, blockDim.x));
    if (threadIdx.x == 0) {
      if (g.cpr == 1) {
        store(vals, idx, o, a, g.div);
      } else {
        vals[t] = a.v;
        if (idx) idx[t] = a.i;
      }
    }
  }
}

// reductions over outer dims (a column sum of a matrix): a block of 32 x 8
// threads takes 32 consecutive outputs (coalesced loads when they are the
// innermost dim) and one chunk of rows, each of the 8 thread rows every 8th
// element of it; with cpr > 1 the results are partials as mt_red_block's
extern "C" __global__ void mt_red_cols(const TX *x, ACC *vals, long long *idx, mt_rgeo g) {
  __shared__ ACC sv[8][32];
  __shared__ long long si[8][32];
  unsigned tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  long long nob = (g.nout + 31) / 32;
  for (long long b = blockIdx.x; b < nob * g.cpr; b += gridDim.x) {
    long long o = (b % nob) * 32 + tx, c = b / nob;
    long long r0 = c * g.chunk, r1 = r0 + g.chunk < g.nred ? r0 + g.chunk : g.nred;
    acc_t a = o < g.nout ? run(x, g, o, r0 + ty, r1, 8) : identity();
    sv[ty][tx] = a.v;
    si[ty][tx] = a.i;
    __syncthreads();
    if (ty == 0 && o < g.nout) {
      for (int k = 1; k < 8; k++) {
        acc_t e;
        e.v = sv[k][tx];
        e.i = si[k][tx];
        combine(a, e);
      }
      if (g.cpr == 1) {
        store(vals, idx, o, a, g.div);
      } else {
        vals[o * g.cpr + c] = a.v;
        if (idx) idx[o * g.cpr + c] = a.i;
      }
    }
    __syncthreads();
  }
}

// many outputs of few elements each: one thread per output (nred small)
extern "C" __global__ void mt_red_thread(const TX *x, ACC *vals, long long *idx, mt_rgeo g) {
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < g.nout; o += (long long)gridDim.x * blockDim.x)
    store(vals, idx, o, run(x, g, o, 0, g.nred, 1), g.div);
}

// many outputs of a few hundred elements: one warp per output, folded by shuffles
extern "C" __global__ void mt_red_warp(const TX *x, ACC *vals, long long *idx, mt_rgeo g) {
  unsigned lane = threadIdx.x & 31;
  long long warps = (long long)gridDim.x * (blockDim.x >> 5);
  for (long long o = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); o < g.nout; o += warps) {
    acc_t a = run(x, g, o, lane, g.nred, 32);
    for (int s = 16; s > 0; s >>= 1) {
      acc_t b;
      b.v = mt_shfl_down32(a.v, s);
      b.i = mt_shfl_down32(a.i, s);
      combine(a, b);
    }
    if (lane == 0) store(vals, idx, o, a, g.div);
  }
}

// second pass: one block per output folds its cpr partials
extern "C" __global__ void mt_red_combine(const ACC *pv, const long long *pi, ACC *vals, long long *idx, mt_rgeo g) {
  for (long long o = blockIdx.x; o < g.nout; o += gridDim.x) {
    acc_t a = identity();
    for (long long c = threadIdx.x; c < g.cpr; c += blockDim.x) {
      acc_t b;
      b.v = pv[o * g.cpr + c];
      b.i = pi ? pi[o * g.cpr + c] : c;
      combine(a, b);
    }
    a = block_fold(a);
    if (threadIdx.x == 0) store(vals, idx, o, a, g.div);
  }
}
