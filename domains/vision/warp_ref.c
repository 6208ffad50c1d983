/* warp_ref.c -- the scalar reference of the CPU warp sampler (warp.h):
 * one parallel pass over output rows that computes, per output pixel, the
 * source position, the bilinear or nearest taps with PyTorch's
 * grid_sample arithmetic (in the grid's precision), the sampled mask of
 * ones when a fill is given, and the rounded result for uint8. warp.c
 * serves float64 through it; the tests compare warp.c's fast path with it.
 * It never allocates and never touches Lua. */
#include <math.h>
#include <stdint.h>

#include "warp.h"

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

/* SAMPLE(NAME, S, T, TO_S, RINT, FLOOR): the row kernel NAME(p, b, y):
 * output row y of image b for images of element type S, computed in T (the
 * grid's type) with PyTorch's grid sampler arithmetic: unnormalize, then
 * round half to even (nearest) or floor and weigh the four taps
 * (bilinear); taps outside the image count as zeros, and their weights
 * are left out of the sampled mask of ones that the fill uses. */
#define SAMPLE(NAME, S, T, TO_S, RINT, FLOOR)                                                                         \
  static void NAME(const mtd_warp *p, int64_t b, int64_t y) {                                                        \
    const mt_tensor *img = p->img;                                                                                    \
    int64_t C = img->shape[1], H = img->shape[2], W = img->shape[3], HW = H * W;                                      \
    int64_t OH = p->out->shape[2], OW = p->out->shape[3], G = p->grid->shape[0];                                      \
    int64_t gi = G == 1 ? 0 : b / (img->shape[0] / G);                                                               \
    const S *src = (const S *)mt_data(img) + b * C * HW;                                                              \
    S *dst = (S *)mt_data(p->out) + b * C * OH * OW + y * OW;                                                         \
    const double *fill = p->fill;                                                                                     \
    for (int64_t x = 0; x < OW; x++, dst++) {                                                                         \
      T gx, gy;                                                                                                       \
      pos_##T(p, gi, x, y, &gx, &gy);                                                                                 \
      T ix = ((gx + (T)1) * (T)W - (T)1) / (T)2, iy = ((gy + (T)1) * (T)H - (T)1) / (T)2;                            \
      if (!p->bilinear) {                                                                                             \
        T xn = RINT(ix), yn = RINT(iy);                                                                               \
        bool in = xn >= 0 && xn <= (T)(W - 1) && yn >= 0 && yn <= (T)(H - 1);                                        \
        int64_t off = in ? (int64_t)yn * W + (int64_t)xn : 0;                                                         \
        for (int64_t c = 0; c < C; c++)                                                                               \
          dst[c * OH * OW] = TO_S(in ? (T)src[c * HW + off] : fill ? (T)fill[c] : (T)0);                              \
        continue;                                                                                                     \
      }                                                                                                               \
      T x0 = FLOOR(ix), y0 = FLOOR(iy);                                                                               \
      T we = x0 + (T)1 - ix, ww = ix - x0, ws = y0 + (T)1 - iy, wn = iy - y0;                                        \
      bool vx0 = x0 >= 0 && x0 <= (T)(W - 1), vx1 = x0 + 1 >= 0 && x0 + 1 <= (T)(W - 1);                             \
      bool vy0 = y0 >= 0 && y0 <= (T)(H - 1), vy1 = y0 + 1 >= 0 && y0 + 1 <= (T)(H - 1);                             \
      /* x0, y0 >= -1 when a tap is inside: the cast is safe (and skipped for far-away points) */                    \
      int64_t o = (vx0 || vx1) && (vy0 || vy1) ? (int64_t)y0 * W + (int64_t)x0 : 0;                                  \
      bool v00 = vy0 && vx0, v01 = vy0 && vx1, v10 = vy1 && vx0, v11 = vy1 && vx1;                                    \
      T w00 = ws * we, w01 = ws * ww, w10 = wn * we, w11 = wn * ww;                                                   \
      T m = (T)0;                                                                                                     \
      if (v00) m += w00;                                                                                              \
      if (v01) m += w01;                                                                                              \
      if (v10) m += w10;                                                                                              \
      if (v11) m += w11;                                                                                              \
      for (int64_t c = 0; c < C; c++) {                                                                               \
        const S *pl = src + c * HW; /* indexed only at valid taps */                                                  \
        T v = (T)0;                                                                                                   \
        if (v00) v += (T)pl[o] * w00;                                                                                 \
        if (v01) v += (T)pl[o + 1] * w01;                                                                             \
        if (v10) v += (T)pl[o + W] * w10;                                                                             \
        if (v11) v += (T)pl[o + W + 1] * w11;                                                                         \
        if (fill) v = (v - (T)fill[c]) * m + (T)fill[c];                                                              \
        dst[c * OH * OW] = TO_S(v);                                                                                   \
      }                                                                                                               \
    }                                                                                                                 \
  }

static inline uint8_t to_u8(float v) {
  v = rintf(v);
  return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}
#define SAME(v) (v)
SAMPLE(row_u8, uint8_t, float, to_u8, rintf, floorf)
SAMPLE(row_f32, float, float, SAME, rintf, floorf)
SAMPLE(row_f64, double, double, SAME, rint, floor)

mt_status mtd_warp_sample_ref(const mtd_warp *p) {
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
