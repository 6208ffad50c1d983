/* scan.c -- cumulative ops along one dim: cumsum, cumprod, cummax, cummin.
 * x is made contiguous and seen as [O, L, K] (outer, scanned, inner); a
 * task scans one outer index for a block of up to SCAN_BLOCK inner columns,
 * so the inner loop runs over contiguous columns. Sums and products
 * accumulate in double (floating) or wrapping int64 (integers, bool). */
#include <string.h>

#include "cpu/dtypes.h"
#include "cuda/mt_cuda.h"
#include "reduce_util.h"

#define SCAN_BLOCK 256
/* The loops that look at the interrupt flag live in functions of their own:
 * inlined, they would grow the frame of every call, and a scan of many short
 * rows makes a call per row. */
#define NOINLINE __attribute__((noinline))

typedef struct scan_job scan_job;
typedef void (*scan_fn)(const scan_job *j, int64_t o, int64_t k0, int64_t kn);
struct scan_job {
  const char *x;
  char *y;
  int64_t *yi; /* cummax/cummin: indices */
  int64_t L, K, nkb;
  scan_fn fn;
};

/* Rows of `kn` elements between two looks at the interrupt flag in a scan
 * of L rows: all of them when the scan is short (no division then). */
static inline int64_t poll_rows(int64_t L, int64_t kn) { return L * kn > MT_POLL_WORK ? mt_poll_items(kn) : L; }

/* sum/prod, accumulated in ACC */
#define DEF_CUM(name, tag, T, ACC, OP, ID)                                                                             \
  /* one row longer than MT_POLL_WORK, in pieces with a look at the flag between them */                               \
  static NOINLINE void name##_long_##tag(const T *x, T *y, int64_t n) {                                                \
    ACC a = ID;                                                                                                        \
    for (int64_t i = 0; i < n && !mt_interrupted();)                                                                   \
      for (int64_t e = n - i > MT_POLL_WORK ? i + MT_POLL_WORK : n; i < e; i++) y[i] = (T)(a = a OP(ACC) x[i]);        \
  }                                                                                                                    \
  /* kn columns of stride K: ACC accumulators, one per column, in blocks of rows */                                    \
  static NOINLINE void name##_cols_##tag(const scan_job *j, const T *x, T *y, int64_t kn) {                            \
    ACC acc[SCAN_BLOCK];                                                                                               \
    for (int64_t k = 0; k < kn; k++) acc[k] = ID;                                                                      \
    int64_t per = poll_rows(j->L, kn);                                                                                 \
    for (int64_t i0 = 0; i0 < j->L && !(i0 > 0 && mt_interrupted()); i0 += per)                                        \
      for (int64_t i = i0, i1 = j->L - i0 > per ? i0 + per : j->L; i < i1; i++, x += j->K, y += j->K)                  \
        for (int64_t k = 0; k < kn; k++) {                                                                             \
          acc[k] = acc[k] OP(ACC) x[k];                                                                                \
          y[k] = (T)acc[k];                                                                                            \
        }                                                                                                              \
  }                                                                                                                    \
  static void name##_##tag(const scan_job *j, int64_t o, int64_t k0, int64_t kn) {                                     \
    const T *x = (const T *)(const void *)j->x + o * j->L * j->K + k0;                                                 \
    T *y = (T *)(void *)j->y + o * j->L * j->K + k0;                                                                   \
    if (j->K != 1) {                                                                                                   \
      name##_cols_##tag(j, x, y, kn);                                                                                  \
    } else if (j->L > MT_POLL_WORK) {                                                                                  \
      name##_long_##tag(x, y, j->L);                                                                                   \
    } else { /* one row: a scalar running value */                                                                     \
      ACC a = ID;                                                                                                      \
      for (int64_t i = 0; i < j->L; i++) y[i] = (T)(a = a OP(ACC) x[i]);                                               \
    }                                                                                                                  \
  }
DEF_CUM(cumsum, f32, float, double, +, 0)
DEF_CUM(cumsum, f64, double, double, +, 0)
DEF_CUM(cumsum, i64, int64_t, uint64_t, +, 0)
DEF_CUM(cumprod, f32, float, double, *, 1)
DEF_CUM(cumprod, f64, double, double, *, 1)
DEF_CUM(cumprod, i64, int64_t, uint64_t, *, 1)

/* running extremes: ties and NaNs move the index to the latest position;
 * once a NaN is seen it stays the value. CUMEXT_ROWS runs rows [i0, i1),
 * x, y and yi at row i0; best and bi carry the extremes from row to row. */
