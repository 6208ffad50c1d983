/* warp.c -- the fast CPU warp sampler (warp.h) for uint8 and float32
 * images: per output row, the source positions of a chunk of pixels first
 * (8 at a time for affine and perspective maps), then the taps and weights
 * once per pixel for all channels, with AVX2 gathers for groups of 8
 * pixels whose taps all lie inside the image and the scalar rule of
 * warp_ref.c for the rest. Float64 goes to warp_ref.c. It never allocates
 * and never touches Lua. */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "warp.h"

enum { CHUNK = 256 }; /* output pixels whose positions are computed at once */

/* One output row y of image b: where it reads and writes. */
typedef struct row_ctx {
  const void *src;        /* image b, plane 0 */
  void *dst;              /* out[b, 0, y, 0] */
  int64_t C, H, W, HW, OHW; /* OHW: the output plane size */
  const double *fill;
} row_ctx;

/* pos1(p, c, x, y, &ix, &iy): the source position (pixel units, PyTorch's
 * unnormalization with align_corners=false) of output pixel (x, y) for
 * the grid or coefficient row at c (warp.h), in warp_ref.c's arithmetic */
static inline void pos1(const mtd_warp *p, const float *c, int64_t x, int64_t y, float *ix, float *iy) {
  int64_t OH = p->out->shape[2], OW = p->out->shape[3];
  float gx, gy;
  if (p->kind == MTD_WARP_GRID) {
    c += (y * OW + x) * 2;
    gx = c[0], gy = c[1];
  } else if (p->kind == MTD_WARP_AFFINE) {
    float u = (float)x + (float)((1.0 - (double)OW) * 0.5), v = (float)y + (float)((1.0 - (double)OH) * 0.5);
    gx = u * c[0] + v * c[1] + c[2];
    gy = u * c[3] + v * c[4] + c[5];
  } else {
    float u = (float)x + 0.5f, v = (float)y + 0.5f;
    float d = u * c[6] + v * c[7] + 1.0f;
    gx = (u * c[0] + v * c[1] + c[2]) / d - 1.0f;
    gy = (u * c[3] + v * c[4] + c[5]) / d - 1.0f;
  }
  *ix = ((gx + 1.0f) * (float)p->img->shape[3] - 1.0f) / 2.0f;
  *iy = ((gy + 1.0f) * (float)p->img->shape[2] - 1.0f) / 2.0f;
}

/* pos8(p, c, x, y, ix, iy): pos1 for the 8 pixels x .. x+7 of an affine or
 * perspective row (not a grid) */
static inline void pos8(const mtd_warp *p, const float *c, int64_t x, int64_t y, float *ix, float *iy) {
  int64_t OH = p->out->shape[2], OW = p->out->shape[3];
  __m256 xs = _mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_set1_epi32((int)x), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
  __m256 gx, gy;
  if (p->kind == MTD_WARP_AFFINE) {
    __m256 u = _mm256_add_ps(xs, _mm256_set1_ps((float)((1.0 - (double)OW) * 0.5)));
    float v = (float)y + (float)((1.0 - (double)OH) * 0.5);
    gx = _mm256_add_ps(_mm256_fmadd_ps(u, _mm256_set1_ps(c[0]), _mm256_set1_ps(v * c[1])), _mm256_set1_ps(c[2]));
    gy = _mm256_add_ps(_mm256_fmadd_ps(u, _mm256_set1_ps(c[3]), _mm256_set1_ps(v * c[4])), _mm256_set1_ps(c[5]));
  } else {
    __m256 u = _mm256_add_ps(xs, _mm256_set1_ps(0.5f)), one = _mm256_set1_ps(1.0f);
    float v = (float)y + 0.5f;
    __m256 d = _mm256_add_ps(_mm256_fmadd_ps(u, _mm256_set1_ps(c[6]), _mm256_set1_ps(v * c[7])), one);
    __m256 nx = _mm256_add_ps(_mm256_fmadd_ps(u, _mm256_set1_ps(c[0]), _mm256_set1_ps(v * c[1])), _mm256_set1_ps(c[2]));
    __m256 ny = _mm256_add_ps(_mm256_fmadd_ps(u, _mm256_set1_ps(c[3]), _mm256_set1_ps(v * c[4])), _mm256_set1_ps(c[5]));
    gx = _mm256_sub_ps(_mm256_div_ps(nx, d), one);
    gy = _mm256_sub_ps(_mm256_div_ps(ny, d), one);
  }
  __m256 one = _mm256_set1_ps(1.0f), half = _mm256_set1_ps(0.5f);
  __m256 W = _mm256_set1_ps((float)p->img->shape[3]), H = _mm256_set1_ps((float)p->img->shape[2]);
  _mm256_storeu_ps(ix, _mm256_mul_ps(_mm256_fmsub_ps(_mm256_add_ps(gx, one), W, one), half));
  _mm256_storeu_ps(iy, _mm256_mul_ps(_mm256_fmsub_ps(_mm256_add_ps(gy, one), H, one), half));
}

