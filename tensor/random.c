/* random.c -- Philox4x32-10, the generators, and the engine's random draws
 * (uniform, normal, exponential, integers, bernoulli, randperm, multinomial).
 * An op reserves its Philox blocks up front; element i is made from blocks
 * chosen by i alone, a tile of TILE elements at a time, so any split of the
 * work across threads gives the same numbers. Design notes: docs/rng.md. */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "cpu/dtypes.h"
#include "cuda/mt_cuda.h"
#include "random.h"
#include "reduce_util.h" /* mt_deliver */

/* ---- Philox4x32-10 (Salmon, Moraes, Dror, Shaw: SC'11) ---- */

#define PH_M0 0xD2511F53u
#define PH_M1 0xCD9E8D57u
#define PH_W0 0x9E3779B9u
#define PH_W1 0xBB67AE85u

void mt_philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    uint64_t p0 = (uint64_t)PH_M0 * c0, p1 = (uint64_t)PH_M1 * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
    c1 = (uint32_t)p1;
    c3 = (uint32_t)p0;
    c0 = n0;
    c2 = n2;
    k0 += PH_W0;
    k1 += PH_W1;
  }
  out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* High and low 32-bit halves of a * m in each of 8 lanes (shuffles rather
 * than shifts, to spread the work over more execution ports). */
static inline __m256i mulhilo8(__m256i a, __m256i m, __m256i *lo) {
  __m256i even = _mm256_mul_epu32(a, m), odd = _mm256_mul_epu32(_mm256_shuffle_epi32(a, 0xF5), m);
  *lo = _mm256_blend_epi32(even, _mm256_shuffle_epi32(odd, 0xA0), 0xAA);
  return _mm256_blend_epi32(_mm256_shuffle_epi32(even, 0xF5), odd, 0xAA);
}

/* One Philox round on 8 blocks held in lanes: x0..x3 are variables; the
 * multipliers m0, m1, round keys rk and round number r come from the caller. */
#define PH_ROUND8(x0, x1, x2, x3)                                                                                      \
  do {                                                                                                                 \
    __m256i lo0_, lo1_, hi0_ = mulhilo8(x0, m0, &lo0_), hi1_ = mulhilo8(x2, m1, &lo1_);                                \
    x0 = _mm256_xor_si256(_mm256_xor_si256(hi1_, x1), rk[2 * r]);                                                      \
    x2 = _mm256_xor_si256(_mm256_xor_si256(hi0_, x3), rk[2 * r + 1]);                                                  \
    x1 = lo1_, x3 = lo0_;                                                                                              \
  } while (0)

/* Sixteen blocks at once, as two independent groups of 8 lanes kept in
 * registers (the rounds are a dependent chain; two chains keep the
 * multipliers busy). rk holds the 10 round keys, broadcast, k0 then k1. */
static inline void philox16(__m256i a[4], __m256i b[4], const __m256i rk[20]) {
  const __m256i m0 = _mm256_set1_epi32((int)PH_M0), m1 = _mm256_set1_epi32((int)PH_M1);
  __m256i a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];
  for (int r = 0; r < 10; r++) {
    PH_ROUND8(a0, a1, a2, a3);
    PH_ROUND8(b0, b1, b2, b3);
  }
  a[0] = a0, a[1] = a1, a[2] = a2, a[3] = a3, b[0] = b0, b[1] = b1, b[2] = b2, b[3] = b3;
}

/* Stores 8 blocks held in lanes (word j of block l in x[j] lane l) as 32
 * consecutive words: a 4 x 8 transpose. */
static inline void store_blocks8(const __m256i x[4], uint32_t *w) {
  __m256i t0 = _mm256_unpacklo_epi32(x[0], x[1]), t1 = _mm256_unpackhi_epi32(x[0], x[1]);
  __m256i t2 = _mm256_unpacklo_epi32(x[2], x[3]), t3 = _mm256_unpackhi_epi32(x[2], x[3]);
  __m256i b04 = _mm256_unpacklo_epi64(t0, t2), b15 = _mm256_unpackhi_epi64(t0, t2);
  __m256i b26 = _mm256_unpacklo_epi64(t1, t3), b37 = _mm256_unpackhi_epi64(t1, t3);
  _mm256_storeu_si256((__m256i *)w, _mm256_permute2x128_si256(b04, b15, 0x20));
  _mm256_storeu_si256((__m256i *)(w + 8), _mm256_permute2x128_si256(b26, b37, 0x20));
  _mm256_storeu_si256((__m256i *)(w + 16), _mm256_permute2x128_si256(b04, b15, 0x31));
  _mm256_storeu_si256((__m256i *)(w + 24), _mm256_permute2x128_si256(b26, b37, 0x31));
}

/* The stream: word 4b+j is word j of block b, block b = philox({b, b >> 32,
 * 0, 0}, key). Writes the 4 * nblocks words of blocks [first, first+nblocks). */
