/* complex_kernels.c -- CPU kernels of the elementwise ops that accept
 * complex64 and complex128 operands, in C99 complex arithmetic (cabs is a
 * scaled hypot, division is scaled: no overflow for large parts). The
 * dispatch in elementwise.c brings operands to the complex dtype first, so
 * a kernel sees one dtype; abs and angle write the real part dtype,
 * predicates bool. Ops not listed here refuse complex operands. */
#include <complex.h>
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdint.h>

#include "cplx.h"

typedef float _Complex c64;
typedef double _Complex c128;

/* out = EXPR(a), out of type OT; dense rows take the first loop */
#define UN(name, tag, CT, OT, EXPR)                                                                                    \
  static void un_##name##_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                    \
    if (s[0] == (int64_t)sizeof(OT) && s[1] == (int64_t)sizeof(CT)) {                                                  \
      OT *o = (OT *)(void *)d[0];                                                                                      \
      const CT *x = (const CT *)(const void *)d[1];                                                                    \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        CT a = x[i];                                                                                                   \
        o[i] = (EXPR);                                                                                                 \
      }                                                                                                                \
      return;                                                                                                          \
    }                                                                                                                  \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
      CT a = *(const CT *)(const void *)(d[1] + i * s[1]);                                                             \
      *(OT *)(void *)(d[0] + i * s[0]) = (EXPR);                                                                       \
    }                                                                                                                  \
  }
#define BIN(name, tag, CT, OT, EXPR)                                                                                   \
  static void bin_##name##_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                   \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
      CT a = *(const CT *)(const void *)(d[1] + i * s[1]), b = *(const CT *)(const void *)(d[2] + i * s[2]);           \
      *(OT *)(void *)(d[0] + i * s[0]) = (EXPR);                                                                       \
    }                                                                                                                  \
  }

/* z / |z| (0 at 0), PyTorch's sgn */
static inline c64 sgn64(c64 z) {
  float r = cabsf(z);
  return r == 0 ? 0 : z / r;
}
static inline c128 sgn128(c128 z) {
  double r = cabs(z);
  return r == 0 ? 0 : z / r;
}
/* a^b, exact for the small integer powers and square roots PyTorch also
 * special-cases (z^2 is z*z, not exp(2 log z)) */
static inline c64 pow64(c64 a, c64 b) {
  if (cimagf(b) == 0) {
    float e = crealf(b);
    if (e == 0) return 1;
    if (e == 1) return a;
    if (e == 2) return a * a;
    if (e == 3) return a * a * a;
    if (e == 0.5f) return csqrtf(a);
    if (e == -1) return 1.0f / a;
    if (e == -2) return 1.0f / (a * a);
  }
  return cpowf(a, b);
}
static inline c128 pow128(c128 a, c128 b) {
  if (cimag(b) == 0) {
    double e = creal(b);
    if (e == 0) return 1;
    if (e == 1) return a;
    if (e == 2) return a * a;
    if (e == 3) return a * a * a;
    if (e == 0.5) return csqrt(a);
    if (e == -1) return 1.0 / a;
    if (e == -2) return 1.0 / (a * a);
  }
  return cpow(a, b);
}
/* |z| of a complex64 in double: the squares cannot overflow or underflow
 * there, so this is hypot's value rounded once, and it vectorizes */
static inline float abs64(c64 z) {
  double re = crealf(z), im = cimagf(z);
  return (float)sqrt(re * re + im * im);
}
static inline bool finite64(c64 z) { return isfinite(crealf(z)) && isfinite(cimagf(z)); }
static inline bool finite128(c128 z) { return isfinite(creal(z)) && isfinite(cimag(z)); }

/* X(name, kind, expr for complex64 (F suffix functions), expr for complex128, result: C same, R real, B bool) */
#define UNARY_OPS(X)                                                                                                   \
  X(neg, -a, -a, C)                                                                                                    \
  X(conj, conjf(a), conj(a), C)                                                                                        \
  X(exp, cexpf(a), cexp(a), C)                                                                                         \
  X(log, clogf(a), clog(a), C)                                                                                         \
  X(sqrt, csqrtf(a), csqrt(a), C)                                                                                      \
  X(rsqrt, 1.0f / csqrtf(a), 1.0 / csqrt(a), C)                                                                        \
  X(reciprocal, 1.0f / a, 1.0 / a, C)                                                                                  \
  X(square, a * a, a * a, C)                                                                                           \
  X(sgn, sgn64(a), sgn128(a), C)                                                                                       \
  X(abs, abs64(a), cabs(a), R)                                                                                         \
  X(angle, cargf(a), carg(a), R)                                                                                       \
  X(isnan, isnan(crealf(a)) || isnan(cimagf(a)), isnan(creal(a)) || isnan(cimag(a)), B)                                \
  X(isinf, isinf(crealf(a)) || isinf(cimagf(a)), isinf(creal(a)) || isinf(cimag(a)), B)                                \
  X(isfinite, finite64(a), finite128(a), B)
