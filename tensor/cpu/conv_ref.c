/* conv_ref.c -- reference convolution loops (forward, grad input, grad
 * weight) for float64 (gradcheck's dtype) and for float32 problems oneDNN
 * does not take. Sums run in double. Every problem is seen as 3-D: unused
 * spatial dims have size 1, kernel 1, stride 1, no padding. Each task owns
 * the outputs it writes, so threads never share a sum. */
#include "cpu/conv_kernels.h"

typedef struct ref_job {
  const mt_conv_problem *p;
  const void *a, *b, *c; /* operands; c: bias or NULL */
  void *y, *y2;          /* results; y2: grad bias or NULL */
} ref_job;

/* Input position along dim i for output position o and kernel tap t, or -1
 * when it falls in the padding. */
static inline int64_t in_pos(const mt_conv_problem *p, int i, int64_t o, int64_t t) {
  int64_t x = o * p->stride[i] - p->pad_lo[i] + t * p->dil[i];
  return x >= 0 && x < p->in[i] ? x : -1;
}

#define SP_IN(p) ((p)->in[0] * (p)->in[1] * (p)->in[2])
#define SP_OUT(p) ((p)->out[0] * (p)->out[1] * (p)->out[2])
#define SP_K(p) ((p)->k[0] * (p)->k[1] * (p)->k[2])