static void philox_words(const uint32_t key[2], uint64_t first, int64_t nblocks, uint32_t *w) {
  int64_t b = 0;
  __m256i rk[20];
  for (uint32_t r = 0, k0 = key[0], k1 = key[1]; r < 10; r++, k0 += PH_W0, k1 += PH_W1) {
    rk[2 * r] = _mm256_set1_epi32((int)k0);
    rk[2 * r + 1] = _mm256_set1_epi32((int)k1);
  }
  for (; b + 16 <= nblocks; b += 16, w += 64) {
    uint32_t lo[16], hi[16];
    for (int l = 0; l < 16; l++) {
      uint64_t c = first + (uint64_t)(b + l);
      lo[l] = (uint32_t)c, hi[l] = (uint32_t)(c >> 32);
    }
    const __m256i z = _mm256_setzero_si256();
    __m256i x[4] = {_mm256_loadu_si256((const __m256i *)lo), _mm256_loadu_si256((const __m256i *)hi), z, z};
    __m256i y[4] = {_mm256_loadu_si256((const __m256i *)(lo + 8)), _mm256_loadu_si256((const __m256i *)(hi + 8)), z, z};
    philox16(x, y, rk);
    store_blocks8(x, w);
    store_blocks8(y, w + 32);
  }
  for (; b < nblocks; b++, w += 4) {
    uint64_t c = first + (uint64_t)b;
    uint32_t ctr[4] = {(uint32_t)c, (uint32_t)(c >> 32), 0, 0};
    mt_philox4x32_10(ctr, key, w);
  }
}

/* 64-bit word k of a word buffer: low half first. */
static inline uint64_t word64(const uint32_t *w, int64_t k) { return w[2 * k] | (uint64_t)w[2 * k + 1] << 32; }

/* A sequential reader of 64-bit words from consecutive blocks (randperm,
 * multinomial rows). */
typedef struct stream {
  uint32_t key[2];
  uint64_t next; /* next block to compute */
  int pos;       /* next unread word in w */
  uint32_t w[256];
} stream;

static void stream_init(stream *s, const uint32_t key[2], uint64_t first) {
  s->key[0] = key[0], s->key[1] = key[1];
  s->next = first;
  s->pos = 256;
}

static uint64_t stream_u64(stream *s) {
  if (s->pos == 256) {
    philox_words(s->key, s->next, 64, s->w);
    s->next += 64;
    s->pos = 0;
  }
  uint64_t x = word64(s->w, s->pos / 2);
  s->pos += 2;
  return x;
}

/* ---- generators ---- */

static mt_generator default_gen = {MT_DEFAULT_SEED, 0};

mt_generator *mt_default_generator(void) { return &default_gen; }

void mt_generator_seed(mt_generator *g, uint64_t seed) {
  g->seed = seed;
  atomic_store(&g->offset, 0);
}

uint64_t mt_generator_reserve(mt_generator *g, uint64_t nblocks) { return atomic_fetch_add(&g->offset, nblocks); }

uint64_t mt_nondeterministic_seed(void) {
  uint64_t s = 0;
  if (getrandom(&s, sizeof s, 0) != (ssize_t)sizeof s) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    s = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&s;
  }
  return s & 0x7FFFFFFFFFFFFFFFull;
}

void mt_generator_get_state(mt_generator *g, uint8_t out[MT_RNG_STATE_BYTES]) {
  uint64_t v[2] = {g->seed, atomic_load(&g->offset)};
  for (int i = 0; i < 16; i++) out[i] = (uint8_t)(v[i / 8] >> (8 * (i % 8)));
}

void mt_generator_set_state(mt_generator *g, const uint8_t in[MT_RNG_STATE_BYTES]) {
  uint64_t v[2] = {0, 0};
  for (int i = 0; i < 16; i++) v[i / 8] |= (uint64_t)in[i] << (8 * (i % 8));
  g->seed = v[0];
  atomic_store(&g->offset, v[1]);
}

/* ---- the draw driver ---- */

#define TILE 256        /* elements made together; a multiple of 16 */
#define GRAIN (1 << 14) /* elements per thread at least */

typedef enum { VK_F32, VK_F64, VK_I64 } vkind;
typedef struct draw draw;
/* Turns the TILE * d->wpe words of one tile into TILE values of kind d->vk
 * at vals (any alignment: it may be the output itself). */
typedef void (*tile_fn)(const draw *d, const uint32_t *w, void *vals);

struct draw {
  tile_fn fn;
  vkind vk;
  int wpe;        /* 32-bit words per element: 1 or 2 */
  int bits;       /* resolution of uniform floats */
  double a, b;    /* distribution parameters */
  int64_t lo;     /* integers: lo + [0, range) */
  uint64_t range; /* 0 means 2^64 */
  uint32_t key[2];
  uint64_t base; /* first reserved block */
  char *out;     /* contiguous output */
  mt_dtype dt;
};

#define ST_CASE(DE, tag, T, C)                                                                                         \
  case DE:                                                                                                             \
    for (int64_t i = 0; i < n; i++) MT_ST_##tag((T *)o + i, v[i]);                                                     \
    break;
#define DEF_STORE(name, VT)                                                                                            \
  static void name(mt_dtype dt, char *o, const VT *v, int64_t n) {                                                     \
    switch (dt) {                                                                                                      \
      MT_DTYPES_ALL(ST_CASE)                                                                                           \
    default:                                                                                                           \
      break;                                                                                                           \
    }                                                                                                                  \
  }
