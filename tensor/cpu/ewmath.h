/* ewmath.h -- the elementwise dialect for the CPU kernels (engine-internal):
 * the m_ functions that the expressions of tensor/ops.def name, over the
 * compute types of cpu/dtypes.h (float and double through <tgmath.h>,
 * integers as int64_t). unary.c and binary.c build their scalar kernels
 * from the rows with it; it must mean what elementwise.cu's dialect means
 * on CUDA and jit/codegen_c.c's in generated code. */
#ifndef MT_CPU_EWMATH_H
#define MT_CPU_EWMATH_H

#include <stdint.h>
#include <tgmath.h>

typedef uint64_t mt_u64;
/* An absent expression (MT_NOEXPR in a row): kernels built from it are
 * never put in a table. */
enum { MT_NOEXPR = 0 };

#define m_exp(x) exp(x)
#define m_exp2(x) exp2(x)
#define m_expm1(x) expm1(x)
#define m_log(x) log(x)
#define m_log2(x) log2(x)
#define m_log10(x) log10(x)
#define m_log1p(x) log1p(x)
#define m_sqrt(x) sqrt(x)
#define m_sin(x) sin(x)
#define m_cos(x) cos(x)
#define m_tan(x) tan(x)
#define m_asin(x) asin(x)
#define m_acos(x) acos(x)
#define m_atan(x) atan(x)
#define m_sinh(x) sinh(x)
#define m_cosh(x) cosh(x)
#define m_tanh(x) tanh(x)
#define m_erf(x) erf(x)
#define m_erfc(x) erfc(x)
#define m_floor(x) floor(x)
#define m_ceil(x) ceil(x)
#define m_rint(x) nearbyint(x)
#define m_trunc(x) trunc(x)
#define m_fabs(x) fabs(x)
#define m_atan2(x, y) atan2(x, y)
#define m_hypot(x, y) hypot(x, y)
#define m_fmod(x, y) fmod(x, y)
#define m_pow(x, y) pow(x, y)

/* Python's modulo of floats (the sign of b). */
static inline double m_pymod_d(double a, double b) {
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
#define m_pymod(a, b) m_pymod_d(a, b)
/* max/min that propagate NaN */
#define m_fmax_nan(a, b) (((a) != (a) || (b) != (b)) ? (a) + (b) : ((a) > (b) ? (a) : (b)))
#define m_fmin_nan(a, b) (((a) != (a) || (b) != (b)) ? (a) + (b) : ((a) < (b) ? (a) : (b)))

/* g * gelu'(x), the exact form (Phi(x) + x phi(x)) and the tanh form
 * (u = k (x + c x^3), t = tanh u: (1 + t)/2 + x/2 (1 - t^2) u'). */
static inline double m_gelu_bw_d(double g, double x) {
  return g * (0.5 * (1 + erf(x * 0.70710678118654752440)) + x * 0.39894228040143267794 * exp(-0.5 * x * x));
}
static inline float m_gelu_bw_f(float g, float x) {
  return g * (0.5f * (1 + erff(x * 0.70710678f)) + x * 0.39894228f * expf(-0.5f * x * x));
}
static inline double m_gelu_tanh_bw_d(double g, double x) {
  const double k = 0.79788456080286535588, c = 0.044715;
  double x2 = x * x, t = tanh(k * (x + c * x2 * x));
  return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x2));
}
static inline float m_gelu_tanh_bw_f(float g, float x) {
  const float k = 0.79788456f, c = 0.044715f;
  float x2 = x * x, t = tanhf(k * (x + c * x2 * x));
  return g * (0.5f * (1 + t) + 0.5f * x * (1 - t * t) * k * (1 + 3 * c * x2));
}
#define m_gelu_bw(a, b) _Generic((b), float: m_gelu_bw_f, default: m_gelu_bw_d)(a, b)
#define m_gelu_tanh_bw(a, b) _Generic((b), float: m_gelu_tanh_bw_f, default: m_gelu_tanh_bw_d)(a, b)

/* Integers: Python's floor division and modulo (b == -1 never overflows),
 * powers by squaring (negative exponents: 1/a truncated), shifts by counts
 * outside [0, 64) as PyTorch gives them. */
static inline int64_t m_idiv(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
static inline int64_t m_imod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline int64_t m_ipow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
  uint64_t r = 1, x = (uint64_t)a;
  while (b) {
    if (b & 1) r *= x;
    x *= x;
    b >>= 1;
  }
  return (int64_t)r;
}
static inline int64_t m_shl(int64_t a, int64_t b) { return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a << b); }
static inline int64_t m_shr(int64_t a, int64_t b) { return (b < 0 || b >= 64) ? (a < 0 ? -1 : 0) : a >> b; }

#endif
