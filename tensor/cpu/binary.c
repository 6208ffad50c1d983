/* binary.c -- CPU kernels of elementwise binary and comparison ops, for all
 * dtypes. Loops have fast paths for dense operands and for a broadcast
 * scalar operand so the compiler vectorizes them; integer arithmetic that
 * could overflow is done in unsigned (wrapping, like PyTorch). */
#include <tgmath.h>

#include "cpu/dtypes.h"
#include "cpu/kernels.h"

/* d[0] = out, d[1] = a, d[2] = b; EXPR uses a, b of compute type C */
#define DEF_BIN_KERNEL(name, tag, T, C, EXPR)                                                                          \
  static void k_##name##_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                     \
    const int64_t es = sizeof(T);                                                                                      \
    char *o = d[0];                                                                                                    \
    const char *pa = d[1], *pb = d[2];                                                                                 \
    if (s[0] == es && s[1] == es && s[2] == es) {                                                                      \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        C a = mt_ld_##tag(pa + i * es), b = mt_ld_##tag(pb + i * es);                                                  \
        MT_ST_##tag(o + i * es, EXPR);                                                                                 \
      }                                                                                                                \
    } else if (s[0] == es && s[1] == es && s[2] == 0) {                                                               \
      const C b = mt_ld_##tag(pb);                                                                                     \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        C a = mt_ld_##tag(pa + i * es);                                                                                \
        MT_ST_##tag(o + i * es, EXPR);                                                                                 \
      }                                                                                                                \
    } else if (s[0] == es && s[1] == 0 && s[2] == es) {                                                               \
      const C a = mt_ld_##tag(pa);                                                                                     \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        C b = mt_ld_##tag(pb + i * es);                                                                                \
        MT_ST_##tag(o + i * es, EXPR);                                                                                 \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        C a = mt_ld_##tag(pa + i * s[1]), b = mt_ld_##tag(pb + i * s[2]);                                              \
        MT_ST_##tag(o + i * s[0], EXPR);                                                                               \
      }                                                                                                                \
    }                                                                                                                  \
  }
/* comparisons and logical ops: inputs of compute type, bool output */
#define DEF_CMP_KERNEL(name, tag, T, C, EXPR)                                                                          \
  static void k_##name##_##tag(char **d, const int64_t *s, int64_t n, void *ctx) {                                     \
    const int64_t es = sizeof(T);                                                                                      \
    if (s[0] == 1 && s[1] == es && s[2] == es) {                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        C a = mt_ld_##tag(d[1] + i * es), b = mt_ld_##tag(d[2] + i * es);                                              \
        ((uint8_t *)d[0])[i] = (uint8_t)((EXPR) != 0);                                                                 \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        C a = mt_ld_##tag(d[1] + i * s[1]), b = mt_ld_##tag(d[2] + i * s[2]);                                          \
        *(uint8_t *)(d[0] + i * s[0]) = (uint8_t)((EXPR) != 0);                                                        \
      }                                                                                                                \
    }                                                                                                                  \
  }

static inline double py_fmod_f(double a, double b) {
  double r = fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline int64_t py_mod_i(int64_t a, int64_t b) {
  if (b == -1) return 0; /* avoids INT64_MIN % -1 */
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline int64_t py_floordiv_i(int64_t a, int64_t b) {
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
static inline int64_t ipow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
  uint64_t r = 1, x = (uint64_t)a;
  while (b) {
    if (b & 1) r *= x;
    x *= x;
    b >>= 1;
  }
  return (int64_t)r;
}
static inline int64_t shl_i(int64_t a, int64_t b) { return (b < 0 || b >= 64) ? 0 : (int64_t)((uint64_t)a << b); }
static inline int64_t shr_i(int64_t a, int64_t b) { return (b < 0 || b >= 64) ? (a < 0 ? -1 : 0) : a >> b; }
static inline double fmaxnan(double a, double b) { return (a != a || b != b) ? a + b : (a > b ? a : b); }
static inline double fminnan(double a, double b) { return (a != a || b != b) ? a + b : (a < b ? a : b); }

/* g * gelu'(x), exact (Phi(x) + x phi(x)) and tanh form (u = k (x + c x^3),
 * t = tanh u: (1 + t)/2 + x/2 (1 - t^2) u'), in the compute type. */
static inline double gelu_bw_d(double g, double x) {
  return g * (0.5 * (1 + erf(x * 0.70710678118654752440)) + x * 0.39894228040143267794 * exp(-0.5 * x * x));
}
static inline float gelu_bw_f(float g, float x) {
  return g * (0.5f * (1 + erff(x * 0.70710678f)) + x * 0.39894228f * expf(-0.5f * x * x));
}
static inline double gelu_tanh_bw_d(double g, double x) {
  const double k = 0.79788456080286535588, c = 0.044715;
  double x2 = x * x, t = tanh(k * (x + c * x2 * x));
  return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x2));
}
static inline float gelu_tanh_bw_f(float g, float x) {
  const float k = 0.79788456f, c = 0.044715f;
  float x2 = x * x, t = tanhf(k * (x + c * x2 * x));
  return g * (0.5f * (1 + t) + 0.5f * x * (1 - t * t) * k * (1 + 3 * c * x2));
}
#define GELU_BW(a, b) _Generic((b), float: gelu_bw_f, default: gelu_bw_d)(a, b)
#define GELU_TANH_BW(a, b) _Generic((b), float: gelu_tanh_bw_f, default: gelu_tanh_bw_d)(a, b)

