/* roi_kernels.c -- CPU loops of RoI Align and RoI pooling with
 * torchvision's sampling rules (bilinear samples on a per-bin grid, clamped
 * at the borders, zero outside [-1, size]; pooling over rounded bins). The
 * bilinear weights of a sample are a product of a y part and an x part, so
 * each roi gets two small tables (one per axis) instead of one per sample.
 * Forward work is split over rois, backward over channels (each thread owns
 * its channels' planes: no atomics, and the sums are deterministic). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "roi_kernels.h"

/* torchvision's kernels round each product on its own: no fused multiply-adds */
#pragma GCC optimize("fp-contract=off")

/* The pieces of a roi's geometry shared by forward and backward. */
typedef struct roi_box {
  int64_t b;          /* image (0-based) */
  double y0, x0;      /* start corner (input coordinates) */
  double bh, bw;      /* bin sizes */
  int64_t gh, gw;     /* samples per bin along y and x */
  double count;       /* samples per bin, at least 1 */
} roi_box;

/* One axis of a bilinear sample: the two neighbours and their weights;
 * ok false outside [-1, size] (the sample is zero). */
#define AXIS_T(T)                                                                                                      \
  typedef struct ax_##T {                                                                                             \
    int64_t lo, hi;                                                                                                    \
    T l, h;                                                                                                            \
    bool ok;                                                                                                           \
  } ax_##T;                                                                                                            \
  static void axis_##T(T v, int64_t size, ax_##T *a) {                                                                 \
    a->ok = !(v < (T)-1.0 || v > (T)size);                                                                             \
    if (!a->ok) return;                                                                                                \
    if (v <= 0) v = 0;                                                                                                 \
    a->lo = (int64_t)v;                                                                                                \
    if (a->lo >= size - 1) {                                                                                           \
      a->lo = a->hi = size - 1;                                                                                        \
      v = (T)a->lo;                                                                                                    \
    } else {                                                                                                           \
      a->hi = a->lo + 1;                                                                                               \
    }                                                                                                                  \
    a->l = v - (T)a->lo;                                                                                               \
    a->h = (T)1 - a->l;                                                                                                \
  }                                                                                                                    \
  /* the n samples of each of the p bins along an axis: tab[bin * n + s] */                                           \
  static void axis_table_##T(T start, T bin, int64_t p, int64_t n, int64_t size, ax_##T *tab) {                       \
    for (int64_t i = 0; i < p; i++)                                                                                    \
      for (int64_t s = 0; s < n; s++)                                                                                  \
        axis_##T(start + (T)i * bin + (T)(s + .5f) * bin / (T)n, size, &tab[i * n + s]);                               \
  }
AXIS_T(float)
AXIS_T(double)

/* The box of roi r (5 numbers) in T's arithmetic, as torchvision computes it. */
#define BOX_T(T)                                                                                                       \
  static roi_box box_##T(const mt_roi_geo *g, const T *r) {                                                            \
    roi_box q;                                                                                                         \
    T sc = (T)g->scale, off = g->aligned ? (T)0.5 : (T)0;                                                              \
    T x0 = r[1] * sc - off, y0 = r[2] * sc - off, x1 = r[3] * sc - off, y1 = r[4] * sc - off;                          \
    T rw = x1 - x0, rh = y1 - y0;                                                                                      \
    if (!g->aligned) rw = rw > (T)1 ? rw : (T)1, rh = rh > (T)1 ? rh : (T)1;                                           \
    T bh = rh / (T)g->ph, bw = rw / (T)g->pw;                                                                          \
    q.b = (int64_t)r[0] - 1;                                                                                           \
    q.y0 = y0, q.x0 = x0, q.bh = bh, q.bw = bw;                                                                        \
    q.gh = g->sr > 0 ? g->sr : (int64_t)ceil(rh / (T)g->ph);                                                           \
    q.gw = g->sr > 0 ? g->sr : (int64_t)ceil(rw / (T)g->pw);                                                           \
    int64_t c = q.gh * q.gw;                                                                                           \
    q.count = (double)(c > 1 ? c : 1);                                                                                 \
    return q;                                                                                                          \
  }
