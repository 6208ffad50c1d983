/* png_rows.c -- the per-row work of the fast PNG path: PNG's five filters
 * undone (Sub, Up, Average and Paeth with one pixel's channels at once in
 * SSE lanes, the chain from pixel to pixel kept in registers), and
 * unfiltered rows turned into output pixels (palette lookup, samples of
 * 1, 2 or 4 bits unpacked and scaled, 16-bit samples byte-swapped,
 * channels dropped or added). Exactly libpng's results; no allocation. */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "png_fast.h"

/* ---- unfiltering ----
 * The kernels of Sub, Average and Paeth for pixels of 2 to 8 bytes take
 * bpp as a constant (INLINE into a switch over the sizes): their pixel
 * loads and stores then take no branches. */
#define INLINE static inline __attribute__((always_inline))
#define BY_PIXEL_SIZE(call)                                                                                            \
  switch (bpp) {                                                                                                       \
  case 2:                                                                                                              \
    call(2);                                                                                                           \
    break;                                                                                                             \
  case 3:                                                                                                              \
    call(3);                                                                                                           \
    break;                                                                                                             \
  case 4:                                                                                                              \
    call(4);                                                                                                           \
    break;                                                                                                             \
  case 6:                                                                                                              \
    call(6);                                                                                                           \
    break;                                                                                                             \
  default:                                                                                                             \
    call(8);                                                                                                           \
    break;                                                                                                             \
  }

/* A pixel of bpp (2..8) bytes at p in the low bytes: a 4- or 8-byte load
 * (so up to 2 bytes past the pixel are read). */
INLINE __m128i load_px(const unsigned char *p, int bpp) {
  if (bpp <= 4) {
    uint32_t v;
    memcpy(&v, p, 4);
    return _mm_cvtsi32_si128((int)v);
  }
  return _mm_loadl_epi64((const __m128i *)p);
}
INLINE __m128i load_px16(const unsigned char *p, int bpp) { return _mm_cvtepu8_epi16(load_px(p, bpp)); }

/* Stores the bpp bytes of pixel v (its low bytes) at p; unless `last`, 4
 * or 8 bytes are written (the next pixel's store overwrites the rest). */
INLINE void store_px(unsigned char *p, __m128i v, int bpp, int last) {
  uint64_t w = (uint64_t)_mm_cvtsi128_si64(v);
  uint32_t w4 = (uint32_t)w;
  uint16_t w2 = (uint16_t)w;
  if (bpp == 4 || (bpp == 3 && !last))
    memcpy(p, &w4, 4);
  else if (bpp == 8 || (bpp == 6 && !last))
    memcpy(p, &w, 8);
  else if (bpp == 2)
    memcpy(p, &w2, 2);
  else if (bpp == 3)
    memcpy(p, &w2, 2), p[2] = (unsigned char)(w >> 16);
  else
    w2 = (uint16_t)(w >> 32), memcpy(p, &w4, 4), memcpy(p + 4, &w2, 2);
}
INLINE void store_px16(unsigned char *p, __m128i v, int bpp, int last) {
  store_px(p, _mm_packus_epi16(v, v), bpp, last);
}

INLINE void sub_px(unsigned char *d, const unsigned char *s, size_t rb, int bpp) {
  __m128i a = _mm_setzero_si128();
  for (size_t i = 0; i < rb; i += (size_t)bpp) {
    a = _mm_add_epi8(a, load_px(s + i, bpp));
    store_px(d + i, a, bpp, i + (size_t)bpp == rb);
  }
}

static void unfilter_sub(unsigned char *d, const unsigned char *s, size_t rb, int bpp) {
  if (bpp == 1) {
    unsigned char a = 0;
    for (size_t i = 0; i < rb; i++) d[i] = a = (unsigned char)(s[i] + a);
    return;
  }
#define SUB(n) sub_px(d, s, rb, n)
  BY_PIXEL_SIZE(SUB)
}

