/* unique.c -- torch.unique: the sorted distinct values of a tensor, or the
 * distinct slices along one dim, with the inverse mapping and the counts.
 * x becomes rows [S, R] (S values of one element, or S slices of R); the
 * rows are put in order (mt_sort for single values, a merge sort of row
 * positions otherwise), then runs of equal rows become one output row. */
#include <stdlib.h>
#include <string.h>

#include "cpu/dtypes.h"
#include "cuda/mt_cuda.h"
#include "reduce_util.h"

typedef int (*rowcmp_fn)(const void *a, const void *b, int64_t R);
typedef bool (*roweq_fn)(const void *a, const void *b, int64_t R);

/* lexicographic order with NaN as the largest value; equality by == so that
 * NaNs stay distinct */
#define DEF_ROWS(tag, T, ISNAN)                                                                                        \
  static int cmp_##tag(const void *a, const void *b, int64_t R) {                                                      \
    const T *x = a, *y = b;                                                                                            \
    for (int64_t k = 0; k < R; k++) {                                                                                  \
      T u = x[k], v = y[k];                                                                                            \
      if (u < v || (!ISNAN(u) && ISNAN(v))) return -1;                                                                 \
      if (v < u || (ISNAN(u) && !ISNAN(v))) return 1;                                                                  \
    }                                                                                                                  \
    return 0;                                                                                                          \
  }                                                                                                                    \
  static bool eq_##tag(const void *a, const void *b, int64_t R) {                                                      \
    const T *x = a, *y = b;                                                                                            \
    for (int64_t k = 0; k < R; k++)                                                                                    \
      if (!(x[k] == y[k])) return false;                                                                               \
    return true;                                                                                                       \
  }
#define FNAN(v) ((v) != (v))
#define INAN(v) 0
DEF_ROWS(f32, float, FNAN)
DEF_ROWS(f64, double, FNAN)
#define DEF_ROWS_INT(E, tag, T, C) DEF_ROWS(tag, T, INAN)
MT_DTYPES_INT(DEF_ROWS_INT)

#define ROWFNS_INT(E, tag, T, C) [E] = {cmp_##tag, eq_##tag},
static const struct {
  rowcmp_fn cmp;
  roweq_fn eq;
} row_fns[MT_NDTYPE] = {[MT_FLOAT32] = {cmp_f32, eq_f32},
                        [MT_FLOAT64] = {cmp_f64, eq_f64},
                        MT_DTYPES_INT(ROWFNS_INT)[MT_BOOL] = {cmp_u8, eq_u8}};

/* Stable merge sort of the row positions perm[0..S) of rows (R elements of
 * es bytes each); tmp has room for S positions. Stops early, perm left in
 * some order, when Ctrl-C was pressed (the caller checks the flag). */
static void sort_rows(int64_t *perm, int64_t *tmp, int64_t S, const char *rows, int64_t R, size_t es, rowcmp_fn cmp) {
  int64_t rb = R * (int64_t)es, since = 0, per = mt_poll_items(R);
  int64_t *src = perm, *dst = tmp;
  for (int64_t w = 1; w < S; w *= 2) {
    for (int64_t lo = 0; lo < S; lo += 2 * w) {
      int64_t mid = lo + w < S ? lo + w : S, hi = lo + 2 * w < S ? lo + 2 * w : S, a = lo, b = mid, o = lo;
      for (int64_t c; (c = mid - a < hi - b ? mid - a : hi - b) > 0;) { /* in pieces: neither run ends inside */
        if (c > per) c = per;
        if (mt_poll(&since, c * R)) return;
        for (; c > 0; c--) dst[o++] = cmp(rows + src[b] * rb, rows + src[a] * rb, R) < 0 ? src[b++] : src[a++];
      }
      while (a < mid) dst[o++] = src[a++];
      while (b < hi) dst[o++] = src[b++];
    }
    int64_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != perm) memcpy(perm, src, (size_t)S * sizeof *perm);
}

