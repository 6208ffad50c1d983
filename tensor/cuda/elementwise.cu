// elementwise.cu -- the one kernel family behind moontorch's CUDA fills,
// copies, casts and elementwise ops, one op per kernel or (MT_LAZY) a
// fused group of them. kernels.c prepends the definitions
// that make one member of the family (NVRTC compiles it per device
// architecture):
//   TO, TA, TB   storage types of the output and of inputs a, b
//   WO(v)        converts a compute value to TO; LA(x), LB(x) load a, b
//   T            the compute type; EXPR(a, b) the op on two T values
//   NIN          1 or 2 inputs; ASCALAR, BSCALAR: 1 when that input is a
//                number passed by value (as sa_f/sa_i) instead of a tensor
//   SCALAR_INT   1 when scalars are read from their integer argument
// common.cu (its 16-bit float types and conversions) comes before this
// body, as for the other families (kernels.c, mt_cuda_family).

// The elementwise dialect (tensor/ops.def): the functions the ops'
// expressions name, for float and double (and, for m_idiv .. m_shr,
// integers). The JIT's CUDA code includes this part alone (neither
// MT_LAZY nor EXPR defined: jit/codegen_cuda.c).
typedef unsigned long long mt_u64;
#define MT_F1(fn)                                                                                                      \
  __device__ __forceinline__ float m_##fn(float x) { return fn##f(x); }                                               \
  __device__ __forceinline__ double m_##fn(double x) { return fn(x); }
#define MT_F2(fn)                                                                                                      \
  __device__ __forceinline__ float m_##fn(float x, float y) { return fn##f(x, y); }                                   \
  __device__ __forceinline__ double m_##fn(double x, double y) { return fn(x, y); }
MT_F1(exp) MT_F1(exp2) MT_F1(expm1) MT_F1(log) MT_F1(log2) MT_F1(log10) MT_F1(log1p) MT_F1(sqrt)
MT_F1(sin) MT_F1(cos) MT_F1(tan) MT_F1(asin) MT_F1(acos) MT_F1(atan) MT_F1(sinh) MT_F1(cosh) MT_F1(tanh)
MT_F1(erf) MT_F1(erfc) MT_F1(floor) MT_F1(ceil) MT_F1(rint) MT_F1(trunc) MT_F1(fabs)
MT_F2(atan2) MT_F2(hypot) MT_F2(fmod) MT_F2(pow)

// integer powers by squaring (negative exponents give 0, as 1/x truncated, except for 1 and -1)
template <class I> __device__ __forceinline__ I m_ipow(I a, I b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  I r = 1;
  while (b) {
    if (b & 1) r *= a;
    a *= a;
    b >>= 1;
  }
  return r;
}
// Python's floor division and modulo for integers and floats
template <class I> __device__ __forceinline__ I m_idiv(I a, I b) {
  if (b == -1) return (I)(0 - (mt_u64)a);
  I q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <class I> __device__ __forceinline__ I m_imod(I a, I b) {
  if (b == -1) return 0;
  I r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
template <class F> __device__ __forceinline__ F m_pymod(F a, F b) {
  F r = m_fmod(a, b);
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
// shifts by counts outside [0, 64) as the CPU gives them
template <class I> __device__ __forceinline__ I m_shl(I a, I b) { return (b < 0 || b >= 64) ? 0 : (I)((mt_u64)a << b); }
template <class I> __device__ __forceinline__ I m_shr(I a, I b) { return (b < 0 || b >= 64) ? (a < 0 ? -1 : 0) : a >> b; }
template <class F> __device__ __forceinline__ F m_fmax_nan(F a, F b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
template <class F> __device__ __forceinline__ F m_fmin_nan(F a, F b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }
// g * gelu'(x), the exact form (Phi(x) + x phi(x)) and the tanh form (u = k (x + c x^3), t = tanh u)
template <class F> __device__ __forceinline__ F m_gelu_bw(F g, F x) {
  return g * ((F)0.5 * ((F)1 + m_erf(x * (F)0.70710678118654752440)) + x * (F)0.39894228040143267794 * m_exp((F)-0.5 * x * x));
}
template <class F> __device__ __forceinline__ F m_gelu_tanh_bw(F g, F x) {
  const F k = (F)0.79788456080286535588, c = (F)0.044715;
  F x2 = x * x, t = m_tanh(k * (x + c * x2 * x));
  return g * ((F)0.5 * ((F)1 + t) + (F)0.5 * x * ((F)1 - t * t) * k * ((F)1 + (F)3 * c * x2));
}

#if defined(MT_LAZY)
#define p0 b // an op's number parameter travels as its operand b
// A group of eager ops over the same n dense elements, fused (lazy.c): the
// definitions give LZ_NW, the argument words (n, the group's buffer
// pointers from word 1, then its numbers as double bits from word LZ_F0
// and as integers from word LZ_I0), and LZ_BODY, the ops of one element e
// in order (each buffer held in a variable of its storage type, read once
// before its first use, written back after the last op).
struct mt_lazy_args {
  unsigned long long w[LZ_NW];
};
#define LZ_P(k, ty) ((ty *)A.w[1 + (k)])
#define LZ_F(j) __longlong_as_double((long long)A.w[LZ_F0 + (j)])
#define LZ_I(j) ((long long)A.w[LZ_I0 + (j)])
extern "C" __global__ void mt_lazy(mt_lazy_args A) {
  long long n = (long long)A.w[0], step = (long long)gridDim.x * blockDim.x;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += step) {
    LZ_BODY
  }
}
#elif defined(EXPR)
#define p0 b // an op's number parameter travels as its operand b
struct mt_geo {
  int nd;                  // dimensions after collapsing (0: contiguous)
  long long n;             // elements
  long long size[8];       // outermost first
  long long st[3][8];      // element strides of out, a, b
};

template <int CONTIG>
__device__ __forceinline__ void body(TO *o, const TA *pa, const TB *pb, double sa_f, long long sa_i, double sb_f,
                                     long long sb_i, const mt_geo &g) {
  long long step = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < g.n; i += step) {
    long long oo = i, oa = i, ob = i;
    if (!CONTIG) {
      long long r = i;
      oo = oa = ob = 0;
      for (int d = g.nd - 1; d >= 0; d--) {
        long long k = r % g.size[d];
        r /= g.size[d];
        oo += k * g.st[0][d];
        oa += k * g.st[1][d];
        ob += k * g.st[2][d];
      }
    }
#if ASCALAR
    T a = SCALAR_INT ? (T)sa_i : (T)sa_f;
#else
    T a = (T)LA(pa[oa]);
#endif
#if NIN == 2
#if BSCALAR
    T b = SCALAR_INT ? (T)sb_i : (T)sb_f;
#else
    T b = (T)LB(pb[ob]);
#endif
#else
    T b = a;
#endif
    (void)b;
    o[oo] = WO(EXPR(a, b));
  }
}

extern "C" __global__ void mt_ew_contig(TO *o, const TA *pa, const TB *pb, double sa_f, long long sa_i, double sb_f,
                                        long long sb_i, mt_geo g) {
  body<1>(o, pa, pb, sa_f, sa_i, sb_f, sb_i, g);
}

extern "C" __global__ void mt_ew_strided(TO *o, const TA *pa, const TB *pb, double sa_f, long long sa_i, double sb_f,
                                         long long sb_i, mt_geo g) {
  body<0>(o, pa, pb, sa_f, sa_i, sb_f, sb_i, g);
}
#endif