static void unfilter_up(unsigned char *d, const unsigned char *s, const unsigned char *p, size_t rb) {
  size_t i = 0;
  for (; i + 32 <= rb; i += 32)
    _mm256_storeu_si256((__m256i *)(d + i), _mm256_add_epi8(_mm256_loadu_si256((const __m256i *)(s + i)),
                                                            _mm256_loadu_si256((const __m256i *)(p + i))));
  for (; i < rb; i++) d[i] = (unsigned char)(s[i] + p[i]);
}

INLINE void avg_px(unsigned char *d, const unsigned char *s, const unsigned char *p, size_t rb, int bpp) {
  __m128i a = _mm_setzero_si128(), mask = _mm_set1_epi16(255);
  for (size_t i = 0; i < rb; i += (size_t)bpp) {
    __m128i b = load_px16(p + i, bpp), x = load_px16(s + i, bpp);
    a = _mm_and_si128(_mm_add_epi16(x, _mm_srli_epi16(_mm_add_epi16(a, b), 1)), mask);
    store_px16(d + i, a, bpp, i + (size_t)bpp == rb);
  }
}

static void unfilter_avg(unsigned char *d, const unsigned char *s, const unsigned char *p, size_t rb, int bpp) {
  if (bpp == 1) {
    unsigned a = 0;
    for (size_t i = 0; i < rb; i++) d[i] = (unsigned char)(a = (s[i] + ((a + p[i]) >> 1)) & 255);
    return;
  }
#define AVG(n) avg_px(d, s, p, rb, n)
  BY_PIXEL_SIZE(AVG)
}

/* Paeth predicts a byte by a (left), b (up) or c (up left), whichever is
 * closest to a + b - c, ties in that order. For given b and c that is a
 * unless lo < a < hi, the span between b and 3c - 2b; there it is b on the
 * side of t ~ (3c - b) / 2 where b lies, else c. (Checked against the
 * definition for all 2^24 (a, b, c).) So only three comparisons and two
 * selections wait for a; the rest comes from the row above and the
 * filtered byte x, planned ahead a chunk at a time, 16 bytes a step: the
 * result is x + a outside (lo, hi), else xhi (a > t) or xlo. */
#define PAETH_CHUNK 240 /* bytes planned at once: a multiple of every pixel size */
typedef struct {
  int16_t lo[PAETH_CHUNK + 8], hi[PAETH_CHUNK + 8], t[PAETH_CHUNK + 8]; /* gray: lo + 1, max(hi - lo - 1, 0) */
  uint8_t xlo[PAETH_CHUNK + 8], xhi[PAETH_CHUNK + 8];
} paeth_plan;

INLINE void plan1(paeth_plan *q, size_t k, int x, int b, int c, int gray) {
  int e = b - c, f = c - 2 * e, r = f + b, pos = e > 0, lo = b < f ? b : f, hi = b < f ? f : b;
  q->lo[k] = (int16_t)(gray ? lo + 1 : lo), q->hi[k] = (int16_t)(!gray ? hi : hi - lo - 1 > 0 ? hi - lo - 1 : 0);
  q->t[k] = (int16_t)(pos ? ((r + 1) >> 1) - 1 : r >> 1);
  q->xlo[k] = (uint8_t)(x + (pos ? c : b)), q->xhi[k] = (uint8_t)(x + (pos ? b : c));
}

