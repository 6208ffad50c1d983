/* nms_kernels.c -- greedy NMS over boxes sorted by decreasing score: the
 * best remaining box is kept and suppresses every later box whose IoU with
 * it is > thr. IoU is torchvision's (areas (x2 - x1) * (y2 - y1), the
 * intersection clamped at 0, computed in the boxes' dtype, compared with
 * thr in double). The candidates live in separate coordinate arrays; each
 * kept box tests the rest of them in one branch-free (vectorised) loop,
 * split over threads when long, and suppressed candidates are squeezed out
 * once they are a quarter of what remains, so the work shrinks as boxes
 * die. Past GRID_MIN candidates (and a threshold >= 0, where only boxes
 * that intersect can suppress each other) a uniform grid of cells about
 * one mean box in size lists the candidates in each cell, and a kept box
 * tests only those of its cells: sparse scenes cost about n, not n^2.
 * With classes, each class runs alone on its own members. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nms_kernels.h"

/* torchvision's kernels round each product on its own: no fused multiply-adds */
#pragma GCC optimize("fp-contract=off")

#define GRID_MIN 1024 /* candidates from which the grid is tried */
#define ROW_GRAIN 131072 /* candidates per thread when a row is split (a shorter row costs less than waking threads) */

#define NMS_T(T)                                                                                                       \
  typedef struct cand_##T {                                                                                           \
    T *x1, *y1, *x2, *y2, *ar;                                                                                         \
    int64_t *id;   /* the candidate's row */                                                                           \
    uint8_t *dead; /* suppressed */                                                                                    \
    T bx1, by1, bx2, by2, bar; /* the kept box testing them */                                                        \
    double thr;                                                                                                        \
    int64_t from; /* the row starts here */                                                                          \
  } cand_##T;                                                                                                          \
  /* dead[j] |= IoU(kept box, j) > thr for j in [j0, j1) */                                                            \
  static void suppress_##T(void *ctx, int64_t j0, int64_t j1) {                                                        \
    cand_##T *c = ctx;                                                                                                 \
    const T bx1 = c->bx1, by1 = c->by1, bx2 = c->bx2, by2 = c->by2, bar = c->bar;                                      \
    const double thr = c->thr;                                                                                         \
    for (int64_t j = j0; j < j1; j++) {                                                                                \
      T xx1 = c->x1[j] > bx1 ? c->x1[j] : bx1, yy1 = c->y1[j] > by1 ? c->y1[j] : by1;                                  \
      T xx2 = c->x2[j] < bx2 ? c->x2[j] : bx2, yy2 = c->y2[j] < by2 ? c->y2[j] : by2;                                  \
      T w = xx2 - xx1 > 0 ? xx2 - xx1 : (T)0, h = yy2 - yy1 > 0 ? yy2 - yy1 : (T)0;                                    \
      T inter = w * h, ovr = inter / (bar + c->ar[j] - inter);                                                         \
      c->dead[j] |= (double)ovr > thr;                                                                                 \
    }                                                                                                                  \
  }                                                                                                                    \
  static void suppress_row_##T(void *ctx, int64_t j0, int64_t j1) {                                                    \
    cand_##T *c = ctx;                                                                                                 \
    suppress_##T(c, c->from + j0, c->from + j1);                                                                       \
  }                                                                                                                    \
  /* Moves the live candidates of [from, m) to the front; returns their number. */                                   \
  static int64_t squeeze_##T(cand_##T *c, int64_t from, int64_t m) {                                                   \
    int64_t w = 0;                                                                                                     \
    for (int64_t j = from; j < m; j++) {                                                                               \
      if (c->dead[j]) continue;                                                                                        \
      c->x1[w] = c->x1[j], c->y1[w] = c->y1[j], c->x2[w] = c->x2[j], c->y2[w] = c->y2[j];                              \
      c->ar[w] = c->ar[j], c->id[w] = c->id[j], c->dead[w] = 0;                                                        \
      w++;                                                                                                             \
    }                                                                                                                  \
    return w;                                                                                                          \
  }                                                                                                                    \
  /* Greedy NMS of the m candidates of c (in rank order), marking keep[id];  \
   * every 16 kept boxes, the dead are squeezed out once a quarter of the rest. */                                     \
  static mt_status greedy_##T(cand_##T *c, int64_t m, uint8_t *keep) {                                                 \
    int64_t i = 0, kept = 0;                                                                                           \
    mt_status st = MT_OK;                                                                                              \
    memset(c->dead, 0, (size_t)m);                                                                                     \
    while (!st) {                                                                                                      \
      while (i < m && c->dead[i]) i++;                                                                                 \
      if (i >= m) break;                                                                                               \
      keep[c->id[i]] = 1;                                                                                              \
      c->bx1 = c->x1[i], c->by1 = c->y1[i], c->bx2 = c->x2[i], c->by2 = c->y2[i], c->bar = c->ar[i];                   \
      c->from = i + 1;                                                                                                 \
      if (m - i - 1 >= 2 * ROW_GRAIN) st = mt_parallel_for(m - i - 1, ROW_GRAIN, suppress_row_##T, c);                 \
      else suppress_row_##T(c, 0, m - i - 1);                                                                          \
      i++;                                                                                                             \
      if (++kept % 16 || m - i < 256) continue;                                                                        \
      int64_t dead = 0;                                                                                                \
      for (int64_t j = i; j < m; j++) dead += c->dead[j];                                                              \
      if (dead * 4 > m - i) m = squeeze_##T(c, i, m), i = 0;                                                           \
    }                                                                                                                  \
    return st;                                                                                                         \
  }
