/* warp.c -- grid sampling of image batches on the CPU (warp.h): one
 * parallel pass over output rows that computes, per output pixel, the
 * source position, the bilinear or nearest taps with PyTorch's
 * grid_sample arithmetic (in the grid's precision), the sampled mask of
 * ones when a fill is given, and the rounded result for uint8. It never
 * allocates and never touches Lua. */
#include <math.h>
#include <stdint.h>

#include "warp.h"

/* One output pixel: taps (up to 4 flat offsets into a plane, -1 when
 * outside) with their weights, and the sampled mask of ones. */
typedef struct tap {
  int64_t off[4];
  double w[4];
  double mask;
  int n;
} tap;

/* TAPS(T, RINT, FLOOR): the function taps_T(gx, gy, h, w, bilinear, t)
 * filling t for the grid point (gx, gy), computed in precision T as
 * PyTorch's grid sampler does (unnormalize, then floor / round half even). */
#define TAPS(T, RINT, FLOOR)                                                                                          \
  static void taps_##T(T gx, T gy, int64_t h, int64_t w, int bilinear, tap *t) {                                     \
    T ix = ((gx + (T)1) * (T)w - (T)1) / (T)2;                                                                       \
    T iy = ((gy + (T)1) * (T)h - (T)1) / (T)2;                                                                       \
    t->mask = 0;                                                                                                      \
    if (!bilinear) {                                                                                                  \
      T xn = RINT(ix), yn = RINT(iy);                                                                                 \
      t->n = 1;                                                                                                       \
      bool in = xn >= 0 && xn <= (T)(w - 1) && yn >= 0 && yn <= (T)(h - 1);                                          \
      t->off[0] = in ? (int64_t)yn * w + (int64_t)xn : -1;                                                           \
      t->w[0] = 1, t->mask = in ? 1 : 0;                                                                              \
      return;                                                                                                         \
    }                                                                                                                 \
    T x0 = FLOOR(ix), y0 = FLOOR(iy);                                                                                 \
    T we = x0 + (T)1 - ix, ww = ix - x0, ws = y0 + (T)1 - iy, wn = iy - y0;                                          \
    T wt[4] = {ws * we, ws * ww, wn * we, wn * ww};                                                                   \
    T xs[4] = {x0, x0 + 1, x0, x0 + 1}, ys[4] = {y0, y0, y0 + 1, y0 + 1};                                            \
    t->n = 4;                                                                                                         \
    T m = 0;                                                                                                          \
    for (int k = 0; k < 4; k++) {                                                                                     \
      bool in = xs[k] >= 0 && xs[k] <= (T)(w - 1) && ys[k] >= 0 && ys[k] <= (T)(h - 1);                              \
      t->off[k] = in ? (int64_t)ys[k] * w + (int64_t)xs[k] : -1;                                                     \
      t->w[k] = wt[k];                                                                                                \
      if (in) m += wt[k];                                                                                             \
    }                                                                                                                 \
    t->mask = m;                                                                                                      \
  }
TAPS(float, rintf, floorf)
TAPS(double, rint, floor)

/* POS(T): pos_T(p, gi, x, y, &gx, &gy): the grid point of output pixel
 * (x, y) for grid or coefficient row gi (warp.h) */
#define POS(T)                                                                                                         \
  static inline void pos_##T(const mtd_warp *p, int64_t gi, int64_t x, int64_t y, T *gx, T *gy) {                   \
    int64_t OH = p->out->shape[2], OW = p->out->shape[3];                                                             \
    const T *c = (const T *)mt_data(p->grid);                                                                         \
    if (p->kind == MTD_WARP_GRID) {                                                                                   \
      c += ((gi * OH + y) * OW + x) * 2;                                                                              \
      *gx = c[0], *gy = c[1];                                                                                         \
    } else if (p->kind == MTD_WARP_AFFINE) {                                                                          \
      c += gi * 6;                                                                                                    \
      T u = (T)x + (T)((1.0 - (double)OW) * 0.5), v = (T)y + (T)((1.0 - (double)OH) * 0.5);                          \
      *gx = u * c[0] + v * c[1] + c[2];                                                                               \
      *gy = u * c[3] + v * c[4] + c[5];                                                                               \
    } else {                                                                                                          \
      c += gi * 8;                                                                                                    \
      T u = (T)x + (T)0.5, v = (T)y + (T)0.5;                                                                         \
      T d = u * c[6] + v * c[7] + (T)1;                                                                               \
      *gx = (u * c[0] + v * c[1] + c[2]) / d - (T)1;                                                                  \
      *gy = (u * c[3] + v * c[4] + c[5]) / d - (T)1;                                                                  \
    }                                                                                                                 \
  }
