/* unary.c -- CPU kernels of elementwise unary ops: a scalar kernel per
 * registry row and dtype from the row's expression (tensor/ops.def, in the
 * dialect of cpu/ewmath.h), which the compiler vectorizes; floating math
 * runs instead on 8-wide (float) / 4-wide (double) SLEEF vector functions,
 * also for strided and half-precision inputs (gathered into a vector
 * first). */
#include <immintrin.h>
#include <sleef.h>
#include <string.h>

#include "cpu/dtypes.h"
#include "cpu/ewmath.h"
#include "cplx.h"
#include "cpu/kernels.h"

/* ---- vector math, generated for float8 (ps, f8) and double4 (pd, d4) ---- */
static inline __m256 v_tanh_f32(__m256 x); /* below the generated ones */
static inline __m256d v_tanh_f64(__m256d x);
#define SL(fn, w, u) Sleef_##fn##w##_##u##avx2
#define DEF_VMATH(T, W, ps, w)                                                                                         \
  static inline T v_exp_##W(T x) { return SL(exp, w, u10)(x); }                                                        \
  static inline T v_exp2_##W(T x) { return SL(exp2, w, u10)(x); }                                                      \
  static inline T v_expm1_##W(T x) { return SL(expm1, w, u10)(x); }                                                    \
  static inline T v_log_##W(T x) { return SL(log, w, u10)(x); }                                                        \
  static inline T v_log2_##W(T x) { return SL(log2, w, u10)(x); }                                                      \
  static inline T v_log10_##W(T x) { return SL(log10, w, u10)(x); }                                                    \
  static inline T v_log1p_##W(T x) { return SL(log1p, w, u10)(x); }                                                    \
  static inline T v_sqrt_##W(T x) { return _mm256_sqrt_##ps(x); }                                                      \
  static inline T v_rsqrt_##W(T x) { return _mm256_div_##ps(_mm256_set1_##ps(1), _mm256_sqrt_##ps(x)); }              \
  static inline T v_sin_##W(T x) { return SL(sin, w, u10)(x); }                                                        \
  static inline T v_cos_##W(T x) { return SL(cos, w, u10)(x); }                                                        \
  static inline T v_tan_##W(T x) { return SL(tan, w, u10)(x); }                                                        \
  static inline T v_asin_##W(T x) { return SL(asin, w, u10)(x); }                                                      \
  static inline T v_acos_##W(T x) { return SL(acos, w, u10)(x); }                                                      \
  static inline T v_atan_##W(T x) { return SL(atan, w, u10)(x); }                                                      \
  static inline T v_sinh_##W(T x) { return SL(sinh, w, u10)(x); }                                                      \
  static inline T v_cosh_##W(T x) { return SL(cosh, w, u10)(x); }                                                      \
  static inline T v_tanh_sleef_##W(T x) { return SL(tanh, w, u10)(x); }                                                \
  static inline T v_erf_##W(T x) { return SL(erf, w, u10)(x); }                                                        \
  static inline T v_erfc_##W(T x) { return SL(erfc, w, u15)(x); }                                                      \
  static inline T v_reciprocal_##W(T x) { return _mm256_div_##ps(_mm256_set1_##ps(1), x); }                            \
  static inline T v_sigmoid_##W(T x) {                                                                                 \
    T one = _mm256_set1_##ps(1);                                                                                       \
    return _mm256_div_##ps(one, _mm256_add_##ps(one, v_exp_##W(_mm256_sub_##ps(_mm256_setzero_##ps(), x))));          \
  }                                                                                                                    \
  static inline T v_silu_##W(T x) { return _mm256_mul_##ps(x, v_sigmoid_##W(x)); }                                     \
  static inline T v_gelu_erf_##W(T x) {                                                                                \
    T h = _mm256_set1_##ps(0.5), r = _mm256_set1_##ps(0.70710678118654752440);                                         \
    T e = v_erf_##W(_mm256_mul_##ps(x, r));                                                                            \
    return _mm256_mul_##ps(_mm256_mul_##ps(h, x), _mm256_add_##ps(_mm256_set1_##ps(1), e));                            \
  }                                                                                                                    \
  static inline T v_gelu_tanh_##W(T x) {                                                                               \
    T k = _mm256_set1_##ps(0.79788456080286535588), c = _mm256_set1_##ps(0.044715);                                   \
    T x3 = _mm256_mul_##ps(_mm256_mul_##ps(x, x), x);                                                                  \
    T in = _mm256_mul_##ps(k, _mm256_add_##ps(x, _mm256_mul_##ps(c, x3)));                                             \
    T t = v_tanh_##W(in);                                                                                              \
    return _mm256_mul_##ps(_mm256_mul_##ps(_mm256_set1_##ps(0.5), x), _mm256_add_##ps(_mm256_set1_##ps(1), t));       \
  }