NMS_T(float)
NMS_T(double)

/* A uniform grid over the candidates' extent: cell (cx, cy) lists, in
 * rank order, items[start[cell] .. start[cell + 1]) of the candidates that
 * touch it; head[cell] skips those already decided. */
typedef struct nms_grid {
  double x0, y0, cw, ch;
  int64_t gx, gy;
  int64_t *start, *head, *items;
} nms_grid;

static int64_t cell_of(double v, double v0, double size, int64_t n) {
  int64_t k = (int64_t)((v - v0) / size);
  return k < 0 ? 0 : k >= n ? n - 1 : k;
}

static void grid_free(nms_grid *g) { free(g->start), free(g->head), free(g->items); }

/* Cell sizes from the mean box (grown until there are at most 4 cells per
 * candidate); false when a coordinate is not finite. */
static bool grid_size(nms_grid *g, const double *ext, double sw, double sh, int64_t m) {
  for (int k = 0; k < 4; k++)
    if (!isfinite(ext[k])) return false;
  double spanx = ext[2] - ext[0], spany = ext[3] - ext[1];
  g->cw = fmax(sw / (double)m, 1e-9 * (1 + spanx)), g->ch = fmax(sh / (double)m, 1e-9 * (1 + spany));
  double cells = (spanx / g->cw + 1) * (spany / g->ch + 1);
  if (cells > 4.0 * (double)m) g->cw *= sqrt(cells / (4.0 * (double)m)), g->ch *= sqrt(cells / (4.0 * (double)m));
  g->x0 = ext[0], g->y0 = ext[1];
  g->gx = (int64_t)(spanx / g->cw) + 1, g->gy = (int64_t)(spany / g->ch) + 1;
  return true;
}

/* Fills the cell lists from each candidate's cell range (r[4 * j ..]);
 * false (nothing allocated) when boxes are so large that the lists would
 * exceed 16 entries per candidate, or memory runs out. */
static bool grid_fill(nms_grid *g, const int64_t *r, int64_t m) {
  int64_t cells = g->gx * g->gy, total = 0;
  g->start = calloc((size_t)cells + 1, sizeof *g->start);
  g->head = malloc(sizeof *g->head * (size_t)cells);
  if (!g->start || !g->head) return grid_free(g), false;
  for (int64_t j = 0; j < m; j++) {
    const int64_t *q = r + 4 * j;
    total += (q[2] - q[0] + 1) * (q[3] - q[1] + 1);
    if (total > 16 * m + 1024) return grid_free(g), false;
    for (int64_t cy = q[1]; cy <= q[3]; cy++)
      for (int64_t cx = q[0]; cx <= q[2]; cx++) g->start[cy * g->gx + cx + 1]++;
  }
  for (int64_t k = 0; k < cells; k++) g->start[k + 1] += g->start[k];
  g->items = malloc(sizeof *g->items * (size_t)(total + 1));
  if (!g->items) return grid_free(g), false;
  memcpy(g->head, g->start, sizeof *g->head * (size_t)cells);
  for (int64_t j = 0; j < m; j++) {
    const int64_t *q = r + 4 * j;
    for (int64_t cy = q[1]; cy <= q[3]; cy++)
      for (int64_t cx = q[0]; cx <= q[2]; cx++) g->items[g->head[cy * g->gx + cx]++] = j;
  }
  memcpy(g->head, g->start, sizeof *g->head * (size_t)cells);
  return true;
}

