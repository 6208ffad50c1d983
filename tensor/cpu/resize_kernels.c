/* resize_kernels.c -- CPU loops of the separable image resampling
 * (resize_kernels.h): a pass along x per input row into a buffer of the
 * compute type (float for uint8 and float32, double for float64), then a
 * pass along y per output row that sums whole buffer rows (the loop that
 * vectorizes), both split over rows by mt_parallel_for. No checks here:
 * tensor/resize.c built and checked the plan. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "resize_kernels.h"

typedef struct rs_ctx {
  const mt_rs_plan *p;
  const void *x;
  void *y, *tmp;
  const void *wx, *wy; /* weights in the compute type */
  bool fail;
} rs_ctx;

/* the x pass over rows [b, e) of planes * ih: TI input, TC compute */
#define RS_XPASS(NAME, TI, TC)                                                                                         \
  static void NAME(void *vc, int64_t b, int64_t e) {                                                                   \
    const rs_ctx *c = vc;                                                                                              \
    const mt_rs_plan *p = c->p;                                                                                        \
    for (int64_t i = b; i < e; i++) {                                                                                  \
      int64_t plane = i / p->ih, r = i % p->ih, t = plane / p->group;                                                  \
      if (r >= p->nrows[t]) continue;                                                                                  \
      const TI *src = (const TI *)c->x + (plane * p->ih + p->row0[t] + r) * p->iw;                                     \
      TC *dst = (TC *)c->tmp + (plane * p->ih + r) * p->ow;                                                            \
      const int64_t *st = p->sx + t * p->ow;                                                                           \
      const int32_t *n = p->nx + t * p->ow;                                                                            \
      const TC *w = (const TC *)c->wx + t * p->ow * p->kx;                                                             \
      for (int64_t o = 0; o < p->ow; o++) {                                                                            \
        const TI *s = src + st[o];                                                                                     \
        const TC *ww = w + o * p->kx;                                                                                  \
        TC acc = 0;                                                                                                    \
        for (int k = 0; k < n[o]; k++) acc += ww[k] * (TC)s[k];                                                        \
        dst[o] = acc;                                                                                                  \
      }                                                                                                                \
    }                                                                                                                  \
  }
RS_XPASS(xpass_u8, uint8_t, float)
RS_XPASS(xpass_f32, float, float)
RS_XPASS(xpass_f64, double, double)

/* the y pass over rows [b, e) of planes * oh: acc = sum of weighted buffer
 * rows, then STORE(acc) into the output row */
#define RS_YPASS(NAME, TC, TO, STORE)                                                                                  \
  static void NAME(void *vc, int64_t b, int64_t e) {                                                                   \
    rs_ctx *c = vc;                                                                                                    \
    const mt_rs_plan *p = c->p;                                                                                        \
    TC *acc = malloc(sizeof(TC) * (size_t)p->ow);                                                                      \
    if (!acc) {                                                                                                        \
      c->fail = true;                                                                                                  \
      return;                                                                                                          \
    }                                                                                                                  \
    for (int64_t i = b; i < e; i++) {                                                                                  \
      int64_t plane = i / p->oh, oy = i % p->oh, t = plane / p->group, ow = p->ow;                                     \
      const TC *base = (const TC *)c->tmp + plane * p->ih * ow;                                                        \
      int64_t s = p->sy[t * p->oh + oy];                                                                               \
      int n = p->ny[t * p->oh + oy];                                                                                   \
      const TC *w = (const TC *)c->wy + (t * p->oh + oy) * p->ky;                                                      \
      const TC *r0 = base + s * ow;                                                                                    \
      TC w0 = w[0];                                                                                                    \
      for (int64_t x = 0; x < ow; x++) acc[x] = w0 * r0[x];                                                            \
      for (int k = 1; k < n; k++) {                                                                                    \
        const TC *rk = base + (s + k) * ow;                                                                            \
        TC wk = w[k];                                                                                                  \
        for (int64_t x = 0; x < ow; x++) acc[x] += wk * rk[x];                                                         \
      }                                                                                                                \
      TO *out = (TO *)c->y + i * ow;                                                                                   \
      for (int64_t x = 0; x < ow; x++) out[x] = STORE(acc[x]);                                                         \
    }                                                                                                                  \
    free(acc);                                                                                                         \
  }