BOX_T(float)
BOX_T(double)

/* Sample grids can be empty (a zero-sized aligned roi) or, from negative
 * sizes, "negative": no samples either way. */
static int64_t npos(int64_t n) { return n > 0 ? n : 0; }

typedef struct roi_job {
  const mt_roi_geo *g;
  const void *x, *rois;
  void *y;
  int64_t *argmax;
  bool nomem;
} roi_job;

/* Forward: rois [k0, k1). Each roi's samples are first listed with their
 * four positions and weights (invalid ones left out), bin by bin, as
 * torchvision precomputes them; every channel then sums its bins from the
 * list. The list lives on the heap (its size follows the roi when
 * sampling_ratio <= 0). */
#define ALIGN_FWD_T(T)                                                                                                 \
  typedef struct samp_##T {                                                                                           \
    int64_t p[4];                                                                                                      \
    T w[4];                                                                                                            \
  } samp_##T;                                                                                                          \
  /* the samples of roi q from its axis tables, and where each bin's start */                                         \
  static void list_samples_##T(const mt_roi_geo *g, int64_t gh, int64_t gw, const ax_##T *ty, const ax_##T *tx,        \
                               samp_##T *sp, int64_t *off) {                                                           \
    int64_t n = 0;                                                                                                     \
    for (int64_t i = 0; i < g->ph; i++)                                                                                \
      for (int64_t jj = 0; jj < g->pw; jj++) {                                                                         \
        off[i * g->pw + jj] = n;                                                                                       \
        for (int64_t sy = 0; sy < gh; sy++)                                                                            \
          for (int64_t sx = 0; sx < gw; sx++) {                                                                        \
            const ax_##T *a = &ty[i * gh + sy], *b = &tx[jj * gw + sx];                                                \
            if (!a->ok || !b->ok) continue;                                                                            \
            samp_##T *e = &sp[n++];                                                                                    \
            e->p[0] = a->lo * g->W + b->lo, e->p[1] = a->lo * g->W + b->hi;                                            \
            e->p[2] = a->hi * g->W + b->lo, e->p[3] = a->hi * g->W + b->hi;                                            \
            e->w[0] = a->h * b->h, e->w[1] = a->h * b->l, e->w[2] = a->l * b->h, e->w[3] = a->l * b->l;                \
          }                                                                                                            \
      }                                                                                                                \
    off[g->ph * g->pw] = n;                                                                                            \
  }                                                                                                                    \
  static void align_fwd_##T(void *ctx, int64_t k0, int64_t k1) {                                                       \
    roi_job *j = ctx;                                                                                                  \
    const mt_roi_geo *g = j->g;                                                                                        \
    const T *x = j->x, *rois = j->rois;                                                                                \
    T *y = j->y;                                                                                                       \
    int64_t nb = g->ph * g->pw;                                                                                        \
    for (int64_t k = k0; k < k1; k++) {                                                                                \
      roi_box q = box_##T(g, rois + k * 5);                                                                            \
      int64_t gh = npos(q.gh), gw = npos(q.gw);                                                                        \
      ax_##T *ty = malloc(sizeof *ty * (size_t)(g->ph * gh + g->pw * gw + 1)), *tx = ty + g->ph * gh;                  \
      samp_##T *sp = malloc(sizeof *sp * (size_t)(nb * gh * gw + 1));                                                  \
      int64_t *off = malloc(sizeof *off * (size_t)(nb + 1));                                                           \
      if (!ty || !sp || !off) {                                                                                        \
        free(ty), free(sp), free(off);                                                                                 \
        j->nomem = true;                                                                                               \
        return;                                                                                                        \
      }                                                                                                                \
      axis_table_##T((T)q.y0, (T)q.bh, g->ph, gh, g->H, ty);                                                           \
      axis_table_##T((T)q.x0, (T)q.bw, g->pw, gw, g->W, tx);                                                           \
      list_samples_##T(g, gh, gw, ty, tx, sp, off);                                                                    \
      int64_t hw = g->H * g->W, c = 0;                                                                                 \
      for (; c + 2 <= g->C; c += 2) { /* two channels share each sample's loads of positions and weights */          \
        const T *x0 = x + (q.b * g->C + c) * hw, *x1 = x0 + hw;                                                        \
        T *y0 = y + (k * g->C + c) * nb, *y1 = y0 + nb;                                                                \
        for (int64_t bin = 0; bin < nb; bin++) {                                                                       \
          T a0 = 0, a1 = 0;                                                                                            \
          for (const samp_##T *e = sp + off[bin], *end = sp + off[bin + 1]; e < end; e++) {                            \
            a0 += e->w[0] * x0[e->p[0]] + e->w[1] * x0[e->p[1]] + e->w[2] * x0[e->p[2]] + e->w[3] * x0[e->p[3]];       \
            a1 += e->w[0] * x1[e->p[0]] + e->w[1] * x1[e->p[1]] + e->w[2] * x1[e->p[2]] + e->w[3] * x1[e->p[3]];       \
          }                                                                                                            \
          y0[bin] = a0 / (T)q.count, y1[bin] = a1 / (T)q.count;                                                        \
        }                                                                                                              \
      }                                                                                                                \
      for (; c < g->C; c++) {                                                                                          \
        const T *xp = x + (q.b * g->C + c) * hw;                                                                       \
        T *yp = y + (k * g->C + c) * nb;                                                                               \
        for (int64_t bin = 0; bin < nb; bin++) {                                                                       \
          T acc = 0;                                                                                                   \
          for (const samp_##T *e = sp + off[bin], *end = sp + off[bin + 1]; e < end; e++)                              \
            acc += e->w[0] * xp[e->p[0]] + e->w[1] * xp[e->p[1]] + e->w[2] * xp[e->p[2]] + e->w[3] * xp[e->p[3]];      \
          yp[bin] = acc / (T)q.count;                                                                                  \
        }                                                                                                              \
      }                                                                                                                \
      free(ty), free(sp), free(off);                                                                                   \
    }                                                                                                                  \
  }
