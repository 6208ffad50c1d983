/* reduce_kernels.c -- CPU kernels of sum, prod, max, min, argmax, argmin on
 * contiguous float32, float64, integer and bool (as uint8) data. Floating
 * kernels use AVX2; float32 sums add BLOCK values in float vectors and each
 * block total in double (1e6-element sums stay within 1e-6 of exact).
 * Integer loops are plain C that gcc vectorizes. */
#include <immintrin.h>
#include <math.h>

#include "cpu/dtypes.h"
#include "cpu/reduce_kernels.h"

#define BLOCK 2048

/* ---- floating rows on AVX2: sum, max, min ---- */
#define DEF_FVEC(tag, T, V, ps, LANES)                                                                                 \
  static void sum_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                   \
    const T *x = xv;                                                                                                   \
    double total = 0;                                                                                                  \
    for (int64_t b = 0; b < n; b += BLOCK) {                                                                           \
      const T *p = x + b;                                                                                              \
      int64_t m = n - b < BLOCK ? n - b : BLOCK, i = 0;                                                                \
      V s0 = _mm256_setzero_##ps(), s1 = s0, s2 = s0, s3 = s0;                                                         \
      for (; i + 4 * LANES <= m; i += 4 * LANES) {                                                                     \
        s0 = _mm256_add_##ps(s0, _mm256_loadu_##ps(p + i));                                                            \
        s1 = _mm256_add_##ps(s1, _mm256_loadu_##ps(p + i + LANES));                                                    \
        s2 = _mm256_add_##ps(s2, _mm256_loadu_##ps(p + i + 2 * LANES));                                                \
        s3 = _mm256_add_##ps(s3, _mm256_loadu_##ps(p + i + 3 * LANES));                                                \
      }                                                                                                                \
      for (; i + LANES <= m; i += LANES) s0 = _mm256_add_##ps(s0, _mm256_loadu_##ps(p + i));                           \
      s0 = _mm256_add_##ps(_mm256_add_##ps(s0, s1), _mm256_add_##ps(s2, s3));                                          \
      T lane[LANES];                                                                                                   \
      _mm256_storeu_##ps(lane, s0);                                                                                    \
      double bs = 0;                                                                                                   \
      for (int j = 0; j < LANES; j++) bs += lane[j];                                                                   \
      for (; i < m; i++) bs += p[i];                                                                                   \
      total += bs;                                                                                                     \
    }                                                                                                                  \
    a->v.f += total;                                                                                                   \
  }                                                                                                                    \
  /* extremes: NaN lanes are tracked apart and win at the end */                                                       \
  DEF_FEXT(max, tag, T, V, ps, LANES, >, -INFINITY)                                                                    \
  DEF_FEXT(min, tag, T, V, ps, LANES, <, INFINITY)

#define DEF_FEXT(name, tag, T, V, ps, LANES, CMP, START)                                                               \
  static void name##_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                \
    const T *x = xv;                                                                                                   \
    int64_t i = 0;                                                                                                     \
    V m0 = _mm256_set1_##ps(START), m1 = m0, nan = _mm256_setzero_##ps();                                              \
    for (; i + 2 * LANES <= n; i += 2 * LANES) {                                                                       \
      V v0 = _mm256_loadu_##ps(x + i), v1 = _mm256_loadu_##ps(x + i + LANES);                                          \
      nan = _mm256_or_##ps(nan, _mm256_cmp_##ps(v0, v1, _CMP_UNORD_Q));                                                \
      m0 = _mm256_##name##_##ps(m0, v0);                                                                               \
      m1 = _mm256_##name##_##ps(m1, v1);                                                                               \
    }                                                                                                                  \
    m0 = _mm256_##name##_##ps(m0, m1);                                                                                 \
    T lane[LANES];                                                                                                     \
    _mm256_storeu_##ps(lane, m0);                                                                                      \
    bool isnan_ = _mm256_movemask_##ps(nan) != 0;                                                                      \
    double r = a->v.f; /* a NaN already here stays: comparisons with it fail */                                        \
    for (int j = 0; j < LANES; j++)                                                                                    \
      if (lane[j] CMP r) r = lane[j];                                                                                  \
    for (; i < n; i++) {                                                                                               \
      if (x[i] != x[i])                                                                                                \
        isnan_ = true;                                                                                                 \
      else if (x[i] CMP r)                                                                                             \
        r = x[i];                                                                                                      \
    }                                                                                                                  \
    a->v.f = isnan_ ? NAN : r;                                                                                         \
  }

