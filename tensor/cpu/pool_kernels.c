/* pool_kernels.c -- max and average pooling (plain, adaptive) and their
 * backward passes, one task per plane so no two threads write the same
 * element. Window rules follow PyTorch 1.13's CPU kernels exactly (NaN
 * wins a max, and the last NaN is kept; avg divisors count padding as
 * count_include_pad says). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cpu/pool_kernels.h"

/* Window of output o along dim d: positions [*b, *e) with step *step
 * (plain pools: dilation; positions may be out of range and are skipped
 * by the caller); for avg pools also the size counting padding. */
static inline void window(const mt_pool_problem *p, int d, int64_t o, int64_t *b, int64_t *e, int64_t *step) {
  if (p->adaptive) {
    *b = o * p->in[d] / p->out[d];
    *e = ((o + 1) * p->in[d] + p->out[d] - 1) / p->out[d];
    *step = 1;
  } else {
    *b = o * p->stride[d] - p->pad[d];
    *e = *b + (p->k[d] - 1) * p->dil[d] + 1;
    *step = p->dil[d];
  }
}

/* Avg-pool window along d: clipped [*b, *e) and the unclipped size (to the
 * padded edge), PyTorch's pool_size factor. */
static inline void avg_window(const mt_pool_problem *p, int d, int64_t o, int64_t *b, int64_t *e, int64_t *full) {
  if (p->adaptive) {
    int64_t s;
    window(p, d, o, b, e, &s);
    *full = *e - *b;
    return;
  }
  int64_t s = o * p->stride[d] - p->pad[d], end = s + p->k[d];
  if (end > p->in[d] + p->pad[d]) end = p->in[d] + p->pad[d];
  *full = end - s;
  *b = s < 0 ? 0 : s;
  *e = end > p->in[d] ? p->in[d] : end;
}

static inline double divisor(const mt_pool_problem *p, const int64_t *b, const int64_t *e, const int64_t *full) {
  if (p->divisor) return (double)p->divisor;
  if (p->count_include_pad && !p->adaptive) return (double)(full[0] * full[1] * full[2]);
  return (double)((e[0] - b[0]) * (e[1] - b[1]) * (e[2] - b[2]));
}

typedef struct pool_job {
  const mt_pool_problem *p;
  const void *x;
  void *y;
  int64_t *idx;
  uint8_t *loc; /* window-local argmax positions (tiled max pools) */
  const uint8_t *cloc;
  const int64_t *cidx;
  int64_t in_plane, out_plane;
  int bad;
} pool_job;

#define PLANE_IN(p) ((p)->in[0] * (p)->in[1] * (p)->in[2])
#define PLANE_OUT(p) ((p)->out[0] * (p)->out[1] * (p)->out[2])

/* The common 2-D case: no padding or dilation and every window inside the
 * plane (no ceil_mode overhang), so no bounds checks per element. */
static bool plain_2d(const mt_pool_problem *p) {
  if (p->adaptive || p->in[0] != 1 || p->out[0] != 1) return false;
  for (int d = 1; d < 3; d++)
    if (p->pad[d] || p->dil[d] != 1 || (p->out[d] - 1) * p->stride[d] + p->k[d] > p->in[d]) return false;
  return true;
}

/* Max pools whose stride equals the kernel (the 2x2 of CNNs), on top of
 * plain_2d: the windows tile the plane. A tile of output rows is reduced in
 * two stages that vectorize: down each input column over the KH kernel
 * rows (contiguous loads), then across each window's KW columns (one long
 * loop over the tile). Indices follow PyTorch's scan order (kh, then kw:
 * increasing flat offsets): the last NaN of a window wins, else its first
 * maximum; the stages apply that rule by comparing offsets. Values alone
 * need no offsets (only the sign of a zero maximum could differ). */
static bool tiled_2d(const mt_pool_problem *p) {
  return plain_2d(p) && p->stride[1] == p->k[1] && p->stride[2] == p->k[2] && p->k[2] <= 64 &&
         PLANE_IN(p) <= INT32_MAX;
}

#define TILE 1024 /* elements of a tile's buffers (on each thread's stack) */