DEF_VMATH(__m256, f32, ps, f8)
DEF_VMATH(__m256d, f64, pd, d4)

/* float gelu as one rational function, the JIT's (jit/codegen_c.c,
 * mj_geluf; its error, at most 4 ulp, is measured in docs/jit.md): x Phi(x)
 * with Phi(x) = 1/2 + c P(c^2)/Q(c^2), c = min(x, 5.5625) taken on the
 * float's bits (where float Phi rounds to 1; negative floats' bits are
 * negative integers, so they pass), and Phi = 0 below -5.5. About 4x
 * faster than SLEEF's erf, and NaN stays NaN. double keeps SLEEF's erf. */
static inline __m256 v_gelu_f32(__m256 x) {
  __m256 c = _mm256_castsi256_ps(_mm256_min_epi32(_mm256_castps_si256(x), _mm256_set1_epi32(0x40b20000)));
  __m256 z = _mm256_mul_ps(c, c);
  __m256 p = _mm256_set1_ps(2.275046434e-08f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(6.351976081e-06f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.688088779e-04f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(4.677157039e-03f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(3.385102531e-02f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(3.989422347e-01f));
  __m256 q = _mm256_set1_ps(1.197525888e-06f);
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(7.364200326e-05f));
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(1.884349202e-03f));
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(2.864493302e-02f));
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(2.515178566e-01f));
  q = _mm256_fmadd_ps(q, z, _mm256_set1_ps(1.0f));
  __m256 ph = _mm256_fmadd_ps(c, _mm256_div_ps(p, q), _mm256_set1_ps(0.5f));
  ph = _mm256_andnot_ps(_mm256_cmp_ps(x, _mm256_set1_ps(-5.5f), _CMP_LT_OQ), ph);
  return _mm256_mul_ps(x, ph);
}
static inline __m256d v_gelu_f64(__m256d x) { return v_gelu_erf_f64(x); }

/* float tanh, the JIT's (mj_tanhf): an odd polynomial below |x| = 0.625,
 * else 1 - 2 / (exp(2|x|) + 1) with the sign of x (|x| clamped at 10, where
 * float tanh is 1; at 9 it is not yet); NaN passes through. About 3x faster
 * than SLEEF's. */