#define CUMEXT_ROWS(T, CMP, ISNAN)                                                                                     \
  for (int64_t i = i0; i < i1; i++, x += j->K, y += j->K, yi += j->K)                                                  \
    for (int64_t k = 0; k < kn; k++) {                                                                                 \
      T v = x[k];                                                                                                      \
      if (i == 0 || ISNAN(v) || (!ISNAN(best[k]) && v CMP best[k])) {                                                  \
        best[k] = v;                                                                                                   \
        bi[k] = i + 1; /* 1-based */                                                                                   \
      }                                                                                                                \
      y[k] = best[k];                                                                                                  \
      yi[k] = bi[k];                                                                                                   \
    }
#define DEF_CUMEXT(name, tag, T, CMP, ISNAN)                                                                           \
  /* a long scan in blocks of rows, with a look at the flag between them */                                            \
  static NOINLINE void name##_long_##tag(const scan_job *j, const T *x, T *y, int64_t *yi, int64_t kn) {               \
    T best[SCAN_BLOCK];                                                                                                \
    int64_t bi[SCAN_BLOCK], per = mt_poll_items(kn);                                                                   \
    for (int64_t i0 = 0; i0 < j->L && !(i0 > 0 && mt_interrupted()); i0 += per) {                                      \
      int64_t i1 = j->L - i0 > per ? i0 + per : j->L;                                                                  \
      CUMEXT_ROWS(T, CMP, ISNAN)                                                                                       \
    }                                                                                                                  \
  }                                                                                                                    \
  static void name##_##tag(const scan_job *j, int64_t o, int64_t k0, int64_t kn) {                                     \
    int64_t base = o * j->L * j->K + k0;                                                                               \
    const T *x = (const T *)(const void *)j->x + base;                                                                 \
    T *y = (T *)(void *)j->y + base;                                                                                   \
    int64_t *yi = j->yi + base;                                                                                        \
    if (j->L * kn > MT_POLL_WORK) {                                                                                    \
      name##_long_##tag(j, x, y, yi, kn);                                                                              \
      return;                                                                                                          \
    }                                                                                                                  \
    T best[SCAN_BLOCK];                                                                                                \
    int64_t bi[SCAN_BLOCK], i0 = 0, i1 = j->L;                                                                         \
    CUMEXT_ROWS(T, CMP, ISNAN)                                                                                         \
  }
#define FNAN(v) ((v) != (v))
#define INAN(v) 0
#define DEF_EXT_FLOAT(tag, T) DEF_CUMEXT(cummax, tag, T, >=, FNAN) DEF_CUMEXT(cummin, tag, T, <=, FNAN)
#define DEF_EXT_INT(E, tag, T, C) DEF_CUMEXT(cummax, tag, T, >=, INAN) DEF_CUMEXT(cummin, tag, T, <=, INAN)
DEF_EXT_FLOAT(f32, float)
DEF_EXT_FLOAT(f64, double)
MT_DTYPES_INT(DEF_EXT_INT)

#define EXT_ENTRY(E, tag, T, C) [E] = {cummax_##tag, cummin_##tag},
static const scan_fn ext_table[MT_NDTYPE][2] = {[MT_FLOAT32] = {cummax_f32, cummin_f32},
                                                [MT_FLOAT64] = {cummax_f64, cummin_f64},
                                                MT_DTYPES_INT(EXT_ENTRY)[MT_BOOL] = {cummax_u8, cummin_u8}};

/* Tasks [b, e) in blocks, looking at the flag between them; the scans
 * stop early too when Ctrl-C was pressed (mt_parallel_for reports it). */
static void scan_task(void *ctx, int64_t b, int64_t e) {
  const scan_job *j = ctx;
  int64_t per = poll_rows(e - b, j->L * (j->K < SCAN_BLOCK ? j->K : SCAN_BLOCK));
  for (int64_t t0 = b; t0 < e && !(t0 > b && mt_interrupted()); t0 += per)
    for (int64_t t = t0, t1 = e - t0 > per ? t0 + per : e; t < t1; t++) {
      int64_t k0 = (t % j->nkb) * SCAN_BLOCK;
      j->fn(j, t / j->nkb, k0, j->K - k0 < SCAN_BLOCK ? j->K - k0 : SCAN_BLOCK);
    }
}

/* Runs fn over contiguous x into y (and yi), both of x's shape; a CUDA x
 * runs the device kernel of the same kind (0 sum, 1 prod, 2 max, 3 min). */
