/* resample_kernels.c -- CPU loops of the polyphase resampling filter
 * (resample_kernels.h): each output sample is one dot product of its
 * phase's non-zero taps with a contiguous run of input samples (the loop
 * that vectorizes); work is split over (row, block of outputs) by
 * mt_parallel_for. The adjoint scatters each gradient sample back along
 * the same taps, a row per task. No checks here: resample.c made the plan. */
#include <stdlib.h>

#include "resample_kernels.h"

enum { BLOCK = 2048 }; /* output samples per task */
#define RK_LANES 8     /* partial sums of a dot product (one AVX2 float vector) */

typedef struct rk_ctx {
  const mt_resample_plan *p;
  const mt_rsmp_geo *g;
  const void *x, *w; /* w: the non-zero taps in the compute type, kmax a phase */
  void *y;
  int64_t kmax, blocks;
} rk_ctx;

/* sum of w[k] * x[k], k < n (a multiple of RK_LANES), in RK_LANES partial
 * sums added as a tree (lane u + lane u + 4, then + 2, then + 1): the same
 * order with or without AVX2, for every output */
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
static inline float dot_float(const float *w, const float *x, int64_t n) {
  __m256 a = _mm256_setzero_ps();
  for (int64_t k = 0; k < n; k += 8) a = _mm256_fmadd_ps(_mm256_loadu_ps(w + k), _mm256_loadu_ps(x + k), a);
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}
static inline double dot_double(const double *w, const double *x, int64_t n) {
  __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd();
  for (int64_t k = 0; k < n; k += 8) {
    a = _mm256_fmadd_pd(_mm256_loadu_pd(w + k), _mm256_loadu_pd(x + k), a);
    b = _mm256_fmadd_pd(_mm256_loadu_pd(w + k + 4), _mm256_loadu_pd(x + k + 4), b);
  }
  a = _mm256_add_pd(a, b);
  __m128d h = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
  return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
#else
#define RK_DOT(T)                                                                                                      \
  static inline T dot_##T(const T *w, const T *x, int64_t n) {                                                         \
    T part[RK_LANES] = {0};                                                                                            \
    for (int64_t k = 0; k < n; k += RK_LANES)                                                                          \
      for (int u = 0; u < RK_LANES; u++) part[u] += w[k + u] * x[k + u];                                               \
    for (int h = RK_LANES / 2; h > 0; h /= 2)                                                                          \
      for (int u = 0; u < h; u++) part[u] += part[u + h];                                                              \
    return part[0];                                                                                                    \
  }
RK_DOT(float)
RK_DOT(double)
#endif

/* tasks [b, e) of rows * blocks: outputs of one block of one row. Inside
 * the input: a dot product over kmax taps (a multiple of RK_LANES, the
 * phase's own padded with zeros) in RK_LANES partial sums, the same order
 * for every output; at the edges, the phase's taps that fall inside. */
#define RK_FORWARD(NAME, T)                                                                                            \
  static void NAME(void *vc, int64_t b, int64_t e) {                                                                   \
    const rk_ctx *c = vc;                                                                                              \
    const mt_resample_plan *p = c->p;                                                                                  \
    int64_t L = c->g->in_len, O = c->g->out_len, nw = p->new_, km = c->kmax;                                           \
    for (int64_t t = b; t < e; t++) {                                                                                  \
      int64_t row = t / c->blocks, j0 = t % c->blocks * BLOCK, j1 = j0 + BLOCK < O ? j0 + BLOCK : O;                   \
      const T *x = (const T *)c->x + row * L;                                                                          \
      T *y = (T *)c->y + row * O;                                                                                      \
      int64_t f = j0 / nw, ph = j0 % nw;                                                                               \
      for (int64_t j = j0; j < j1; j++) {                                                                              \
        int64_t s = f * p->orig - c->g->pad_left + p->first[ph], n = p->count[ph];                                     \
        const T *w = (const T *)c->w + ph * km;                                                                        \
        T acc = 0;                                                                                                     \
        if (s >= 0 && s + km <= L) {                                                                                   \
          acc = dot_##T(w, x + s, km);                                                                                 \
        } else {                                                                                                       \
          int64_t k0 = s < 0 ? -s : 0, k1 = s + n > L ? L - s : n;                                                     \
          for (int64_t k = k0; k < k1; k++) acc += w[k] * x[s + k];                                                    \
        }                                                                                                              \
        y[j] = acc;                                                                                                    \
        if (++ph == nw) ph = 0, f++;                                                                                   \
      }                                                                                                                \
    }                                                                                                                  \
  }