/* uint8 results: round half to even (torch.round), then clamp */
static inline uint8_t store_u8(float v) {
  v = nearbyintf(v);
  return (uint8_t)(v < 0.f ? 0.f : v > 255.f ? 255.f : v);
}
#define SAME(v) (v)
RS_YPASS(ypass_u8, float, uint8_t, store_u8)
RS_YPASS(ypass_f32, float, float, SAME)
RS_YPASS(ypass_f64, double, double, SAME)

/* the columns [*c0, *c1) the x windows of table t read */
static void col_range(const mt_rs_plan *p, int64_t t, int64_t *c0, int64_t *c1) {
  const int64_t *sx = p->sx + t * p->ow;
  const int32_t *nx = p->nx + t * p->ow;
  int64_t lo = sx[0], hi = sx[0] + nx[0];
  for (int64_t o = 1; o < p->ow; o++) {
    if (sx[o] < lo) lo = sx[o];
    if (sx[o] + nx[o] > hi) hi = sx[o] + nx[o];
  }
  *c0 = lo, *c1 = hi;
}

/* The y-first order (cheaper when the y pass shrinks the image: its rows
 * vectorize, and the x pass then runs on oh rows instead of ih): a y pass
 * from the input into a [planes, oh, iw] buffer over the columns the x
 * windows of the table read, then an x pass per output row. */
#define RS_Y1PASS(NAME, TI, TC)                                                                                        \
  static void NAME(void *vc, int64_t b, int64_t e) {                                                                   \
    const rs_ctx *c = vc;                                                                                              \
    const mt_rs_plan *p = c->p;                                                                                        \
    for (int64_t i = b; i < e; i++) {                                                                                  \
      int64_t plane = i / p->oh, oy = i % p->oh, t = plane / p->group, iw = p->iw;                                     \
      int64_t c0, c1;                                                                                                  \
      col_range(p, t, &c0, &c1);                                                                                       \
      int64_t s = p->row0[t] + p->sy[t * p->oh + oy];                                                                  \
      int n = p->ny[t * p->oh + oy];                                                                                   \
      const TC *w = (const TC *)c->wy + (t * p->oh + oy) * p->ky;                                                      \
      const TI *base = (const TI *)c->x + plane * p->ih * iw;                                                          \
      TC *dst = (TC *)c->tmp + i * iw;                                                                                 \
      const TI *r0 = base + s * iw;                                                                                    \
      TC w0 = w[0];                                                                                                    \
      for (int64_t x = c0; x < c1; x++) dst[x] = w0 * (TC)r0[x];                                                       \
      for (int k = 1; k < n; k++) {                                                                                    \
        const TI *rk = base + (s + k) * iw;                                                                            \
        TC wk = w[k];                                                                                                  \
        for (int64_t x = c0; x < c1; x++) dst[x] += wk * (TC)rk[x];                                                    \
      }                                                                                                                \
    }                                                                                                                  \
  }
RS_Y1PASS(y1pass_u8, uint8_t, float)
RS_Y1PASS(y1pass_f32, float, float)
RS_Y1PASS(y1pass_f64, double, double)

#define RS_X2PASS(NAME, TC, TO, STORE)                                                                                 \
  static void NAME(void *vc, int64_t b, int64_t e) {                                                                   \
    const rs_ctx *c = vc;                                                                                              \
    const mt_rs_plan *p = c->p;                                                                                        \
    for (int64_t i = b; i < e; i++) {                                                                                  \
      int64_t t = i / p->oh / p->group;                                                                                \
      const TC *src = (const TC *)c->tmp + i * p->iw;                                                                  \
      const int64_t *st = p->sx + t * p->ow;                                                                           \
      const int32_t *n = p->nx + t * p->ow;                                                                            \
      const TC *w = (const TC *)c->wx + t * p->ow * p->kx;                                                             \
      TO *out = (TO *)c->y + i * p->ow;                                                                                \
      for (int64_t o = 0; o < p->ow; o++) {                                                                            \
        const TC *sp = src + st[o];                                                                                    \
        const TC *ww = w + o * p->kx;                                                                                  \
        TC acc = 0;                                                                                                    \
        for (int k = 0; k < n[o]; k++) acc += ww[k] * sp[k];                                                           \
        out[o] = STORE(acc);                                                                                           \
      }                                                                                                                \
    }                                                                                                                  \
  }

RS_X2PASS(x2pass_u8, float, uint8_t, store_u8)
RS_X2PASS(x2pass_f32, float, float, SAME)
RS_X2PASS(x2pass_f64, double, double, SAME)