/* v replaces the running max m: it is larger or a NaN. Quiet comparisons
 * (no FP exception on NaN), so gcc if-converts and vectorizes the loops. */
#define TAKES(v, m) (isgreater(v, m) | isnan(v))
/* Value a at flat offset oa replaces m at om, whatever their order: the
 * later NaN, a NaN over a number, a larger number, an equal one earlier. */
#define TAKES_AT(a, oa, m, om)                                                                                         \
  ((isnan(a) & (!isnan(m) | ((oa) > (om)))) |                                                                         \
   (!isnan(a) & !isnan(m) & (isgreater(a, m) | (((a) == (m)) & ((oa) < (om))))))
#define ALWAYS_INLINE static inline __attribute__((always_inline))

/* T: element type, O: flat offset type (as wide as T, so vectors line up).
 * Always inlined so a constant KW and o == NULL specialize the loops. */
#define DEF_TILED(tag, T, O)                                                                                           \
  /* Stage 1: input columns [c0, c0 + nc) of output rows [oh, oh + nr): v     \
   * (nr x nc) gets each column's max over the KH kernel rows and o, when    \
   * not NULL, its flat offset in the plane, or with local its position in   \
   * its window (kh * KW + kw; ordered as the offsets are, so the tie and    \
   * NaN rules compare them the same way; c0 is a multiple of KW). */         \
  ALWAYS_INLINE void tcols_##tag(const T *x, int64_t W, int64_t KH, int64_t KW, bool local, int64_t oh, int64_t nr,    \
                                 int64_t c0, int64_t nc, T *restrict v, O *restrict o) {                               \
    for (int64_t r = 0; r < nr; r++) {                                                                                 \
      int64_t at = (oh + r) * KH * W + c0;                                                                             \
      const T *xr = x + at;                                                                                            \
      T *vr = v + r * nc;                                                                                              \
      O *orow = o ? o + r * nc : NULL;                                                                                 \
      for (int64_t c = 0; c < nc; c++) vr[c] = xr[c];                                                                  \
      if (o)                                                                                                           \
        for (int64_t c = 0; c < nc; c++) orow[c] = local ? (O)(c % KW) : (O)(at + c);                                  \
      for (int64_t kh = 1; kh < KH; kh++) {                                                                            \
        const T *xk = xr + kh * W;                                                                                     \
        O ok = local ? (O)(kh * KW) : (O)(at + kh * W);                                                                \
        for (int64_t c = 0; c < nc; c++) {                                                                             \
          T a = xk[c], m = vr[c];                                                                                      \
          bool t = TAKES(a, m);                                                                                        \
          vr[c] = t ? a : m;                                                                                           \
          if (o) {                                                                                                     \
            O om = orow[c];                                                                                            \
            orow[c] = t ? ok + (local ? (O)(c % KW) : (O)c) : om;                                                      \
          }                                                                                                            \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
  /* Stage 2: n windows of KW adjacent entries of v (and o): the maxima to   \
   * y and, when o is not NULL, their 1-based offsets to ix or their window  \
   * positions to loc. */                                                     \
  ALWAYS_INLINE void twins_##tag(const T *restrict v, const O *restrict o, int64_t KW, int64_t n, T *restrict y,       \
                                 int64_t *restrict ix, uint8_t *restrict loc) {                                        \
    O best[TILE];                                                                                                      \
    for (int64_t j = 0; j < n; j++) y[j] = v[j * KW];                                                                  \
    if (o)                                                                                                             \
      for (int64_t j = 0; j < n; j++) best[j] = o[j * KW];                                                             \
    for (int64_t kw = 1; kw < KW; kw++)                                                                                \
      for (int64_t j = 0; j < n; j++) {                                                                                \
        T a = v[j * KW + kw], m = y[j];                                                                                \
        bool t;                                                                                                        \
        if (o) {                                                                                                       \
          O oa = o[j * KW + kw], om = best[j];                                                                         \
          t = TAKES_AT(a, oa, m, om);                                                                                  \
          best[j] = t ? oa : om;                                                                                       \
        } else {                                                                                                       \
          t = TAKES(a, m);                                                                                             \
        }                                                                                                              \
        y[j] = t ? a : m;                                                                                              \
      }                                                                                                                \
    if (o && loc)                                                                                                      \
      for (int64_t j = 0; j < n; j++) loc[j] = (uint8_t)best[j];                                                       \
    else if (o)                                                                                                        \
      for (int64_t j = 0; j < n; j++) ix[j] = (int64_t)best[j] + 1;                                                    \
  }                                                                                                                    \
  /* One plane of OH output rows, in tiles of whole output rows (or of one  \
   * row's columns when a row is longer than a tile); ix may be NULL. The    \
   * plane may be a stack of real planes of ohp output rows and pin input    \
   * elements each: indices are then rebased to their own plane. */          \
  ALWAYS_INLINE void tplane_##tag(const mt_pool_problem *p, int64_t KW, int64_t OH, int64_t ohp, int64_t pin,         \
                                  const T *x, T *y, int64_t *ix, uint8_t *loc) {                                       \
    T v[TILE];                                                                                                         \
    O o[TILE];                                                                                                         \
    int64_t W = p->in[2], OW = p->out[2], KH = p->k[1], row = OW * KW;                                                \
    int64_t nr = row <= TILE ? TILE / row : 1, nc = row <= TILE ? row : TILE / KW * KW;                                \
    for (int64_t oh = 0; oh < OH; oh += nr) {                                                                          \
      int64_t rows = OH - oh < nr ? OH - oh : nr;                                                                      \
      for (int64_t c0 = 0; c0 < row; c0 += nc) {                                                                       \
        int64_t cols = row - c0 < nc ? row - c0 : nc, at = oh * OW + c0 / KW;                                          \
        tcols_##tag(x, W, KH, KW, loc != NULL, oh, rows, c0, cols, v, ix || loc ? o : NULL);                           \
        twins_##tag(v, ix || loc ? o : NULL, KW, rows * cols / KW, y + at, ix ? ix + at : NULL, loc ? loc + at : NULL);\
      }                                                                                                                \
      if (ix && OH > ohp) /* stacked: whole rows per tile (row <= TILE) */                                            \
        for (int64_t r = oh; r < oh + rows; r++) {                                                                     \
          int64_t base = r / ohp * pin, *ir = ix + r * OW;                                                             \
          for (int64_t c = 0; c < OW; c++) ir[c] -= base;                                                              \
        }                                                                                                              \
    }                                                                                                                  \
  }                                                                                                                    \
  /* tplane with KW and the presence of indices made constants */             \
  ALWAYS_INLINE void tplane_kw_##tag(const mt_pool_problem *p, int64_t KW, int64_t OH, int64_t ohp, int64_t pin,      \
                                     const T *x, T *y, int64_t *ix, uint8_t *loc) {                                    \
    if (ix)                                                                                                            \
      tplane_##tag(p, KW, OH, ohp, pin, x, y, ix, NULL);                                                               \
    else if (loc)                                                                                                      \
      tplane_##tag(p, KW, OH, ohp, pin, x, y, NULL, loc);                                                              \
    else                                                                                                               \
      tplane_##tag(p, KW, OH, ohp, pin, x, y, NULL, NULL);                                                             \
  }                                                                                                                    \
  /* Planes [pb, pe). When windows tile the rows exactly and a row fits a   \
   * tile, consecutive planes are pooled as one tall plane: small planes    \
   * (14x14) then run in long tiles instead of short loops per plane. */     \
  static void tiled_##tag(const pool_job *j, int64_t pb, int64_t pe) {                                                 \
    const mt_pool_problem *p = j->p;                                                                                   \
    int64_t si = PLANE_IN(p), so = PLANE_OUT(p), OH = p->out[1];                                                       \
    bool stack = p->in[1] == OH * p->k[1] && p->out[2] * p->k[2] <= TILE;                                              \
    int64_t most = stack ? (sizeof(O) < 8 ? INT32_MAX / si : pe - pb) : 1;                                             \
    for (int64_t pl = pb; pl < pe;) {                                                                                  \
      int64_t n = pe - pl < most ? pe - pl : most;                                                                     \
      const T *x = (const T *)j->x + pl * si;                                                                          \
      T *y = (T *)j->y + pl * so;                                                                                      \
      int64_t *ix = j->idx ? j->idx + pl * so : NULL;                                                                  \
      uint8_t *loc = j->loc ? j->loc + pl * so : NULL;                                                                 \
      switch (p->k[2]) {                                                                                               \
      case 2: tplane_kw_##tag(p, 2, n * OH, OH, si, x, y, ix, loc); break;                                             \
      case 3: tplane_kw_##tag(p, 3, n * OH, OH, si, x, y, ix, loc); break;                                             \
      default: tplane_kw_##tag(p, p->k[2], n * OH, OH, si, x, y, ix, loc); break;                                      \
      }                                                                                                                \
      pl += n;                                                                                                         \
    }                                                                                                                  \
  }
