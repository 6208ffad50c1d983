/* color_kernels.c -- CPU loops of the fused color jitter (color_kernels.h).
 * Each row of an image is cut into tiles of TILE pixels, loaded into float
 * planes, run through the image's steps with the arithmetic of the Lua ops
 * they stand for (float32, each product and sum rounded on its own, uint8
 * values truncated after every step as torchvision's .to(uint8)), and
 * stored. Pass 1 runs the steps before contrast and sums the gray of each
 * row; pass 2 runs contrast and the steps after it. The Makefile builds this
 * file with -ffp-contract=off: a fused multiply-add would round differently
 * from the ops it replaces. No argument checks here. */
#include <immintrin.h>
#include <math.h>

#include "color_kernels.h"
#include "vision.h"

#define TILE 256

/* m pixels of a row in float planes (r, g, b), padded with zeros to mp, a
 * multiple of 8, so the vector loops need no tail */
typedef struct tile {
  float c[3][TILE] __attribute__((aligned(32)));
  float gray[TILE] __attribute__((aligned(32)));
  int64_t m, mp;
} tile;

/* clamp(v, 0, bound) as the engine's maximum then minimum (NaN stays)
 * and, for uint8, truncated as .to(uint8) */
static inline __m256 settle(__m256 v, __m256 bound, bool u8) {
  v = _mm256_min_ps(bound, _mm256_max_ps(_mm256_setzero_ps(), v));
  return u8 ? _mm256_round_ps(v, _MM_FROUND_TO_ZERO) : v;
}

static inline __m256 bound_of(bool u8) { return _mm256_set1_ps(u8 ? 255.0f : 1.0f); }

/* brightness: image * f, settled */
static void step_brightness(tile *t, float f, bool u8) {
  const __m256 vf = _mm256_set1_ps(f), bound = bound_of(u8);
  for (int c = 0; c < 3; c++) {
    float *x = t->c[c];
    for (int64_t i = 0; i < t->mp; i += 8)
      _mm256_store_ps(x + i, settle(_mm256_mul_ps(_mm256_load_ps(x + i), vf), bound, u8));
  }
}

/* the gray plane r * 0.2989 + g * 0.587 + b * 0.114 (uint8: rounded down),
 * with the weights rounded to float as the Lua numbers are */
static void gray(tile *t, bool u8) {
  const __m256 wr = _mm256_set1_ps((float)0.2989), wg = _mm256_set1_ps((float)0.587), wb = _mm256_set1_ps((float)0.114);
  for (int64_t i = 0; i < t->mp; i += 8) {
    __m256 s =
        _mm256_add_ps(_mm256_mul_ps(_mm256_load_ps(t->c[0] + i), wr), _mm256_mul_ps(_mm256_load_ps(t->c[1] + i), wg));
    s = _mm256_add_ps(s, _mm256_mul_ps(_mm256_load_ps(t->c[2] + i), wb));
    _mm256_store_ps(t->gray + i, u8 ? _mm256_floor_ps(s) : s);
  }
}

/* the sum of the gray of the tile's m pixels, in double (exact for uint8) */
static double gray_sum(tile *t, bool u8) {
  gray(t, u8);
  __m256d s0 = _mm256_setzero_pd(), s1 = s0;
  int64_t i = 0;
  for (; i + 8 <= t->m; i += 8) {
    __m256 v = _mm256_load_ps(t->gray + i);
    s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  }
  double lane[4];
  _mm256_storeu_pd(lane, _mm256_add_pd(s0, s1));
  double s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  for (; i < t->m; i++) s += t->gray[i];
  return s;
}

/* the blend x * ratio + other * (1 - ratio), settled; other is the
 * per-pixel gray (saturation) or, with other NULL, the image's precomputed
 * term mean * (1 - ratio) (contrast) */
static void blend(tile *t, float ratio, float om, const float *other, float term, bool u8) {
  const __m256 vr = _mm256_set1_ps(ratio), vom = _mm256_set1_ps(om), vt = _mm256_set1_ps(term), bound = bound_of(u8);
  for (int c = 0; c < 3; c++) {
    float *x = t->c[c];
    for (int64_t i = 0; i < t->mp; i += 8) {
      __m256 o = other ? _mm256_mul_ps(_mm256_load_ps(other + i), vom) : vt;
      _mm256_store_ps(x + i, settle(_mm256_add_ps(_mm256_mul_ps(_mm256_load_ps(x + i), vr), o), bound, u8));
    }
  }
}