#define FLT_BIN_OPS(X, tag, T, C)                                                                                      \
  X(add, tag, T, C, a + b)                                                                                             \
  X(sub, tag, T, C, a - b)                                                                                             \
  X(mul, tag, T, C, a * b)                                                                                             \
  X(div, tag, T, C, a / b)                                                                                             \
  X(floor_divide, tag, T, C, floor(a / b))                                                                             \
  X(pow, tag, T, C, pow(a, b))                                                                                         \
  X(atan2, tag, T, C, atan2(a, b))                                                                                     \
  X(hypot, tag, T, C, hypot(a, b))                                                                                     \
  X(fmod, tag, T, C, fmod(a, b))                                                                                       \
  X(remainder, tag, T, C, (C)py_fmod_f(a, b))                                                                          \
  X(maximum, tag, T, C, (C)fmaxnan(a, b))                                                                              \
  X(minimum, tag, T, C, (C)fminnan(a, b))                                                                              \
  X(relu_backward, tag, T, C, b > 0 ? a : 0)                                                                           \
  X(gelu_backward, tag, T, C, (C)GELU_BW(a, b))                                                                        \
  X(gelu_tanh_backward, tag, T, C, (C)GELU_TANH_BW(a, b))
#define INT_BIN_OPS(X, tag, T, C)                                                                                      \
  X(add, tag, T, C, (C)((uint64_t)a + (uint64_t)b))                                                                    \
  X(sub, tag, T, C, (C)((uint64_t)a - (uint64_t)b))                                                                    \
  X(mul, tag, T, C, (C)((uint64_t)a * (uint64_t)b))                                                                    \
  X(floor_divide, tag, T, C, (C)py_floordiv_i(a, b))                                                                   \
  X(pow, tag, T, C, (C)ipow(a, b))                                                                                     \
  X(fmod, tag, T, C, (C)(b == -1 ? 0 : a % b))                                                                         \
  X(remainder, tag, T, C, (C)py_mod_i(a, b))                                                                           \
  X(maximum, tag, T, C, a > b ? a : b)                                                                                 \
  X(minimum, tag, T, C, a < b ? a : b)                                                                                 \
  X(relu_backward, tag, T, C, b > 0 ? a : 0)                                                                           \
  X(bitwise_and, tag, T, C, a & b)                                                                                     \
  X(bitwise_or, tag, T, C, a | b)                                                                                      \
  X(bitwise_xor, tag, T, C, a ^ b)                                                                                     \
  X(bitwise_left_shift, tag, T, C, (C)shl_i(a, b))                                                                     \
  X(bitwise_right_shift, tag, T, C, (C)shr_i(a, b))
#define BOOL_BIN_OPS(X, tag, T, C)                                                                                     \
  X(add, tag, T, C, a | b)                                                                                             \
  X(mul, tag, T, C, a & b)                                                                                             \
  X(maximum, tag, T, C, a | b)                                                                                         \
  X(minimum, tag, T, C, a & b)                                                                                         \
  X(bitwise_and, tag, T, C, a & b)                                                                                     \
  X(bitwise_or, tag, T, C, a | b)                                                                                      \
  X(bitwise_xor, tag, T, C, a ^ b)
#define CMP_OPS(X, tag, T, C)                                                                                          \
  X(eq, tag, T, C, a == b)                                                                                             \
  X(ne, tag, T, C, a != b)                                                                                             \
  X(lt, tag, T, C, a < b)                                                                                              \
  X(le, tag, T, C, a <= b)                                                                                             \
  X(gt, tag, T, C, a > b)                                                                                              \
  X(ge, tag, T, C, a >= b)                                                                                             \
  X(logical_and, tag, T, C, (a != 0) & (b != 0))                                                                       \
  X(logical_or, tag, T, C, (a != 0) | (b != 0))                                                                        \
  X(logical_xor, tag, T, C, (a != 0) ^ (b != 0))

#define FLT_FAMILY(E, tag, T, C) FLT_BIN_OPS(DEF_BIN_KERNEL, tag, T, C) CMP_OPS(DEF_CMP_KERNEL, tag, T, C)
#define INT_FAMILY(E, tag, T, C) INT_BIN_OPS(DEF_BIN_KERNEL, tag, T, C) CMP_OPS(DEF_CMP_KERNEL, tag, T, C)
#define BOOL_FAMILY(E, tag, T, C) BOOL_BIN_OPS(DEF_BIN_KERNEL, tag, T, C) CMP_OPS(DEF_CMP_KERNEL, tag, T, C)
MT_DTYPES_FLOAT(FLT_FAMILY)
MT_DTYPES_INT(INT_FAMILY)
MT_DTYPES_BOOL(BOOL_FAMILY)

static mt_loop_fn table[MT_NOPS][MT_NDTYPE];
#define SET(name, tag, T, C, EXPR) table[MT_OP_##name][E_##tag] = k_##name##_##tag;
#define SET_FLT(E, tag, T, C) FLT_BIN_OPS(SET, tag, T, C) CMP_OPS(SET, tag, T, C)
#define SET_INT(E, tag, T, C) INT_BIN_OPS(SET, tag, T, C) CMP_OPS(SET, tag, T, C)
#define SET_BOOL(E, tag, T, C) BOOL_BIN_OPS(SET, tag, T, C) CMP_OPS(SET, tag, T, C)

static void init_table(void) {
  MT_DTYPES_FLOAT(SET_FLT)
  MT_DTYPES_INT(SET_INT)
  MT_DTYPES_BOOL(SET_BOOL)
}

mt_loop_fn mt_cpu_binary_kernel(mt_op op, mt_dtype dt) {
  static int ready;
  if (!ready) {
    init_table();
    ready = 1;
  }
  return table[op][dt];
}