/* Groups runs of equal rows in the order perm: returns G and fills vals
 * ([S, R] room), inv[S] (1-based group of each input row) and cnt[S] (size
 * of each group). */
static int64_t group_rows(const int64_t *perm, int64_t S, const char *rows, int64_t R, size_t es, roweq_fn eq,
                          char *vals, int64_t *inv, int64_t *cnt) {
  int64_t rb = R * (int64_t)es, G = 0;
  for (int64_t s = 0; s < S; s++) {
    const char *row = rows + perm[s] * rb;
    if (s == 0 || !eq(row, vals + (G - 1) * rb, R)) {
      memcpy(vals + G * rb, row, (size_t)rb);
      cnt[G++] = 0;
    }
    cnt[G - 1]++;
    inv[perm[s]] = G; /* 1-based */
  }
  return G;
}

/* rows [S, R] of x: flattened (dim < 0) or slices along dim */
static mt_status as_rows(const mt_tensor *x, int dim, mt_tensor **rows) {
  mt_tensor *xu = NULL, *p = NULL, *c = NULL;
  mt_status st = mt_upcast_half(x, &xu);
  if (st) return st;
  int64_t shape[2] = {mt_numel(x), 1};
  if (dim >= 0) {
    int perm[MT_MAXDIM], n = 0;
    perm[n++] = dim;
    for (int d = 0; d < x->ndim; d++)
      if (d != dim) perm[n++] = d;
    st = mt_permute(xu, perm, n, &p);
    shape[0] = x->shape[dim];
    shape[1] = shape[0] ? mt_numel(x) / shape[0] : 0;
  } else {
    p = mt_retain(xu);
  }
  if (!st) st = mt_contiguous(p, &c);
  if (!st) st = mt_reshape_new(c, shape, 2, rows);
  mt_release(xu);
  mt_release(p);
  mt_release(c);
  return st;
}

/* The sorted order of the rows: mt_sort's positions for single values (the
 * fast typed sort), else a merge sort of row positions. */
static mt_status row_order(const mt_tensor *rows, int64_t **perm) {
  int64_t S = rows->shape[0], R = rows->shape[1];
  *perm = malloc((size_t)(S ? S : 1) * sizeof **perm);
  if (!*perm) return mt_fail(MT_ENOMEM, "unique: out of memory");
  if (R == 1) {
    mt_tensor *flat = NULL, *idx = NULL;
    mt_status st = mt_reshape_new((mt_tensor *)rows, &S, 1, &flat);
    if (!st) st = mt_argsort(flat, 0, false, true, &idx);
    if (!st) {
      const int64_t *p = (const int64_t *)(void *)mt_data(idx);
      for (int64_t s = 0; s < S; s++) (*perm)[s] = p[s] - 1; /* argsort is 1-based */
    }
    mt_release(flat);
    mt_release(idx);
    return st;
  }
  int64_t *tmp = malloc((size_t)(S ? S : 1) * sizeof *tmp);
  if (!tmp) return mt_fail(MT_ENOMEM, "unique: out of memory");
  for (int64_t s = 0; s < S; s++) (*perm)[s] = s;
  sort_rows(*perm, tmp, S, mt_data(rows), R, mt_elsize(rows), row_fns[rows->dtype].cmp);
  free(tmp);
  return mt_interrupted() ? mt_fail(MT_EINTR, "interrupted") : MT_OK;
}

/* A CUDA x is uniqued on a host copy (a row sort and a grouping pass, with
 * result sizes known only at the end) and the results copied back. */
static mt_status unique_on_host(const mt_tensor *x, const int *dim, mt_tensor **out, mt_tensor **inverse,
                                mt_tensor **counts) {
  mt_tensor *h = NULL, *r[3] = {NULL, NULL, NULL};
  mt_tensor **dst[3] = {out, inverse, counts};
  mt_status st = mt_cuda_to_device(x, mt_cpu(), false, &h);
  if (!st) st = mt_unique(h, dim, &r[0], inverse ? &r[1] : NULL, counts ? &r[2] : NULL);
  mt_release(h);
  for (int k = 0; k < 3; k++) {
    mt_tensor *g = NULL;
    if (!st && r[k]) st = mt_cuda_to_device(r[k], mt_tdevice(x), false, &g);
    if (!st && g) st = mt_deliver("unique", g, dst[k]);
    mt_release(r[k]);
  }
  return st;
}