/* row_pos(p, c, y, x0, n, ix, iy): the positions of pixels x0 .. x0+n-1 of
 * row y (c: the grid of this image, or its coefficient row) */
static void row_pos(const mtd_warp *p, const float *c, int64_t y, int64_t x0, int n, float *ix, float *iy) {
  int i = 0;
  if (p->kind != MTD_WARP_GRID && p->out->shape[3] < (1 << 24)) /* (x exact as a float and an int) */
    for (; i + 8 <= n; i += 8) pos8(p, c, x0 + i, y, ix + i, iy + i);
  for (; i < n; i++) pos1(p, c, x0 + i, y, ix + i, iy + i);
}

static inline uint8_t to_u8(float v) {
  v = rintf(v);
  return v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
}
#define SAME(v) (v)

/* PIXEL(NAME, S, TO_S): NAME(r, ix, iy, x, bilinear): output pixel x of
 * the row at source position (ix, iy), all channels, with warp_ref.c's
 * rule: taps outside count as zeros and stay out of the fill's mask */
#define PIXEL(NAME, S, TO_S)                                                                                          \
  static void NAME(const row_ctx *r, float ix, float iy, int64_t x, int bilinear) {                                  \
    const S *src = (const S *)r->src;                                                                                 \
    S *dst = (S *)r->dst + x;                                                                                         \
    int64_t C = r->C, H = r->H, W = r->W, HW = r->HW, OHW = r->OHW;                                                   \
    const double *fill = r->fill;                                                                                     \
    if (!bilinear) {                                                                                                  \
      float xn = rintf(ix), yn = rintf(iy);                                                                           \
      bool in = xn >= 0 && xn <= (float)(W - 1) && yn >= 0 && yn <= (float)(H - 1);                                  \
      int64_t off = in ? (int64_t)yn * W + (int64_t)xn : 0;                                                           \
      for (int64_t c = 0; c < C; c++)                                                                                 \
        dst[c * OHW] = TO_S(in ? (float)src[c * HW + off] : fill ? (float)fill[c] : 0.0f);                            \
      return;                                                                                                         \
    }                                                                                                                 \
    float x0 = floorf(ix), y0 = floorf(iy);                                                                           \
    float we = x0 + 1.0f - ix, ww = ix - x0, ws = y0 + 1.0f - iy, wn = iy - y0;                                       \
    bool vx0 = x0 >= 0 && x0 <= (float)(W - 1), vx1 = x0 + 1 >= 0 && x0 + 1 <= (float)(W - 1);                        \
    bool vy0 = y0 >= 0 && y0 <= (float)(H - 1), vy1 = y0 + 1 >= 0 && y0 + 1 <= (float)(H - 1);                        \
    int64_t o = (vx0 || vx1) && (vy0 || vy1) ? (int64_t)y0 * W + (int64_t)x0 : 0;                                   \
    bool v00 = vy0 && vx0, v01 = vy0 && vx1, v10 = vy1 && vx0, v11 = vy1 && vx1;                                      \
    float w00 = ws * we, w01 = ws * ww, w10 = wn * we, w11 = wn * ww, m = 0.0f;                                       \
    if (v00) m += w00;                                                                                                \
    if (v01) m += w01;                                                                                                \
    if (v10) m += w10;                                                                                                \
    if (v11) m += w11;                                                                                                \
    for (int64_t c = 0; c < C; c++) {                                                                                 \
      const S *pl = src + c * HW; /* indexed only at valid taps */                                                    \
      float v = 0.0f;                                                                                                 \
      if (v00) v += (float)pl[o] * w00;                                                                               \
      if (v01) v += (float)pl[o + 1] * w01;                                                                           \
      if (v10) v += (float)pl[o + W] * w10;                                                                           \
      if (v11) v += (float)pl[o + W + 1] * w11;                                                                       \
      if (fill) v = (v - (float)fill[c]) * m + (float)fill[c];                                                        \
      dst[c * OHW] = TO_S(v);                                                                                         \
    }                                                                                                                 \
  }