DEF_STORE(store_f32, float)
DEF_STORE(store_f64, double)
DEF_STORE(store_i64, int64_t)

/* Makes elements [b, e): whole tiles, keeping the part inside the range. */
static void draw_range(void *p, int64_t b, int64_t e) {
  const draw *d = p;
  uint32_t w[2 * TILE] __attribute__((aligned(32)));
  union {
    float f[TILE];
    double d[TILE];
    int64_t i[TILE];
  } v __attribute__((aligned(32)));
  const int64_t bpt = TILE * d->wpe / 4;
  const size_t es = mt_dtype_size(d->dt);
  /* whole tiles go straight to the output when it holds the values' type */
  const bool direct = (d->vk == VK_F32 && d->dt == MT_FLOAT32) || (d->vk == VK_F64 && d->dt == MT_FLOAT64) ||
                      (d->vk == VK_I64 && d->dt == MT_INT64);
  for (int64_t t = b / TILE; t * TILE < e; t++) {
    int64_t t0 = t * TILE, lo = b > t0 ? b : t0, hi = e < t0 + TILE ? e : t0 + TILE;
    char *o = d->out + (size_t)lo * es;
    philox_words(d->key, d->base + (uint64_t)(t * bpt), bpt, w);
    if (direct && lo == t0 && hi == t0 + TILE) {
      d->fn(d, w, o);
      continue;
    }
    d->fn(d, w, &v);
    if (d->vk == VK_F32)
      store_f32(d->dt, o, v.f + (lo - t0), hi - lo);
    else if (d->vk == VK_F64)
      store_f64(d->dt, o, v.d + (lo - t0), hi - lo);
    else
      store_i64(d->dt, o, v.i + (lo - t0), hi - lo);
  }
}

static void tile_uniform_f32(const draw *d, const uint32_t *w, void *vals);
static void tile_uniform_f64(const draw *d, const uint32_t *w, void *vals);
static void tile_normal_f32(const draw *d, const uint32_t *w, void *vals);
static void tile_normal_f64(const draw *d, const uint32_t *w, void *vals);
static void tile_exponential(const draw *d, const uint32_t *w, void *vals);
static void tile_int_small(const draw *d, const uint32_t *w, void *vals);
static void tile_int_large(const draw *d, const uint32_t *w, void *vals);
static void tile_bernoulli(const draw *d, const uint32_t *w, void *vals);

/* The same draw made on the device (cuda/random.cu reproduces each tile
 * function's words and arithmetic) into contiguous CUDA tensor dst. */
static mt_status cuda_draw(mt_tensor *dst, const draw *d) {
  mt_cuda_rand r = {.bits = d->bits, .a = d->a, .b = d->b, .lo = d->lo, .range = d->range, .base = d->base};
  r.key[0] = d->key[0], r.key[1] = d->key[1];
  const char *op = "uniform_";
  if (d->fn == tile_uniform_f32) {
    r.kind = 0, r.fa = (float)d->a, r.fs = ldexpf(1.0f, -d->bits) * (float)(d->b - d->a);
  } else if (d->fn == tile_uniform_f64) {
    r.kind = 1, r.b = 0x1p-53 * (d->b - d->a);
  } else if (d->fn == tile_normal_f32 || d->fn == tile_normal_f64) {
    r.kind = d->fn == tile_normal_f32 ? 2 : 3, r.fa = (float)d->a, r.fs = (float)d->b, op = "normal_";
  } else if (d->fn == tile_exponential) {
    r.kind = 4, op = "exponential_";
  } else if (d->fn == tile_int_small || d->fn == tile_int_large) {
    r.kind = d->fn == tile_int_small ? 5 : 6, op = "random_";
  } else if (d->fn == tile_bernoulli) {
    r.kind = 7, r.thr = d->range, op = "bernoulli_";
  } else {
    r.kind = 8, op = "bernoulli";
  }
  return mt_cuda_rand_fill(dst, &r, op);
}

/* Reserves the blocks of t's elements and fills t (through a contiguous
 * temporary when t is a strided view). A CUDA t draws on its device, from
 * that device's generator unless g is given. */
static mt_status run_draw(mt_tensor *t, draw *d, mt_generator *g) {
  bool cuda = mt_tdevice(t).type == MT_CUDA;
  if (!g) g = cuda ? mt_cuda_generator(mt_tdevice(t).index) : mt_default_generator();
  int64_t n = mt_numel(t);
  mt_bump_version(t);
  if (n == 0) return MT_OK;
  mt_tensor *dst = t, *tmp = NULL;
  mt_status st;
  if (!mt_is_contiguous(t)) {
    if ((st = mt_empty(t->shape, t->ndim, (mt_dtype)t->dtype, mt_tdevice(t), &tmp))) return st;
    dst = tmp;
  }
  d->key[0] = (uint32_t)g->seed, d->key[1] = (uint32_t)(g->seed >> 32);
  d->base = mt_generator_reserve(g, ((uint64_t)n * (uint64_t)d->wpe + 3) / 4);
  d->out = mt_data(dst);
  d->dt = (mt_dtype)dst->dtype;
  st = cuda ? cuda_draw(dst, d) : mt_parallel_for(n, GRAIN, draw_range, d);
  if (!st && tmp) st = mt_copy_(t, tmp);
  mt_release(tmp);
  return st;
}

