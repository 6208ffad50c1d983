/* softmax_kernels.c -- softmax and log_softmax kernels: max, then
 * exp(x - max) summed, then a scale (softmax) or a shift by max + log(sum)
 * (log_softmax), on AVX2: float32 with the short exp below, float64 with
 * SLEEF's. Rows (K = 1) pad their tail
 * with -inf, whose exp is 0; columns (K > 1) take a block of columns at
 * once, vectorized across the columns. */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>

#include "cpu/softmax_kernels.h"
#include "cpu/vexp.h"

#define DEF_ROW(tag, T, V, ps, LANES, VEXP, LOG)                                                                       \
  static void row_##tag(const T *x, T *y, int64_t n, bool lg) {                                                        \
    int64_t i = 0, full = n - n % LANES;                                                                               \
    V m0 = _mm256_set1_##ps(-INFINITY), m1 = m0;                                                                       \
    for (; i + 2 * LANES <= n; i += 2 * LANES) {                                                                       \
      m0 = _mm256_max_##ps(m0, _mm256_loadu_##ps(x + i));                                                              \
      m1 = _mm256_max_##ps(m1, _mm256_loadu_##ps(x + i + LANES));                                                      \
    }                                                                                                                  \
    T lane[LANES];                                                                                                     \
    _mm256_storeu_##ps(lane, _mm256_max_##ps(m0, m1));                                                                 \
    T mx = -INFINITY;                                                                                                  \
    for (int j = 0; j < LANES; j++) mx = lane[j] > mx ? lane[j] : mx;                                                  \
    for (; i < n; i++) mx = x[i] > mx ? x[i] : mx;                                                                     \
    V vm = _mm256_set1_##ps(mx), s0 = _mm256_setzero_##ps(), s1 = s0;                                                  \
    for (i = 0; i + 2 * LANES <= full; i += 2 * LANES) {                                                               \
      V e0 = VEXP(_mm256_sub_##ps(_mm256_loadu_##ps(x + i), vm));                                                      \
      V e1 = VEXP(_mm256_sub_##ps(_mm256_loadu_##ps(x + i + LANES), vm));                                              \
      if (!lg) _mm256_storeu_##ps(y + i, e0), _mm256_storeu_##ps(y + i + LANES, e1);                                   \
      s0 = _mm256_add_##ps(s0, e0);                                                                                    \
      s1 = _mm256_add_##ps(s1, e1);                                                                                    \
    }                                                                                                                  \
    if (i < full) {                                                                                                    \
      V e = VEXP(_mm256_sub_##ps(_mm256_loadu_##ps(x + i), vm));                                                       \
      if (!lg) _mm256_storeu_##ps(y + i, e);                                                                           \
      s0 = _mm256_add_##ps(s0, e);                                                                                     \
      i += LANES;                                                                                                      \
    }                                                                                                                  \
    if (i < n) { /* tail: pad with -inf */                                                                             \
      T buf[LANES];                                                                                                    \
      for (int j = 0; j < LANES; j++) buf[j] = i + j < n ? x[i + j] : -INFINITY;                                       \
      V e = VEXP(_mm256_sub_##ps(_mm256_loadu_##ps(buf), vm));                                                         \
      _mm256_storeu_##ps(buf, e);                                                                                      \
      if (!lg)                                                                                                         \
        for (int j = 0; i + j < n; j++) y[i + j] = buf[j];                                                             \
      s0 = _mm256_add_##ps(s0, e);                                                                                     \
    }                                                                                                                  \
    _mm256_storeu_##ps(lane, _mm256_add_##ps(s0, s1));                                                                 \
    T sum = 0;                                                                                                         \
    for (int j = 0; j < LANES; j++) sum += lane[j];                                                                    \
    if (lg) {                                                                                                          \
      V sh = _mm256_set1_##ps(mx + LOG(sum));                                                                          \
      for (i = 0; i < full; i += LANES) _mm256_storeu_##ps(y + i, _mm256_sub_##ps(_mm256_loadu_##ps(x + i), sh));      \
      for (; i < n; i++) y[i] = x[i] - (mx + LOG(sum));                                                                \
    } else {                                                                                                           \
      V sc = _mm256_set1_##ps(1 / sum);                                                                                \
      for (i = 0; i < full; i += LANES) _mm256_storeu_##ps(y + i, _mm256_mul_##ps(_mm256_loadu_##ps(y + i), sc));      \
      for (; i < n; i++) y[i] *= 1 / sum;                                                                              \
    }                                                                                                                  \
  }

DEF_ROW(f32, float, __m256, ps, 8, mt_vexp_f32, logf)
DEF_ROW(f64, double, __m256d, pd, 4, Sleef_expd4_u10avx2, log)

#define COLS 256 /* the caller never passes more columns than this */

#define DEF_COLS(tag, T, V, ps, LANES, VEXP, EXP, LOG)                                                                 \
  static void cols_##tag(const T *x, T *y, int64_t L, int64_t K, int64_t kn, bool lg) {                                \
    T mx[COLS], sum[COLS];                                                                                             \
    for (int64_t k = 0; k < kn; k++) mx[k] = -INFINITY, sum[k] = 0;                                                    \
    for (int64_t i = 0; i < L; i++)                                                                                    \
      for (int64_t k = 0; k < kn; k++) mx[k] = x[i * K + k] > mx[k] ? x[i * K + k] : mx[k];                            \
    for (int64_t i = 0; i < L; i++) {                                                                                  \
      const T *xr = x + i * K;                                                                                         \
      T *yr = y + i * K;                                                                                               \
      int64_t k = 0;                                                                                                   \
      for (; k + LANES <= kn; k += LANES) {                                                                            \
        V e = VEXP(_mm256_sub_##ps(_mm256_loadu_##ps(xr + k), _mm256_loadu_##ps(mx + k)));                             \
        if (!lg) _mm256_storeu_##ps(yr + k, e);                                                                        \
        _mm256_storeu_##ps(sum + k, _mm256_add_##ps(_mm256_loadu_##ps(sum + k), e));                                   \
      }                                                                                                                \
      for (; k < kn; k++) {                                                                                            \
        T e = EXP(xr[k] - mx[k]);                                                                                      \
        if (!lg) yr[k] = e;                                                                                            \
        sum[k] += e;                                                                                                   \
      }                                                                                                                \
    }                                                                                                                  \
    for (int64_t k = 0; k < kn; k++) sum[k] = lg ? mx[k] + LOG(sum[k]) : 1 / sum[k];                                   \
    for (int64_t i = 0; i < L; i++)                                                                                    \
      for (int64_t k = 0; k < kn; k++) y[i * K + k] = lg ? x[i * K + k] - sum[k] : y[i * K + k] * sum[k];              \
  }

DEF_COLS(f32, float, __m256, ps, 8, mt_vexp_f32, expf, logf)
DEF_COLS(f64, double, __m256d, pd, 4, Sleef_expd4_u10avx2, exp, log)

void mt_cpu_softmax_f32(const void *x, void *y, int64_t L, int64_t K, int64_t kn, bool lg) {
  if (K == 1)
    row_f32(x, y, L, lg);
  else
    cols_f32(x, y, L, K, kn, lg);
}

void mt_cpu_softmax_f64(const void *x, void *y, int64_t L, int64_t K, int64_t kn, bool lg) {
  if (K == 1)
    row_f64(x, y, L, lg);
  else
    cols_f64(x, y, L, K, kn, lg);
}