static inline __m256 v_tanh_f32(__m256 x) {
  __m256 sign = _mm256_set1_ps(-0.0f), a = _mm256_andnot_ps(sign, x), z = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(-5.70498872745e-3f);
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531e-2f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036e-1f));
  p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422e-1f));
  __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(a, z), p, a); /* |tanh x|, the sign put back below (keeps -0) */
  __m256 c = _mm256_min_ps(a, _mm256_set1_ps(10.0f));
  __m256 e = v_exp_f32(_mm256_add_ps(c, c));
  __m256 big = _mm256_sub_ps(_mm256_set1_ps(1.0f), _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, _mm256_set1_ps(1.0f))));
  __m256 r = _mm256_blendv_ps(big, small, _mm256_cmp_ps(a, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
  r = _mm256_or_ps(r, _mm256_and_ps(sign, x));
  return _mm256_blendv_ps(r, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}
static inline __m256d v_tanh_f64(__m256d x) { return v_tanh_sleef_f64(x); }

/* One driver per width: contiguous runs load/store directly; strided and
 * half inputs are gathered into a lane buffer, computed, scattered back. */
#define DEF_DRIVER(T, W, ps, C, LANES)                                                                                 \
  static inline __attribute__((always_inline)) void drive_##W(char **d, const int64_t *s, int64_t n, T (*f)(T)) {     \
    int64_t i = 0;                                                                                                     \
    if (s[0] == sizeof(C) && s[1] == sizeof(C)) {                                                                      \
      C *o = (C *)d[0];                                                                                                \
      const C *x = (const C *)d[1];                                                                                    \
      for (; i + LANES <= n; i += LANES) _mm256_storeu_##ps(o + i, f(_mm256_loadu_##ps(x + i)));                       \
    }                                                                                                                  \
    for (; i < n; i += LANES) {                                                                                        \
      C buf[LANES] = {0};                                                                                              \
      int64_t m = n - i < LANES ? n - i : LANES;                                                                       \
      for (int64_t j = 0; j < m; j++) buf[j] = *(const C *)(d[1] + (i + j) * s[1]);                                    \
      _mm256_storeu_##ps(buf, f(_mm256_loadu_##ps(buf)));                                                              \
      for (int64_t j = 0; j < m; j++) *(C *)(d[0] + (i + j) * s[0]) = buf[j];                                          \
    }                                                                                                                  \
  }
DEF_DRIVER(__m256, f32, ps, float, 8)
DEF_DRIVER(__m256d, f64, pd, double, 4)

/* half and bfloat16: convert 8 lanes to float, compute, convert back */
#define DEF_HALF_DRIVER(tag)                                                                                           \
  static inline __attribute__((always_inline)) void drive_##tag(char **d, const int64_t *s, int64_t n,                \
                                                                __m256 (*f)(__m256)) {                                 \
    for (int64_t i = 0; i < n; i += 8) {                                                                               \
      float buf[8] = {0};                                                                                              \
      int64_t m = n - i < 8 ? n - i : 8;                                                                               \
      for (int64_t j = 0; j < m; j++) buf[j] = mt_ld_##tag(d[1] + (i + j) * s[1]);                                     \
      _mm256_storeu_ps(buf, f(_mm256_loadu_ps(buf)));                                                                  \
      for (int64_t j = 0; j < m; j++) MT_ST_##tag(d[0] + (i + j) * s[0], buf[j]);                                      \
    }                                                                                                                  \
  }
DEF_HALF_DRIVER(f16)
DEF_HALF_DRIVER(bf16)

#define FLOAT_MATH_OPS(X)                                                                                              \
  X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(sqrt) X(rsqrt) X(sin) X(cos) X(tan) X(asin) X(acos)     \
  X(atan) X(sinh) X(cosh) X(tanh) X(sigmoid) X(gelu) X(gelu_tanh) X(silu) X(erf) X(erfc) X(reciprocal)

#define DEF_FLOAT_KERNELS(name)                                                                                        \
  static void kv_##name##_f32(char **d, const int64_t *s, int64_t n, void *c) { drive_f32(d, s, n, v_##name##_f32); } \
  static void kv_##name##_f64(char **d, const int64_t *s, int64_t n, void *c) { drive_f64(d, s, n, v_##name##_f64); } \
  static void kv_##name##_f16(char **d, const int64_t *s, int64_t n, void *c) { drive_f16(d, s, n, v_##name##_f32); } \
  static void kv_##name##_bf16(char **d, const int64_t *s, int64_t n, void *c) { drive_bf16(d, s, n, v_##name##_f32); }
FLOAT_MATH_OPS(DEF_FLOAT_KERNELS)

/* ---- scalar kernels from the rows' expressions (tensor/ops.def) ----
 * One kernel per row and dtype: a holds the input in the compute type T,
 * p0 the op's number parameter (ctx points at it; NULL: the row's default).
 * Predicates (MT_F_PRED) write bool. */