POS(float)
POS(double)

/* SAMPLE(NAME, S, T): the row kernel NAME(p, b, y): output row y of image b
 * for images of element type S, computed in T (the grid's type). */
#define SAMPLE(NAME, S, T, TO_S)                                                                                       \
  static void NAME(const mtd_warp *p, int64_t b, int64_t y) {                                                        \
    const mt_tensor *img = p->img, *grid = p->grid;                                                                   \
    int64_t C = img->shape[1], H = img->shape[2], W = img->shape[3];                                                  \
    int64_t OH = p->out->shape[2], OW = p->out->shape[3], G = grid->shape[0];                                         \
    int64_t gi = G == 1 ? 0 : b / (img->shape[0] / G);                                                               \
    const S *src = (const S *)mt_data(img) + b * C * H * W;                                                           \
    S *dst = (S *)mt_data(p->out) + b * C * OH * OW + y * OW;                                                         \
    for (int64_t x = 0; x < OW; x++) {                                                                                \
      tap t;                                                                                                          \
      T gx, gy;                                                                                                       \
      pos_##T(p, gi, x, y, &gx, &gy);                                                                                 \
      taps_##T(gx, gy, H, W, p->bilinear, &t);                                                                        \
      for (int64_t c = 0; c < C; c++) {                                                                               \
        const S *plane = src + c * H * W;                                                                             \
        T v = 0;                                                                                                      \
        for (int k = 0; k < t.n; k++)                                                                                 \
          if (t.off[k] >= 0) v += (T)plane[t.off[k]] * (T)t.w[k];                                                     \
        if (p->fill) {                                                                                                \
          T f = (T)p->fill[c], m = (T)t.mask;                                                                         \
          if (p->bilinear)                                                                                            \
            v = (v - f) * m + f;                                                                                      \
          else if (m < (T)0.5)                                                                                        \
            v = f;                                                                                                    \
        }                                                                                                             \
        dst[c * OH * OW + x] = TO_S(v);                                                                               \
      }                                                                                                               \
    }                                                                                                                 \
  }

static inline uint8_t to_u8(float v) {
  v = rintf(v);
  return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}
#define SAME(v) (v)
SAMPLE(row_u8, uint8_t, float, to_u8)
SAMPLE(row_f32, float, float, SAME)
SAMPLE(row_f64, double, double, SAME)

mt_status mtd_warp_sample(const mtd_warp *p) {
  void (*row)(const mtd_warp *, int64_t, int64_t) = NULL;
  mt_dtype gd = (mt_dtype)p->grid->dtype;
  switch (p->img->dtype) {
  case MT_UINT8: row = gd == MT_FLOAT32 ? row_u8 : NULL; break;
  case MT_FLOAT32: row = gd == MT_FLOAT32 ? row_f32 : NULL; break;
  case MT_FLOAT64: row = gd == MT_FLOAT64 ? row_f64 : NULL; break;
  default: break;
  }
  if (!row) return mt_fail(MT_EDTYPE, "warp sampling: unsupported dtypes %s image, %s grid",
                            mt_dtype_name((mt_dtype)p->img->dtype), mt_dtype_name(gd));
  int64_t B = p->img->shape[0], OH = p->out->shape[2];
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; b++)
    for (int64_t y = 0; y < OH; y++) row(p, b, y);
  return MT_OK;
}
