/* norm_kernels.c -- batch norm (statistics per channel over N and the
 * spatial dims) and row norms (layer and group norm: statistics per
 * contiguous row), forward and backward. Statistics take two passes (mean,
 * then squared deviations) in double, as PyTorch's CPU kernels accumulate
 * float in double. Tasks own channels (or rows), so no sums are shared. */
#include <math.h>

#include "cpu/norm_kernels.h"

typedef struct norm_job {
  mt_dtype dt;
  int64_t N, C, S;
  const mt_rows_problem *rp;
  const void *x, *w, *b, *gy;
  bool stats, training;
  double eps;
  double *mean, *var, *inv, *gw, *gb;
  const double *cmean, *cinv;
  void *y;
} norm_job;

#define DEF_NORM(tag, T)                                                                                               \
  static void bn_fwd_##tag(void *ctx, int64_t cb, int64_t ce) {                                                        \
    norm_job *j = ctx;                                                                                                 \
    const T *x = j->x, *w = j->w, *b = j->b;                                                                           \
    T *y = j->y;                                                                                                       \
    for (int64_t c = cb; c < ce; c++) {                                                                                \
      if (j->stats) {                                                                                                  \
        double s = 0, q = 0;                                                                                           \
        int64_t cnt = j->N * j->S;                                                                                     \
        for (int64_t n = 0; n < j->N; n++)                                                                             \
          for (int64_t i = 0; i < j->S; i++) s += x[(n * j->C + c) * j->S + i];                                        \
        double m = cnt ? s / (double)cnt : 0;                                                                          \
        for (int64_t n = 0; n < j->N; n++)                                                                             \
          for (int64_t i = 0; i < j->S; i++) {                                                                         \
            double d = x[(n * j->C + c) * j->S + i] - m;                                                               \
            q += d * d;                                                                                                \
          }                                                                                                            \
        j->mean[c] = m;                                                                                                \
        j->var[c] = cnt ? q / (double)cnt : 0;                                                                         \
        j->inv[c] = 1.0 / sqrt(j->var[c] + j->eps);                                                                    \
      }                                                                                                                \
      double m = j->mean[c], a = j->inv[c] * (w ? (double)w[c] : 1.0), sh = b ? (double)b[c] : 0.0;                    \
      for (int64_t n = 0; n < j->N; n++) {                                                                             \
        const T *xr = x + (n * j->C + c) * j->S;                                                                       \
        T *yr = y + (n * j->C + c) * j->S;                                                                             \
        for (int64_t i = 0; i < j->S; i++) yr[i] = (T)((xr[i] - m) * a + sh);                                          \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  static void bn_bwd_##tag(void *ctx, int64_t cb, int64_t ce) {                                                        \
    norm_job *j = ctx;                                                                                                 \
    const T *x = j->x, *w = j->w, *gy = j->gy;                                                                         \
    T *gx = j->y;                                                                                                      \
    for (int64_t c = cb; c < ce; c++) {                                                                                \
      double m = j->cmean[c], inv = j->cinv[c], sg = 0, sgx = 0;                                                       \
      int64_t cnt = j->N * j->S;                                                                                       \
      for (int64_t n = 0; n < j->N; n++)                                                                               \
        for (int64_t i = 0; i < j->S; i++) {                                                                           \
          int64_t at = (n * j->C + c) * j->S + i;                                                                      \
          sg += gy[at];                                                                                                \
          sgx += gy[at] * (x[at] - m);                                                                                 \
        }                                                                                                              \
      if (j->gw) j->gw[c] = sgx * inv;                                                                                 \
      if (j->gb) j->gb[c] = sg;                                                                                        \
      if (!gx) continue;                                                                                               \
      double wc = w ? (double)w[c] : 1.0;                                                                              \
      double mg = cnt ? sg / (double)cnt : 0, k = cnt ? sgx * inv * inv / (double)cnt : 0;                            \
      for (int64_t n = 0; n < j->N; n++)                                                                               \
        for (int64_t i = 0; i < j->S; i++) {                                                                           \
          int64_t at = (n * j->C + c) * j->S + i;                                                                      \
          gx[at] = j->training ? (T)((gy[at] - mg - (x[at] - m) * k) * inv * wc) : (T)(gy[at] * inv * wc);             \
        }                                                                                                              \
    }                                                                                                                  \
  }                                                                                                                    \
  static void rows_fwd_##tag(void *ctx, int64_t rb, int64_t re) {                                                      \
    norm_job *j = ctx;                                                                                                 \
    const mt_rows_problem *p = j->rp;                                                                                  \
    const T *w = j->w, *b = j->b;                                                                                      \
    for (int64_t r = rb; r < re; r++) {                                                                                \
      const T *x = (const T *)j->x + r * p->L;                                                                         \
      T *y = (T *)j->y + r * p->L;                                                                                     \
      double s = 0, q = 0;                                                                                             \
      for (int64_t i = 0; i < p->L; i++) s += x[i];                                                                    \
      double m = p->L ? s / (double)p->L : 0;                                                                          \
      for (int64_t i = 0; i < p->L; i++) q += (x[i] - m) * (x[i] - m);                                                 \
      double rs = 1.0 / sqrt((p->L ? q / (double)p->L : 0) + j->eps);                                                  \
      j->mean[r] = m, j->inv[r] = rs;                                                                                  \
      int64_t c0 = (r % p->G) * p->Cg;                                                                                 \
      for (int64_t i = 0; i < p->L; i++) {                                                                             \
        int64_t ch = c0 + i / p->S;                                                                                    \
        y[i] = (T)((x[i] - m) * rs * (w ? (double)w[ch] : 1.0) + (b ? (double)b[ch] : 0.0));                           \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  static void rows_bwd_##tag(void *ctx, int64_t rb, int64_t re) {                                                      \
    norm_job *j = ctx;                                                                                                 \
    const mt_rows_problem *p = j->rp;                                                                                  \
    const T *w = j->w;                                                                                                 \
    for (int64_t r = rb; r < re; r++) {                                                                                \
      const T *x = (const T *)j->x + r * p->L, *gy = (const T *)j->gy + r * p->L;                                      \
      T *gx = (T *)j->y + r * p->L;                                                                                    \
      double m = j->cmean[r], rs = j->cinv[r], a = 0, bsum = 0;                                                        \
      int64_t c0 = (r % p->G) * p->Cg;                                                                                 \
      for (int64_t i = 0; i < p->L; i++) {                                                                             \
        double g = gy[i] * (w ? (double)w[c0 + i / p->S] : 1.0);                                                       \
        a += g;                                                                                                        \
        bsum += g * (x[i] - m) * rs;                                                                                   \
      }                                                                                                                \
      a /= (double)p->L, bsum /= (double)p->L;                                                                         \
      for (int64_t i = 0; i < p->L; i++) {                                                                             \
        double g = gy[i] * (w ? (double)w[c0 + i / p->S] : 1.0);                                                       \
        gx[i] = (T)(rs * (g - a - (x[i] - m) * rs * bsum));                                                            \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  /* per parameter channel c: sums over the rows using it */                                                          \
  static void rows_param_##tag(void *ctx, int64_t cb, int64_t ce) {                                                    \
    norm_job *j = ctx;                                                                                                 \
    const mt_rows_problem *p = j->rp;                                                                                  \
    const T *x = j->x, *gy = j->gy;                                                                                    \
    for (int64_t c = cb; c < ce; c++) {                                                                                \
      int64_t g = c / p->Cg, off = (c % p->Cg) * p->S;                                                                 \
      double sw = 0, sb = 0;                                                                                           \
      for (int64_t r = g; r < p->R; r += p->G) {                                                                       \
        double m = j->cmean[r], rs = j->cinv[r];                                                                       \
        const T *xr = x + r * p->L + off, *gr = gy + r * p->L + off;                                                   \
        for (int64_t i = 0; i < p->S; i++) {                                                                           \
          sw += gr[i] * (xr[i] - m) * rs;                                                                              \
          sb += gr[i];                                                                                                 \
        }                                                                                                              \
      }                                                                                                                \
      if (j->gw) j->gw[c] = sw;                                                                                        \
      if (j->gb) j->gb[c] = sb;                                                                                        \
    }                                                                                                                  \
  }
DEF_NORM(f32, float)
DEF_NORM(f64, double)
#undef DEF_NORM

static int64_t grain(int64_t work_per_task) {
  return work_per_task >= (1 << 14) ? 1 : (1 << 14) / (work_per_task > 0 ? work_per_task : 1);
}

mt_status mt_cpu_bn_fwd(mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const void *w, const void *b,
                        bool stats, double eps, double *mean, double *var, double *invstd, void *y) {
  norm_job j = {.dt = dt, .N = N, .C = C, .S = S, .x = x, .w = w, .b = b, .stats = stats, .eps = eps,
                .mean = mean, .var = var, .inv = invstd, .y = y};
  return mt_parallel_for(C, grain(N * S * 3), dt == MT_FLOAT64 ? bn_fwd_f64 : bn_fwd_f32, &j);
}

mt_status mt_cpu_bn_bwd(mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *gy, const void *x, const void *w,
                        const double *mean, const double *invstd, bool training, void *gx, double *gw, double *gb) {
  norm_job j = {.dt = dt, .N = N, .C = C, .S = S, .x = x, .w = w, .gy = gy, .training = training,
                .cmean = mean, .cinv = invstd, .gw = gw, .gb = gb, .y = gx};
  return mt_parallel_for(C, grain(N * S * 2), dt == MT_FLOAT64 ? bn_bwd_f64 : bn_bwd_f32, &j);
}

mt_status mt_cpu_rows_fwd(mt_dtype dt, const mt_rows_problem *p, const void *x, const void *w, const void *b,
                          double eps, double *mean, double *rstd, void *y) {
  norm_job j = {.dt = dt, .rp = p, .x = x, .w = w, .b = b, .eps = eps, .mean = mean, .inv = rstd, .y = y};
  return mt_parallel_for(p->R, grain(p->L * 3), dt == MT_FLOAT64 ? rows_fwd_f64 : rows_fwd_f32, &j);
}

mt_status mt_cpu_rows_bwd(mt_dtype dt, const mt_rows_problem *p, const void *gy, const void *x, const void *w,
                          const double *mean, const double *rstd, void *gx, double *gw, double *gb) {
  norm_job j = {.dt = dt, .rp = p, .x = x, .w = w, .gy = gy, .cmean = mean, .cinv = rstd, .gw = gw, .gb = gb, .y = gx};
  mt_status st = MT_OK;
  if (gx) st = mt_parallel_for(p->R, grain(p->L * 3), dt == MT_FLOAT64 ? rows_bwd_f64 : rows_bwd_f32, &j);
  if (!st && (gw || gb))
    st = mt_parallel_for(p->G * p->Cg, grain(p->R / p->G * p->S * 2), dt == MT_FLOAT64 ? rows_param_f64 : rows_param_f32,
                         &j);
  return st;
}
