/* sort.c -- sort, argsort, topk, kthvalue, median, nanmedian, mode along
 * one dim, moved last. Rows are merge-sorted as (value, position) pairs, NaN
 * ranking largest and equal values by position (stable); topk of a small k
 * keeps a heap. Selections pick positions from sorted rows. Half types are
 * sorted as float32 (exact) and converted back. */
#include <stdlib.h>
#include <string.h>

#include "cpu/dtypes.h"
#include "cuda/mt_cuda.h"
#include "reduce_util.h"

#define RUN 32 /* rows are first sorted in runs of RUN by insertion */
#define POLL_ROW 4096 /* rows this long look at the interrupt flag inside; shorter ones between rows */

/* Length of the next piece of a merge with na and nb elements left in its
 * two runs: a merge looks at the interrupt flag between pieces. */
static inline int64_t merge_piece(int64_t na, int64_t nb) {
  int64_t c = na < nb ? na : nb;
  return c < MT_POLL_WORK ? c : MT_POLL_WORK;
}

typedef struct sort_fns {
  /* the first k of x[0..n) in sorted order (all of them when k == n) into
   * vals and idx (1-based positions); scratch holds 2n pairs */
  void (*sort)(const void *x, int64_t n, int64_t k, bool desc, void *vals, int64_t *idx, void *scratch);
  bool (*isnan)(const void *p);
  bool (*eq)(const void *p, const void *q);
} sort_fns;

