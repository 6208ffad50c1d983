// offsets.cu -- the index ops that work through element offsets
// (cuda/offsets.c): index values turned into offsets, gathers and scatters
// at offsets, and the three-operand select (where, masked_fill). A member
// is specialised by TX (the element type: an unsigned type of the element's
// size where elements are only moved) and ADD(p, v) (an atomic p += v for
// TX; scatters with accumulate). Every operand is laid out on one shape by
// its strides in elements (0 where it broadcasts).

// Atomic p += v (mul: p *= v) for 8- and 16-bit dtypes, which CUDA has no
// atomics for: a compare-and-swap of the enclosing 32-bit word. kind: 0
// integer, 1 float16, 2 bfloat16, 3 bool.
template <typename T> __device__ __forceinline__ void rmw_narrow(T *p, double v, int kind, bool mul) {
  unsigned *w = (unsigned *)((size_t)p & ~(size_t)3);
  unsigned shift = (unsigned)((size_t)p & 3) * 8, mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *w, assumed;
  do {
    assumed = old;
    T cur = (T)((assumed & mask) >> shift), nv;
    if (kind == 1 || kind == 2) {
      float f = kind == 1 ? h2f((unsigned short)cur) : b2f((unsigned short)cur);
      f = mul ? f * (float)v : f + (float)v;
      nv = (T)(kind == 1 ? f2h(f) : f2b(f));
    } else if (kind == 3) {
      nv = (T)(mul ? (cur != 0) && (v != 0) : (cur != 0) || (v != 0));
    } else {
      nv = (T)(mul ? (long long)cur * (long long)v : (long long)cur + (long long)v);
    }
    unsigned nw = (assumed & ~mask) | (((unsigned)nv << shift) & mask);
    old = atomicCAS(w, assumed, nw);
  } while (old != assumed);
}

// Atomic p *= v for 32- and 64-bit T through a compare-and-swap of W.
template <typename T, typename W> __device__ __forceinline__ void mul_wide(T *p, T v) {
  union {
    T t;
    W w;
  } a, b;
  W *w = (W *)p, old = *w, assumed;
  do {
    assumed = old;
    a.w = assumed;
    b.t = a.t * v;
    old = atomicCAS(w, assumed, b.w);
  } while (old != assumed);
}

struct mt_ageo {
  int nd, pad;
  long long n;
  long long size[8];
  long long st[4][8];
};

// The offsets of up to four operands at row-major position i.
__device__ __forceinline__ void locate(const mt_ageo &g, long long i, int nops, long long *o) {
  for (int k = 0; k < nops; k++) o[k] = 0;
  for (int d = g.nd - 1; d >= 0; d--) {
    long long c = i % g.size[d];
    i /= g.size[d];
    for (int k = 0; k < nops; k++) o[k] += c * g.st[k][d];
  }
}

#define GRID_LOOP(i, n)                                                                                                \
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (long long)gridDim.x * blockDim.x)

// How 1-based index values become offsets (mt_offset_ctx on the host).
struct mt_oparams {
  long long size, stride;
  int neg, fnd;
  long long fshape[8], fst[8];
};

// off (contiguous, g's shape) += the offset of idx (strides st[0]); a value
// out of range sets *bad and adds nothing.
extern "C" __global__ void mt_offsets(long long *off, const long long *idx, int *bad, mt_ageo g, mt_oparams c) {
  GRID_LOOP(i, g.n) {
    long long o[1];
    locate(g, i, 1, o);
    long long v = idx[o[0]], p;
    if (v >= 1 && v <= c.size)
      p = v - 1;
    else if (c.neg && v < 0 && v >= -c.size)
      p = v + c.size;
    else {
      *bad = 1;
      continue;
    }
    long long r = 0;
    if (c.fnd) {
      for (int k = c.fnd - 1; k >= 0; k--) {
        r += (p % c.fshape[k]) * c.fst[k];
        p /= c.fshape[k];
      }
    } else {
      r = p * c.stride;
    }
    off[i] += r;
  }
}

// out (contiguous) = src (st[0]) at off (st[1]) elements further.
extern "C" __global__ void mt_gather_off(TX *out, const TX *src, const long long *off, mt_ageo g) {
  GRID_LOOP(i, g.n) {
    long long o[2];
    locate(g, i, 2, o);
    out[i] = src[o[0] + off[o[1]]];
  }
}

// Plain scatters keep the last write to a destination (positions in
// row-major order), as the CPU's serial loop does: each position claims its
// destination in win (from base) with an atomicMax of its number, then only
// the winners write.
extern "C" __global__ void mt_scatter_claim(const long long *off, int *win, long long base, mt_ageo g) {
  GRID_LOOP(i, g.n) {
    long long o[3];
    locate(g, i, 3, o);
    atomicMax(&win[o[0] + off[o[2]] - base], (int)i);
  }
}

// dst (st[0]) at off (st[2]) elements further = src (st[1]) where this
// position won the claim (or win is NULL); with ACCUMULATE, ADD(p, v)
// combines atomically instead (a sum or a product).
extern "C" __global__ void mt_scatter_off(TX *dst, const TX *src, const long long *off, const int *win,
                                          long long base, mt_ageo g) {
  GRID_LOOP(i, g.n) {
    long long o[3];
    locate(g, i, 3, o);
    long long d = o[0] + off[o[2]];
#if ACCUMULATE
    ADD(&dst[d], src[o[1]]);
#else
    if (!win || win[d - base] == (int)i) dst[d] = src[o[1]];
#endif
  }
}

// out (st[0]) = cond (st[1]) ? a (st[2]) : b (st[3]); a NULL pointer stands
// for the value va (vb): the element's bytes in the low end of the word.
extern "C" __global__ void mt_select3(TX *out, const unsigned char *cond, const TX *a, const TX *b,
                                      unsigned long long va, unsigned long long vb, mt_ageo g) {
  TX xa = (TX)va, xb = (TX)vb;
  GRID_LOOP(i, g.n) {
    long long o[4];
    locate(g, i, 4, o);
    out[o[0]] = cond[o[1]] ? (a ? a[o[2]] : xa) : (b ? b[o[3]] : xb);
  }
}

// tril/triu: out (st[0]) = in (st[1]) inside the triangle of the last two
// dims (rows x cols, row-major positions i), zero outside: col - row <= k
// (lower) or >= k (upper).
extern "C" __global__ void mt_tri(TX *out, const TX *in, long long rows, long long cols, long long k, int upper,
                                  mt_ageo g) {
  GRID_LOOP(i, g.n) {
    long long o[2];
    locate(g, i, 2, o);
    long long c = i % cols, r = (i / cols) % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    out[o[0]] = keep ? in[o[1]] : (TX)0;
  }
}