static inline __m256 clamp01(__m256 x) {
  return _mm256_min_ps(_mm256_set1_ps(1.0f), _mm256_max_ps(_mm256_setzero_ps(), x));
}

/* x - 6 where x >= 6 (x = sector + 0, 2 or 4 with the sector in 0..6:
 * Python's x % 6) */
static inline __m256 wrap6(__m256 x) {
  __m256 six = _mm256_set1_ps(6.0f);
  return _mm256_blendv_ps(x, _mm256_sub_ps(x, six), _mm256_cmp_ps(x, six, _CMP_GE_OQ));
}

/* a channel of hsv -> rgb: (v, q, p, p, t, v) by its sector j */
static inline __m256 pick(__m256 j, __m256 v, __m256 q, __m256 t, __m256 p) {
  __m256 out = _mm256_blendv_ps(p, t, _mm256_cmp_ps(j, _mm256_set1_ps(4.0f), _CMP_EQ_OQ));
  out = _mm256_blendv_ps(out, q, _mm256_cmp_ps(j, _mm256_set1_ps(1.0f), _CMP_EQ_OQ));
  __m256 vv = _mm256_or_ps(_mm256_cmp_ps(j, _mm256_setzero_ps(), _CMP_EQ_OQ),
                           _mm256_cmp_ps(j, _mm256_set1_ps(5.0f), _CMP_EQ_OQ));
  return _mm256_blendv_ps(out, v, vv);
}

/* the fractional part y - trunc(y) (fmod(y, 1), exact) */
static inline __m256 frac(__m256 y) { return _mm256_sub_ps(y, _mm256_round_ps(y, _MM_FROUND_TO_ZERO)); }