#define DEF_REF(tag, T)                                                                                                \
  /* tasks [b, e) over (n, k): y[n, k, :] */                                                                           \
  static void fwd_##tag(void *ctx, int64_t b, int64_t e) {                                                             \
    const ref_job *j = ctx;                                                                                            \
    const mt_conv_problem *p = j->p;                                                                                   \
    const T *x = j->a, *w = j->b, *bias = j->c;                                                                        \
    T *y = j->y;                                                                                                       \
    int64_t Kg = p->K / p->G, Cg = p->C / p->G, si = SP_IN(p), so = SP_OUT(p), sk = SP_K(p);                           \
    for (int64_t t = b; t < e; t++) {                                                                                  \
      int64_t n = t / p->K, k = t % p->K, g = k / Kg;                                                                  \
      const T *wk = w + k * Cg * sk;                                                                                   \
      T *yk = y + t * so;                                                                                              \
      for (int64_t o0 = 0; o0 < p->out[0]; o0++)                                                                       \
        for (int64_t o1 = 0; o1 < p->out[1]; o1++)                                                                     \
          for (int64_t o2 = 0; o2 < p->out[2]; o2++) {                                                                 \
            double acc = bias ? (double)bias[k] : 0.0;                                                                 \
            for (int64_t c = 0; c < Cg; c++) {                                                                         \
              const T *xc = x + (n * p->C + g * Cg + c) * si, *wc = wk + c * sk;                                       \
              for (int64_t t0 = 0; t0 < p->k[0]; t0++) {                                                               \
                int64_t i0 = in_pos(p, 0, o0, t0);                                                                     \
                if (i0 < 0) continue;                                                                                  \
                for (int64_t t1 = 0; t1 < p->k[1]; t1++) {                                                             \
                  int64_t i1 = in_pos(p, 1, o1, t1);                                                                   \
                  if (i1 < 0) continue;                                                                                \
                  for (int64_t t2 = 0; t2 < p->k[2]; t2++) {                                                           \
                    int64_t i2 = in_pos(p, 2, o2, t2);                                                                 \
                    if (i2 < 0) continue;                                                                              \
                    acc += (double)xc[(i0 * p->in[1] + i1) * p->in[2] + i2] *                                          \
                           (double)wc[(t0 * p->k[1] + t1) * p->k[2] + t2];                                             \
                  }                                                                                                    \
                }                                                                                                      \
              }                                                                                                        \
            }                                                                                                          \
            yk[(o0 * p->out[1] + o1) * p->out[2] + o2] = (T)acc;                                                       \
          }                                                                                                            \
    }                                                                                                                  \
  }                                                                                                                    \
  /* tasks over (n, c): gx[n, c, :] gathers from every output it fed */                                              \
  static void bwd_data_##tag(void *ctx, int64_t b, int64_t e) {                                                        \
    const ref_job *j = ctx;                                                                                            \
    const mt_conv_problem *p = j->p;                                                                                   \
    const T *gy = j->a, *w = j->b;                                                                                     \
    T *gx = j->y;                                                                                                      \
    int64_t Kg = p->K / p->G, Cg = p->C / p->G, si = SP_IN(p), so = SP_OUT(p), sk = SP_K(p);                           \
    for (int64_t t = b; t < e; t++) {                                                                                  \
      int64_t n = t / p->C, c = t % p->C, g = c / Cg, cg = c % Cg;                                                     \
      T *gxc = gx + t * si;                                                                                            \
      for (int64_t i0 = 0; i0 < p->in[0]; i0++)                                                                        \
        for (int64_t i1 = 0; i1 < p->in[1]; i1++)                                                                      \
          for (int64_t i2 = 0; i2 < p->in[2]; i2++) {                                                                  \
            double acc = 0;                                                                                            \
            int64_t ii[3] = {i0, i1, i2}, oo[3][64], tt[3][64], cnt[3];                                                \
            for (int d = 0; d < 3; d++) { /* taps of dim d reaching ii[d] */                                           \
              cnt[d] = 0;                                                                                              \
              for (int64_t q = 0; q < p->k[d] && cnt[d] < 64; q++) {                                                   \
                int64_t num = ii[d] + p->pad_lo[d] - q * p->dil[d];                                                    \
                if (num < 0 || num % p->stride[d]) continue;                                                           \
                int64_t o = num / p->stride[d];                                                                        \
                if (o >= p->out[d]) continue;                                                                          \
                oo[d][cnt[d]] = o, tt[d][cnt[d]] = q, cnt[d]++;                                                        \
              }                                                                                                        \
            }                                                                                                          \
            for (int64_t kk = 0; kk < Kg; kk++) {                                                                      \
              int64_t k = g * Kg + kk;                                                                                 \
              const T *gyk = gy + (n * p->K + k) * so, *wk = w + (k * Cg + cg) * sk;                                   \
              for (int64_t a0 = 0; a0 < cnt[0]; a0++)                                                                  \
                for (int64_t a1 = 0; a1 < cnt[1]; a1++)                                                                \
                  for (int64_t a2 = 0; a2 < cnt[2]; a2++)                                                              \
                    acc += (double)gyk[(oo[0][a0] * p->out[1] + oo[1][a1]) * p->out[2] + oo[2][a2]] *                  \
                           (double)wk[(tt[0][a0] * p->k[1] + tt[1][a1]) * p->k[2] + tt[2][a2]];                        \
            }                                                                                                          \
            gxc[(i0 * p->in[1] + i1) * p->in[2] + i2] = (T)acc;                                                        \
          }                                                                                                            \
    }                                                                                                                  \
  }                                                                                                                    \
  /* tasks over (k, c in group): gw[k, c, :], and gb[k] with c == 0 */                                                 \
  static void bwd_weights_##tag(void *ctx, int64_t b, int64_t e) {                                                     \
    const ref_job *j = ctx;                                                                                            \
    const mt_conv_problem *p = j->p;                                                                                   \
    const T *gy = j->a, *x = j->b;                                                                                     \
    T *gw = j->y, *gb = j->y2;                                                                                         \
    int64_t Kg = p->K / p->G, Cg = p->C / p->G, si = SP_IN(p), so = SP_OUT(p), sk = SP_K(p);                           \
    for (int64_t t = b; t < e; t++) {                                                                                  \
      int64_t k = t / Cg, cg = t % Cg, c = (k / Kg) * Cg + cg;                                                         \
      for (int64_t t0 = 0; t0 < p->k[0]; t0++)                                                                         \
        for (int64_t t1 = 0; t1 < p->k[1]; t1++)                                                                       \
          for (int64_t t2 = 0; t2 < p->k[2]; t2++) {                                                                   \
            double acc = 0;                                                                                            \
            for (int64_t n = 0; n < p->N; n++) {                                                                       \
              const T *gyk = gy + (n * p->K + k) * so, *xc = x + (n * p->C + c) * si;                                  \
              for (int64_t o0 = 0; o0 < p->out[0]; o0++) {                                                             \
                int64_t i0 = in_pos(p, 0, o0, t0);                                                                     \
                if (i0 < 0) continue;                                                                                  \
                for (int64_t o1 = 0; o1 < p->out[1]; o1++) {                                                           \
                  int64_t i1 = in_pos(p, 1, o1, t1);                                                                   \
                  if (i1 < 0) continue;                                                                                \
                  for (int64_t o2 = 0; o2 < p->out[2]; o2++) {                                                         \
                    int64_t i2 = in_pos(p, 2, o2, t2);                                                                 \
                    if (i2 < 0) continue;                                                                              \
                    acc += (double)gyk[(o0 * p->out[1] + o1) * p->out[2] + o2] *                                       \
                           (double)xc[(i0 * p->in[1] + i1) * p->in[2] + i2];                                           \
                  }                                                                                                    \
                }                                                                                                      \
              }                                                                                                        \
            }                                                                                                          \
            gw[(k * Cg + cg) * sk + (t0 * p->k[1] + t1) * p->k[2] + t2] = (T)acc;                                      \
          }                                                                                                            \
      if (gb && cg == 0) {                                                                                             \
        double acc = 0;                                                                                                \
        for (int64_t n = 0; n < p->N; n++)                                                                             \
          for (int64_t o = 0; o < so; o++) acc += (double)gy[(n * p->K + k) * so + o];                                 \
        gb[k] = (T)acc;                                                                                                \
      }                                                                                                                \
    }                                                                                                                  \
  }
