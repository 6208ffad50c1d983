// index.cu -- gather and scatter along one dim. index.c (kernels side)
// prepends TX (storage type), ADD(p, v) (an atomic p += v for TX) and SCATTER
// (0 gather, 1 scatter, 2 scatter with add). Index values are 1-based and
// were checked against the dim's size on the host before the launch.
// i runs over index's shape; out (gather) is contiguous of that shape.

struct mt_igeo {
  int nd, dim;
  long long n;
  long long size[8];    // index's shape
  long long xst[8];     // x's strides (the dim's used for the index value)
  long long ist[8];     // index's strides
  long long sst[8];     // src's strides (scatter)
};

// 16-bit atomic add through a compare-and-swap of the enclosing word
__device__ __forceinline__ void add16(unsigned short *p, float v, bool bf) {
  unsigned *w = (unsigned *)((size_t)p & ~(size_t)3);
  unsigned shift = ((size_t)p & 2) ? 16 : 0, old = *w, assumed;
  do {
    assumed = old;
    unsigned short h = (unsigned short)(assumed >> shift);
    float f = (bf ? b2f(h) : h2f(h)) + v;
    unsigned short n = bf ? f2b(f) : f2h(f);
    unsigned nw = (assumed & ~(0xffffu << shift)) | ((unsigned)n << shift);
    old = atomicCAS(w, assumed, nw);
  } while (old != assumed);
}

// 8- and 16-bit integer atomic add (bool: or) through a compare-and-swap of
// the enclosing word; the sum wraps as on the CPU
template <typename T> __device__ __forceinline__ void add_small(T *p, long long v, bool is_bool) {
  unsigned *w = (unsigned *)((size_t)p & ~(size_t)3);
  unsigned shift = (unsigned)((size_t)p & 3) * 8, mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *w, assumed;
  do {
    assumed = old;
    unsigned cur = (assumed & mask) >> shift;
    unsigned nv = is_bool ? (unsigned)((cur | (unsigned)(v != 0)) != 0) : cur + (unsigned)v;
    old = atomicCAS(w, assumed, (assumed & ~mask) | ((nv << shift) & mask));
  } while (old != assumed);
}

extern "C" __global__ void mt_index(TX *x, const TX *src, const long long *idx, TX *out, mt_igeo g) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += step) {
    long long r = i, xo = 0, io = 0, so = 0;
    for (int d = g.nd - 1; d >= 0; d--) {
      long long c = r % g.size[d];
      r /= g.size[d];
      if (d != g.dim) xo += c * g.xst[d];
      io += c * g.ist[d];
      so += c * g.sst[d];
    }
    if (g.nd) xo += (idx[io] - 1) * g.xst[g.dim];
#if SCATTER == 0
    out[i] = x[xo];
#elif SCATTER == 1
    x[xo] = src[so];
#else
    ADD(&x[xo], src[so]);
#endif
  }
}