/* Mantissa bits a uniform float of dtype dt can hold below 1. */
static int float_bits(mt_dtype dt) {
  switch (dt) {
  case MT_FLOAT64:
    return 53;
  case MT_FLOAT16:
    return 11;
  case MT_BFLOAT16:
    return 8;
  default:
    return 24;
  }
}

static mt_status need_float(const mt_tensor *t, const char *op) {
  if (mt_is_floating((mt_dtype)t->dtype)) return MT_OK;
  return mt_fail(MT_EDTYPE, "%s: expected a floating point tensor, got %s", op, mt_dtype_name((mt_dtype)t->dtype));
}

/* ---- tiles of each distribution ---- */

/* from + (to - from) * u, u on [0, 1) from the top `bits` bits of a word */
static void tile_uniform_f32(const draw *d, const uint32_t *w, void *vals) {
  float *v = vals;
  const int sh = 32 - d->bits;
  const float scale = ldexpf(1.0f, -d->bits) * (float)(d->b - d->a), a = (float)d->a;
#pragma omp simd
  for (int i = 0; i < TILE; i++) v[i] = (float)(int32_t)(w[i] >> sh) * scale + a;
}

/* The top 53 bits of four 64-bit words (low word first in memory), as
 * doubles 0 .. 2^53 - 1, exactly: two 26/27-bit halves through the 2^52
 * exponent trick. */
static inline __m256d top53_pd(const uint32_t *w) {
  const __m256i magic = _mm256_set1_epi64x(0x4330000000000000ll);
  const __m256d two52 = _mm256_set1_pd(0x1p52);
  __m256i x = _mm256_srli_epi64(_mm256_loadu_si256((const __m256i *)w), 11);
  __m256i hi = _mm256_srli_epi64(x, 32), lo = _mm256_and_si256(x, _mm256_set1_epi64x(0xFFFFFFFFll));
  __m256d h = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(hi, magic)), two52);
  __m256d l = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(lo, magic)), two52);
  return _mm256_fmadd_pd(h, _mm256_set1_pd(0x1p32), l);
}

static void tile_uniform_f64(const draw *d, const uint32_t *w, void *vals) {
  double *v = vals;
  const __m256d scale = _mm256_set1_pd(0x1p-53 * (d->b - d->a)), a = _mm256_set1_pd(d->a);
  for (int i = 0; i < TILE; i += 4) _mm256_storeu_pd(v + i, _mm256_fmadd_pd(top53_pd(w + 2 * i), scale, a));
}

/* Box-Muller on groups of 16 elements: words 0-7 give u1 in (0, 1], words
 * 8-15 give u2 in [0, 1); elements 0-7 get r cos(2 pi u2), 8-15 r sin. */
static void tile_normal_f32(const draw *d, const uint32_t *w, void *vals) {
  float *v = vals;
  const __m256 scale = _mm256_set1_ps(0x1p-24f), one = _mm256_set1_ps(1.0f), m2 = _mm256_set1_ps(-2.0f);
  const __m256 two = _mm256_set1_ps(2.0f), mean = _mm256_set1_ps((float)d->a), sd = _mm256_set1_ps((float)d->b);
  for (int g = 0; g < TILE; g += 16) {
    __m256i w1 = _mm256_srli_epi32(_mm256_load_si256((const __m256i *)(w + g)), 8);
    __m256i w2 = _mm256_srli_epi32(_mm256_load_si256((const __m256i *)(w + g + 8)), 8);
    __m256 u1 = _mm256_mul_ps(_mm256_add_ps(_mm256_cvtepi32_ps(w1), one), scale);
    __m256 u2 = _mm256_mul_ps(_mm256_cvtepi32_ps(w2), scale);
    __m256 r = _mm256_mul_ps(sd, _mm256_sqrt_ps(_mm256_mul_ps(m2, Sleef_logf8_u35avx2(u1))));
    Sleef___m256_2 sc = Sleef_sincospif8_u35avx2(_mm256_mul_ps(two, u2));
    _mm256_storeu_ps(v + g, _mm256_fmadd_ps(r, sc.y, mean));
    _mm256_storeu_ps(v + g + 8, _mm256_fmadd_ps(r, sc.x, mean));
  }
}