ALIGN_FWD_T(float)
ALIGN_FWD_T(double)

/* Backward: channels [c0, c1) of every roi. */
#define ALIGN_BWD_T(T)                                                                                                 \
  static void align_bwd_##T(void *ctx, int64_t c0, int64_t c1) {                                                       \
    roi_job *j = ctx;                                                                                                  \
    const mt_roi_geo *g = j->g;                                                                                        \
    const T *gy = j->x, *rois = j->rois;                                                                               \
    T *gx = j->y;                                                                                                      \
    for (int64_t k = 0; k < g->K; k++) {                                                                               \
      roi_box q = box_##T(g, rois + k * 5);                                                                            \
      int64_t gh = npos(q.gh), gw = npos(q.gw);                                                                        \
      ax_##T *ty = malloc(sizeof *ty * (size_t)(g->ph * gh + g->pw * gw + 1)), *tx = ty + g->ph * gh;                  \
      if (!ty) {                                                                                                       \
        j->nomem = true;                                                                                               \
        return;                                                                                                        \
      }                                                                                                                \
      axis_table_##T((T)q.y0, (T)q.bh, g->ph, gh, g->H, ty);                                                           \
      axis_table_##T((T)q.x0, (T)q.bw, g->pw, gw, g->W, tx);                                                           \
      for (int64_t c = c0; c < c1; c++) {                                                                              \
        T *xp = gx + (q.b * g->C + c) * g->H * g->W;                                                                   \
        const T *yp = gy + (k * g->C + c) * g->ph * g->pw;                                                             \
        for (int64_t i = 0; i < g->ph; i++)                                                                            \
          for (int64_t jj = 0; jj < g->pw; jj++) {                                                                     \
            T v = yp[i * g->pw + jj] / (T)q.count;                                                                     \
            for (int64_t sy = 0; sy < gh; sy++) {                                                                      \
              const ax_##T *a = &ty[i * gh + sy];                                                                      \
              if (!a->ok) continue;                                                                                    \
              T *r0 = xp + a->lo * g->W, *r1 = xp + a->hi * g->W;                                                      \
              for (int64_t sx = 0; sx < gw; sx++) {                                                                    \
                const ax_##T *b = &tx[jj * gw + sx];                                                                   \
                if (!b->ok) continue;                                                                                  \
                r0[b->lo] += v * (a->h * b->h), r0[b->hi] += v * (a->h * b->l);                                        \
                r1[b->lo] += v * (a->l * b->h), r1[b->hi] += v * (a->l * b->l);                                        \
              }                                                                                                        \
            }                                                                                                          \
          }                                                                                                            \
      }                                                                                                                \
      free(ty);                                                                                                        \
    }                                                                                                                  \
  }