RK_FORWARD(forward_f32, float)
RK_FORWARD(forward_f64, double)

/* rows [b, e): gx row zeroed, then each gradient sample added along its
 * taps (those inside the input) */
#define RK_ADJOINT(NAME, T)                                                                                            \
  static void NAME(void *vc, int64_t b, int64_t e) {                                                                   \
    const rk_ctx *c = vc;                                                                                              \
    const mt_resample_plan *p = c->p;                                                                                  \
    int64_t L = c->g->in_len, O = c->g->out_len, nw = p->new_;                                                         \
    for (int64_t row = b; row < e; row++) {                                                                            \
      const T *gy = (const T *)c->x + row * O;                                                                         \
      T *gx = (T *)c->y + row * L;                                                                                     \
      for (int64_t i = 0; i < L; i++) gx[i] = 0;                                                                       \
      int64_t f = 0, ph = 0;                                                                                           \
      for (int64_t j = 0; j < O; j++) {                                                                                \
        int64_t s = f * p->orig - c->g->pad_left + p->first[ph], n = p->count[ph];                                     \
        int64_t k0 = s < 0 ? -s : 0, k1 = s + n > L ? L - s : n;                                                       \
        const T *w = (const T *)c->w + ph * c->kmax;                                                                   \
        T v = gy[j];                                                                                                   \
        _Pragma("omp simd") for (int64_t k = k0; k < k1; k++) gx[s + k] += v * w[k];                                   \
        if (++ph == nw) ph = 0, f++;                                                                                   \
      }                                                                                                                \
    }                                                                                                                  \
  }
RK_ADJOINT(adjoint_f32, float)
RK_ADJOINT(adjoint_f64, double)

/* The plan's non-zero taps packed kmax a phase (the most a phase has,
 * rounded up to RK_LANES; zeros after a phase's own), in float or double
 * (a new malloc'ed array, NULL when out of memory). */
static void *packed_taps(const mt_resample_plan *p, bool f64, int64_t *kmax) {
  int64_t m = 1;
  for (int64_t ph = 0; ph < p->new_; ph++)
    if (p->count[ph] > m) m = p->count[ph];
  m = (m + RK_LANES - 1) / RK_LANES * RK_LANES;
  void *w = calloc((size_t)(m * p->new_), f64 ? sizeof(double) : sizeof(float));
  if (!w) return NULL;
  for (int64_t ph = 0; ph < p->new_; ph++)
    for (int64_t k = 0; k < p->count[ph]; k++) {
      double v = p->taps[ph * p->ntaps + k];
      if (f64) ((double *)w)[ph * m + k] = v;
      else ((float *)w)[ph * m + k] = (float)v;
    }
  *kmax = m;
  return w;
}

static mt_status run(mt_dtype dt, const mt_resample_plan *p, const mt_rsmp_geo *g, const void *in, void *out,
                     bool adjoint) {
  bool f64 = dt == MT_FLOAT64;
  rk_ctx c = {.p = p, .g = g, .x = in, .y = out, .blocks = (g->out_len + BLOCK - 1) / BLOCK};
  void *w = packed_taps(p, f64, &c.kmax);
  if (!w) return mt_fail(MT_ENOMEM, "resample: out of memory for the filter");
  c.w = w;
  /* tasks of less than ~2^16 multiply-adds are grouped (a small call runs
   * on this thread: waking the team would cost more than the work) */
  int64_t per = (adjoint ? g->out_len : (g->out_len < BLOCK ? g->out_len : BLOCK)) * c.kmax + 1;
  int64_t grain = per >= (1 << 16) ? 1 : ((1 << 16) + per - 1) / per;
  mt_status st;
  if (adjoint) st = mt_parallel_for(g->rows, grain, f64 ? adjoint_f64 : adjoint_f32, &c);
  else st = mt_parallel_for(g->rows * c.blocks, grain, f64 ? forward_f64 : forward_f32, &c);
  free(w);
  return st;
}

mt_status mt_cpu_resample(mt_dtype dt, const mt_resample_plan *p, const mt_rsmp_geo *g, const void *x, void *y) {
  return run(dt, p, g, x, y, false);
}

mt_status mt_cpu_resample_adjoint(mt_dtype dt, const mt_resample_plan *p, const mt_rsmp_geo *g, const void *gy,
                                  void *gx) {
  return run(dt, p, g, gy, gx, true);
}