/* The same with 53-bit uniforms from 64-bit words, groups of 8 elements. */
static void tile_normal_f64(const draw *d, const uint32_t *w, void *vals) {
  double *v = vals;
  const __m256d m2 = _mm256_set1_pd(-2.0), one = _mm256_set1_pd(1.0), scale = _mm256_set1_pd(0x1p-53);
  const __m256d two = _mm256_set1_pd(0x1p-52), mean = _mm256_set1_pd(d->a), sd = _mm256_set1_pd(d->b);
  for (int g = 0; g < TILE; g += 8) {
    __m256d u1 = _mm256_mul_pd(_mm256_add_pd(top53_pd(w + 2 * g), one), scale); /* (0, 1] */
    __m256d r = _mm256_mul_pd(sd, _mm256_sqrt_pd(_mm256_mul_pd(m2, Sleef_logd4_u35avx2(u1))));
    Sleef___m256d_2 sc = Sleef_sincospid4_u35avx2(_mm256_mul_pd(top53_pd(w + 2 * g + 8), two)); /* 2 u2 */
    _mm256_storeu_pd(v + g, _mm256_fmadd_pd(r, sc.y, mean));
    _mm256_storeu_pd(v + g + 4, _mm256_fmadd_pd(r, sc.x, mean));
  }
}

/* -log(1 - u) / lambd, u from `bits` bits (one word, or two for 53) */
static void tile_exponential(const draw *d, const uint32_t *w, void *vals) {
  double *v = vals;
  for (int i = 0; i < TILE; i++) {
    double u = d->bits == 53 ? (double)(int64_t)(word64(w, i) >> 11) * 0x1p-53 : (double)(w[i] >> 8) * 0x1p-24;
    v[i] = -log1p(-u) / d->a;
  }
}

/* lo + floor(x * range / 2^32) for small ranges, one word each */
static void tile_int_small(const draw *d, const uint32_t *w, void *vals) {
  int64_t *v = vals;
  for (int i = 0; i < TILE; i++) v[i] = (int64_t)((uint64_t)d->lo + (((uint64_t)w[i] * d->range) >> 32));
}

/* lo + floor(x * range / 2^64) with 64-bit x; range 0 stands for 2^64 */
static void tile_int_large(const draw *d, const uint32_t *w, void *vals) {
  int64_t *v = vals;
  for (int i = 0; i < TILE; i++) {
    uint64_t x = word64(w, i);
    uint64_t off = d->range ? (uint64_t)(((unsigned __int128)x * d->range) >> 64) : x;
    v[i] = (int64_t)((uint64_t)d->lo + off);
  }
}

/* 1 when the word is below p * 2^32 (d->range holds that threshold) */
static void tile_bernoulli(const draw *d, const uint32_t *w, void *vals) {
  int64_t *v = vals;
  for (int i = 0; i < TILE; i++) v[i] = (uint64_t)w[i] < d->range;
}

/* u on [0, 1) with 32 bits, as double (bernoulli with a tensor of p) */
static void tile_u32(const draw *d, const uint32_t *w, void *vals) {
  double *v = vals;
  for (int i = 0; i < TILE; i++) v[i] = (double)w[i] * 0x1p-32;
}

/* ---- in-place draws ---- */

mt_status mt_uniform_(mt_tensor *t, double from, double to, mt_generator *g) {
  mt_status st = need_float(t, "uniform_");
  if (st) return st;
  if (!(from <= to) || !isfinite(to - from))
    return mt_fail(MT_EARG, "uniform_: expected from <= to with a finite range, got from=%g, to=%g", from, to);
  draw d = {.a = from, .b = to, .bits = float_bits((mt_dtype)t->dtype)};
  bool f64 = t->dtype == MT_FLOAT64;
  d.fn = f64 ? tile_uniform_f64 : tile_uniform_f32;
  d.vk = f64 ? VK_F64 : VK_F32;
  d.wpe = f64 ? 2 : 1;
  return run_draw(t, &d, g);
}

mt_status mt_normal_(mt_tensor *t, double mean, double std, mt_generator *g) {
  mt_status st = need_float(t, "normal_");
  if (st) return st;
  if (!(std >= 0) || !isfinite(std) || !isfinite(mean))
    return mt_fail(MT_EARG, "normal_: expected a finite mean and a finite std >= 0, got mean=%g, std=%g", mean, std);
  bool f64 = t->dtype == MT_FLOAT64;
  draw d = {.a = mean,
            .b = std,
            .fn = f64 ? tile_normal_f64 : tile_normal_f32,
            .vk = f64 ? VK_F64 : VK_F32,
            .wpe = f64 ? 2 : 1};
  return run_draw(t, &d, g);
}

mt_status mt_exponential_(mt_tensor *t, double lambd, mt_generator *g) {
  mt_status st = need_float(t, "exponential_");
  if (st) return st;
  if (!(lambd > 0) || !isfinite(lambd))
    return mt_fail(MT_EARG, "exponential_: expected a finite rate lambd > 0, got %g", lambd);
  bool f64 = t->dtype == MT_FLOAT64;
  draw d = {.a = lambd, .fn = tile_exponential, .vk = VK_F64, .wpe = f64 ? 2 : 1, .bits = f64 ? 53 : 24};
  return run_draw(t, &d, g);
}