DEF_TILED(f32, float, int32_t)
DEF_TILED(f64, double, int64_t)
#undef DEF_TILED

static void tiled_job_f32(void *ctx, int64_t pb, int64_t pe) { tiled_f32(ctx, pb, pe); }
static void tiled_job_f64(void *ctx, int64_t pb, int64_t pe) { tiled_f64(ctx, pb, pe); }

#define DEF_POOL(tag, T)                                                                                               \
  static void max2d_##tag(const pool_job *j, int64_t pl) {                                                             \
    const mt_pool_problem *p = j->p;                                                                                   \
    int64_t W = p->in[2], OH = p->out[1], OW = p->out[2], KH = p->k[1], KW = p->k[2];                                 \
    int64_t SH = p->stride[1], SW = p->stride[2];                                                                      \
    const T *x = (const T *)j->x + pl * PLANE_IN(p);                                                                   \
    T *y = (T *)j->y + pl * OH * OW;                                                                                   \
    int64_t *ix = j->idx ? j->idx + pl * OH * OW : NULL;                                                               \
    for (int64_t oh = 0; oh < OH; oh++)                                                                                \
      for (int64_t ow = 0; ow < OW; ow++) {                                                                            \
        int64_t at0 = oh * SH * W + ow * SW, best = at0;                                                               \
        T m = x[at0];                                                                                                  \
        for (int64_t kh = 0; kh < KH; kh++)                                                                            \
          for (int64_t kw = 0; kw < KW; kw++) {                                                                        \
            int64_t at = at0 + kh * W + kw;                                                                            \
            T v = x[at];                                                                                               \
            bool take = (v > m) | (v != v); /* branch-free: random data defeats prediction */                          \
            m = take ? v : m;                                                                                          \
            best = take ? at : best;                                                                                   \
          }                                                                                                            \
        y[oh * OW + ow] = m;                                                                                           \
        if (ix) ix[oh * OW + ow] = best + 1;                                                                           \
      }                                                                                                                \
  }                                                                                                                    \
  static void max_##tag(void *ctx, int64_t pb, int64_t pe) {                                                           \
    const pool_job *j = ctx;                                                                                           \
    const mt_pool_problem *p = j->p;                                                                                   \
    int64_t si = PLANE_IN(p), so = PLANE_OUT(p);                                                                       \
    if (tiled_2d(p)) {                                                                                                 \
      tiled_##tag(j, pb, pe);                                                                                          \
      return;                                                                                                          \
    }                                                                                                                  \
    if (plain_2d(p)) {                                                                                                 \
      for (int64_t pl = pb; pl < pe; pl++) max2d_##tag(j, pl);                                                         \
      return;                                                                                                          \
    }                                                                                                                  \
    for (int64_t pl = pb; pl < pe; pl++) {                                                                             \
      const T *x = (const T *)j->x + pl * si;                                                                          \
      T *y = (T *)j->y + pl * so;                                                                                      \
      int64_t *ix = j->idx ? j->idx + pl * so : NULL, n = 0;                                                           \
      for (int64_t o0 = 0; o0 < p->out[0]; o0++)                                                                       \
        for (int64_t o1 = 0; o1 < p->out[1]; o1++)                                                                     \
          for (int64_t o2 = 0; o2 < p->out[2]; o2++, n++) {                                                            \
            int64_t b[3], e[3], s[3], best = -1;                                                                       \
            window(p, 0, o0, &b[0], &e[0], &s[0]);                                                                     \
            window(p, 1, o1, &b[1], &e[1], &s[1]);                                                                     \
            window(p, 2, o2, &b[2], &e[2], &s[2]);                                                                     \
            T m = -INFINITY;                                                                                           \
            for (int64_t i0 = b[0]; i0 < e[0]; i0 += s[0]) {                                                           \
              if (i0 < 0 || i0 >= p->in[0]) continue;                                                                  \
              for (int64_t i1 = b[1]; i1 < e[1]; i1 += s[1]) {                                                         \
                if (i1 < 0 || i1 >= p->in[1]) continue;                                                                \
                for (int64_t i2 = b[2]; i2 < e[2]; i2 += s[2]) {                                                       \
                  if (i2 < 0 || i2 >= p->in[2]) continue;                                                              \
                  int64_t at = (i0 * p->in[1] + i1) * p->in[2] + i2;                                                   \
                  T v = x[at];                                                                                         \
                  if (best < 0 || v > m || isnan(v)) m = v, best = at;                                                 \
                }                                                                                                      \
              }                                                                                                        \
            }                                                                                                          \
            y[n] = m;                                                                                                  \
            if (ix) ix[n] = best + 1;                                                                                  \
          }                                                                                                            \
    }                                                                                                                  \
  }                                                                                                                    \
  static void max_bwd_##tag(void *ctx, int64_t pb, int64_t pe) {                                                       \
    pool_job *j = ctx;                                                                                                 \
    for (int64_t pl = pb; pl < pe; pl++) {                                                                             \
      const T *gy = (const T *)j->x + pl * j->out_plane;                                                               \
      const int64_t *ix = j->cidx + pl * j->out_plane;                                                                 \
      T *gx = (T *)j->y + pl * j->in_plane;                                                                            \
      memset(gx, 0, sizeof(T) * (size_t)j->in_plane); /* zeroed here, so the scatter hits cache */                     \
      int64_t lo = 1, hi = 1; /* the indices' range first (vectorized), then a scatter without branches */            \
      for (int64_t n = 0; n < j->out_plane; n++) {                                                                     \
        lo = ix[n] < lo ? ix[n] : lo;                                                                                  \
        hi = ix[n] > hi ? ix[n] : hi;                                                                                  \
      }                                                                                                                \
      if (lo < 1 || hi > j->in_plane) {                                                                                \
        __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);                                                                \
        continue;                                                                                                      \
      }                                                                                                                \
      for (int64_t n = 0; n < j->out_plane; n++) gx[ix[n] - 1] += gy[n];                                               \
    }                                                                                                                  \
  }                                                                                                                    \
  static void avg_##tag(void *ctx, int64_t pb, int64_t pe) {                                                           \
    const pool_job *j = ctx;                                                                                           \
    const mt_pool_problem *p = j->p;                                                                                   \
    int64_t si = PLANE_IN(p), so = PLANE_OUT(p);                                                                       \
    for (int64_t pl = pb; pl < pe; pl++) {                                                                             \
      const T *x = (const T *)j->x + pl * si;                                                                          \
      T *y = (T *)j->y + pl * so;                                                                                      \
      int64_t n = 0;                                                                                                   \
      for (int64_t o0 = 0; o0 < p->out[0]; o0++)                                                                       \
        for (int64_t o1 = 0; o1 < p->out[1]; o1++)                                                                     \
          for (int64_t o2 = 0; o2 < p->out[2]; o2++, n++) {                                                            \
            int64_t b[3], e[3], f[3];                                                                                  \
            avg_window(p, 0, o0, &b[0], &e[0], &f[0]);                                                                 \
            avg_window(p, 1, o1, &b[1], &e[1], &f[1]);                                                                 \
            avg_window(p, 2, o2, &b[2], &e[2], &f[2]);                                                                 \
            if (b[0] >= e[0] || b[1] >= e[1] || b[2] >= e[2]) {                                                        \
              y[n] = 0;                                                                                                \
              continue;                                                                                                \
            }                                                                                                          \
            double acc = 0;                                                                                            \
            for (int64_t i0 = b[0]; i0 < e[0]; i0++)                                                                   \
              for (int64_t i1 = b[1]; i1 < e[1]; i1++)                                                                 \
                for (int64_t i2 = b[2]; i2 < e[2]; i2++) acc += x[(i0 * p->in[1] + i1) * p->in[2] + i2];               \
            y[n] = (T)(acc / divisor(p, b, e, f));                                                                     \
          }                                                                                                            \
    }                                                                                                                  \
  }                                                                                                                    \
  static void avg_bwd_##tag(void *ctx, int64_t pb, int64_t pe) {                                                       \
    const pool_job *j = ctx;                                                                                           \
    const mt_pool_problem *p = j->p;                                                                                   \
    int64_t si = PLANE_IN(p), so = PLANE_OUT(p);                                                                       \
    for (int64_t pl = pb; pl < pe; pl++) {                                                                             \
      const T *gy = (const T *)j->x + pl * so;                                                                         \
      T *gx = (T *)j->y + pl * si;                                                                                     \
      for (int64_t i = 0; i < si; i++) gx[i] = 0;                                                                      \
      int64_t n = 0;                                                                                                   \
      for (int64_t o0 = 0; o0 < p->out[0]; o0++)                                                                       \
        for (int64_t o1 = 0; o1 < p->out[1]; o1++)                                                                     \
          for (int64_t o2 = 0; o2 < p->out[2]; o2++, n++) {                                                            \
            int64_t b[3], e[3], f[3];                                                                                  \
            avg_window(p, 0, o0, &b[0], &e[0], &f[0]);                                                                 \
            avg_window(p, 1, o1, &b[1], &e[1], &f[1]);                                                                 \
            avg_window(p, 2, o2, &b[2], &e[2], &f[2]);                                                                 \
            if (b[0] >= e[0] || b[1] >= e[1] || b[2] >= e[2]) continue;                                                \
            T g = (T)(gy[n] / divisor(p, b, e, f));                                                                    \
            for (int64_t i0 = b[0]; i0 < e[0]; i0++)                                                                   \
              for (int64_t i1 = b[1]; i1 < e[1]; i1++)                                                                 \
                for (int64_t i2 = b[2]; i2 < e[2]; i2++) gx[(i0 * p->in[1] + i1) * p->in[2] + i2] += g;                \
          }                                                                                                            \
    }                                                                                                                  \
  }