/* whether the y pass goes first: fewer scalar multiply-adds (the x pass's)
 * with vector work counted at a quarter, for the mean crop of the tables
 * (rows read by the x-first order, columns by the y-first one) */
static bool y_first(const mt_rs_plan *p) {
  double rows = 0, cols = 0;
  for (int64_t t = 0; t < p->ntab; t++) {
    int64_t c0, c1;
    col_range(p, t, &c0, &c1);
    rows += (double)p->nrows[t];
    cols += (double)(c1 - c0);
  }
  rows /= (double)p->ntab, cols /= (double)p->ntab;
  double xf = rows * (double)p->ow * p->kx + (double)p->oh * (double)p->ow * p->ky / 4;
  double yf = (double)p->oh * cols * p->ky / 4 + (double)p->oh * (double)p->ow * p->kx;
  return yf < xf;
}

/* weights n doubles as the compute type (float unless float64) */
static void *weights_as(const double *w, int64_t n, bool dbl) {
  if (dbl) return (void *)w;
  float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
  if (f)
    for (int64_t i = 0; i < n; i++) f[i] = (float)w[i];
  return f;
}

/* Nearest (every window one tap of weight 1): a gather of es-byte
 * elements without arithmetic, one output row at a time; rows whose x taps
 * are one increasing run are copied whole. */
typedef struct nn_ctx {
  const mt_rs_plan *p;
  const char *x;
  char *y;
  size_t es;
  const bool *run; /* per table: its x taps are sx[0], sx[0] + 1, ... */
} nn_ctx;

#define NN_GATHER(T)                                                                                                   \
  do {                                                                                                                 \
    const T *s_ = (const T *)src;                                                                                      \
    T *d_ = (T *)dst;                                                                                                  \
    for (int64_t o = 0; o < p->ow; o++) d_[o] = s_[sx[o]];                                                             \
  } while (0)

static void nn_rows(void *vc, int64_t b, int64_t e) {
  const nn_ctx *c = vc;
  const mt_rs_plan *p = c->p;
  size_t es = c->es;
  for (int64_t i = b; i < e; i++) {
    int64_t plane = i / p->oh, oy = i % p->oh, t = plane / p->group;
    const char *src = c->x + (size_t)((plane * p->ih + p->row0[t] + p->sy[t * p->oh + oy]) * p->iw) * es;
    char *dst = c->y + (size_t)(i * p->ow) * es;
    const int64_t *sx = p->sx + t * p->ow;
    if (c->run[t]) {
      memcpy(dst, src + (size_t)sx[0] * es, (size_t)p->ow * es);
    } else if (es == 1) {
      NN_GATHER(uint8_t);
    } else if (es == 2) {
      NN_GATHER(uint16_t);
    } else if (es == 4) {
      NN_GATHER(uint32_t);
    } else {
      NN_GATHER(uint64_t);
    }
  }
}

static mt_status resize_nearest(size_t es, const mt_rs_plan *p, const void *x, void *y) {
  bool *run = malloc(sizeof(bool) * (size_t)p->ntab);
  if (!run) return mt_fail(MT_ENOMEM, "resize: out of memory");
  for (int64_t t = 0; t < p->ntab; t++) {
    const int64_t *sx = p->sx + t * p->ow;
    run[t] = true;
    for (int64_t o = 1; o < p->ow && run[t]; o++) run[t] = sx[o] == sx[0] + o;
  }
  nn_ctx c = {.p = p, .x = x, .y = y, .es = es, .run = run};
  mt_status st = mt_parallel_for(p->planes * p->oh, 1 + 65536 / (p->ow + 1), nn_rows, &c);
  free(run);
  return st;
}