#define DEF_SORT(tag, T, ISNAN)                                                                                        \
  typedef struct {                                                                                                     \
    T v;                                                                                                               \
    int64_t i;                                                                                                         \
  } pair_##tag;                                                                                                        \
  static inline bool before_##tag(T a, T b, bool desc) {                                                               \
    if (desc) return a > b || (ISNAN(a) && !ISNAN(b));                                                                 \
    return a < b || (!ISNAN(a) && ISNAN(b));                                                                           \
  }                                                                                                                    \
  /* a goes before b: by value, equal values by position (a stable order) */                                           \
  static inline bool pbefore_##tag(pair_##tag a, pair_##tag b, bool desc) {                                            \
    return before_##tag(a.v, b.v, desc) || (!before_##tag(b.v, a.v, desc) && a.i < b.i);                               \
  }                                                                                                                    \
  /* sorts src[0..n) with dst as room; returns the one holding the result,                                            \
   * unfinished if Ctrl-C stopped it (the caller sees the engine's flag) */                                            \
  static pair_##tag *msort_##tag(pair_##tag *src, pair_##tag *dst, int64_t n, bool desc) {                             \
    int64_t since = 0;                                                                                                 \
    for (int64_t s = 0; s < n; s += RUN) {                                                                             \
      int64_t e = s + RUN < n ? s + RUN : n;                                                                           \
      if (n >= POLL_ROW && mt_poll(&since, RUN * 8)) return src; /* about RUN * 8 steps a run */                       \
      for (int64_t i = s + 1; i < e; i++) {                                                                            \
        pair_##tag p = src[i];                                                                                         \
        int64_t j = i;                                                                                                 \
        for (; j > s && pbefore_##tag(p, src[j - 1], desc); j--) src[j] = src[j - 1];                                  \
        src[j] = p;                                                                                                    \
      }                                                                                                                \
    }                                                                                                                  \
    for (int64_t w = RUN; w < n; w *= 2) {                                                                             \
      for (int64_t lo = 0; lo < n; lo += 2 * w) {                                                                      \
        int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, o = lo;          \
        /* merged in pieces of at most MT_POLL_WORK outputs; neither run ends inside a piece */                        \
        for (int64_t c; (c = merge_piece(mid - a, hi - b)) > 0;) {                                                     \
          if (mt_poll(&since, c)) return src;                                                                          \
          for (; c > 0; c--) dst[o++] = pbefore_##tag(src[b], src[a], desc) ? src[b++] : src[a++];                     \
        }                                                                                                              \
        while (a < mid) dst[o++] = src[a++];                                                                           \
        while (b < hi) dst[o++] = src[b++];                                                                            \
      }                                                                                                                \
      pair_##tag *t = src;                                                                                             \
      src = dst;                                                                                                       \
      dst = t;                                                                                                         \
    }                                                                                                                  \
    return src;                                                                                                        \
  }                                                                                                                    \
  /* heap of the best k seen so far, the one sorting last at the root */                                               \
  static void sift_down_##tag(pair_##tag *h, int64_t m, int64_t i, bool desc) {                                        \
    for (;;) {                                                                                                         \
      int64_t c = 2 * i + 1;                                                                                           \
      if (c >= m) return;                                                                                              \
      if (c + 1 < m && pbefore_##tag(h[c], h[c + 1], desc)) c++;                                                       \
      if (!pbefore_##tag(h[i], h[c], desc)) return;                                                                    \
      pair_##tag t = h[i];                                                                                             \
      h[i] = h[c];                                                                                                     \
      h[c] = t;                                                                                                        \
      i = c;                                                                                                           \
    }                                                                                                                  \
  }                                                                                                                    \
  static void sift_up_##tag(pair_##tag *h, int64_t i, bool desc) {                                                     \
    while (i > 0 && pbefore_##tag(h[(i - 1) / 2], h[i], desc)) {                                                       \
      pair_##tag t = h[i];                                                                                             \
      h[i] = h[(i - 1) / 2];                                                                                           \
      h[(i - 1) / 2] = t;                                                                                              \
      i = (i - 1) / 2;                                                                                                 \
    }                                                                                                                  \
  }                                                                                                                    \
  /* small k: a heap pass over the row, then a sort of the k kept; stops                                               \
   * early (leaving vals and idx unset) when Ctrl-C was pressed */                                                     \
  static void sort_##tag(const void *xv, int64_t n, int64_t k, bool desc, void *vals, int64_t *idx, void *scratch) {   \
    const T *x = xv;                                                                                                   \
    pair_##tag *src = scratch, *res;                                                                                   \
    if (k * 8 < n) {                                                                                                   \
      for (int64_t i0 = 0; i0 < n; i0 += MT_POLL_WORK) {                                                               \
        if (i0 > 0 && mt_interrupted()) return;                                                                        \
        for (int64_t i = i0, i1 = n - i0 > MT_POLL_WORK ? i0 + MT_POLL_WORK : n; i < i1; i++) {                        \
          pair_##tag p = {x[i], i};                                                                                    \
          if (i < k) {                                                                                                 \
            src[i] = p;                                                                                                \
            sift_up_##tag(src, i, desc);                                                                               \
          } else if (k > 0 && pbefore_##tag(p, src[0], desc)) {                                                       \
            src[0] = p;                                                                                                \
            sift_down_##tag(src, k, 0, desc);                                                                          \
          }                                                                                                            \
        }                                                                                                              \
      }                                                                                                                \
      res = msort_##tag(src, src + k, k, desc);                                                                        \
    } else {                                                                                                           \
      int64_t i = 0; /* a long row in pieces, looking at the flag between them (page faults make it slow) */         \
      while (n - i > MT_POLL_WORK) {                                                                                   \
        if (mt_interrupted()) return;                                                                                  \
        for (int64_t e = i + MT_POLL_WORK; i < e; i++) src[i].v = x[i], src[i].i = i;                                  \
      }                                                                                                                \
      for (; i < n; i++) src[i].v = x[i], src[i].i = i;                                                                \
      res = msort_##tag(src, src + n, n, desc);                                                                        \
    }                                                                                                                  \
    if (n >= POLL_ROW && mt_interrupted()) return; /* no copy of what a stopped sort left */                           \
    T *out = vals;                                                                                                     \
    for (int64_t i = 0; i < k; i++) out[i] = res[i].v, idx[i] = res[i].i + 1; /* 1-based */                            \
  }                                                                                                                    \
  static bool isnan_##tag(const void *p) {                                                                             \
    T v;                                                                                                               \
    memcpy(&v, p, sizeof v);                                                                                           \
    return ISNAN(v);                                                                                                   \
  }                                                                                                                    \
  static bool eq_##tag(const void *p, const void *q) {                                                                 \
    T a, b;                                                                                                            \
    memcpy(&a, p, sizeof a);                                                                                           \
    memcpy(&b, q, sizeof b);                                                                                           \
    return a == b;                                                                                                     \
  }
#define FNAN(v) ((v) != (v))
#define INAN(v) 0
DEF_SORT(f32, float, FNAN)
DEF_SORT(f64, double, FNAN)
#define DEF_SORT_INT(E, tag, T, C) DEF_SORT(tag, T, INAN)
MT_DTYPES_INT(DEF_SORT_INT)