/* rgb -> hsv of 8 pixels, as the Lua rgb_to_hsv: *h, *s, and v returned */
static inline __m256 to_hsv(__m256 r, __m256 g, __m256 b, __m256 *h, __m256 *s) {
  const __m256 one = _mm256_set1_ps(1.0f);
  /* amax and amin over the channels: a NaN channel makes both NaN */
  __m256 nan = _mm256_or_ps(_mm256_cmp_ps(r, g, _CMP_UNORD_Q), _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
  __m256 v = _mm256_or_ps(_mm256_max_ps(_mm256_max_ps(r, g), b), nan);
  __m256 mn = _mm256_or_ps(_mm256_min_ps(_mm256_min_ps(r, g), b), nan);
  __m256 eq = _mm256_cmp_ps(v, mn, _CMP_EQ_OQ), range = _mm256_sub_ps(v, mn);
  *s = _mm256_div_ps(range, _mm256_blendv_ps(v, one, eq));
  __m256 dv = _mm256_blendv_ps(range, one, eq);
  /* h = (x / dv + k) - y / dv: bc - gc where v is r, else rc + 2 - bc where
   * v is g, else gc + 4 - rc (rc = (v - r) / dv, ...): the two quotients
   * a pixel needs, picked before dividing */
  __m256 isr = _mm256_cmp_ps(v, r, _CMP_EQ_OQ), isg = _mm256_cmp_ps(v, g, _CMP_EQ_OQ);
  __m256 vr = _mm256_sub_ps(v, r), vg = _mm256_sub_ps(v, g), vb = _mm256_sub_ps(v, b);
  __m256 x = _mm256_blendv_ps(_mm256_blendv_ps(vg, vr, isg), vb, isr);
  __m256 y = _mm256_blendv_ps(_mm256_blendv_ps(vr, vb, isg), vg, isr);
  __m256 k =
      _mm256_blendv_ps(_mm256_blendv_ps(_mm256_set1_ps(4.0f), _mm256_set1_ps(2.0f), isg), _mm256_setzero_ps(), isr);
  __m256 hh = _mm256_sub_ps(_mm256_add_ps(_mm256_div_ps(x, dv), k), _mm256_div_ps(y, dv));
  *h = frac(_mm256_add_ps(_mm256_mul_ps(hh, _mm256_set1_ps((float)(1.0 / 6))), one));
  return v;
}

/* hue: to [0, 1] floats (uint8 / 255), hsv, h turned by shift (Python's
 * remainder by 1), back to rgb and, for uint8, * 255.999 truncated */
static void step_hue(tile *t, float shift, bool u8) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps(), sh = _mm256_set1_ps(shift);
  const __m256 in = _mm256_set1_ps((float)(1.0 / 255)), out = _mm256_set1_ps((float)(255.0 + 1.0 - 1e-3));
  float *pr = t->c[0], *pg = t->c[1], *pb = t->c[2];
  for (int64_t i = 0; i < t->mp; i += 8) {
    __m256 r = _mm256_load_ps(pr + i), g = _mm256_load_ps(pg + i), b = _mm256_load_ps(pb + i), h, s;
    if (u8) r = _mm256_mul_ps(r, in), g = _mm256_mul_ps(g, in), b = _mm256_mul_ps(b, in);
    __m256 v = to_hsv(r, g, b, &h, &s);
    h = frac(_mm256_add_ps(h, sh));
    h = _mm256_blendv_ps(h, _mm256_add_ps(h, one), _mm256_cmp_ps(h, zero, _CMP_LT_OQ));
    __m256 h6 = _mm256_mul_ps(h, _mm256_set1_ps(6.0f)), sec = _mm256_floor_ps(h6);
    __m256 sxf = _mm256_mul_ps(s, _mm256_sub_ps(h6, sec)), oms = _mm256_sub_ps(one, s);
    __m256 q = clamp01(_mm256_mul_ps(_mm256_sub_ps(one, sxf), v));
    __m256 tt = clamp01(_mm256_mul_ps(_mm256_add_ps(sxf, oms), v));
    __m256 p = clamp01(_mm256_mul_ps(oms, v));
    r = pick(wrap6(sec), v, q, tt, p);
    g = pick(wrap6(_mm256_add_ps(sec, _mm256_set1_ps(4.0f))), v, q, tt, p);
    b = pick(wrap6(_mm256_add_ps(sec, _mm256_set1_ps(2.0f))), v, q, tt, p);
    if (u8) {
      r = _mm256_round_ps(_mm256_mul_ps(r, out), _MM_FROUND_TO_ZERO);
      g = _mm256_round_ps(_mm256_mul_ps(g, out), _MM_FROUND_TO_ZERO);
      b = _mm256_round_ps(_mm256_mul_ps(b, out), _MM_FROUND_TO_ZERO);
    }
    _mm256_store_ps(pr + i, r), _mm256_store_ps(pg + i, g), _mm256_store_ps(pb + i, b);
  }
}

/* runs steps [from, to) of image im on the tile */
static void run_steps(const mt_cj_image *im, int from, int to, tile *t, bool u8) {
  for (int k = from; k < to; k++) {
    int code = im->steps[k];
    float f = im->f[code], om = im->om[code];
    switch (code) {
    case MT_CJ_BRIGHTNESS:
      step_brightness(t, f, u8);
      break;
    case MT_CJ_CONTRAST:
      blend(t, f, om, NULL, im->term, u8);
      break;
    case MT_CJ_SATURATION:
      gray(t, u8), blend(t, f, om, t->gray, 0, u8);
      break;
    case MT_CJ_HUE:
      step_hue(t, f, u8);
      break;
    }
  }
}

/* pixels x0 .. x0 + t->m of the rows at element offsets off[c] of base */
static void load(tile *t, const char *base, const int64_t *off, int64_t x0, bool u8) {
  for (int c = 0; c < 3; c++) {
    float *x = t->c[c];
    if (u8) {
      const uint8_t *s = (const uint8_t *)base + off[c] + x0;
      for (int64_t i = 0; i < t->m; i++) x[i] = (float)s[i];
    } else {
      const float *s = (const float *)base + off[c] + x0;
      for (int64_t i = 0; i < t->m; i++) x[i] = s[i];
    }
    for (int64_t i = t->m; i < t->mp; i++) x[i] = 0;
  }
}