PIXEL(pixel_u8, uint8_t, to_u8)
PIXEL(pixel_f32, float, SAME)

/* The bilinear taps of 8 pixels: the offset of each top-left tap, the four
 * weights and the sampled mask of ones m. */
typedef struct taps8 {
  __m256i o;
  __m256 w00, w01, w10, w11, m;
} taps8;

/* bil8(r, ix, iy, lim, &t): the taps of 8 pixels; 0 unless all four taps
 * of every pixel lie inside and every top-left offset is <= lim */
static inline int bil8(const row_ctx *r, const float *ix, const float *iy, int lim, taps8 *t) {
  __m256 x = _mm256_loadu_ps(ix), y = _mm256_loadu_ps(iy), one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  __m256 x0 = _mm256_floor_ps(x), y0 = _mm256_floor_ps(y);
  __m256 in = _mm256_and_ps(_mm256_cmp_ps(x0, zero, _CMP_GE_OQ), _mm256_cmp_ps(y0, zero, _CMP_GE_OQ));
  in = _mm256_and_ps(in, _mm256_cmp_ps(x0, _mm256_set1_ps((float)(r->W - 2)), _CMP_LE_OQ));
  in = _mm256_and_ps(in, _mm256_cmp_ps(y0, _mm256_set1_ps((float)(r->H - 2)), _CMP_LE_OQ));
  if (_mm256_movemask_ps(in) != 0xFF) return 0;
  t->o = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(y0), _mm256_set1_epi32((int)r->W)),
                          _mm256_cvttps_epi32(x0));
  if (!_mm256_testz_si256(_mm256_cmpgt_epi32(t->o, _mm256_set1_epi32(lim)), _mm256_set1_epi32(-1))) return 0;
  __m256 we = _mm256_sub_ps(_mm256_add_ps(x0, one), x), ww = _mm256_sub_ps(x, x0);
  __m256 ws = _mm256_sub_ps(_mm256_add_ps(y0, one), y), wn = _mm256_sub_ps(y, y0);
  t->w00 = _mm256_mul_ps(ws, we), t->w01 = _mm256_mul_ps(ws, ww);
  t->w10 = _mm256_mul_ps(wn, we), t->w11 = _mm256_mul_ps(wn, ww);
  t->m = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(t->w00, t->w01), t->w10), t->w11);
  return 1;
}

/* blend(t, g00, g01, g10, g11, fill, c): the bilinear value of 8 pixels of
 * channel c from their tap values, with the fill rule */
static inline __m256 blend(const taps8 *t, __m256 g00, __m256 g01, __m256 g10, __m256 g11, const double *fill,
                           int64_t c) {
  __m256 v = _mm256_mul_ps(g00, t->w00);
  v = _mm256_fmadd_ps(g01, t->w01, v);
  v = _mm256_fmadd_ps(g10, t->w10, v);
  v = _mm256_fmadd_ps(g11, t->w11, v);
  if (fill) {
    __m256 f = _mm256_set1_ps((float)fill[c]);
    v = _mm256_fmadd_ps(_mm256_sub_ps(v, f), t->m, f);
  }
  return v;
}