#define BINARY_OPS(X)                                                                                                  \
  X(add, a + b, a + b, C)                                                                                              \
  X(sub, a - b, a - b, C)                                                                                              \
  X(mul, a * b, a * b, C)                                                                                              \
  X(div, a / b, a / b, C)                                                                                              \
  X(pow, pow64(a, b), pow128(a, b), C)                                                                                   \
  X(eq, a == b, a == b, B)                                                                                             \
  X(ne, a != b, a != b, B)

#define OT64_C c64
#define OT64_R float
#define OT64_B uint8_t
#define OT128_C c128
#define OT128_R double
#define OT128_B uint8_t
#define DEF_UN(name, e64, e128, k) UN(name, 64, c64, OT64_##k, e64) UN(name, 128, c128, OT128_##k, e128)
#define DEF_BIN(name, e64, e128, k) BIN(name, 64, c64, OT64_##k, e64) BIN(name, 128, c128, OT128_##k, e128)
UNARY_OPS(DEF_UN)
BINARY_OPS(DEF_BIN)

/* complex64 angle and exp on dense rows, 8 at a time through SLEEF (the
 * scalar cargf / cexpf do not vectorize); other layouts and the tail take
 * the generic kernels */
static void un_angle_64v(char **d, const int64_t *s, int64_t n, void *ctx) {
  int64_t i = 0;
  if (s[0] == 4 && s[1] == 8) {
    const float *x = (const float *)(const void *)d[1];
    float *o = (float *)(void *)d[0];
    for (; i + 8 <= n; i += 8) {
      float re[8], im[8];
      for (int k = 0; k < 8; k++) re[k] = x[2 * (i + k)], im[k] = x[2 * (i + k) + 1];
      _mm256_storeu_ps(o + i, Sleef_atan2f8_u10avx2(_mm256_loadu_ps(im), _mm256_loadu_ps(re)));
    }
  }
  char *dd[2] = {d[0] + i * s[0], d[1] + i * s[1]};
  un_angle_64(dd, s, n - i, ctx);
}

static void un_exp_64v(char **d, const int64_t *s, int64_t n, void *ctx) {
  int64_t i = 0;
  if (s[0] == 8 && s[1] == 8) {
    const float *x = (const float *)(const void *)d[1];
    float *o = (float *)(void *)d[0];
    for (; i + 8 <= n; i += 8) {
      float re[8], im[8], c[8], sn[8], m[8];
      for (int k = 0; k < 8; k++) re[k] = x[2 * (i + k)], im[k] = x[2 * (i + k) + 1];
      Sleef___m256_2 sc = Sleef_sincosf8_u10avx2(_mm256_loadu_ps(im));
      _mm256_storeu_ps(sn, sc.x), _mm256_storeu_ps(c, sc.y);
      _mm256_storeu_ps(m, Sleef_expf8_u10avx2(_mm256_loadu_ps(re)));
      for (int k = 0; k < 8; k++) {
        if (!isfinite(re[k]) || !isfinite(im[k])) { /* C99's special values: the scalar cexpf */
          c64 z = cexpf(CMPLXF(re[k], im[k]));
          o[2 * (i + k)] = crealf(z), o[2 * (i + k) + 1] = cimagf(z);
          continue;
        }
        o[2 * (i + k)] = m[k] * c[k], o[2 * (i + k) + 1] = m[k] * sn[k];
      }
    }
  }
  char *dd[2] = {d[0] + i * s[0], d[1] + i * s[1]};
  un_exp_64(dd, s, n - i, ctx);
}

#define ROW_UN(name, e64, e128, k) [MT_OP_##name] = {un_##name##_64, un_##name##_128},
#define ROW_BIN(name, e64, e128, k) [MT_OP_##name] = {bin_##name##_64, bin_##name##_128},
static const mt_loop_fn table[MT_NOPS][2] = {UNARY_OPS(ROW_UN) BINARY_OPS(ROW_BIN)};

bool mt_complex_op(mt_op op) { return table[op][0] != NULL; }

mt_loop_fn mt_cpu_complex_kernel(mt_op op, mt_dtype dt) {
  if (dt != MT_COMPLEX64 && dt != MT_COMPLEX128) return NULL;
  if (dt == MT_COMPLEX64 && op == MT_OP_angle) return un_angle_64v;
  if (dt == MT_COMPLEX64 && op == MT_OP_exp) return un_exp_64v;
  return table[op][dt == MT_COMPLEX128];
}