void mt_random_bounds(mt_dtype dt, int64_t *lo, int64_t *hi) {
  static const int64_t b[MT_NDTYPE][2] = {[MT_FLOAT32] = {-(1ll << 24), 1ll << 24},
                                          [MT_FLOAT64] = {-(1ll << 53), 1ll << 53},
                                          [MT_FLOAT16] = {-(1ll << 11), 1ll << 11},
                                          [MT_BFLOAT16] = {-(1ll << 8), 1ll << 8},
                                          [MT_INT8] = {INT8_MIN, INT8_MAX},
                                          [MT_INT16] = {INT16_MIN, INT16_MAX},
                                          [MT_INT32] = {INT32_MIN, INT32_MAX},
                                          [MT_INT64] = {INT64_MIN, INT64_MAX},
                                          [MT_UINT8] = {0, UINT8_MAX},
                                          [MT_UINT16] = {0, UINT16_MAX},
                                          [MT_BOOL] = {0, 1}};
  *lo = b[dt][0], *hi = b[dt][1];
}

mt_status mt_random_(mt_tensor *t, int64_t lo, int64_t hi, mt_generator *g) {
  int64_t dlo, dhi;
  mt_dtype dt = (mt_dtype)t->dtype;
  mt_random_bounds(dt, &dlo, &dhi);
  if (lo > hi) return mt_fail(MT_EARG, "random_: empty range [%lld, %lld]", (long long)lo, (long long)hi);
  if (lo < dlo || hi > dhi)
    return mt_fail(MT_EARG, "random_: range [%lld, %lld] does not fit in %s (values %lld..%lld)", (long long)lo,
                   (long long)hi, mt_dtype_name(dt), (long long)dlo, (long long)dhi);
  uint64_t range = (uint64_t)hi - (uint64_t)lo + 1; /* wraps to 0 for the full int64 range */
  bool small = range != 0 && range <= (1u << 16);
  draw d = {
      .lo = lo, .range = range, .vk = VK_I64, .wpe = small ? 1 : 2, .fn = small ? tile_int_small : tile_int_large};
  return run_draw(t, &d, g);
}

mt_status mt_bernoulli_(mt_tensor *t, double p, mt_generator *g) {
  if (!(p >= 0 && p <= 1)) return mt_fail(MT_EARG, "bernoulli_: probability must be in [0, 1], got %g", p);
  draw d = {.range = (uint64_t)(p * 4294967296.0), .vk = VK_I64, .wpe = 1, .fn = tile_bernoulli};
  return run_draw(t, &d, g);
}

/* Checks that every value of t lies in [lo, hi] (NaN fails); *bad gets the
 * first offender. */
static mt_status all_within(const mt_tensor *t, double lo, double hi, double *bad, bool *ok) {
  mt_tensor *c = NULL, *d = NULL, *h = NULL;
  mt_status st = MT_OK;
  if (mt_tdevice(t).type == MT_CUDA) { /* checked on a host copy (one wait) */
    if ((st = mt_cuda_to_device(t, mt_cpu(), false, &h))) return st;
    t = h;
  }
  st = mt_to_dtype(t, MT_FLOAT64, false, &c);
  if (!st) st = mt_contiguous(c, &d);
  mt_release(c);
  mt_release(h);
  if (st) return st;
  const double *v = (const double *)mt_data(d);
  *ok = true;
  for (int64_t i = 0, n = mt_numel(d); i < n; i++)
    if (!(v[i] >= lo && v[i] <= hi)) {
      *ok = false;
      *bad = v[i];
      break;
    }
  mt_release(d);
  return MT_OK;
}

mt_status mt_bernoulli_tensor_(mt_tensor *t, const mt_tensor *p, mt_generator *g) {
  int64_t bs[MT_MAXDIM];
  int bn;
  mt_status st = mt_broadcast_shape("bernoulli", t->shape, t->ndim, p->shape, p->ndim, bs, &bn);
  if (!st && (bn != t->ndim || memcmp(bs, t->shape, sizeof(int64_t) * (size_t)bn) != 0)) {
    char a[128], b[128];
    st = mt_fail(MT_ESHAPE, "bernoulli: probabilities of shape %s cannot be broadcast to shape %s",
                 mt_shape_str(p->shape, p->ndim, a, sizeof a), mt_shape_str(t->shape, t->ndim, b, sizeof b));
  }
  if (st) return st;
  bool ok;
  double bad = 0;
  if ((st = all_within(p, 0, 1, &bad, &ok))) return st;
  if (!ok) return mt_fail(MT_EARG, "bernoulli: probabilities must be in [0, 1], found %g", bad);
  mt_tensor *u = NULL, *mask = NULL;
  if ((st = mt_empty(t->shape, t->ndim, MT_FLOAT64, mt_tdevice(t), &u))) return st;
  draw d = {.vk = VK_F64, .wpe = 1, .fn = tile_u32};
  st = run_draw(u, &d, g);
  if (!st) st = mt_binary(MT_OP_lt, u, p, &mask);
  if (!st) st = mt_copy_(t, mask);
  mt_release(u);
  mt_release(mask);
  return st;
}