/* store_u8(dst, v): 8 floats rounded half to even, clamped to 0..255 */
static inline void store_u8(uint8_t *dst, __m256 v) {
  v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0f));
  __m256i i = _mm256_cvtps_epi32(v);
  __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(i), _mm256_extracti128_si256(i, 1));
  _mm_storel_epi64((__m128i *)dst, _mm_packus_epi16(w, w));
}

/* outside8(x, y, lo, hx, hy): every one of 8 positions (tap coordinates,
 * as floats) has x < lo or x > hx or y < lo or y > hy: its pixel takes the
 * fill (or zero) alone. NaN positions do not count as outside. */
static inline int outside8(__m256 x, __m256 y, float lo, float hx, float hy) {
  __m256 l = _mm256_set1_ps(lo);
  __m256 out = _mm256_or_ps(_mm256_cmp_ps(x, l, _CMP_LT_OQ), _mm256_cmp_ps(y, l, _CMP_LT_OQ));
  out = _mm256_or_ps(out, _mm256_cmp_ps(x, _mm256_set1_ps(hx), _CMP_GT_OQ));
  out = _mm256_or_ps(out, _mm256_cmp_ps(y, _mm256_set1_ps(hy), _CMP_GT_OQ));
  return _mm256_movemask_ps(out) == 0xFF;
}

/* far8(r, ix, iy, bilinear): outside8 for the taps of 8 pixels at (ix, iy) */
static inline int far8(const row_ctx *r, const float *ix, const float *iy, int bilinear) {
  __m256 x = _mm256_loadu_ps(ix), y = _mm256_loadu_ps(iy);
  if (bilinear) return outside8(_mm256_floor_ps(x), _mm256_floor_ps(y), -1.0f, (float)(r->W - 1), (float)(r->H - 1));
  x = _mm256_round_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  y = _mm256_round_ps(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return outside8(x, y, 0.0f, (float)(r->W - 1), (float)(r->H - 1));
}

/* fill_value(r, c): what a pixel with no tap inside gets in channel c */
static inline float fill_value(const row_ctx *r, int64_t c) { return r->fill ? (float)r->fill[c] : 0.0f; }

/* pairs8(pl, o, &left, &right): pl[o[i]] and pl[o[i] + 1] for 8 offsets,
 * through 64-bit gathers (half the element loads of 32-bit ones) */
static inline void pairs8(const float *pl, __m256i o, __m256 *left, __m256 *right) {
  __m256 a = _mm256_castpd_ps(_mm256_i32gather_pd((const double *)pl, _mm256_castsi256_si128(o), 4));
  __m256 b = _mm256_castpd_ps(_mm256_i32gather_pd((const double *)pl, _mm256_extracti128_si256(o, 1), 4));
  /* a: pixels 0 1 | 2 3 as (left, right) pairs, b: 4 5 | 6 7 */
  *left = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0x88)), 0xD8));
  *right = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(a, b, 0xDD)), 0xD8));
}

/* group_f32(r, ix, iy, x, bilinear): output pixels x .. x+7 of a float32
 * row through gathers, or the fill where no tap of the 8 is inside; 0
 * (nothing written) unless all their taps are inside or all outside */
