// random.cu -- random draws on the device from Philox4x32-10 (Salmon,
// Moraes, Dror, Shaw, SC'11), counter-based: block c of a draw is
// philox({c, c >> 32, 0, 0}, key) and word 4c+j of the draw's stream is its
// word j, exactly as on the CPU (tensor/random.c). random.c (cuda side)
// prepends TX (storage type), WRITE(v) (a store expression) and KIND, and
// passes the first block reserved from the generator.
//
// A thread makes one unit: 4 blocks = 16 words, giving 16 elements of the
// one-word kinds or 8 of the two-word ones (a 64-bit word is two 32-bit
// words, low first). The element -> word map, the Box-Muller pairing (16
// single or 8 double elements: the first half gets r cos, the second r sin)
// and the arithmetic follow the CPU tiles, so a seed gives the CPU's numbers
// (uniform and integer draws bit for bit; normal and exponential ones to
// within the libraries' last-bit differences in log and sincospi).
//
// KIND: 0 uniform float (top BITS bits), 1 uniform double (53 bits),
// 2 normal float, 3 normal double, 4 exponential (24 or 53 bits: BITS),
// 5 integer, small range (one word), 6 integer, 64-bit range, 7 bernoulli
// (word < thr), 8 a 32-bit uniform as double (bernoulli with tensor p).

#define PH_M0 0xD2511F53u
#define PH_M1 0xCD9E8D57u
#define PH_W0 0x9E3779B9u
#define PH_W1 0xBB67AE85u

// One Philox4x32-10 block: ten rounds of two 32x32 -> 64 products, the
// halves exchanged and xored with the round key, the key bumped by W0, W1.
__device__ __forceinline__ void philox(unsigned long long c, unsigned k0, unsigned k1, unsigned *o) {
  unsigned c0 = (unsigned)c, c1 = (unsigned)(c >> 32), c2 = 0, c3 = 0;
#pragma unroll
  for (int r = 0; r < 10; r++) {
    unsigned hi0 = __umulhi(PH_M0, c0), lo0 = PH_M0 * c0;
    unsigned hi1 = __umulhi(PH_M1, c2), lo1 = PH_M1 * c2;
    unsigned n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c1 = lo1;
    c3 = lo0;
    c0 = n0;
    c2 = n2;
    k0 += PH_W0;
    k1 += PH_W1;
  }
  o[0] = c0, o[1] = c1, o[2] = c2, o[3] = c3;
}

__device__ __forceinline__ unsigned long long w64(const unsigned *w, int k) {
  return (unsigned long long)w[2 * k] | ((unsigned long long)w[2 * k + 1] << 32);
}

#if KIND == 1 || KIND == 3 || KIND == 6 || (KIND == 4 && BITS == 53)
#define EPU 8 // elements per unit (two words each)
#else
#define EPU 16
#endif

// a, b: distribution parameters (uniform: from, to - from; normal: mean,
// std; exponential: lambd); fa, fs: uniform float's from and scale as the
// CPU computes them; lo, range: integers lo + [0, range) (range 0: 2^64);
// thr: bernoulli's threshold (p * 2^32).
extern "C" __global__ void mt_rand(TX *out, long long n, unsigned k0, unsigned k1, unsigned long long base, double a,
                                   double b, float fa, float fs, long long lo, unsigned long long range,
                                   unsigned long long thr) {
  long long units = (n + EPU - 1) / EPU, step = (long long)gridDim.x * blockDim.x;
  for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < units; u += step) {
    unsigned w[16];
#pragma unroll
    for (int q = 0; q < 4; q++) philox(base + 4ull * (unsigned long long)u + q, k0, k1, w + 4 * q);
    long long e0 = u * EPU;
    int m = n - e0 < EPU ? (int)(n - e0) : EPU;
#if KIND == 2
    float v[16];
#pragma unroll
    for (int k = 0; k < 8; k++) {
      float u1 = ((float)(int)(w[k] >> 8) + 1.0f) * 0x1p-24f, u2 = (float)(int)(w[k + 8] >> 8) * 0x1p-24f;
      float r = fs * sqrtf(-2.0f * logf(u1)), s, c;
      sincospif(2.0f * u2, &s, &c);
      v[k] = fmaf(r, c, fa);
      v[k + 8] = fmaf(r, s, fa);
    }
#elif KIND == 3
    double v[8];
#pragma unroll
    for (int k = 0; k < 4; k++) {
      double u1 = ((double)(long long)(w64(w, k) >> 11) + 1.0) * 0x1p-53;
      double u2 = (double)(long long)(w64(w, k + 4) >> 11) * 0x1p-53;
      double r = b * sqrt(-2.0 * log(u1)), s, c;
      sincospi(2.0 * u2, &s, &c);
      v[k] = fma(r, c, a);
      v[k + 4] = fma(r, s, a);
    }
#endif
#pragma unroll
    for (int i = 0; i < EPU; i++) {
      if (i >= m) break;
#if KIND == 0
      float x = fmaf((float)(int)(w[i] >> (32 - BITS)), fs, fa);
#elif KIND == 1
      double x = fma((double)(long long)(w64(w, i) >> 11), b, a);
#elif KIND == 2 || KIND == 3
      auto x = v[i];
#elif KIND == 4
#if BITS == 53
      double uu = (double)(long long)(w64(w, i) >> 11) * 0x1p-53;
#else
      double uu = (double)(w[i] >> 8) * 0x1p-24;
#endif
      double x = -log1p(-uu) / a;
#elif KIND == 5
      long long x = (long long)((unsigned long long)lo + (((unsigned long long)w[i] * range) >> 32));
#elif KIND == 6
      unsigned long long r64 = w64(w, i);
      long long x = (long long)((unsigned long long)lo + (range ? __umul64hi(r64, range) : r64));
#elif KIND == 7
      long long x = (unsigned long long)w[i] < thr;
#else
      double x = (double)w[i] * 0x1p-32;
#endif
      out[e0 + i] = WRITE(x);
    }
  }
}