#define GRID_T(T)                                                                                                      \
  /* IoU(i, j) > thr, computed as suppress_T does */                                                                  \
  static inline bool over_##T(const cand_##T *c, int64_t i, int64_t j) {                                               \
    T xx1 = c->x1[j] > c->x1[i] ? c->x1[j] : c->x1[i], yy1 = c->y1[j] > c->y1[i] ? c->y1[j] : c->y1[i];                \
    T xx2 = c->x2[j] < c->x2[i] ? c->x2[j] : c->x2[i], yy2 = c->y2[j] < c->y2[i] ? c->y2[j] : c->y2[i];                \
    T w = xx2 - xx1 > 0 ? xx2 - xx1 : (T)0, h = yy2 - yy1 > 0 ? yy2 - yy1 : (T)0;                                      \
    T inter = w * h, ovr = inter / (c->ar[i] + c->ar[j] - inter);                                                      \
    return (double)ovr > c->thr;                                                                                       \
  }                                                                                                                    \
  /* The grid and each candidate's cell range (r, 4 per candidate); false:  \
   * not worth it or not possible (the caller runs the plain greedy pass). */ \
  static bool grid_build_##T(const cand_##T *c, int64_t m, nms_grid *g, int64_t *r) {                                  \
    double ext[4] = {INFINITY, INFINITY, -INFINITY, -INFINITY}, sw = 0, sh = 0;                                        \
    for (int64_t j = 0; j < m; j++) {                                                                                  \
      ext[0] = fmin(ext[0], (double)c->x1[j]), ext[1] = fmin(ext[1], (double)c->y1[j]);                                \
      ext[2] = fmax(ext[2], (double)c->x2[j]), ext[3] = fmax(ext[3], (double)c->y2[j]);                                \
      sw += fabs((double)c->x2[j] - (double)c->x1[j]), sh += fabs((double)c->y2[j] - (double)c->y1[j]);                \
      if (c->x1[j] != c->x1[j] || c->y1[j] != c->y1[j] || c->x2[j] != c->x2[j] || c->y2[j] != c->y2[j]) return false;  \
    }                                                                                                                  \
    if (!grid_size(g, ext, sw, sh, m)) return false;                                                                   \
    for (int64_t j = 0; j < m; j++) {                                                                                  \
      int64_t *q = r + 4 * j;                                                                                          \
      q[0] = cell_of((double)c->x1[j], g->x0, g->cw, g->gx), q[2] = cell_of((double)c->x2[j], g->x0, g->cw, g->gx);    \
      q[1] = cell_of((double)c->y1[j], g->y0, g->ch, g->gy), q[3] = cell_of((double)c->y2[j], g->y0, g->ch, g->gy);    \
      if (q[2] < q[0]) q[2] = q[0] - 1; /* an inverted box touches no cell: it intersects nothing */                   \
      if (q[3] < q[1]) q[3] = q[1] - 1;                                                                                \
    }                                                                                                                  \
    return grid_fill(g, r, m);                                                                                         \
  }                                                                                                                    \
  /* Greedy NMS through the grid; false when the grid was not built. */    \
  static bool grid_greedy_##T(cand_##T *c, int64_t m, uint8_t *keep) {                                                 \
    nms_grid g = {0};                                                                                                  \
    int64_t *r = malloc(sizeof *r * (size_t)(4 * m));                                                                  \
    if (!r || !grid_build_##T(c, m, &g, r)) return free(r), false;                                                     \
    memset(c->dead, 0, (size_t)m);                                                                                     \
    for (int64_t i = 0; i < m; i++) {                                                                                  \
      if (c->dead[i]) continue;                                                                                        \
      keep[c->id[i]] = 1;                                                                                              \
      const int64_t *q = r + 4 * i;                                                                                    \
      for (int64_t cy = q[1]; cy <= q[3]; cy++)                                                                        \
        for (int64_t cx = q[0]; cx <= q[2]; cx++) {                                                                    \
          int64_t cell = cy * g.gx + cx, h = g.head[cell], e = g.start[cell + 1];                                      \
          while (h < e && g.items[h] <= i) h++;                                                                        \
          g.head[cell] = h;                                                                                            \
          for (; h < e; h++)                                                                                           \
            if (!c->dead[g.items[h]] && over_##T(c, i, g.items[h])) c->dead[g.items[h]] = 1;                           \
        }                                                                                                              \
    }                                                                                                                  \
    free(r), grid_free(&g);                                                                                            \
    return true;                                                                                                       \
  }
GRID_T(float)
GRID_T(double)

/* Orders rows by (class, row): the members of a class, in rank order. */
static int by_class(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : x[1] < y[1] ? -1 : x[1] > y[1];
}

/* The rows of each class in turn (rows[2 * r + 1]; one class when cls is
 * NULL) and where each class starts (starts[0..*ncls], the last = n). */
static int64_t *class_rows(const int64_t *cls, int64_t n, int64_t **starts, int64_t *ncls) {
  int64_t *rows = malloc(sizeof *rows * (size_t)(2 * n + n + 1));
  if (!rows) return NULL;
  for (int64_t r = 0; r < n; r++) rows[2 * r] = cls ? cls[r] : 0, rows[2 * r + 1] = r;
  if (cls) qsort(rows, (size_t)n, 2 * sizeof *rows, by_class);
  int64_t *s = rows + 2 * n, k = 0;
  for (int64_t r = 0; r < n; r++)
    if (r == 0 || rows[2 * r] != rows[2 * r - 2]) s[k++] = r;
  s[k] = n;
  *starts = s, *ncls = k;
  return rows;
}

#define RUN_T(T)                                                                                                       \
  static mt_status run_##T(const T *b, const int64_t *cls, int64_t n, double thr, uint8_t *keep) {                     \
    int64_t *starts = NULL, ncls = 0, *rows = class_rows(cls, n, &starts, &ncls);                                      \
    T *f = malloc(sizeof *f * (size_t)(5 * n));                                                                        \
    int64_t *id = malloc(sizeof *id * (size_t)n);                                                                      \
    uint8_t *dead = malloc((size_t)n);                                                                                 \
    mt_status st = rows && f && id && dead ? MT_OK : mt_fail(MT_ENOMEM, "nms: out of memory for %lld boxes", (long long)n); \
    for (int64_t k = 0; k < ncls && !st; k++) {                                                                        \
      int64_t s = starts[k], m = starts[k + 1] - s;                                                                    \
      cand_##T c = {f, f + n, f + 2 * n, f + 3 * n, f + 4 * n, id, dead, 0, 0, 0, 0, 0, thr, 0};                        \
      for (int64_t j = 0; j < m; j++) {                                                                                \
        const T *q = b + 4 * rows[2 * (s + j) + 1];                                                                    \
        c.x1[j] = q[0], c.y1[j] = q[1], c.x2[j] = q[2], c.y2[j] = q[3], c.ar[j] = (q[2] - q[0]) * (q[3] - q[1]);       \
        c.id[j] = rows[2 * (s + j) + 1];                                                                               \
      }                                                                                                                \
      if (m < GRID_MIN || !(thr >= 0) || !grid_greedy_##T(&c, m, keep)) st = greedy_##T(&c, m, keep);                                                                                    \
    }                                                                                                                  \
    free(rows), free(f), free(id), free(dead);                                                                         \
    return st;                                                                                                         \
  }
RUN_T(float)
RUN_T(double)

mt_status mt_cpu_nms(mt_dtype dt, const void *boxes, const int64_t *cls, int64_t n, double thr, uint8_t *keep) {
  memset(keep, 0, (size_t)n);
  if (n == 0) return MT_OK;
  return dt == MT_FLOAT64 ? run_double(boxes, cls, n, thr, keep) : run_float(boxes, cls, n, thr, keep);
}