static int group_f32(const row_ctx *r, const float *ix, const float *iy, int64_t x, int bilinear) {
  const float *src = (const float *)r->src;
  float *dst = (float *)r->dst + x;
  if (far8(r, ix, iy, bilinear)) {
    for (int64_t c = 0; c < r->C; c++) _mm256_storeu_ps(dst + c * r->OHW, _mm256_set1_ps(fill_value(r, c)));
    return 1;
  }
  if (!bilinear) {
    __m256 xn = _mm256_round_ps(_mm256_loadu_ps(ix), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 yn = _mm256_round_ps(_mm256_loadu_ps(iy), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 zero = _mm256_setzero_ps();
    __m256 in = _mm256_and_ps(_mm256_cmp_ps(xn, zero, _CMP_GE_OQ), _mm256_cmp_ps(yn, zero, _CMP_GE_OQ));
    in = _mm256_and_ps(in, _mm256_cmp_ps(xn, _mm256_set1_ps((float)(r->W - 1)), _CMP_LE_OQ));
    in = _mm256_and_ps(in, _mm256_cmp_ps(yn, _mm256_set1_ps((float)(r->H - 1)), _CMP_LE_OQ));
    if (_mm256_movemask_ps(in) != 0xFF) return 0;
    __m256i o = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(yn), _mm256_set1_epi32((int)r->W)),
                                 _mm256_cvttps_epi32(xn));
    for (int64_t c = 0; c < r->C; c++) _mm256_storeu_ps(dst + c * r->OHW, _mm256_i32gather_ps(src + c * r->HW, o, 4));
    return 1;
  }
  taps8 t;
  if (!bil8(r, ix, iy, INT32_MAX, &t)) return 0;
  for (int64_t c = 0; c < r->C; c++) {
    const float *pl = src + c * r->HW;
    __m256 g00, g01, g10, g11;
    pairs8(pl, t.o, &g00, &g01);
    pairs8(pl + r->W, t.o, &g10, &g11);
    _mm256_storeu_ps(dst + c * r->OHW, blend(&t, g00, g01, g10, g11, r->fill, c));
  }
  return 1;
}

/* group_u8(r, ix, iy, x, bilinear): group_f32 for uint8 rows: 32-bit
 * gathers at byte offsets read a tap and its right neighbour at once, so
 * the offsets must stay 4 bytes (nearest) or a row and 4 bytes (bilinear)
 * clear of the plane's end */
static int group_u8(const row_ctx *r, const float *ix, const float *iy, int64_t x, int bilinear) {
  const uint8_t *src = (const uint8_t *)r->src;
  uint8_t *dst = (uint8_t *)r->dst + x;
  __m256i low = _mm256_set1_epi32(0xFF);
  if (far8(r, ix, iy, bilinear)) {
    for (int64_t c = 0; c < r->C; c++) store_u8(dst + c * r->OHW, _mm256_set1_ps(fill_value(r, c)));
    return 1;
  }
  if (!bilinear) {
    __m256 xn = _mm256_round_ps(_mm256_loadu_ps(ix), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 yn = _mm256_round_ps(_mm256_loadu_ps(iy), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 zero = _mm256_setzero_ps();
    __m256 in = _mm256_and_ps(_mm256_cmp_ps(xn, zero, _CMP_GE_OQ), _mm256_cmp_ps(yn, zero, _CMP_GE_OQ));
    in = _mm256_and_ps(in, _mm256_cmp_ps(xn, _mm256_set1_ps((float)(r->W - 1)), _CMP_LE_OQ));
    in = _mm256_and_ps(in, _mm256_cmp_ps(yn, _mm256_set1_ps((float)(r->H - 1)), _CMP_LE_OQ));
    if (_mm256_movemask_ps(in) != 0xFF) return 0;
    __m256i o = _mm256_add_epi32(_mm256_mullo_epi32(_mm256_cvttps_epi32(yn), _mm256_set1_epi32((int)r->W)),
                                 _mm256_cvttps_epi32(xn));
    if (!_mm256_testz_si256(_mm256_cmpgt_epi32(o, _mm256_set1_epi32((int)(r->HW - 4))), _mm256_set1_epi32(-1)))
      return 0;
    for (int64_t c = 0; c < r->C; c++) {
      __m256i g = _mm256_and_si256(_mm256_i32gather_epi32((const int *)(src + c * r->HW), o, 1), low);
      __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(g), _mm256_extracti128_si256(g, 1));
      _mm_storel_epi64((__m128i *)(dst + c * r->OHW), _mm_packus_epi16(w, w));
    }
    return 1;
  }
  taps8 t;
  if (!bil8(r, ix, iy, (int)(r->HW - r->W - 4), &t)) return 0;
  for (int64_t c = 0; c < r->C; c++) {
    const uint8_t *pl = src + c * r->HW;
    __m256i top = _mm256_i32gather_epi32((const int *)pl, t.o, 1);
    __m256i bot = _mm256_i32gather_epi32((const int *)(pl + r->W), t.o, 1);
    __m256 g00 = _mm256_cvtepi32_ps(_mm256_and_si256(top, low));
    __m256 g01 = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(top, 8), low));
    __m256 g10 = _mm256_cvtepi32_ps(_mm256_and_si256(bot, low));
    __m256 g11 = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(bot, 8), low));
    store_u8(dst + c * r->OHW, blend(&t, g00, g01, g10, g11, r->fill, c));
  }
  return 1;
}