/* ---- floating rows and columns in plain C (double accumulators) ---- */
#define DEF_FLOAT(tag, T)                                                                                              \
  static void prod_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                  \
    const T *x = xv;                                                                                                   \
    double p = a->v.f;                                                                                                 \
    for (int64_t i = 0; i < n; i++) p *= x[i];                                                                         \
    a->v.f = p;                                                                                                        \
  }                                                                                                                    \
  static void sum_col_##tag(void *accv, const void *xv, int64_t n) {                                                   \
    double *acc = accv;                                                                                                \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) acc[j] += x[j];                                                                    \
  }                                                                                                                    \
  static void prod_col_##tag(void *accv, const void *xv, int64_t n) {                                                  \
    double *acc = accv;                                                                                                \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) acc[j] *= x[j];                                                                    \
  }                                                                                                                    \
  static void max_col_##tag(void *accv, const void *xv, int64_t n) {                                                   \
    double *acc = accv;                                                                                                \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) {                                                                                  \
      double v = x[j], c = acc[j];                                                                                     \
      acc[j] = (v > c || v != v) ? v : c;                                                                              \
    }                                                                                                                  \
  }                                                                                                                    \
  static void min_col_##tag(void *accv, const void *xv, int64_t n) {                                                   \
    double *acc = accv;                                                                                                \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) {                                                                                  \
      double v = x[j], c = acc[j];                                                                                     \
      acc[j] = (v < c || v != v) ? v : c;                                                                              \
    }                                                                                                                  \
  }

DEF_FVEC(f32, float, __m256, ps, 8)
DEF_FVEC(f64, double, __m256d, pd, 4)
DEF_FLOAT(f32, float)
DEF_FLOAT(f64, double)

/* ---- integers (and bool as uint8): int64 accumulators, wrapping ---- */
#define DEF_INT(E, tag, T, C)                                                                                          \
  static void sum_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                   \
    const T *x = xv;                                                                                                   \
    uint64_t s = 0;                                                                                                    \
    for (int64_t i = 0; i < n; i++) s += (uint64_t)x[i];                                                               \
    a->v.i = (int64_t)((uint64_t)a->v.i + s);                                                                          \
  }                                                                                                                    \
  static void prod_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                  \
    const T *x = xv;                                                                                                   \
    uint64_t p = (uint64_t)a->v.i;                                                                                     \
    for (int64_t i = 0; i < n; i++) p *= (uint64_t)x[i];                                                               \
    a->v.i = (int64_t)p;                                                                                               \
  }                                                                                                                    \
  DEF_IEXT(max, tag, T, >)                                                                                             \
  DEF_IEXT(min, tag, T, <)                                                                                             \
  DEF_IARG(argmax, tag, T, >)                                                                                          \
  DEF_IARG(argmin, tag, T, <)                                                                                          \
  static void sum_col_##tag(void *accv, const void *xv, int64_t n) {                                                   \
    int64_t *acc = accv;                                                                                               \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) acc[j] = (int64_t)((uint64_t)acc[j] + (uint64_t)x[j]);                             \
  }                                                                                                                    \
  static void prod_col_##tag(void *accv, const void *xv, int64_t n) {                                                  \
    int64_t *acc = accv;                                                                                               \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) acc[j] = (int64_t)((uint64_t)acc[j] * (uint64_t)x[j]);                             \
  }                                                                                                                    \
  static void max_col_##tag(void *accv, const void *xv, int64_t n) {                                                   \
    int64_t *acc = accv;                                                                                               \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) acc[j] = x[j] > acc[j] ? x[j] : acc[j];                                            \
  }                                                                                                                    \
  static void min_col_##tag(void *accv, const void *xv, int64_t n) {                                                   \
    int64_t *acc = accv;                                                                                               \
    const T *x = xv;                                                                                                   \
    for (int64_t j = 0; j < n; j++) acc[j] = x[j] < acc[j] ? x[j] : acc[j];                                            \
  }