mt_status mt_cpu_resize(mt_dtype dt, const mt_rs_plan *p, const void *x, void *y) {
  if (p->kx == 1 && p->ky == 1) return resize_nearest(mt_dtype_size(dt), p, x, y);
  bool dbl = dt == MT_FLOAT64, yf = y_first(p);
  size_t cs = dbl ? sizeof(double) : sizeof(float);
  rs_ctx c = {.p = p, .x = x, .y = y};
  c.tmp = malloc(cs * (size_t)(p->planes * (yf ? p->oh * p->iw : p->ih * p->ow)));
  c.wx = weights_as(p->wx, p->ntab * p->ow * p->kx, dbl);
  c.wy = weights_as(p->wy, p->ntab * p->oh * p->ky, dbl);
  mt_status st = MT_OK;
  if (!c.tmp || !c.wx || !c.wy) {
    st = mt_fail(MT_ENOMEM, "resize: out of memory for a %lld x %lld buffer", (long long)p->ih, (long long)p->ow);
    goto done;
  }
  int u8 = dt == MT_UINT8;
  int64_t gx = 1 + 16384 / (p->ow * p->kx + 1), gy = 1 + 16384 / ((yf ? p->iw : p->ow) * p->ky + 1);
  if (yf) {
    if ((st = mt_parallel_for(p->planes * p->oh, gy, u8 ? y1pass_u8 : dbl ? y1pass_f64 : y1pass_f32, &c))) goto done;
    st = mt_parallel_for(p->planes * p->oh, gx, u8 ? x2pass_u8 : dbl ? x2pass_f64 : x2pass_f32, &c);
  } else {
    if ((st = mt_parallel_for(p->planes * p->ih, gx, u8 ? xpass_u8 : dbl ? xpass_f64 : xpass_f32, &c))) goto done;
    st = mt_parallel_for(p->planes * p->oh, gy, u8 ? ypass_u8 : dbl ? ypass_f64 : ypass_f32, &c);
  }
  if (!st && c.fail) st = mt_fail(MT_ENOMEM, "resize: out of memory");
done:
  free(c.tmp);
  if (!dbl) free((void *)c.wx), free((void *)c.wy);
  return st;
}

/* the adjoint over planes [b, e): gt = Wy^T gy, then gx = gt Wx */
#define RS_BACK(NAME, T)                                                                                               \
  static void NAME(void *vc, int64_t b, int64_t e) {                                                                   \
    rs_ctx *c = vc;                                                                                                    \
    const mt_rs_plan *p = c->p;                                                                                        \
    int64_t ih = p->ih, iw = p->iw, oh = p->oh, ow = p->ow;                                                            \
    T *gt = malloc(sizeof(T) * (size_t)(ih * ow));                                                                     \
    if (!gt) {                                                                                                         \
      c->fail = true;                                                                                                  \
      return;                                                                                                          \
    }                                                                                                                  \
    const T *wx = c->wx, *wy = c->wy;                                                                                  \
    for (int64_t pl = b; pl < e; pl++) {                                                                               \
      const T *g = (const T *)c->x + pl * oh * ow;                                                                     \
      T *gx = (T *)c->y + pl * ih * iw;                                                                                \
      memset(gt, 0, sizeof(T) * (size_t)(ih * ow));                                                                    \
      memset(gx, 0, sizeof(T) * (size_t)(ih * iw));                                                                    \
      for (int64_t oy = 0; oy < oh; oy++)                                                                              \
        for (int k = 0; k < p->ny[oy]; k++) {                                                                          \
          T w = wy[oy * p->ky + k], *dst = gt + (p->sy[oy] + k) * ow;                                                  \
          const T *src = g + oy * ow;                                                                                  \
          for (int64_t x = 0; x < ow; x++) dst[x] += w * src[x];                                                       \
        }                                                                                                              \
      for (int64_t iy = 0; iy < ih; iy++)                                                                              \
        for (int64_t o = 0; o < ow; o++) {                                                                             \
          T v = gt[iy * ow + o], *dst = gx + iy * iw + p->sx[o];                                                       \
          for (int k = 0; k < p->nx[o]; k++) dst[k] += wx[o * p->kx + k] * v;                                          \
        }                                                                                                              \
    }                                                                                                                  \
    free(gt);                                                                                                          \
  }
RS_BACK(back_f32, float)
RS_BACK(back_f64, double)

mt_status mt_cpu_resize_backward(mt_dtype dt, const mt_rs_plan *p, const void *gy, void *gx) {
  bool dbl = dt == MT_FLOAT64;
  rs_ctx c = {.p = p, .x = gy, .y = gx};
  c.wx = weights_as(p->wx, p->ow * p->kx, dbl);
  c.wy = weights_as(p->wy, p->oh * p->ky, dbl);
  mt_status st = MT_OK;
  if (!c.wx || !c.wy) st = mt_fail(MT_ENOMEM, "resize backward: out of memory");
  if (!st) st = mt_parallel_for(p->planes, 1, dbl ? back_f64 : back_f32, &c);
  if (!st && c.fail) st = mt_fail(MT_ENOMEM, "resize backward: out of memory");
  if (!dbl) free((void *)c.wx), free((void *)c.wy);
  return st;
}