/* The per-dtype halves of a row: 8 pixels through gathers, or one. */
typedef struct row_kern {
  int (*group)(const row_ctx *, const float *, const float *, int64_t, int);
  void (*pixel)(const row_ctx *, float, float, int64_t, int);
  size_t size; /* bytes per element */
} row_kern;

/* row(p, k, vec, b, y): output row y of image b; vec: the gathers' 32-bit
 * offsets cannot overflow */
static void row(const mtd_warp *p, const row_kern *k, int vec, int64_t b, int64_t y) {
  const mt_tensor *img = p->img;
  int64_t C = img->shape[1], H = img->shape[2], W = img->shape[3];
  int64_t OH = p->out->shape[2], OW = p->out->shape[3], G = p->grid->shape[0];
  int64_t gi = G == 1 ? 0 : b / (img->shape[0] / G);
  row_ctx r = {.src = (const char *)mt_data(img) + (size_t)(b * C * H * W) * k->size,
               .dst = (char *)mt_data(p->out) + (size_t)((b * C * OH + y) * OW) * k->size,
               .C = C, .H = H, .W = W, .HW = H * W, .OHW = OH * OW, .fill = p->fill};
  const float *c = (const float *)mt_data(p->grid) + gi * (p->kind == MTD_WARP_GRID ? OH * OW * 2
                                                           : p->kind == MTD_WARP_AFFINE ? 6 : 8);
  float ix[CHUNK], iy[CHUNK];
  for (int64_t x0 = 0; x0 < OW; x0 += CHUNK) {
    int n = OW - x0 < CHUNK ? (int)(OW - x0) : CHUNK, i = 0;
    row_pos(p, c, y, x0, n, ix, iy);
    if (vec)
      for (; i + 8 <= n; i += 8)
        if (!k->group(&r, ix + i, iy + i, x0 + i, p->bilinear))
          for (int j = i; j < i + 8; j++) k->pixel(&r, ix[j], iy[j], x0 + j, p->bilinear);
    for (; i < n; i++) k->pixel(&r, ix[i], iy[i], x0 + i, p->bilinear);
  }
}

static const row_kern KERN_U8 = {group_u8, pixel_u8, 1}, KERN_F32 = {group_f32, pixel_f32, 4};

mt_status mtd_warp_sample(const mtd_warp *p) {
  mt_dtype d = (mt_dtype)p->img->dtype;
  if (p->grid->dtype != MT_FLOAT32 || (d != MT_UINT8 && d != MT_FLOAT32)) return mtd_warp_sample_ref(p);
  const row_kern *k = d == MT_UINT8 ? &KERN_U8 : &KERN_F32;
  int64_t B = p->img->shape[0], H = p->img->shape[2], W = p->img->shape[3], OH = p->out->shape[2];
  int vec = H >= 2 && W >= 2 && H * W < INT32_MAX / 2;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < B; b++)
    for (int64_t y = 0; y < OH; y++) row(p, k, vec, b, y);
  return MT_OK;
}