/* extremes are taken in T so that the loop vectorizes, then folded */
#define DEF_IEXT(name, tag, T, CMP)                                                                                    \
  static void name##_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                \
    const T *x = xv;                                                                                                   \
    if (n == 0) return;                                                                                                \
    T m = x[0];                                                                                                        \
    for (int64_t i = 1; i < n; i++) m = x[i] CMP m ? x[i] : m;                                                         \
    if (m CMP a->v.i) a->v.i = m;                                                                                      \
  }

#define DEF_IARG(name, tag, T, CMP)                                                                                    \
  static void name##_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                \
    const T *x = xv;                                                                                                   \
    int64_t best = a->v.i, bi = a->idx;                                                                                \
    for (int64_t i = 0; i < n; i++)                                                                                    \
      if (bi < 0 || x[i] CMP best) {                                                                                   \
        best = x[i];                                                                                                   \
        bi = i;                                                                                                        \
      }                                                                                                                \
    a->v.i = best;                                                                                                     \
    a->idx = bi;                                                                                                       \
  }

MT_DTYPES_INT(DEF_INT)

/* ---- combining partial results (b's elements follow a's) ---- */
static void comb_sum_f(mt_racc *a, const mt_racc *b) { a->v.f += b->v.f; }
static void comb_sum_i(mt_racc *a, const mt_racc *b) { a->v.i = (int64_t)((uint64_t)a->v.i + (uint64_t)b->v.i); }
static void comb_prod_f(mt_racc *a, const mt_racc *b) { a->v.f *= b->v.f; }
static void comb_prod_i(mt_racc *a, const mt_racc *b) { a->v.i = (int64_t)((uint64_t)a->v.i * (uint64_t)b->v.i); }
static void comb_max_f(mt_racc *a, const mt_racc *b) {
  if (b->v.f > a->v.f || b->v.f != b->v.f) a->v.f = b->v.f;
}
static void comb_min_f(mt_racc *a, const mt_racc *b) {
  if (b->v.f < a->v.f || b->v.f != b->v.f) a->v.f = b->v.f;
}
static void comb_max_i(mt_racc *a, const mt_racc *b) {
  if (b->v.i > a->v.i) a->v.i = b->v.i;
}
static void comb_min_i(mt_racc *a, const mt_racc *b) {
  if (b->v.i < a->v.i) a->v.i = b->v.i;
}
/* ties keep a (the earlier position); a NaN in a is final */
static void comb_argmax_f(mt_racc *a, const mt_racc *b) {
  if (b->idx < 0) return;
  if (a->idx < 0 || (a->v.f == a->v.f && (b->v.f > a->v.f || b->v.f != b->v.f))) *a = *b;
}
static void comb_argmin_f(mt_racc *a, const mt_racc *b) {
  if (b->idx < 0) return;
  if (a->idx < 0 || (a->v.f == a->v.f && (b->v.f < a->v.f || b->v.f != b->v.f))) *a = *b;
}
static void comb_argmax_i(mt_racc *a, const mt_racc *b) {
  if (b->idx >= 0 && (a->idx < 0 || b->v.i > a->v.i)) *a = *b;
}
static void comb_argmin_i(mt_racc *a, const mt_racc *b) {
  if (b->idx >= 0 && (a->idx < 0 || b->v.i < a->v.i)) *a = *b;
}

/* ---- floating arg kinds: the extreme by the vector kernel, then the first
 * position holding it (or the first NaN), found 8 or 4 lanes at a time ---- */
