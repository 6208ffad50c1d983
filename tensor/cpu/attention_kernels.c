/* attention_kernels.c -- flash attention on the CPU: a query block meets the
 * key blocks one at a time; scores come from one GEMM per tile (cpu/blas.c,
 * single-threaded inside the caller's parallel loop), then the online
 * softmax rescales the running row max, sum and output. The backward
 * recomputes the tiles from the saved log-sum-exp. Nothing here allocates:
 * callers pass scratch of mt_cpu_sdpa_scratch bytes. */
#include <math.h>
#include <string.h>

#include "cpu/attention_kernels.h"
#include "cpu/blas.h"
#include "cpu/vexp.h"

/* x[i] = exp(x[i] - m) for i < n; returns the sum. */
static float exp_sub_f32(float *x, int64_t n, float m) {
  __m256 vm = _mm256_set1_ps(m), s = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 e = mt_vexp_f32(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
    _mm256_storeu_ps(x + i, e);
    s = _mm256_add_ps(s, e);
  }
  float lane[8], sum = 0;
  _mm256_storeu_ps(lane, s);
  for (int j = 0; j < 8; j++) sum += lane[j];
  for (; i < n; i++) sum += (x[i] = expf(x[i] - m));
  return sum;
}

static double exp_sub_f64(double *x, int64_t n, double m) {
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += (x[i] = exp(x[i] - m));
  return sum;
}

#define NEG_INF (-INFINITY)

/* The k/v item of q item b (GQA: q heads h share k/v head h / group). */
static int64_t kv_item(const mt_sdpa_job *j, int64_t b) {
  int64_t outer = b / j->hq, h = b % j->hq;
  return outer * (j->hq / j->group) + h / j->group;
}

/* Last key (exclusive) that query rows [i0, i0 + nq) may see. */
static int64_t key_end(const mt_sdpa_job *j, int64_t i0, int64_t nq) {
  if (!j->causal) return j->S;
  return i0 + nq < j->S ? i0 + nq : j->S;
}

