// intmm.cu -- integer matrix products (cuBLAS multiplies floating types
// only). intmm.c prepends TX (the integer storage type). One thread per
// element of c (contiguous, batch..., m, n); a and b are read through their
// strides (a batch stride of 0 broadcasts) and accumulated in unsigned
// 64-bit arithmetic, so that overflow wraps as on the CPU and in PyTorch.

struct mt_mmgeo {
  int nb;                              // batch dims
  long long m, n, k, total;            // total = batch * m * n
  long long bsize[8], ast[8], bst[8];  // batch sizes, a's and b's batch strides
  long long ar, ac, br, bc;            // matrix strides: a (m, k), b (k, n)
  long long alpha, beta;
};

extern "C" __global__ void mt_intmm(const TX *a, const TX *b, TX *c, mt_mmgeo g) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.total; i += step) {
    long long j = i % g.n, r = (i / g.n) % g.m, bi = i / (g.n * g.m), ao = 0, bo = 0;
    for (int d = g.nb - 1; d >= 0; d--) {
      long long q = bi % g.bsize[d];
      bi /= g.bsize[d];
      ao += q * g.ast[d];
      bo += q * g.bst[d];
    }
    ao += r * g.ar;
    bo += j * g.bc;
    unsigned long long acc = 0;
    for (long long q = 0; q < g.k; q++)
      acc += (unsigned long long)(long long)a[ao + q * g.ac] * (unsigned long long)(long long)b[bo + q * g.br];
    unsigned long long v = acc * (unsigned long long)g.alpha;
    if (g.beta != 0) v += (unsigned long long)(long long)c[i] * (unsigned long long)g.beta;
    c[i] = (TX)(long long)v;
  }
}