#define DEF_FVARG(name, ext, tag, T, V, ps, LANES, START)                                                              \
  static void name##_row_##tag(const void *xv, int64_t n, mt_racc *a) {                                                \
    const T *x = xv;                                                                                                   \
    if (n == 0) return;                                                                                                \
    mt_racc m = {{.f = START}, -1};                                                                                    \
    ext##_row_##tag(x, n, &m);                                                                                         \
    T target = (T)m.v.f;                                                                                               \
    bool isn = target != target;                                                                                       \
    V vt = _mm256_set1_##ps(target);                                                                                   \
    int64_t i = 0, at = -1;                                                                                            \
    for (; i + LANES <= n; i += LANES) {                                                                               \
      V v = _mm256_loadu_##ps(x + i);                                                                                  \
      V hit = isn ? _mm256_cmp_##ps(v, v, _CMP_UNORD_Q) : _mm256_cmp_##ps(v, vt, _CMP_EQ_OQ);                          \
      int mask = _mm256_movemask_##ps(hit);                                                                            \
      if (mask) {                                                                                                      \
        at = i + __builtin_ctz((unsigned)mask);                                                                        \
        break;                                                                                                         \
      }                                                                                                                \
    }                                                                                                                  \
    for (; at < 0 && i < n; i++)                                                                                       \
      if (isn ? x[i] != x[i] : x[i] == target) at = i;                                                                 \
    mt_racc b = {{.f = target}, at};                                                                                   \
    comb_##name##_f(a, &b);                                                                                            \
  }
DEF_FVARG(argmax, max, f32, float, __m256, ps, 8, -INFINITY)
DEF_FVARG(argmin, min, f32, float, __m256, ps, 8, INFINITY)
DEF_FVARG(argmax, max, f64, double, __m256d, pd, 4, -INFINITY)
DEF_FVARG(argmin, min, f64, double, __m256d, pd, 4, INFINITY)

/* ---- the table ---- */
#define KERNELS(tag, F, fam, ZERO, ONE, LOW, HIGH)                                                                     \
  static const mt_rkernel sum_##tag = {F, {ZERO, -1}, sum_row_##tag, comb_sum_##fam, sum_col_##tag};                   \
  static const mt_rkernel prod_##tag = {F, {ONE, -1}, prod_row_##tag, comb_prod_##fam, prod_col_##tag};                \
  static const mt_rkernel max_##tag = {F, {LOW, -1}, max_row_##tag, comb_max_##fam, max_col_##tag};                    \
  static const mt_rkernel min_##tag = {F, {HIGH, -1}, min_row_##tag, comb_min_##fam, min_col_##tag};                   \
  static const mt_rkernel argmax_##tag = {F, {ZERO, -1}, argmax_row_##tag, comb_argmax_##fam, NULL};                   \
  static const mt_rkernel argmin_##tag = {F, {ZERO, -1}, argmin_row_##tag, comb_argmin_##fam, NULL};
KERNELS(f32, true, f, {.f = 0}, {.f = 1}, {.f = -INFINITY}, {.f = INFINITY})
KERNELS(f64, true, f, {.f = 0}, {.f = 1}, {.f = -INFINITY}, {.f = INFINITY})
#define INT_KERNELS(E, tag, T, C) KERNELS(tag, false, i, {.i = 0}, {.i = 1}, {.i = INT64_MIN}, {.i = INT64_MAX})
MT_DTYPES_INT(INT_KERNELS)

#define ROW(E, tag)                                                                                                    \
  [MT_R_SUM][E] = &sum_##tag, [MT_R_PROD][E] = &prod_##tag, [MT_R_MAX][E] = &max_##tag, [MT_R_MIN][E] = &min_##tag,    \
  [MT_R_ARGMAX][E] = &argmax_##tag, [MT_R_ARGMIN][E] = &argmin_##tag,
#define INT_ROW(E, tag, T, C) ROW(E, tag)
static const mt_rkernel *const table[MT_R_NKINDS][MT_NDTYPE] = {ROW(MT_FLOAT32, f32) ROW(MT_FLOAT64, f64)
                                                                    MT_DTYPES_INT(INT_ROW) ROW(MT_BOOL, u8)};

const mt_rkernel *mt_cpu_reduce_kernel(mt_rkind kind, mt_dtype dt) { return table[kind][dt]; }