DEF_REF(f32, float)
DEF_REF(f64, double)
#undef DEF_REF

/* Tasks of about this many multiply-adds each. */
static int64_t grain(int64_t tasks, int64_t work) {
  int64_t per = tasks > 0 ? work / tasks : 1;
  return per >= (1 << 15) ? 1 : (1 << 15) / (per > 0 ? per : 1);
}

mt_status mt_ref_conv_fwd(mt_dtype dt, const mt_conv_problem *p, const void *x, const void *w, const void *b, void *y) {
  ref_job j = {p, x, w, b, y, NULL};
  int64_t tasks = p->N * p->K, work = tasks * SP_OUT(p) * (p->C / p->G) * SP_K(p);
  return mt_parallel_for(tasks, grain(tasks, work), dt == MT_FLOAT64 ? fwd_f64 : fwd_f32, &j);
}

mt_status mt_ref_conv_bwd_data(mt_dtype dt, const mt_conv_problem *p, const void *gy, const void *w, void *gx) {
  for (int d = 0; d < 3; d++)
    if (p->k[d] > 64) return mt_fail(MT_EARG, "convolution backward: kernels wider than 64 are not supported");
  ref_job j = {p, gy, w, NULL, gx, NULL};
  int64_t tasks = p->N * p->C, work = tasks * SP_IN(p) * (p->K / p->G) * SP_K(p);
  return mt_parallel_for(tasks, grain(tasks, work), dt == MT_FLOAT64 ? bwd_data_f64 : bwd_data_f32, &j);
}

mt_status mt_ref_conv_bwd_weights(mt_dtype dt, const mt_conv_problem *p, const void *gy, const void *x, void *gw,
                                  void *gb) {
  ref_job j = {p, gy, x, NULL, gw, gb};
  int64_t tasks = p->K * (p->C / p->G), work = tasks * p->N * SP_OUT(p) * SP_K(p);
  return mt_parallel_for(tasks, grain(tasks, work), dt == MT_FLOAT64 ? bwd_weights_f64 : bwd_weights_f32, &j);
}