ALIGN_BWD_T(float)
ALIGN_BWD_T(double)

static mt_status finish(roi_job *j, mt_status st, const char *op) {
  if (!st && j->nomem) return mt_fail(MT_ENOMEM, "%s: out of memory for the sample tables", op);
  return st;
}

mt_status mt_cpu_roi_align(mt_dtype dt, const mt_roi_geo *g, const void *x, const void *rois, void *y) {
  roi_job j = {g, x, rois, y, NULL, false};
  int64_t grain = 1 + 65536 / (g->C * g->ph * g->pw + 1);
  mt_status st = mt_parallel_for(g->K, grain, dt == MT_FLOAT64 ? align_fwd_double : align_fwd_float, &j);
  return finish(&j, st, "roi_align");
}

mt_status mt_cpu_roi_align_backward(mt_dtype dt, const mt_roi_geo *g, const void *gy, const void *rois, void *gx) {
  memset(gx, 0, (size_t)(g->N * g->C * g->H * g->W) * (dt == MT_FLOAT64 ? 8 : 4));
  roi_job j = {g, gy, rois, gx, NULL, false};
  int64_t grain = 1 + 65536 / (g->K * g->ph * g->pw + 1);
  mt_status st = mt_parallel_for(g->C, grain, dt == MT_FLOAT64 ? align_bwd_double : align_bwd_float, &j);
  return finish(&j, st, "roi_align_backward");
}

/* RoI pooling of rois [k0, k1): torchvision's rounded corners and bins.
 * Bin edges are separable (rows by i, columns by j), so they are found once
 * per roi; then each channel's plane is scanned bin by bin. */