static void store(const tile *t, char *base, const int64_t *off, int64_t x0, bool u8) {
  for (int c = 0; c < 3; c++) {
    const float *x = t->c[c];
    if (u8) {
      uint8_t *d = (uint8_t *)base + off[c] + x0;
      for (int64_t i = 0; i < t->m; i++) d[i] = (uint8_t)x[i];
    } else {
      float *d = (float *)base + off[c] + x0;
      for (int64_t i = 0; i < t->m; i++) d[i] = x[i];
    }
  }
}

typedef struct cj_ctx {
  mt_cj_plan *p;
  int pass;
} cj_ctx;

/* rows [b, e) of n * h for pass 1 (steps before contrast, gray sums) or
 * pass 2 (contrast on: from the source when contrast comes first, else in
 * place in dst) */
static void cj_rows(void *vc, int64_t b, int64_t e) {
  const cj_ctx *c = vc;
  const mt_cj_plan *p = c->p;
  tile t;
  for (int64_t i = b; i < e; i++) {
    int64_t n = i / p->h, y = i % p->h;
    const mt_cj_image *im = &p->img[n];
    bool contrast = im->split < im->nsteps, from_src = c->pass == 1 || im->split == 0;
    if (c->pass == 2 && !contrast) continue;
    bool write = c->pass == 2 || !contrast || im->split > 0;
    int64_t soff[3], doff[3];
    for (int k = 0; k < 3; k++) {
      soff[k] = n * p->sn + k * p->sc + y * p->sh;
      doff[k] = ((n * 3 + k) * p->h + y) * p->w;
    }
    double sum = 0;
    for (int64_t x0 = 0; x0 < p->w; x0 += TILE) {
      t.m = p->w - x0 < TILE ? p->w - x0 : TILE, t.mp = (t.m + 7) & ~(int64_t)7;
      load(&t, from_src ? p->src : p->dst, from_src ? soff : doff, x0, p->u8);
      run_steps(im, c->pass == 1 ? 0 : im->split, c->pass == 1 ? im->split : im->nsteps, &t, p->u8);
      if (c->pass == 1 && contrast) sum += gray_sum(&t, p->u8);
      if (write) store(&t, p->dst, doff, x0, p->u8);
    }
    if (c->pass == 1) p->rowsum[i] = sum;
  }
}

/* image n's contrast term from its row sums; false when it has no
 * contrast step */
static bool contrast_term(mt_cj_plan *p, int64_t n) {
  mt_cj_image *im = &p->img[n];
  if (im->split >= im->nsteps) return false;
  double s = 0;
  for (int64_t y = 0; y < p->h; y++) s += p->rowsum[n * p->h + y];
  float mean = (float)(s / (double)(p->h * p->w)); /* the engine's mean: a double sum, divided, to float */
  im->term = mean * im->om[MT_CJ_CONTRAST];
  return true;
}

/* images [b, e), each whole on one thread: pass 1, its mean, pass 2, while
 * the image is still in this core's cache */
static void cj_images(void *vc, int64_t b, int64_t e) {
  mt_cj_plan *p = ((const cj_ctx *)vc)->p;
  for (int64_t n = b; n < e; n++) {
    cj_ctx c = {p, 1};
    cj_rows(&c, n * p->h, (n + 1) * p->h);
    if (contrast_term(p, n)) c.pass = 2, cj_rows(&c, n * p->h, (n + 1) * p->h);
  }
}

/* Batches of at least 4 images a thread are split by image; fewer images
 * by rows, pass 1 over all of them, then pass 2. Either way each row sum
 * and mean is computed in one order, whatever the thread count. */
mt_status mt_cpu_color_jitter(mt_cj_plan *p) {
  cj_ctx c = {p, 1};
  if (p->n >= 4 * (int64_t)mt_get_num_threads()) return mt_parallel_for(p->n, 1, cj_images, &c);
  int64_t rows = p->n * p->h, grain = 1 + 8192 / (p->w + 1);
  mt_status st = mt_parallel_for(rows, grain, cj_rows, &c);
  bool second = false;
  for (int64_t n = 0; n < p->n && !st; n++) second = contrast_term(p, n) || second;
  if (!st && second) {
    c.pass = 2;
    st = mt_parallel_for(rows, grain, cj_rows, &c);
  }
  return st;
}