#define FNS(tag)                                                                                                       \
  { sort_##tag, isnan_##tag, eq_##tag }
#define FNS_INT(E, tag, T, C) [E] = FNS(tag),
static const sort_fns fns_table[MT_NDTYPE] = {
    [MT_FLOAT32] = FNS(f32), [MT_FLOAT64] = FNS(f64), MT_DTYPES_INT(FNS_INT)[MT_BOOL] = FNS(u8)};

typedef struct sort_job {
  const sort_fns *f;
  const char *x;
  char *vals;
  int64_t *idx;
  int64_t L, k;
  size_t es;
  bool desc;
  volatile int failed; /* a task could not get its scratch memory */
} sort_job;

static void sort_task(void *ctx, int64_t b, int64_t e) {
  sort_job *j = ctx;
  void *scratch = malloc((size_t)(2 * j->L) * sizeof(pair_f64) + 1);
  if (!scratch) {
    j->failed = 1;
    return;
  }
  int64_t per = mt_poll_items(j->L * 8); /* rows between two looks at the flag */
  for (int64_t r0 = b; r0 < e && !(r0 > b && mt_interrupted()); r0 += per)
    for (int64_t r = r0, r1 = e - r0 > per ? r0 + per : e; r < r1; r++)
      j->f->sort(j->x + r * j->L * (int64_t)j->es, j->L, j->k, j->desc, j->vals + r * j->k * (int64_t)j->es,
                 j->idx + r * j->k, scratch);
  free(scratch);
}

/* Rows of x with dim moved last ([M, L], float16/bfloat16 as float32),
 * each sorted and cut to its first k (k < 0: all): vals (same dtype as
 * *rows) and idx (1-based positions), both [M, k]. */
static mt_status sorted_rows(const mt_tensor *x, int dim, bool desc, int64_t k, mt_tensor **rows, mt_tensor **vals,
                             mt_tensor **idx) {
  mt_tensor *xu = NULL;
  mt_status st = mt_upcast_half(x, &xu);
  if (!st) st = mt_rows_of(xu, dim, rows);
  mt_release(xu);
  if (st) return st;
  mt_tensor *r = *rows;
  int64_t shape[MT_MAXDIM];
  int last = r->ndim - 1;
  memcpy(shape, r->shape, sizeof shape);
  int64_t L = shape[last], M = L ? mt_numel(r) / L : 0;
  if (k < 0) k = L;
  shape[last] = k;
  if ((st = mt_empty(shape, r->ndim, (mt_dtype)r->dtype, mt_tdevice(r), vals)) ||
      (st = mt_empty(shape, r->ndim, MT_INT64, mt_tdevice(r), idx))) {
    mt_release(*rows);
    mt_release(*vals);
    *rows = *vals = NULL;
    return st;
  }
  sort_job j = {
      &fns_table[r->dtype], mt_data(r), mt_data(*vals), (int64_t *)(void *)mt_data(*idx), L, k, mt_elsize(r), desc, 0};
  int64_t grain = L > (1 << 14) ? 1 : (1 << 14) / (L ? L : 1);
  if (mt_tdevice(r).type == MT_CUDA)
    st = mt_cuda_sort_rows(r, desc, k, *vals, *idx);
  else
    st = mt_parallel_for(M, grain, sort_task, &j);
  if (!st && j.failed) st = mt_fail(MT_ENOMEM, "sort: out of memory for rows of %lld elements", (long long)L);
  if (st) {
    mt_release(*rows);
    mt_release(*vals);
    mt_release(*idx);
    *rows = *vals = *idx = NULL;
  }
  return st;
}

/* Hands values (converted to dt) and indices, both laid out as rows, to
 * the caller in x's layout; consumes v and i. */
static mt_status give_pair(const char *op, mt_tensor *v, mt_tensor *i, int dim, int rank, mt_dtype dt,
                           mt_tensor **values, mt_tensor **indices) {
  mt_tensor *vc = NULL, *vr = NULL, *ir = NULL;
  bool fresh = values && !*values;
  mt_status st = mt_to_dtype(v, dt, false, &vc);
  mt_release(v);
  if (!st) st = mt_unrows(vc, dim, rank, &vr), vc = NULL;
  if (!st && values) st = mt_deliver(op, vr, values), vr = NULL;
  if (!st) st = mt_unrows(i, dim, rank, &ir), i = NULL;
  if (!st) st = mt_deliver(op, ir, indices), ir = NULL;
  if (st && fresh && *values) {
    mt_release(*values);
    *values = NULL;
  }
  mt_release(vc);
  mt_release(vr);
  mt_release(i);
  return st;
}

mt_status mt_sort(const mt_tensor *x, int dim, bool descending, bool stable, mt_tensor **values, mt_tensor **indices) {
  mt_tensor *rows = NULL, *v = NULL, *i = NULL;
  mt_status st = mt_wrap_dim("sort", dim, x->ndim, &dim);
  if (!st) st = sorted_rows(x, dim, descending, -1, &rows, &v, &i);
  if (st) return st;
  mt_release(rows);
  return give_pair("sort", v, i, dim, x->ndim, (mt_dtype)x->dtype, values, indices);
}

mt_status mt_argsort(const mt_tensor *x, int dim, bool descending, bool stable, mt_tensor **out) {
  mt_tensor *rows = NULL, *v = NULL, *i = NULL;
  mt_status st = mt_wrap_dim("argsort", dim, x->ndim, &dim);
  if (!st) st = sorted_rows(x, dim, descending, -1, &rows, &v, &i);
  if (st) return st;
  mt_release(rows);
  return give_pair("argsort", v, i, dim, x->ndim, (mt_dtype)x->dtype, NULL, out);
}

mt_status mt_topk(const mt_tensor *x, int64_t k, int dim, bool largest, bool sorted, mt_tensor **values,
                  mt_tensor **indices) {
  mt_status st = mt_wrap_dim("topk", dim, x->ndim, &dim);
  if (st) return st;
  int64_t L = x->ndim ? x->shape[dim] : 1;
  if (k < 0 || k > L)
    return mt_fail(MT_EARG, "topk: k = %lld is out of range for dimension %d of size %lld", (long long)k, dim + 1,
                   (long long)L);
  mt_tensor *rows = NULL, *v = NULL, *i = NULL;
  if ((st = sorted_rows(x, dim, largest, k, &rows, &v, &i))) return st;
  mt_release(rows);
  return give_pair("topk", v, i, dim, x->ndim, (mt_dtype)x->dtype, values, indices);
}

/* Picks one position per sorted row: pos(ctx, vals row, L) gives it. The
 * results take the reduced shape of x over dim (keepdim or not). */
typedef int64_t (*pick_fn)(const sort_fns *f, const char *vals, int64_t L, size_t es, int64_t *idx_out,
                           const int64_t *idx, void *ctx);

static int64_t pick_kth(const sort_fns *f, const char *vals, int64_t L, size_t es, int64_t *io, const int64_t *idx,
                        void *ctx);
static int64_t pick_median(const sort_fns *f, const char *vals, int64_t L, size_t es, int64_t *io, const int64_t *idx,
                           void *ctx);
static int64_t pick_mode(const sort_fns *f, const char *vals, int64_t L, size_t es, int64_t *io, const int64_t *idx,
                         void *ctx);

static mt_status pick(const char *op, const mt_tensor *x, int dim, bool keepdim, bool ignore_dim, pick_fn fn, void *ctx,
                      mt_tensor **values, mt_tensor **indices) {
  mt_tensor *rows = NULL, *v = NULL, *i = NULL, *pv = NULL, *pi = NULL, *rv = NULL;
  mt_status st = sorted_rows(x, dim, false, -1, &rows, &v, &i);
  if (st) return st;
  int64_t L = rows->shape[rows->ndim - 1], M = L ? mt_numel(rows) / L : 0;
  int64_t shape[MT_MAXDIM];
  int nd = ignore_dim ? 0 : mt_reduced_shape(x, x->ndim ? 1u << dim : 0, keepdim, shape);
  bool cuda = mt_tdevice(x).type == MT_CUDA;
  if (!(st = mt_empty(shape, nd, (mt_dtype)v->dtype, mt_tdevice(x), &pv)) &&
      !(st = mt_empty(shape, nd, MT_INT64, mt_tdevice(x), &pi)) && cuda) {
    /* the same picks, one device thread per row */
    int mode = fn == pick_kth ? 0 : fn == pick_mode ? 3 : *(const bool *)ctx ? 2 : 1;
    st = mt_cuda_pick(mode, mode == 0 ? *(const int64_t *)ctx : 0, v, i, pv, pi);
  }
  if (!st && !cuda) {
    const sort_fns *f = &fns_table[v->dtype];
    size_t es = mt_elsize(v);
    const char *vals = mt_data(v);
    const int64_t *idx = (const int64_t *)(const void *)mt_data(i);
    char *ov = mt_data(pv);
    int64_t *oi = (int64_t *)(void *)mt_data(pi);
    for (int64_t r = 0; r < M; r++) {
      int64_t p = fn(f, vals + r * L * (int64_t)es, L, es, &oi[r], idx + r * L, ctx);
      memcpy(ov + r * (int64_t)es, vals + (r * L + p) * (int64_t)es, es);
    }
  }
  if (!st) {
    bool fresh = values && !*values;
    if (!(st = mt_to_dtype(pv, (mt_dtype)x->dtype, false, &rv)) && !(st = mt_deliver(op, rv, values))) {
      if (indices) st = mt_deliver(op, mt_retain(pi), indices);
      if (st && fresh) {
        mt_release(*values);
        *values = NULL;
      }
    }
  }
  mt_tensor *all[] = {rows, v, i, pv, pi};
  for (size_t n = 0; n < sizeof all / sizeof *all; n++) mt_release(all[n]);
  return st;
}

static int64_t pick_kth(const sort_fns *f, const char *vals, int64_t L, size_t es, int64_t *io, const int64_t *idx,
                        void *ctx) {
  int64_t p = *(const int64_t *)ctx;
  *io = idx[p];
  return p;
}

mt_status mt_kthvalue(const mt_tensor *x, int64_t k, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  mt_status st = mt_wrap_dim("kthvalue", dim, x->ndim, &dim);
  if (st) return st;
  int64_t L = x->ndim ? x->shape[dim] : 1;
  if (k < 1 || k > L)
    return mt_fail(MT_EARG, "kthvalue: k = %lld is out of range for dimension %d of size %lld (use 1..%lld)",
                   (long long)k, dim + 1, (long long)L, (long long)L);
  int64_t p = k - 1;
  return pick("kthvalue", x, dim, keepdim, false, pick_kth, &p, values, indices);
}

/* Sorted ascending, the NaNs of a row sit at its end in input order. */
static int64_t count_nan(const sort_fns *f, const char *vals, int64_t L, size_t es) {
  int64_t n = 0;
  while (n < L && f->isnan(vals + (L - 1 - n) * (int64_t)es)) n++;
  return n;
}

/* median: the first NaN if any, else the lower middle; nanmedian: the lower
 * middle of the non-NaN values (the first NaN when all are NaN) */
static int64_t pick_median(const sort_fns *f, const char *vals, int64_t L, size_t es, int64_t *io, const int64_t *idx,
                           void *ctx) {
  bool ignore_nan = *(const bool *)ctx;
  int64_t nn = count_nan(f, vals, L, es), c = L - nn, p;
  if (nn > 0 && !ignore_nan)
    p = c;
  else
    p = c > 0 ? (c - 1) / 2 : 0;
  *io = idx[p];
  return p;
}

mt_status mt_median_dim(const mt_tensor *x, int dim, bool keepdim, bool ignore_nan, mt_tensor **values,
                        mt_tensor **indices) {
  const char *op = ignore_nan ? "nanmedian" : "median";
  mt_status st = mt_wrap_dim(op, dim, x->ndim, &dim);
  if (st) return st;
  if (x->ndim && x->shape[dim] == 0) return mt_fail(MT_ESHAPE, "%s: cannot reduce dimension %d of size 0", op, dim + 1);
  return pick(op, x, dim, keepdim, false, pick_median, &ignore_nan, values, indices);
}

mt_status mt_median_all(const mt_tensor *x, bool ignore_nan, mt_tensor **out) {
  const char *op = ignore_nan ? "nanmedian" : "median";
  if (mt_numel(x) == 0) return mt_fail(MT_ESHAPE, "%s: the input is empty", op);
  int64_t n = mt_numel(x);
  mt_tensor *xc = NULL, *flat = NULL;
  mt_status st = mt_contiguous(x, &xc);
  if (!st) st = mt_reshape_new(xc, &n, 1, &flat);
  if (!st) st = pick(op, flat, 0, false, true, pick_median, &ignore_nan, out, NULL);
  mt_release(xc);
  mt_release(flat);
  return st;
}

/* the longest run of equal values (the first, i.e. smallest, on ties) and
 * the largest input position inside it */
static int64_t pick_mode(const sort_fns *f, const char *vals, int64_t L, size_t es, int64_t *io, const int64_t *idx,
                         void *ctx) {
  int64_t best = 0, best_len = 0;
  for (int64_t s = 0; s < L;) {
    int64_t e = s + 1;
    while (e < L && f->eq(vals + e * (int64_t)es, vals + s * (int64_t)es)) e++;
    if (e - s > best_len) best = s, best_len = e - s;
    s = e;
  }
  int64_t mx = idx[best];
  for (int64_t k = best + 1; k < best + best_len; k++)
    if (idx[k] > mx) mx = idx[k];
  *io = mx;
  return best;
}

mt_status mt_mode(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  mt_status st = mt_wrap_dim("mode", dim, x->ndim, &dim);
  if (st) return st;
  if (x->ndim && x->shape[dim] == 0) return mt_fail(MT_ESHAPE, "mode: cannot reduce dimension %d of size 0", dim + 1);
  return pick("mode", x, dim, keepdim, false, pick_mode, NULL, values, indices);
}