INLINE void plan16(paeth_plan *q, size_t k, const unsigned char *s, const unsigned char *pb, const unsigned char *pc,
                   int gray) {
  const __m256i one = _mm256_set1_epi16(1), mask = _mm256_set1_epi16(255), zero = _mm256_setzero_si256();
  __m256i x = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)s));
  __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)pb));
  __m256i c = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)pc));
  __m256i e = _mm256_sub_epi16(b, c), f = _mm256_sub_epi16(c, _mm256_add_epi16(e, e)), r = _mm256_add_epi16(f, b);
  __m256i pos = _mm256_cmpgt_epi16(e, zero), lo = _mm256_min_epi16(b, f), hi = _mm256_max_epi16(b, f);
  if (gray) lo = _mm256_add_epi16(lo, one), hi = _mm256_max_epi16(_mm256_sub_epi16(hi, lo), zero);
  _mm256_storeu_si256((__m256i *)(q->lo + k), lo);
  _mm256_storeu_si256((__m256i *)(q->hi + k), hi);
  __m256i t = _mm256_blendv_epi8(_mm256_srai_epi16(r, 1),
                                 _mm256_sub_epi16(_mm256_srai_epi16(_mm256_add_epi16(r, one), 1), one), pos);
  _mm256_storeu_si256((__m256i *)(q->t + k), t);
  __m256i xlo = _mm256_and_si256(_mm256_add_epi16(x, _mm256_blendv_epi8(b, c, pos)), mask);
  __m256i xhi = _mm256_and_si256(_mm256_add_epi16(x, _mm256_blendv_epi8(c, b, pos)), mask);
  __m256i both = _mm256_permute4x64_epi64(_mm256_packus_epi16(xlo, xhi), 0xd8); /* xlo 0-15, xhi 0-15 */
  _mm_storeu_si128((__m128i *)(q->xlo + k), _mm256_castsi256_si128(both));
  _mm_storeu_si128((__m128i *)(q->xhi + k), _mm256_extracti128_si256(both, 1));
}

/* The plan of the n bytes at row offset i0 (c is 0 for the first pixel). */
INLINE void paeth_prepare(paeth_plan *q, const unsigned char *s, const unsigned char *p, size_t i0, size_t n, int bpp) {
  size_t k = 0;
  for (; i0 + k < (size_t)bpp && k < n; k++) plan1(q, k, s[k], p[k], 0, bpp == 1);
  for (; k + 16 <= n; k += 16) plan16(q, k, s + k, p + k, p + k - bpp, bpp == 1);
  for (; k < n; k++) plan1(q, k, s[k], p[k], p[k - bpp], bpp == 1);
}

/* Paeth of one byte a pixel: the selections as conditional moves (they
 * follow the image, which no branch predictor learns). */
static void paeth_gray(unsigned char *d, const unsigned char *s, const unsigned char *p, size_t rb) {
  paeth_plan q;
  int a = 0;
  for (size_t i0 = 0; i0 < rb; i0 += PAETH_CHUNK) {
    size_t n = rb - i0 < PAETH_CHUNK ? rb - i0 : PAETH_CHUNK;
    paeth_prepare(&q, s + i0, p + i0, i0, n, 1);
    for (size_t k = 0; k < n; k++) {
      int xa = (s[i0 + k] + a) & 255, xlo = q.xlo[k], xhi = q.xhi[k];
      int y = __builtin_expect_with_probability(a > q.t[k], 1, 0.5) ? xhi : xlo;
      a = __builtin_expect_with_probability((unsigned)(a - q.lo[k]) < (unsigned)q.hi[k], 1, 0.5) ? y : xa;
      d[i0 + k] = (unsigned char)a;
    }
  }
}

/* A pixel's 16-bit plan values: 4 lanes, or 8 past 4 bytes a pixel. */
INLINE __m128i load_lanes(const int16_t *p, int bpp) {
  return bpp <= 4 ? _mm_loadl_epi64((const __m128i *)p) : _mm_loadu_si128((const __m128i *)p);
}

/* Paeth of 2..8 bytes a pixel, its channels in 16-bit lanes. */
INLINE void paeth_px(unsigned char *d, const unsigned char *s, const unsigned char *p, size_t rb, int bpp) {
  paeth_plan q;
  for (int k = 0; k < 8; k++) /* read past the chunk (the lanes of a 3- or 6-byte pixel's load) */
    q.lo[PAETH_CHUNK + k] = q.hi[PAETH_CHUNK + k] = q.t[PAETH_CHUNK + k] = 0, q.xlo[PAETH_CHUNK + k] = 0,
                       q.xhi[PAETH_CHUNK + k] = 0;
  const __m128i mask = _mm_set1_epi16(255);
  __m128i a = _mm_setzero_si128();
  for (size_t i0 = 0; i0 < rb; i0 += PAETH_CHUNK) {
    size_t n = rb - i0 < PAETH_CHUNK ? rb - i0 : PAETH_CHUNK;
    paeth_prepare(&q, s + i0, p + i0, i0, n, bpp);
    for (size_t k = 0; k < n; k += (size_t)bpp) {
      __m128i lo = load_lanes(q.lo + k, bpp), hi = load_lanes(q.hi + k, bpp), t = load_lanes(q.t + k, bpp);
      __m128i y = _mm_blendv_epi8(load_px16(q.xlo + k, bpp), load_px16(q.xhi + k, bpp), _mm_cmpgt_epi16(a, t));
      __m128i xa = _mm_and_si128(_mm_add_epi16(load_px16(s + i0 + k, bpp), a), mask);
      a = _mm_blendv_epi8(xa, y, _mm_and_si128(_mm_cmpgt_epi16(a, lo), _mm_cmpgt_epi16(hi, a)));
      store_px16(d + i0 + k, a, bpp, i0 + k + (size_t)bpp == rb);
    }
  }
}