DEF_POOL(f32, float)
DEF_POOL(f64, double)
#undef DEF_POOL

/* Backward of a tiled max pool from window positions: the windows do not
 * overlap, so each gradient lands on one input element of its own. */
#define DEF_LOCAL_BWD(tag, T)                                                                                          \
  static void local_bwd_##tag(void *ctx, int64_t pb, int64_t pe) {                                                     \
    pool_job *j = ctx;                                                                                                 \
    const mt_pool_problem *p = j->p;                                                                                   \
    int64_t W = p->in[2], OH = p->out[1], OW = p->out[2], KH = p->k[1], KW = p->k[2], si = PLANE_IN(p),               \
            so = PLANE_OUT(p), at[256];                                                                                \
    for (int64_t l = 0; l < KH * KW; l++) at[l] = l / KW * W + l % KW; /* position -> offset from the window's corner */ \
    for (int64_t pl = pb; pl < pe; pl++) {                                                                             \
      const T *gy = (const T *)j->x + pl * so;                                                                         \
      const uint8_t *lc = j->cloc + pl * so;                                                                           \
      T *gx = (T *)j->y + pl * si;                                                                                     \
      memset(gx, 0, sizeof(T) * (size_t)si);                                                                           \
      for (int64_t oh = 0; oh < OH; oh++)                                                                              \
        for (int64_t ow = 0; ow < OW; ow++) {                                                                          \
          int64_t l = lc[oh * OW + ow];                                                                                \
          if (l >= KH * KW) {                                                                                          \
            __atomic_store_n(&j->bad, 1, __ATOMIC_RELAXED);                                                            \
            continue;                                                                                                  \
          }                                                                                                            \
          gx[oh * KH * W + ow * KW + at[l]] = gy[oh * OW + ow];                                                        \
        }                                                                                                              \
    }                                                                                                                  \
  }