#define POOL_FWD_T(T)                                                                                                  \
  static void pool_edges_##T(T start, T bin, int64_t p, int64_t size, int64_t *lo, int64_t *hi) {                      \
    for (int64_t i = 0; i < p; i++) {                                                                                  \
      lo[i] = (int64_t)floor((T)i * bin) + (int64_t)start, hi[i] = (int64_t)ceil((T)(i + 1) * bin) + (int64_t)start;   \
      lo[i] = CLAMP(lo[i], 0, size), hi[i] = CLAMP(hi[i], 0, size);                                                    \
    }                                                                                                                  \
  }                                                                                                                    \
  static void pool_fwd_##T(void *ctx, int64_t k0, int64_t k1) {                                                        \
    roi_job *j = ctx;                                                                                                  \
    const mt_roi_geo *g = j->g;                                                                                        \
    const T *x = j->x, *rois = j->rois;                                                                                \
    T *y = j->y, sc = (T)g->scale;                                                                                     \
    int64_t *e = malloc(sizeof *e * (size_t)(2 * (g->ph + g->pw)));                                                    \
    if (!e) {                                                                                                          \
      j->nomem = true;                                                                                                 \
      return;                                                                                                          \
    }                                                                                                                  \
    int64_t *hs = e, *he = e + g->ph, *ws = e + 2 * g->ph, *we = ws + g->pw;                                           \
    for (int64_t k = k0; k < k1; k++) {                                                                                \
      const T *r = rois + k * 5;                                                                                       \
      int64_t b = (int64_t)r[0] - 1, x0 = (int64_t)round(r[1] * sc), y0 = (int64_t)round(r[2] * sc);                   \
      int64_t rw = (int64_t)round(r[3] * sc) - x0 + 1, rh = (int64_t)round(r[4] * sc) - y0 + 1;                        \
      rw = rw > 1 ? rw : 1, rh = rh > 1 ? rh : 1;                                                                      \
      pool_edges_##T((T)y0, (T)rh / (T)g->ph, g->ph, g->H, hs, he);                                                    \
      pool_edges_##T((T)x0, (T)rw / (T)g->pw, g->pw, g->W, ws, we);                                                    \
      for (int64_t c = 0; c < g->C; c++) {                                                                             \
        int64_t base = (b * g->C + c) * g->H * g->W, o = (k * g->C + c) * g->ph * g->pw;                               \
        for (int64_t i = 0; i < g->ph; i++)                                                                            \
          for (int64_t jj = 0; jj < g->pw; jj++, o++) {                                                                \
            bool empty = he[i] <= hs[i] || we[jj] <= ws[jj];                                                           \
            T m = empty ? (T)0 : (T)-FLT_MAX;                                                                          \
            int64_t at = -1;                                                                                           \
            for (int64_t h = hs[i]; h < he[i]; h++) {                                                                  \
              const T *row = x + base + h * g->W;                                                                      \
              for (int64_t w = ws[jj]; w < we[jj]; w++) {                                                              \
                bool gt = row[w] > m; /* branch-free: the first maximum wins, NaN never */                             \
                m = gt ? row[w] : m, at = gt ? base + h * g->W + w : at;                                               \
              }                                                                                                        \
            }                                                                                                          \
            y[o] = m;                                                                                                  \
            j->argmax[o] = at + 1;                                                                                     \
          }                                                                                                            \
      }                                                                                                                \
    }                                                                                                                  \
    free(e);                                                                                                           \
  }
#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
POOL_FWD_T(float)
POOL_FWD_T(double)

mt_status mt_cpu_roi_pool(mt_dtype dt, const mt_roi_geo *g, const void *x, const void *rois, void *y, int64_t *argmax) {
  roi_job j = {g, x, rois, y, argmax, false};
  int64_t grain = 1 + 65536 / (g->C * g->ph * g->pw + 1);
  mt_status st = mt_parallel_for(g->K, grain, dt == MT_FLOAT64 ? pool_fwd_double : pool_fwd_float, &j);
  return finish(&j, st, "roi_pool");
}

/* Channels [c0, c1): each gradient goes to its max's position. */
#define POOL_BWD_T(T)                                                                                                  \
  static void pool_bwd_##T(void *ctx, int64_t c0, int64_t c1) {                                                        \
    roi_job *j = ctx;                                                                                                  \
    const mt_roi_geo *g = j->g;                                                                                        \
    const T *gy = j->x;                                                                                                \
    T *gx = j->y;                                                                                                      \
    int64_t pl = g->ph * g->pw;                                                                                        \
    for (int64_t k = 0; k < g->K; k++)                                                                                 \
      for (int64_t c = c0; c < c1; c++)                                                                                \
        for (int64_t o = (k * g->C + c) * pl, e = o + pl; o < e; o++)                                                  \
          if (j->argmax[o] > 0) gx[j->argmax[o] - 1] += gy[o];                                                         \
  }
POOL_BWD_T(float)
POOL_BWD_T(double)

mt_status mt_cpu_roi_pool_backward(mt_dtype dt, const mt_roi_geo *g, const void *gy, const int64_t *argmax, void *gx) {
  memset(gx, 0, (size_t)(g->N * g->C * g->H * g->W) * (dt == MT_FLOAT64 ? 8 : 4));
  roi_job j = {g, gy, NULL, gx, (int64_t *)argmax, false};
  int64_t grain = 1 + 65536 / (g->K * g->ph * g->pw + 1);
  return mt_parallel_for(g->C, grain, dt == MT_FLOAT64 ? pool_bwd_double : pool_bwd_float, &j);
}