static mt_status run_scan(const mt_tensor *x, int dim, scan_fn fn, int kind, mt_tensor *y, mt_tensor *yi) {
  if (mt_tdevice(x).type == MT_CUDA) return mt_cuda_scan(kind, x, dim, y, yi);
  int64_t O = 1, L = x->ndim ? x->shape[dim] : 1, K = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (d < dim) O *= x->shape[d];
    if (d > dim) K *= x->shape[d];
  }
  if (O == 0 || L == 0 || K == 0) return MT_OK;
  scan_job j = {mt_data(x), mt_data(y), yi ? (int64_t *)(void *)mt_data(yi) : NULL, L, K, 0, fn};
  j.nkb = (K + SCAN_BLOCK - 1) / SCAN_BLOCK;
  int64_t work = L * (K < SCAN_BLOCK ? K : SCAN_BLOCK);
  int64_t grain = work > (1 << 15) ? 1 : (1 << 15) / work;
  return mt_parallel_for(O * j.nkb, grain, scan_task, &j);
}

/* cumsum/cumprod: computes in float32/float64/int64, returns rt. */
static mt_status cum_op(const char *op, const scan_fn *fns, int kind, const mt_tensor *x, int dim, int dtype,
                        mt_tensor **out) {
  mt_status st = mt_wrap_dim(op, dim, x->ndim, &dim);
  if (st) return st;
  mt_dtype rt = dtype >= 0 ? (mt_dtype)dtype : mt_is_floating((mt_dtype)x->dtype) ? (mt_dtype)x->dtype : MT_INT64;
  mt_dtype cdt = rt == MT_FLOAT64 ? MT_FLOAT64 : mt_is_floating(rt) ? MT_FLOAT32 : MT_INT64;
  mt_tensor *xt = NULL, *xc = NULL, *y = NULL, *r = NULL;
  if (!(st = mt_to_dtype(x, cdt, false, &xt)) && !(st = mt_contiguous(xt, &xc)) &&
      !(st = mt_empty(x->shape, x->ndim, cdt, mt_tdevice(x), &y)) &&
      !(st = run_scan(xc, dim,
                      fns[cdt == MT_FLOAT32   ? 0
                          : cdt == MT_FLOAT64 ? 1
                                              : 2],
                      kind, y, NULL)) &&
      !(st = mt_to_dtype(y, rt, false, &r)))
    st = mt_deliver(op, r, out);
  mt_release(xt);
  mt_release(xc);
  mt_release(y);
  return st;
}

mt_status mt_cumsum(const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  static const scan_fn fns[3] = {cumsum_f32, cumsum_f64, cumsum_i64};
  return cum_op("cumsum", fns, 0, x, dim, dtype, out);
}

mt_status mt_cumprod(const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  static const scan_fn fns[3] = {cumprod_f32, cumprod_f64, cumprod_i64};
  return cum_op("cumprod", fns, 1, x, dim, dtype, out);
}

static mt_status cumext(const char *op, int which, const mt_tensor *x, int dim, mt_tensor **values,
                        mt_tensor **indices) {
  mt_status st = mt_wrap_dim(op, dim, x->ndim, &dim);
  if (st) return st;
  mt_tensor *xt = NULL, *xc = NULL, *y = NULL, *yi = NULL, *r = NULL;
  bool fresh = !*values;
  if (!(st = mt_upcast_half(x, &xt)) && !(st = mt_contiguous(xt, &xc)) &&
      !(st = mt_empty(x->shape, x->ndim, (mt_dtype)xc->dtype, mt_tdevice(x), &y)) &&
      !(st = mt_empty(x->shape, x->ndim, MT_INT64, mt_tdevice(x), &yi)) &&
      !(st = run_scan(xc, dim, ext_table[xc->dtype][which], 2 + which, y, yi)) &&
      !(st = mt_to_dtype(y, (mt_dtype)x->dtype, false, &r)) && !(st = mt_deliver(op, r, values))) {
    st = mt_deliver(op, yi, indices);
    yi = NULL;
    if (st && fresh) {
      mt_release(*values);
      *values = NULL;
    }
  }
  mt_release(xt);
  mt_release(xc);
  mt_release(y);
  mt_release(yi);
  return st;
}

mt_status mt_cummax(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices) {
  return cumext("cummax", 0, x, dim, values, indices);
}

mt_status mt_cummin(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices) {
  return cumext("cummin", 1, x, dim, values, indices);
}