DEF_LOCAL_BWD(f32, float)
DEF_LOCAL_BWD(f64, double)
#undef DEF_LOCAL_BWD

static int64_t plane_grain(int64_t work_per_plane) {
  return work_per_plane >= (1 << 14) ? 1 : (1 << 14) / (work_per_plane > 0 ? work_per_plane : 1);
}

mt_status mt_cpu_max_pool(mt_dtype dt, const mt_pool_problem *p, const void *x, void *y, int64_t *idx) {
  pool_job j = {p, x, y, idx, NULL, NULL, NULL, 0, 0, 0};
  return mt_parallel_for(p->planes, plane_grain(PLANE_OUT(p) * p->k[0] * p->k[1] * p->k[2]),
                         dt == MT_FLOAT64 ? max_f64 : max_f32, &j);
}

mt_status mt_cpu_max_pool_backward(mt_dtype dt, int64_t planes, int64_t in_plane, int64_t out_plane, const void *gy,
                                   const int64_t *idx, void *gx) {
  pool_job j = {NULL, gy, gx, NULL, NULL, NULL, idx, in_plane, out_plane, 0};
  mt_status st = mt_parallel_for(planes, plane_grain(out_plane), dt == MT_FLOAT64 ? max_bwd_f64 : max_bwd_f32, &j);
  if (!st && j.bad)
    return mt_fail(MT_EINDEX, "max_pool_backward: an index is outside the input plane of %lld elements",
                   (long long)in_plane);
  return st;
}