mt_status mt_normal_tensor(const mt_tensor *mean, const mt_tensor *std, mt_generator *g, mt_tensor **out) {
  int64_t shape[MT_MAXDIM];
  int nd;
  mt_dtype dt = mt_result_type(mean, std);
  if (!mt_is_floating(dt))
    return mt_fail(MT_EDTYPE, "normal: expected a floating point mean or std, got %s and %s",
                   mt_dtype_name((mt_dtype)mean->dtype), mt_dtype_name((mt_dtype)std->dtype));
  mt_status st = mt_broadcast_shape("normal", mean->shape, mean->ndim, std->shape, std->ndim, shape, &nd);
  if (st) return st;
  bool ok;
  double bad = 0;
  if ((st = all_within(std, 0, INFINITY, &bad, &ok))) return st;
  if (!ok) return mt_fail(MT_EARG, "normal: std must be >= 0, found %g", bad);
  mt_tensor *z = NULL;
  /* drawn where the tensors are: a number (0-dim host tensor) may go with a CUDA one */
  mt_device dev = mt_tdevice(mean).type == MT_CUDA ? mt_tdevice(mean) : mt_tdevice(std);
  if ((st = mt_empty(shape, nd, dt, dev, &z))) return st;
  st = mt_normal_(z, 0, 1, g);
  if (!st) st = mt_binary(MT_OP_mul, z, std, &z);
  if (!st) st = mt_binary(MT_OP_add, z, mean, &z);
  if (st) {
    mt_release(z);
    return st;
  }
  return mt_deliver("normal", z, out);
}

/* ---- permutations and categorical draws ---- */

mt_status mt_randperm(int64_t n, mt_dtype dt, mt_device dev, mt_generator *g, mt_tensor **out) {
  int64_t dlo, dhi;
  mt_random_bounds(dt, &dlo, &dhi);
  if (n < 0) return mt_fail(MT_EARG, "randperm: n must be non-negative, got %lld", (long long)n);
  if (dt == MT_BOOL || n > dhi)
    return mt_fail(MT_EARG, "randperm: %s cannot hold the values 1..%lld", mt_dtype_name(dt), (long long)n);
  /* made on the host (Fisher-Yates is sequential); on a CUDA device from
   * that device's generator, then copied there */
  if (!g) g = dev.type == MT_CUDA ? mt_cuda_generator(dev.index) : mt_default_generator();
  mt_tensor *p = NULL, *c = NULL;
  mt_status st = mt_empty(&n, 1, MT_INT64, mt_cpu(), &p);
  if (st) return st;
  int64_t *v = (int64_t *)mt_data(p);
  for (int64_t i = 0; i < n; i++) v[i] = i + 1;
  /* Fisher-Yates: step k swaps v[n-1-k] with v[j], j uniform on [0, n-1-k],
   * from 64-bit word k (two 64-bit words per block) */
  uint32_t key[2] = {(uint32_t)g->seed, (uint32_t)(g->seed >> 32)};
  stream s;
  stream_init(&s, key, mt_generator_reserve(g, (uint64_t)n / 2)); /* ceil((n - 1) / 2) */
  for (int64_t i = n - 1; i > 0; i--) {
    if ((i & 0xFFFFF) == 0 && mt_interrupted()) {
      mt_release(p);
      return mt_fail(MT_EINTR, "interrupted");
    }
    int64_t j = (int64_t)(((unsigned __int128)stream_u64(&s) * (uint64_t)(i + 1)) >> 64);
    int64_t tmp = v[i];
    v[i] = v[j];
    v[j] = tmp;
  }
  st = mt_to_dtype(p, dt, false, &c);
  mt_release(p);
  if (!st && dev.type == MT_CUDA) {
    mt_tensor *h = c;
    c = NULL;
    st = mt_cuda_to_device(h, dev, false, &c);
    mt_release(h);
  }
  if (st) return st;
  return mt_deliver("randperm", c, out);
}

typedef struct mn_ctx {
  const double *p; /* rows x k weights, contiguous */
  int64_t k, n;
  bool repl;
  uint32_t key[2];
  uint64_t base, bpr; /* first block, blocks per row */
  int64_t *out;
  _Atomic int nomem;
} mn_ctx;

typedef struct keyed {
  double key;
  int64_t i;
} keyed;

/* larger key first; equal keys by index, so the order is total */
static int keyed_cmp(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  if (x->key != y->key) return x->key > y->key ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

/* One row. With replacement: inverse CDF by bisection. Without: the n
 * largest p / E (E exponential) in order, which is sequential sampling
 * without replacement (the "exponential race"). */
static void mn_row(mn_ctx *m, int64_t r, void *scratch) {
  const double *p = m->p + r * m->k;
  int64_t *o = m->out + r * m->n, k = m->k;
  stream s;
  stream_init(&s, m->key, m->base + (uint64_t)r * m->bpr);
  if (m->repl) {
    double *cdf = scratch, acc = 0;
    int64_t last = 0;
    for (int64_t j = 0; j < k; j++) {
      acc += p[j];
      cdf[j] = acc;
      if (p[j] > 0) last = j;
    }
    for (int64_t i = 0; i < m->n; i++) {
      double t = (double)(int64_t)(stream_u64(&s) >> 11) * 0x1p-53 * acc;
      int64_t lo = 0, hi = k; /* first j with cdf[j] > t */
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > t)
          hi = mid;
        else
          lo = mid + 1;
      }
      o[i] = (lo < k ? lo : last) + 1;
    }
    return;
  }
  keyed *e = scratch, best = {-2, 0};
  for (int64_t j = 0; j < k; j++) {
    double u = ((double)(int64_t)(stream_u64(&s) >> 11) + 0.5) * 0x1p-53; /* (0, 1) */
    e[j].key = p[j] > 0 ? p[j] / -log(u) : -1;
    e[j].i = j;
    if (e[j].key > best.key) best = e[j];
  }
  if (m->n == 1) { /* the common case (sampling one token): no sort */
    o[0] = best.i + 1;
    return;
  }
  qsort(e, (size_t)k, sizeof *e, keyed_cmp);
  for (int64_t i = 0; i < m->n; i++) o[i] = e[i].i + 1;
}