#define DEF_SDPA(tag, T, EXPSUB, EXP, LOG)                                                                             \
  /* Scores of tile (rows i0.., keys j0..) of item b into s (nq x nk), scaled and masked. */                         \
  static void scores_##tag(const mt_sdpa_job *j, int64_t b, int64_t i0, int64_t nq, int64_t j0, int64_t nk, T *s) {    \
    const T *q = (const T *)j->q + (b * j->L + i0) * j->E;                                                             \
    const T *k = (const T *)j->k + (kv_item(j, b) * j->S + j0) * j->E;                                                 \
    mt_blas_gemm(j->dt, false, true, nq, nk, j->E, j->scale, q, j->E, k, j->E, 0, s, nk);                              \
    if (j->causal && j0 + nk - 1 > i0)                                                                                 \
      for (int64_t r = 0; r < nq; r++)                                                                                 \
        for (int64_t c = i0 + r + 1 - j0 < 0 ? 0 : i0 + r + 1 - j0; c < nk; c++) s[r * nk + c] = NEG_INF;              \
    if (j->mask_kind == MT_SDPA_ADDMASK) {                                                                             \
      const T *m = (const T *)j->mask + j->moff[b] + i0 * j->mrs + j0 * j->mcs;                                        \
      for (int64_t r = 0; r < nq; r++)                                                                                 \
        for (int64_t c = 0; c < nk; c++) s[r * nk + c] += m[r * j->mrs + c * j->mcs];                                  \
    } else if (j->mask_kind == MT_SDPA_BOOLMASK) {                                                                     \
      const uint8_t *m = (const uint8_t *)j->mask + j->moff[b] + i0 * j->mrs + j0 * j->mcs;                            \
      for (int64_t r = 0; r < nq; r++)                                                                                 \
        for (int64_t c = 0; c < nk; c++)                                                                               \
          if (!m[r * j->mrs + c * j->mcs]) s[r * nk + c] = NEG_INF;                                                    \
    }                                                                                                                  \
  }                                                                                                                    \
                                                                                                                       \
  static void fwd_##tag(const mt_sdpa_job *j, int64_t b, int64_t qb, void *scratch) {                                  \
    int64_t i0 = qb * j->bq, nq = j->L - i0 < j->bq ? j->L - i0 : j->bq, Ev = j->Ev;                                   \
    T *s = scratch, *mx = s + j->bq * j->bk, *l = mx + j->bq;                                                          \
    T *acc = (T *)j->out + (b * j->L + i0) * Ev; /* the output rows accumulate in place */                             \
    const T *v = (const T *)j->v + kv_item(j, b) * j->S * Ev;                                                          \
    memset(acc, 0, (size_t)(nq * Ev) * sizeof(T));                                                                     \
    for (int64_t r = 0; r < nq; r++) mx[r] = NEG_INF, l[r] = 0;                                                        \
    int64_t jend = key_end(j, i0, nq);                                                                                 \
    for (int64_t j0 = 0; j0 < jend; j0 += j->bk) {                                                                     \
      int64_t nk = j->S - j0 < j->bk ? j->S - j0 : j->bk;                                                              \
      scores_##tag(j, b, i0, nq, j0, nk, s);                                                                           \
      for (int64_t r = 0; r < nq; r++) {                                                                               \
        T *row = s + r * nk, m = NEG_INF;                                                                              \
        for (int64_t c = 0; c < nk; c++) m = row[c] > m ? row[c] : m;                                                  \
        T mnew = m > mx[r] ? m : mx[r];                                                                                \
        if (mnew == NEG_INF) { /* every key so far masked: contributes nothing */                                     \
          memset(row, 0, (size_t)nk * sizeof(T));                                                                      \
          continue;                                                                                                    \
        }                                                                                                              \
        T alpha = mx[r] == NEG_INF ? 0 : EXP(mx[r] - mnew);                                                            \
        T sum = EXPSUB(row, nk, mnew);                                                                                 \
        l[r] = l[r] * alpha + sum;                                                                                     \
        mx[r] = mnew;                                                                                                  \
        if (alpha != 1)                                                                                                \
          for (int64_t e = 0; e < Ev; e++) acc[r * Ev + e] *= alpha;                                                   \
      }                                                                                                                \
      mt_blas_gemm(j->dt, false, false, nq, Ev, nk, 1, s, nk, v + j0 * Ev, Ev, 1, acc, Ev);                            \
    }                                                                                                                  \
    T *lse = (T *)j->lse + b * j->L + i0;                                                                              \
    for (int64_t r = 0; r < nq; r++) {                                                                                 \
      T inv = 1 / l[r]; /* l == 0 (all masked): 0 * inf = NaN, as the math path */                                   \
      for (int64_t e = 0; e < Ev; e++) acc[r * Ev + e] *= inv;                                                         \
      lse[r] = mx[r] + LOG(l[r]);                                                                                      \
    }                                                                                                                  \
  }                                                                                                                    \
                                                                                                                       \
  static void rowdot_##tag(const mt_sdpa_job *j, int64_t b) {                                                          \
    const T *g = (const T *)j->dout + b * j->L * j->Ev, *o = (const T *)j->out + b * j->L * j->Ev;                     \
    T *D = (T *)j->D + b * j->L;                                                                                       \
    for (int64_t r = 0; r < j->L; r++) {                                                                               \
      T d = 0;                                                                                                         \
      for (int64_t e = 0; e < j->Ev; e++) d += g[r * j->Ev + e] * o[r * j->Ev + e];                                    \
      D[r] = d;                                                                                                        \
    }                                                                                                                  \
  }                                                                                                                    \
                                                                                                                       \
  /* p = softmax tile (from lse) and ds = p * (dout v^T - D) for tile (i0.., j0..) of item b. */                     \
  static void grad_tile_##tag(const mt_sdpa_job *j, int64_t b, int64_t i0, int64_t nq, int64_t j0, int64_t nk, T *p,  \
                              T *ds) {                                                                                 \
    scores_##tag(j, b, i0, nq, j0, nk, p);                                                                             \
    const T *lse = (const T *)j->lse + b * j->L + i0, *D = (const T *)j->D + b * j->L + i0;                            \
    for (int64_t r = 0; r < nq; r++) EXPSUB(p + r * nk, nk, lse[r]);                                                   \
    const T *g = (const T *)j->dout + (b * j->L + i0) * j->Ev;                                                         \
    const T *v = (const T *)j->v + (kv_item(j, b) * j->S + j0) * j->Ev;                                                \
    mt_blas_gemm(j->dt, false, true, nq, nk, j->Ev, 1, g, j->Ev, v, j->Ev, 0, ds, nk);                                 \
    for (int64_t r = 0; r < nq; r++)                                                                                   \
      for (int64_t c = 0; c < nk; c++) ds[r * nk + c] = p[r * nk + c] * (ds[r * nk + c] - D[r]);                       \
  }                                                                                                                    \
                                                                                                                       \
  static void bwd_kv_##tag(const mt_sdpa_job *j, int64_t kvb, int64_t kb, void *scratch) {                             \
    int64_t j0 = kb * j->bk, nk = j->S - j0 < j->bk ? j->S - j0 : j->bk, E = j->E, Ev = j->Ev;                         \
    T *p = scratch, *ds = p + j->bq * j->bk;                                                                           \
    T *dk = (T *)j->dk + (kvb * j->S + j0) * E, *dv = (T *)j->dv + (kvb * j->S + j0) * Ev;                             \
    memset(dk, 0, (size_t)(nk * E) * sizeof(T));                                                                       \
    memset(dv, 0, (size_t)(nk * Ev) * sizeof(T));                                                                      \
    int64_t hk = j->hq / j->group, outer = kvb / hk, h0 = (kvb % hk) * j->group;                                       \
    int64_t ifirst = j->causal ? (j0 / j->bq) * j->bq : 0;                                                             \
    for (int64_t t = 0; t < j->group; t++) {                                                                           \
      int64_t b = outer * j->hq + h0 + t;                                                                              \
      for (int64_t i0 = ifirst; i0 < j->L; i0 += j->bq) {                                                              \
        int64_t nq = j->L - i0 < j->bq ? j->L - i0 : j->bq;                                                            \
        grad_tile_##tag(j, b, i0, nq, j0, nk, p, ds);                                                                  \
        const T *g = (const T *)j->dout + (b * j->L + i0) * Ev, *q = (const T *)j->q + (b * j->L + i0) * E;            \
        mt_blas_gemm(j->dt, true, false, nk, Ev, nq, 1, p, nk, g, Ev, 1, dv, Ev);                                      \
        mt_blas_gemm(j->dt, true, false, nk, E, nq, j->scale, ds, nk, q, E, 1, dk, E);                                 \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
                                                                                                                       \
  static void bwd_q_##tag(const mt_sdpa_job *j, int64_t b, int64_t qb, void *scratch) {                                \
    int64_t i0 = qb * j->bq, nq = j->L - i0 < j->bq ? j->L - i0 : j->bq, E = j->E;                                     \
    T *p = scratch, *ds = p + j->bq * j->bk, *dq = (T *)j->dq + (b * j->L + i0) * E;                                   \
    memset(dq, 0, (size_t)(nq * E) * sizeof(T));                                                                       \
    const T *k = (const T *)j->k + kv_item(j, b) * j->S * E;                                                           \
    int64_t jend = key_end(j, i0, nq);                                                                                 \
    for (int64_t j0 = 0; j0 < jend; j0 += j->bk) {                                                                     \
      int64_t nk = j->S - j0 < j->bk ? j->S - j0 : j->bk;                                                              \
      grad_tile_##tag(j, b, i0, nq, j0, nk, p, ds);                                                                    \
      mt_blas_gemm(j->dt, false, false, nq, E, nk, j->scale, ds, nk, k + j0 * E, E, 1, dq, E);                         \
    }                                                                                                                  \
  }

DEF_SDPA(f32, float, exp_sub_f32, expf, logf)
DEF_SDPA(f64, double, exp_sub_f64, exp, log)

size_t mt_cpu_sdpa_scratch(const mt_sdpa_job *j) {
  return (size_t)(2 * j->bq * j->bk + 2 * j->bq) * mt_dtype_size(j->dt);
}

void mt_cpu_sdpa_fwd(const mt_sdpa_job *j, int64_t b, int64_t qb, void *scratch) {
  (j->dt == MT_FLOAT32 ? fwd_f32 : fwd_f64)(j, b, qb, scratch);
}

void mt_cpu_sdpa_rowdot(const mt_sdpa_job *j, int64_t b) { (j->dt == MT_FLOAT32 ? rowdot_f32 : rowdot_f64)(j, b); }

void mt_cpu_sdpa_bwd_kv(const mt_sdpa_job *j, int64_t kvb, int64_t kb, void *scratch) {
  (j->dt == MT_FLOAT32 ? bwd_kv_f32 : bwd_kv_f64)(j, kvb, kb, scratch);
}

void mt_cpu_sdpa_bwd_q(const mt_sdpa_job *j, int64_t b, int64_t qb, void *scratch) {
  (j->dt == MT_FLOAT32 ? bwd_q_f32 : bwd_q_f64)(j, b, qb, scratch);
}