mt_status mt_cpu_avg_pool(mt_dtype dt, const mt_pool_problem *p, const void *x, void *y) {
  pool_job j = {p, x, y, NULL, NULL, NULL, NULL, 0, 0, 0};
  return mt_parallel_for(p->planes, plane_grain(PLANE_OUT(p) * p->k[0] * p->k[1] * p->k[2]),
                         dt == MT_FLOAT64 ? avg_f64 : avg_f32, &j);
}

mt_status mt_cpu_avg_pool_backward(mt_dtype dt, const mt_pool_problem *p, const void *gy, void *gx) {
  pool_job j = {p, gy, gx, NULL, NULL, NULL, NULL, 0, 0, 0};
  return mt_parallel_for(p->planes, plane_grain(PLANE_OUT(p) * p->k[0] * p->k[1] * p->k[2]),
                         dt == MT_FLOAT64 ? avg_bwd_f64 : avg_bwd_f32, &j);
}

bool mt_cpu_max_pool_tiles(const mt_pool_problem *p) { return tiled_2d(p) && p->k[1] * p->k[2] <= 256; }

mt_status mt_cpu_max_pool_local(mt_dtype dt, const mt_pool_problem *p, const void *x, void *y, uint8_t *loc) {
  if (!mt_cpu_max_pool_tiles(p)) return mt_fail(MT_EARG, "max_pool_local: not a tiled 2-D pool (internal error)");
  pool_job j = {p, x, y, NULL, loc, NULL, NULL, 0, 0, 0};
  return mt_parallel_for(p->planes, plane_grain(PLANE_OUT(p) * p->k[1] * p->k[2]),
                         dt == MT_FLOAT64 ? tiled_job_f64 : tiled_job_f32, &j);
}

mt_status mt_cpu_max_pool_local_backward(mt_dtype dt, const mt_pool_problem *p, const void *gy, const uint8_t *loc,
                                         void *gx) {
  if (!mt_cpu_max_pool_tiles(p)) return mt_fail(MT_EARG, "max_pool_local_backward: not a tiled 2-D pool (internal error)");
  pool_job j = {p, gy, gx, NULL, NULL, loc, NULL, 0, 0, 0};
  mt_status st = mt_parallel_for(p->planes, plane_grain(PLANE_IN(p)), dt == MT_FLOAT64 ? local_bwd_f64 : local_bwd_f32, &j);
  if (!st && j.bad) return mt_fail(MT_EINDEX, "max_pool_backward: a window position is outside its window");
  return st;
}