mt_status mt_unique(const mt_tensor *x, const int *dim, mt_tensor **out, mt_tensor **inverse, mt_tensor **counts) {
  if (mt_tdevice(x).type == MT_CUDA) return unique_on_host(x, dim, out, inverse, counts);
  int d = -1;
  mt_status st = MT_OK;
  if (dim && (st = mt_wrap_dim("unique", *dim, x->ndim, &d))) return st;
  if (dim && x->ndim == 0) return mt_fail(MT_EINDEX, "unique: a 0-dim tensor has no dimension to take slices along");
  mt_tensor *rows = NULL, *vals = NULL, *inv = NULL, *cnt = NULL, *t[6] = {NULL};
  int64_t *perm = NULL;
  if ((st = as_rows(x, d, &rows)) || (st = row_order(rows, &perm))) goto done;
  int64_t S = rows->shape[0], R = rows->shape[1];
  if ((st = mt_empty(rows->shape, 2, (mt_dtype)rows->dtype, mt_tdevice(x), &vals)) ||
      (st = mt_empty(&S, 1, MT_INT64, mt_tdevice(x), &inv)) || (st = mt_empty(&S, 1, MT_INT64, mt_tdevice(x), &cnt)))
    goto done;
  int64_t G = group_rows(perm, S, mt_data(rows), R, mt_elsize(rows), row_fns[rows->dtype].eq, mt_data(vals),
                         (int64_t *)(void *)mt_data(inv), (int64_t *)(void *)mt_data(cnt));
  /* values: [G] flat, else [G, rest...] with G moved back to dim */
  int64_t shape[MT_MAXDIM];
  int nd = 1;
  shape[0] = G;
  if (d >= 0)
    for (int k = 0; k < x->ndim; k++)
      if (k != d) shape[nd++] = x->shape[k];
  if ((st = mt_narrow(vals, 0, 0, G, &t[0])) || (st = mt_reshape_new(t[0], shape, nd, &t[1])) ||
      (st = mt_to_dtype(t[1], (mt_dtype)x->dtype, true, &t[2])))
    goto done;
  if (d > 0) {
    int perm2[MT_MAXDIM];
    for (int k = 0; k < nd; k++) perm2[k] = k == d ? 0 : k < d ? k + 1 : k;
    if ((st = mt_permute(t[2], perm2, nd, &t[3])) || (st = mt_contiguous(t[3], &t[4]))) goto done;
  } else {
    t[4] = mt_retain(t[2]);
  }
  bool fo = !*out, fi = inverse && !*inverse;
  if ((st = mt_deliver("unique", t[4], out))) {
    t[4] = NULL;
    goto done;
  }
  t[4] = NULL;
  if (inverse) {
    if (d < 0 && !(st = mt_reshape_new(inv, x->shape, x->ndim, &t[5])))
      st = mt_deliver("unique", t[5], inverse), t[5] = NULL;
    else if (d >= 0)
      st = mt_deliver("unique", mt_retain(inv), inverse);
  }
  if (!st && counts) {
    mt_tensor *c = NULL;
    if (!(st = mt_narrow(cnt, 0, 0, G, &c))) st = mt_contiguous(c, &t[5]);
    mt_release(c);
    if (!st) st = mt_deliver("unique", t[5], counts), t[5] = NULL;
  }
  if (st) { /* hand out all or nothing */
    if (fo) mt_release(*out), *out = NULL;
    if (fi) mt_release(*inverse), *inverse = NULL;
  }
done:
  free(perm);
  mt_release(rows);
  mt_release(vals);
  mt_release(inv);
  mt_release(cnt);
  for (int k = 0; k < 6; k++) mt_release(t[k]);
  return st;
}
