/* lfilter_kernels.c -- the CPU loops of lfilter and its coefficient
 * correlation (lfilter_kernels.h). A channel is filtered in two passes:
 * the FIR sum, vectorised over time in cache-sized blocks, then the IIR
 * recursion in place, a tight loop over time (K = 3, the biquads, kept in
 * registers). Forwards in time the passes read x and write y directly
 * (only the first K-1 samples, which read the history, go through small
 * rows); backwards they run over reversed scratch rows. Channels run in
 * parallel. */
#include <stdlib.h>
#include <string.h>

#include "lfilter_kernels.h"

#define LF_BLOCK 2048 /* samples of one FIR block: the block stays in L1 */

typedef struct lf_job {
  const mt_lf_geo *g;
  const void *x, *a, *b, *zi;
  void *y;
  bool nomem;
} lf_job;

/* The filter's normalised taps for channel c: bn[k] (FIR, before the
 * division by a0), an[k] = a_k / a0 (an[0] unused), and 1 / a0. */
#define TAPS_T(T)                                                                                                      \
  static T taps_##T(const lf_job *j, int64_t c, T *bn, T *an) {                                                        \
    const mt_lf_geo *g = j->g;                                                                                         \
    const T *a = (const T *)j->a + c * g->K, *b = (const T *)j->b + c * g->K;                                          \
    T a0 = g->mode == 1 ? (T)1 : a[0];                                                                                 \
    for (int64_t k = 0; k < g->K; k++) {                                                                               \
      bn[k] = g->mode == 2 ? (T)(k == 0) : b[k];                                                                       \
      an[k] = g->mode == 1 ? (T)0 : a[k] / a0;                                                                         \
    }                                                                                                                  \
    return a0;                                                                                                         \
  }

/* v[t] = (sum_k bn[k] xp[t - k]) / a0 for t in [0, n), xp and v pointing
 * at sample 0 of rows whose K-1 earlier samples are the history. */
#define FIR_T(T)                                                                                                       \
  static void fir_##T(const T *xp, T *restrict v, int64_t n, const T *restrict bn, int64_t K, T a0) {                  \
    for (int64_t t0 = 0; t0 < n; t0 += LF_BLOCK) {                                                                     \
      int64_t m = n - t0 < LF_BLOCK ? n - t0 : LF_BLOCK;                                                               \
      T *vb = v + t0;                                                                                                  \
      const T *xb = xp + t0;                                                                                           \
      for (int64_t t = 0; t < m; t++) vb[t] = bn[0] * xb[t];                                                           \
      for (int64_t k = 1; k < K; k++) {                                                                                \
        T c = bn[k];                                                                                                   \
        const T *xs = xb - k;                                                                                          \
        if (c != 0)                                                                                                    \
          for (int64_t t = 0; t < m; t++) vb[t] += c * xs[t];                                                          \
      }                                                                                                                \
      if (a0 != 1)                                                                                                     \
        for (int64_t t = 0; t < m; t++) vb[t] /= a0;                                                                   \
    }                                                                                                                  \
  }

/* In place over yp (sample 0; the K-1 before it are the output history):
 * yp[t] -= sum_{k>=1} an[k] yp[t - k]. */
#define IIR_T(T)                                                                                                       \
  static void iir_##T(T *restrict yp, int64_t n, const T *restrict an, int64_t K) {                                    \
    if (K == 3) {                                                                                                      \
      T a1 = an[1], a2 = an[2], y1 = yp[-1], y2 = yp[-2];                                                              \
      for (int64_t t = 0; t < n; t++) {                                                                                \
        T s = yp[t] - a1 * y1 - a2 * y2;                                                                               \
        yp[t] = s, y2 = y1, y1 = s;                                                                                    \
      }                                                                                                                \
      return;                                                                                                          \
    }                                                                                                                  \
    /* the older taps first, off the critical path through y[t-1] */                                               \
    T a1 = an[1];                                                                                                      \
    for (int64_t t = 0; t < n; t++) {                                                                                  \
      T acc = 0;                                                                                                       \
      for (int64_t k = 2; k < K; k++) acc += an[k] * yp[t - k];                                                        \
      yp[t] = (yp[t] - acc) - a1 * yp[t - 1];                                                                          \
    }                                                                                                                  \
  }

/* One channel forwards in time, straight from x into y: the first
 * min(H, n) samples, which read the history, through the small rows hx, hy
 * (H + H samples each), then the rest in place in y. */
#define FORWARD_T(T)                                                                                                   \
  static void forward_##T(const T *x, T *y, int64_t n, const T *zi, const T *bn, const T *an, int64_t K, T a0,         \
                          bool iir, T *hx, T *hy) {                                                                    \
    int64_t H = K - 1, hd = H < n ? H : n;                                                                             \
    for (int64_t k = 0; k < H; k++) hx[k] = zi ? zi[k] : 0, hy[k] = zi ? zi[H + k] : 0;                                \
    for (int64_t t = 0; t < hd; t++) hx[H + t] = x[t];                                                                 \
    fir_##T(hx + H, hy + H, hd, bn, K, a0);                                                                            \
    if (iir) iir_##T(hy + H, hd, an, K);                                                                               \
    for (int64_t t = 0; t < hd; t++) y[t] = hy[H + t];                                                                 \
    if (n == hd) return;                                                                                               \
    fir_##T(x + hd, y + hd, n - hd, bn, K, a0);                                                                        \
    if (iir) iir_##T(y + hd, n - hd, an, K);                                                                           \
  }