static void unfilter_paeth(unsigned char *d, const unsigned char *s, const unsigned char *p, size_t rb, int bpp) {
  if (bpp == 1) {
    paeth_gray(d, s, p, rb);
    return;
  }
#define PAETH(n) paeth_px(d, s, p, rb, n)
  BY_PIXEL_SIZE(PAETH)
}

int mtd_png_unfilter(int type, unsigned char *dst, const unsigned char *src, const unsigned char *prev, size_t rb,
                     int bpp) {
  switch (type) {
  case 0:
    memcpy(dst, src, rb);
    return 1;
  case 1:
    unfilter_sub(dst, src, rb, bpp);
    return 1;
  case 2:
    unfilter_up(dst, src, prev, rb);
    return 1;
  case 3:
    unfilter_avg(dst, src, prev, rb, bpp);
    return 1;
  case 4:
    unfilter_paeth(dst, src, prev, rb, bpp);
    return 1;
  }
  return 0;
}

/* ---- conversion ---- */

/* The largest of n bytes at p. */
static unsigned max_byte(const unsigned char *p, size_t n) {
  __m256i m = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= n; i += 32) m = _mm256_max_epu8(m, _mm256_loadu_si256((const __m256i *)(p + i)));
  __m128i h = _mm_max_epu8(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
  h = _mm_max_epu8(h, _mm_srli_si128(h, 8));
  h = _mm_max_epu8(h, _mm_srli_si128(h, 4));
  h = _mm_max_epu8(h, _mm_srli_si128(h, 2));
  h = _mm_max_epu8(h, _mm_srli_si128(h, 1));
  unsigned best = (unsigned)_mm_cvtsi128_si32(h) & 255;
  for (; i < n; i++) best = p[i] > best ? p[i] : best;
  return best;
}

/* w palette indices to RGB (cout 3) or RGBA: 8 entries gathered at once;
 * for RGB each one's fourth byte shuffled out, the 24 bytes left stored in
 * a 32-byte store the next one overwrites. */
static void expand_palette(unsigned char *dst, const unsigned char *idx, size_t w, int cout, const unsigned char *pal) {
  size_t x = 0;
  if (cout == 4) {
    for (; x + 8 <= w; x += 8) {
      __m256i i = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(idx + x)));
      _mm256_storeu_si256((__m256i *)(dst + 4 * x), _mm256_i32gather_epi32((const int *)pal, i, 4));
    }
    for (; x < w; x++) memcpy(dst + 4 * x, pal + 4 * idx[x], 4);
    return;
  }
  const __m256i drop4 = _mm256_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, 0, 1, 2, 4, 5, 6, 8, 9,
                                         10, 12, 13, 14, -1, -1, -1, -1);
  const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7);
  for (; x + 11 <= w; x += 8) {
    __m256i i = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(idx + x)));
    __m256i rgb =
        _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(_mm256_i32gather_epi32((const int *)pal, i, 4), drop4), join);
    _mm256_storeu_si256((__m256i *)(dst + 3 * x), rgb);
  }
  for (; x < w; x++) memcpy(dst + 3 * x, pal + 4 * idx[x], 3);
}