static void mn_rows(void *c, int64_t b, int64_t e) {
  mn_ctx *m = c;
  void *scratch = malloc((size_t)m->k * (m->repl ? sizeof(double) : sizeof(keyed)));
  if (!scratch) {
    atomic_store(&m->nomem, 1);
    return;
  }
  for (int64_t r = b; r < e; r++) mn_row(m, r, scratch);
  free(scratch);
}

/* Validates the weights of every row (finite, >= 0, some positive, enough
 * positive ones without replacement). */
static mt_status mn_check(const double *p, int64_t rows, int64_t k, int64_t n, bool repl) {
  for (int64_t r = 0; r < rows; r++) {
    int64_t pos = 0;
    for (int64_t j = 0; j < k; j++) {
      double v = p[r * k + j];
      if (!(v >= 0) || !isfinite(v))
        return mt_fail(MT_EARG, "multinomial: weights must be finite and >= 0, found %g (row %lld, category %lld)", v,
                       (long long)r + 1, (long long)j + 1);
      pos += v > 0;
    }
    if (pos == 0) return mt_fail(MT_EARG, "multinomial: row %lld has no positive weight", (long long)r + 1);
    if (!repl && pos < n)
      return mt_fail(MT_EARG,
                     "multinomial: cannot draw %lld samples without replacement: row %lld has only %lld "
                     "categories with positive weight",
                     (long long)n, (long long)r + 1, (long long)pos);
  }
  return MT_OK;
}

mt_status mt_multinomial(const mt_tensor *probs, int64_t n, bool replacement, mt_generator *g, mt_tensor **out) {
  if (probs->ndim != 1 && probs->ndim != 2)
    return mt_fail(MT_ESHAPE, "multinomial: probabilities must be 1-D or 2-D, got %d dimensions", probs->ndim);
  mt_status st = need_float(probs, "multinomial");
  if (st) return st;
  int64_t k = probs->shape[probs->ndim - 1], rows = probs->ndim == 2 ? probs->shape[0] : 1;
  if (k == 0) return mt_fail(MT_ESHAPE, "multinomial: there are no categories (last dimension has size 0)");
  if (n <= 0) return mt_fail(MT_EARG, "multinomial: number of samples must be positive, got %lld", (long long)n);
  if (!replacement && n > k)
    return mt_fail(MT_EARG, "multinomial: cannot draw %lld samples without replacement from %lld categories",
                   (long long)n, (long long)k);
  mt_tensor *c = NULL, *p = NULL, *res = NULL, *h = NULL;
  /* CUDA weights: drawn on the host from the device's generator (the rows
   * are short sequential walks), the indices copied back */
  mt_device dev = mt_tdevice(probs);
  const int pnd = probs->ndim;
  if (dev.type == MT_CUDA) {
    if ((st = mt_cuda_to_device(probs, mt_cpu(), false, &h))) return st;
    probs = h;
    if (!g) g = mt_cuda_generator(dev.index);
  }
  st = mt_to_dtype(probs, MT_FLOAT64, false, &c);
  mt_release(h);
  if (st) return st;
  st = mt_contiguous(c, &p);
  mt_release(c);
  if (st) return st;
  const double *pv = (const double *)mt_data(p);
  int64_t shape[2] = {rows, n};
  if (!(st = mn_check(pv, rows, k, n, replacement)))
    st = mt_empty(pnd == 2 ? shape : shape + 1, pnd, MT_INT64, mt_cpu(), &res);
  if (st) {
    mt_release(p);
    return st;
  }
  if (!g) g = mt_default_generator();
  mn_ctx m = {.p = pv, .k = k, .n = n, .repl = replacement, .out = (int64_t *)mt_data(res)};
  m.key[0] = (uint32_t)g->seed, m.key[1] = (uint32_t)(g->seed >> 32);
  m.bpr = ((uint64_t)(replacement ? n : k) + 1) / 2;
  m.base = mt_generator_reserve(g, m.bpr * (uint64_t)rows);
  atomic_init(&m.nomem, 0);
  st = mt_parallel_for(rows, 1, mn_rows, &m);
  mt_release(p);
  if (!st && atomic_load(&m.nomem))
    st = mt_fail(MT_ENOMEM, "multinomial: out of memory for %lld categories", (long long)k);
  if (!st && dev.type == MT_CUDA) {
    mt_tensor *r = res;
    res = NULL;
    st = mt_cuda_to_device(r, dev, false, &res);
    mt_release(r);
  }
  if (st) {
    mt_release(res);
    return st;
  }
  return mt_deliver("multinomial", res, out);
}