/* One channel backwards in time: history and reversed input into the
 * scratch rows xp, yp (H samples of room in front of each), the two
 * passes, the result back reversed. */
#define BACKWARD_T(T)                                                                                                  \
  static void backward_##T(const T *x, T *y, int64_t n, const T *zi, const T *bn, const T *an, int64_t K, T a0,        \
                           bool iir, T *xp, T *yp) {                                                                   \
    int64_t H = K - 1;                                                                                                 \
    for (int64_t k = 0; k < H; k++) xp[k - H] = zi ? zi[k] : 0, yp[k - H] = zi ? zi[H + k] : 0;                        \
    for (int64_t t = 0; t < n; t++) xp[t] = x[n - 1 - t];                                                              \
    fir_##T(xp, yp, n, bn, K, a0);                                                                                     \
    if (iir) iir_##T(yp, n, an, K);                                                                                    \
    for (int64_t t = 0; t < n; t++) y[n - 1 - t] = yp[t];                                                              \
  }

/* Channels [c0, c1) of N*C, each through forward or backward. */
#define RUN_T(T)                                                                                                       \
  static void run_##T(void *ctx, int64_t c0, int64_t c1) {                                                             \
    lf_job *j = ctx;                                                                                                   \
    const mt_lf_geo *g = j->g;                                                                                         \
    int64_t K = g->K, n = g->len, H = K - 1, row = g->reverse ? H + n : 2 * H;                                         \
    T *buf = malloc(sizeof(T) * (size_t)(2 * row + 2 * K));                                                            \
    if (!buf) {                                                                                                        \
      j->nomem = true;                                                                                                 \
      return;                                                                                                          \
    }                                                                                                                  \
    T *r1 = buf, *r2 = buf + row, *bn = buf + 2 * row, *an = bn + K;                                                   \
    for (int64_t ch = c0; ch < c1; ch++) {                                                                             \
      const T *x = (const T *)j->x + ch * n, *zi = j->zi ? (const T *)j->zi + ch * 2 * H : NULL;                       \
      T *y = (T *)j->y + ch * n;                                                                                       \
      T a0 = taps_##T(j, ch % g->C, bn, an);                                                                           \
      bool iir = false;                                                                                                \
      for (int64_t k = 1; k < K; k++) iir |= an[k] != 0;                                                               \
      if (g->reverse)                                                                                                  \
        backward_##T(x, y, n, zi, bn, an, K, a0, iir, r1 + H, r2 + H);                                                 \
      else                                                                                                             \
        forward_##T(x, y, n, zi, bn, an, K, a0, iir, r1, r2);                                                          \
    }                                                                                                                  \
    free(buf);                                                                                                         \
  }

/* out[c, k] over items [i0, i1) of C*K, summed in double */
#define CORR_T(T)                                                                                                      \
  static void corr_##T(void *ctx, int64_t i0, int64_t i1) {                                                            \
    lf_job *j = ctx;                                                                                                   \
    const mt_lf_geo *g = j->g;                                                                                         \
    for (int64_t i = i0; i < i1; i++) {                                                                                \
      int64_t c = i / g->K, k = i % g->K;                                                                              \
      double s = 0;                                                                                                    \
      for (int64_t n = 0; n < g->N; n++) {                                                                             \
        const T *w = (const T *)j->a + (n * g->C + c) * g->len, *x = (const T *)j->x + (n * g->C + c) * g->len;        \
        if (g->reverse)                                                                                                \
          for (int64_t t = 0; t + k < g->len; t++) s += (double)w[t] * (double)x[t + k];                               \
        else                                                                                                           \
          for (int64_t t = k; t < g->len; t++) s += (double)w[t] * (double)x[t - k];                                   \
      }                                                                                                                \
      ((T *)j->y)[i] = (T)s;                                                                                           \
    }                                                                                                                  \
  }

#define ALL_T(T) TAPS_T(T) FIR_T(T) IIR_T(T) FORWARD_T(T) BACKWARD_T(T) RUN_T(T) CORR_T(T)
ALL_T(float)
ALL_T(double)

mt_status mt_cpu_lfilter(mt_dtype dt, const mt_lf_geo *g, const void *x, const void *a, const void *b,
                         const void *zi, void *y) {
  lf_job j = {g, x, a, b, zi, y, false};
  mt_status st = mt_parallel_for(g->N * g->C, 1, dt == MT_FLOAT64 ? run_double : run_float, &j);
  if (!st && j.nomem) return mt_fail(MT_ENOMEM, "lfilter: out of memory for a channel's scratch rows");
  return st;
}

mt_status mt_cpu_lfilter_corr(mt_dtype dt, const mt_lf_geo *g, const void *w, const void *x, void *out) {
  lf_job j = {g, x, w, NULL, NULL, out, false};
  int64_t grain = 1 + 65536 / (g->N * g->len + 1);
  return mt_parallel_for(g->C * g->K, grain, dt == MT_FLOAT64 ? corr_double : corr_float, &j);
}