/* 8-bit pixels of c0 channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) to
 * cout: gray spread, alpha dropped or added as 255. */
static void convert8(unsigned char *dst, const unsigned char *src, size_t w, int c0, int cout) {
  int gray = c0 <= 2, alpha_in = c0 == 2 || c0 == 4, color = gray ? 1 : 3, cc = cout <= 2 ? 1 : 3;
  for (size_t x = 0; x < w; x++) {
    const unsigned char *s = src + x * (size_t)c0;
    unsigned char *d = dst + x * (size_t)cout;
    for (int k = 0; k < cc; k++) d[k] = s[gray ? 0 : k];
    if (cout == 2 || cout == 4) d[cc] = alpha_in ? s[color] : 255;
  }
}

/* 16-bit big-endian samples as convert8 does, to native uint16. */
static void convert16(uint16_t *dst, const unsigned char *src, size_t w, int c0, int cout) {
  if (c0 == cout) {
    const __m256i swap = _mm256_setr_epi8(1, 0, 3, 2, 5, 4, 7, 6, 9, 8, 11, 10, 13, 12, 15, 14, 1, 0, 3, 2, 5, 4, 7, 6,
                                          9, 8, 11, 10, 13, 12, 15, 14);
    size_t n = w * (size_t)c0 * 2, i = 0;
    unsigned char *d = (unsigned char *)dst;
    for (; i + 32 <= n; i += 32)
      _mm256_storeu_si256((__m256i *)(d + i),
                          _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(src + i)), swap));
    for (; i < n; i += 2) d[i] = src[i + 1], d[i + 1] = src[i];
    return;
  }
  int gray = c0 <= 2, alpha_in = c0 == 2 || c0 == 4, color = gray ? 1 : 3, cc = cout <= 2 ? 1 : 3;
  for (size_t x = 0; x < w; x++) {
    const unsigned char *s = src + x * (size_t)c0 * 2;
    uint16_t *d = dst + x * (size_t)cout;
    for (int k = 0; k < cc; k++) d[k] = (uint16_t)(s[gray ? 0 : 2 * k] << 8 | s[gray ? 1 : 2 * k + 1]);
    if (cout == 2 || cout == 4) d[cc] = alpha_in ? (uint16_t)(s[2 * color] << 8 | s[2 * color + 1]) : 65535;
  }
}

/* Samples of 1, 2 or 4 bits (high bits first), one a pixel: palette
 * indices looked up, or gray scaled to 0..255 (x 255, 85, 17) and spread
 * to cout channels; 0 for an index past the palette. */
static int convert_low(unsigned char *dst, const unsigned char *src, size_t w, const mtd_png_rowfmt *f) {
  int depth = f->depth, per_byte = 8 / depth, mask = (1 << depth) - 1, scale = 255 / mask;
  for (size_t x = 0; x < w; x++) {
    int v = src[x / per_byte] >> (8 - depth * (int)(x % per_byte + 1)) & mask;
    unsigned char *d = dst + x * (size_t)f->cout;
    if (f->npal) {
      if (v >= f->npal) return 0;
      memcpy(d, f->pal + 4 * v, (size_t)f->cout);
    } else {
      int k = 0;
      for (; k < (f->cout <= 2 ? 1 : 3); k++) d[k] = (unsigned char)(v * scale);
      if (f->cout == 2 || f->cout == 4) d[k] = 255;
    }
  }
  return 1;
}

int mtd_png_convert(unsigned char *dst, const unsigned char *src, size_t w, const mtd_png_rowfmt *f) {
  if (f->depth < 8) return convert_low(dst, src, w, f);
  if (f->depth == 16) {
    convert16((uint16_t *)dst, src, w, f->c0, f->cout);
    return 1;
  }
  if (f->npal) {
    if (max_byte(src, w) >= (unsigned)f->npal) return 0;
    expand_palette(dst, src, w, f->cout, f->pal);
    return 1;
  }
  if (f->c0 == f->cout)
    memcpy(dst, src, w * (size_t)f->cout);
  else
    convert8(dst, src, w, f->c0, f->cout);
  return 1;
}