#define DEF_EXPR_KERNEL(name, tag, S, C, EXPR, PRED, DFLT)                                                            \
  static void k_##name##_##tag(char **d, const int64_t *s, int64_t n, void *c) {                                       \
    typedef C T;                                                                                                       \
    const T p0 = (T)(c ? *(const double *)c : (DFLT));                                                                 \
    (void)p0;                                                                                                          \
    if (!(PRED) && s[0] == sizeof(S) && s[1] == sizeof(S)) {                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T a = mt_ld_##tag(d[1] + i * sizeof(S));                                                                       \
        (void)a;                                                                                                       \
        MT_ST_##tag(d[0] + i * sizeof(S), EXPR);                                                                       \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        T a = mt_ld_##tag(d[1] + i * s[1]);                                                                            \
        (void)a;                                                                                                       \
        if (PRED)                                                                                                      \
          *(uint8_t *)(d[0] + i * s[0]) = (uint8_t)((EXPR) != 0);                                                      \
        else                                                                                                           \
          MT_ST_##tag(d[0] + i * s[0], EXPR);                                                                          \
      }                                                                                                                \
    }                                                                                                                  \
  }
#define FOR_FLOAT(K, name, e, pr, df)                                                                                  \
  K(name, f32, float, float, e, pr, df) K(name, f64, double, double, e, pr, df)                                        \
  K(name, f16, uint16_t, float, e, pr, df) K(name, bf16, uint16_t, float, e, pr, df)
#define FOR_INT(K, name, e, pr, df)                                                                                    \
  K(name, i8, int8_t, int8_t, e, pr, df) K(name, i16, int16_t, int16_t, e, pr, df)                                     \
  K(name, i32, int32_t, int32_t, e, pr, df) K(name, i64, int64_t, int64_t, e, pr, df)                                  \
  K(name, u8, uint8_t, uint8_t, e, pr, df) K(name, b8, uint8_t, uint8_t, e, pr, df)                                    \
  K(name, u16, uint16_t, uint16_t, e, pr, df)

/* the predicate branch of a bitwise not of uint8 is dead code gcc warns about */
#pragma GCC diagnostic ignored "-Wsign-compare"
#define MT_OP(...)
#define MT_BINARY(...)
#define MT_COMPARE(...)
#define MT_UNARY_P(name, flags, ac, jit, param, dflt, fexpr, iexpr, help)                                              \
  FOR_FLOAT(DEF_EXPR_KERNEL, name, fexpr, (flags) & MT_F_PRED, dflt)                                                   \
  FOR_INT(DEF_EXPR_KERNEL, name, iexpr, (flags) & MT_F_PRED, dflt)
#include "ops.def"
#undef MT_UNARY_P

/* ---- the lookup table, filled once from the rows, then the vector kernels ---- */
static mt_loop_fn table[MT_NOPS][MT_NDTYPE];

#define SET(name, tag, S, C, e, pr, df) table[MT_OP_##name][E_##tag] = k_##name##_##tag;
#define MT_UNARY_P(name, flags, ac, jit, param, dflt, fexpr, iexpr, help)                                              \
  if (strcmp(#fexpr, "MT_NOEXPR")) {                                                                                   \
    FOR_FLOAT(SET, name, _, _, _)                                                                                      \
  }                                                                                                                    \
  if (strcmp(#iexpr, "MT_NOEXPR")) {                                                                                   \
    FOR_INT(SET, name, _, _, _)                                                                                        \
    if ((flags) & MT_F_NOBOOL) table[MT_OP_##name][MT_BOOL] = NULL;                                                    \
  }
#define SET_FLOATMATH(name)                                                                                            \
  table[MT_OP_##name][MT_FLOAT32] = kv_##name##_f32;                                                                   \
  table[MT_OP_##name][MT_FLOAT64] = kv_##name##_f64;                                                                   \
  table[MT_OP_##name][MT_FLOAT16] = kv_##name##_f16;                                                                   \
  table[MT_OP_##name][MT_BFLOAT16] = kv_##name##_bf16;

static void init_table(void) {
#include "ops.def"
  table[MT_OP_bitwise_not][MT_BOOL] = k_logical_not_b8; /* not of a bool: its logical not */
  FLOAT_MATH_OPS(SET_FLOATMATH)
}
#undef MT_OP
#undef MT_BINARY
#undef MT_COMPARE
#undef MT_UNARY_P

mt_loop_fn mt_cpu_unary_kernel(mt_op op, mt_dtype dt) {
  if (mt_is_complex(dt)) return mt_cpu_complex_kernel(op, dt);
  static int ready;
  if (!ready) { /* idempotent: racing initialisers write the same values */
    init_table();
    ready = 1;
  }
  return table[op][dt];
}
