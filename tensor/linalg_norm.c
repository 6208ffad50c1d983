/* linalg_norm.c -- torch.linalg's norms (vector_norm, matrix_norm, norm)
 * and cross. Vector norms run their own small reduction loop (accumulating
 * in double) so that they do not depend on the reduction kernels (CUDA
 * tensors: norm of reduce_stats.c in float64 over the rows); matrix
 * norms compose vector norms and singular values from linalg.c. */
#include <math.h>
#include <string.h>

#include "cpu/dtypes.h"
#include "cuda/mt_cuda.h"
#include "linalg.h"
#include "reduce.h"

typedef double (*row_fn)(const char *p, int64_t n, double ord);

/* One norm over n contiguous values; NaN propagates through max and min. */
#define NORM_ROW(E, tag, T, C)                                                                                         \
  static double row_##tag(const char *p, int64_t n, double ord) {                                                      \
    const T *x = (const T *)p;                                                                                         \
    double acc = 0;                                                                                                    \
    if (ord == 2) {                                                                                                    \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        double v = mt_ld_##tag(x + i);                                                                                 \
        acc += v * v;                                                                                                  \
      }                                                                                                                \
      return sqrt(acc);                                                                                                \
    }                                                                                                                  \
    if (ord == 1) {                                                                                                    \
      for (int64_t i = 0; i < n; i++) acc += fabs((double)mt_ld_##tag(x + i));                                         \
      return acc;                                                                                                      \
    }                                                                                                                  \
    if (ord == INFINITY || ord == -INFINITY) {                                                                         \
      acc = ord > 0 ? 0 : INFINITY;                                                                                    \
      for (int64_t i = 0; i < n; i++) {                                                                                \
        double a = fabs((double)mt_ld_##tag(x + i));                                                                   \
        if (a != a) return a;                                                                                          \
        if (ord > 0 ? a > acc : a < acc) acc = a;                                                                      \
      }                                                                                                                \
      return acc;                                                                                                      \
    }                                                                                                                  \
    if (ord == 0) {                                                                                                    \
      for (int64_t i = 0; i < n; i++) acc += (double)mt_ld_##tag(x + i) != 0;                                          \
      return acc;                                                                                                      \
    }                                                                                                                  \
    for (int64_t i = 0; i < n; i++) acc += pow(fabs((double)mt_ld_##tag(x + i)), ord);                                 \
    return pow(acc, 1 / ord);                                                                                          \
  }
MT_DTYPES_FLOAT(NORM_ROW)
#undef NORM_ROW

#define ROW_ENTRY(E, tag, T, C) [E] = row_##tag,
static const row_fn rows_table[MT_NDTYPE] = {MT_DTYPES_FLOAT(ROW_ENTRY)};
#undef ROW_ENTRY

typedef struct norm_job {
  const char *base;
  int64_t inner;
  size_t row_bytes;
  double ord;
  double *vals;
  row_fn fn;
} norm_job;

static void norm_rows(void *ctx, int64_t r0, int64_t r1) {
  norm_job *j = ctx;
  for (int64_t r = r0; r < r1; r++) j->vals[r] = j->fn(j->base + (size_t)r * j->row_bytes, j->inner, j->ord);
}

static mt_status need_float(const char *op, const mt_tensor *x) {
  if (mt_is_floating((mt_dtype)x->dtype)) return MT_OK;
  return mt_fail(MT_EDTYPE, "%s: expected a floating-point tensor, got %s (convert it with :float())", op,
                 mt_dtype_name((mt_dtype)x->dtype));
}

/* Hands r (stolen) to the caller, or copies it into *out. */
static mt_status hand_over(const char *op, mt_tensor *r, mt_tensor **out) {
  if (!*out) {
    *out = r;
    return MT_OK;
  }
  mt_status st;
  bool same = (*out)->ndim == r->ndim;
  for (int i = 0; same && i < r->ndim; i++) same = (*out)->shape[i] == r->shape[i];
  if (same) {
    st = mt_copy_(*out, r);
  } else {
    char s1[128], s2[128];
    st = mt_fail(MT_ESHAPE, "%s: output of shape %s cannot hold the result of shape %s", op,
                 mt_shape_str((*out)->shape, (*out)->ndim, s1, sizeof s1),
                 mt_shape_str(r->shape, r->ndim, s2, sizeof s2));
  }
  mt_release(r);
  return st;
}

/* vals (outer values, float64) = the ord-norms of the rows of xc (outer,
 * inner), on xc's CUDA device, in float64 through mt_norm. */
static mt_status cuda_rows(const mt_tensor *xc, int64_t outer, int64_t inner, double ord, mt_tensor *vals) {
  int64_t s2[2] = {outer, inner};
  int one = 1;
  mt_tensor *v = NULL, *d = NULL, *r = NULL, *o = NULL;
  mt_status st = mt_view(xc, s2, 2, &v);
  if (!st) st = mt_to_dtype(v, MT_FLOAT64, false, &d);
  if (!st) st = mt_norm(d, ord, &one, 1, false, -1, &r);
  if (!st) st = mt_view(vals, &outer, 1, &o);
  if (!st) st = mt_copy_(o, r);
  mt_release(v), mt_release(d), mt_release(r), mt_release(o);
  return st;
}

mt_status mt_linalg_vector_norm(const mt_tensor *x, double ord, const int *dims, int ndims, bool keepdim, int dt,
                                mt_tensor **out) {
  const char *op = "linalg.vector_norm";
  mt_status st = need_float(op, x);
  if (st) return st;
  if (dt >= 0 && !mt_is_floating((mt_dtype)dt))
    return mt_fail(MT_EDTYPE, "%s: dtype must be a floating-point type, got %s", op, mt_dtype_name((mt_dtype)dt));
  bool red[MT_MAXDIM] = {0};
  for (int i = 0; i < ndims; i++) {
    if (dims[i] < 0 || dims[i] >= (x->ndim > 0 ? x->ndim : 1))
      return mt_fail(MT_EINDEX, "%s: dimension %d out of range (tensor has %d dimensions)", op, dims[i] + 1, x->ndim);
    if (red[dims[i]]) return mt_fail(MT_EARG, "%s: dimension %d appears more than once", op, dims[i] + 1);
    red[dims[i]] = true;
  }
  int perm[MT_MAXDIM], nk = 0;
  int64_t kshape[MT_MAXDIM], keepshape[MT_MAXDIM], outer = 1, inner = 1;
  for (int i = 0; i < x->ndim; i++) {
    bool r = ndims == 0 || red[i];
    keepshape[i] = r ? 1 : x->shape[i];
    if (!r) {
      perm[nk] = i;
      kshape[nk++] = x->shape[i];
      outer *= x->shape[i];
    }
  }
  for (int i = 0, j = nk; i < x->ndim; i++)
    if (ndims == 0 || red[i]) {
      perm[j++] = i;
      inner *= x->shape[i];
    }
  if (inner == 0 && (ord < 0 || isinf(ord)))
    return mt_fail(MT_EARG, "%s: the %g-norm of an empty set of values is undefined", op, ord);
  mt_dtype cdt = dt >= 0 ? (mt_dtype)dt : (mt_dtype)x->dtype;
  mt_tensor *xp = NULL, *xc = NULL, *vals = NULL, *shaped = NULL, *r = NULL;
  st = mt_permute(x, perm, x->ndim, &xp);
  if (!st) st = (mt_dtype)x->dtype == cdt ? mt_contiguous(xp, &xc) : mt_to_dtype(xp, cdt, true, &xc);
  if (!st) st = mt_empty(kshape, nk, MT_FLOAT64, mt_tdevice(x), &vals);
  if (!st && mt_tdevice(x).type == MT_CUDA) {
    st = cuda_rows(xc, outer, inner, ord, vals);
  } else if (!st) {
    norm_job j = {mt_data(xc),          inner, (size_t)inner * mt_elsize(xc), ord, (double *)mt_data(vals),
                  rows_table[xc->dtype]};
    st = mt_parallel_for(outer, (1 << 16) / (inner + 1) + 1, norm_rows, &j);
  }
  if (!st) st = keepdim ? mt_view(vals, keepshape, x->ndim, &shaped) : (shaped = mt_retain(vals), MT_OK);
  if (!st) st = mt_to_dtype(shaped, cdt, false, &r);
  if (!st) st = hand_over(op, r, out);
  mt_release(xp);
  mt_release(xc);
  mt_release(vals);
  mt_release(shaped);
  return st;
}

/* x with dims d0 and d1 dropped (the shape of a matrix norm without keepdim) */
static mt_status drop_two(const mt_tensor *x, const int64_t *src_shape, int nd, int d0, int d1, mt_tensor **out) {
  int64_t shape[MT_MAXDIM];
  int n = 0;
  for (int i = 0; i < nd; i++)
    if (i != d0 && i != d1) shape[n++] = src_shape[i];
  return mt_reshape(x, shape, n, out);
}

mt_status mt_linalg_matrix_norm(const mt_tensor *x, const char *sord, double ord, int d0, int d1, bool keepdim,
                                mt_tensor **out) {
  const char *op = "linalg.matrix_norm";
  char s[128];
  mt_status st = need_float(op, x);
  if (st) return st;
  if (x->ndim < 2)
    return mt_fail(MT_ESHAPE, "%s: expected a matrix or a batch of matrices (at least 2 dimensions), got shape %s", op,
                   mt_shape_str(x->shape, x->ndim, s, sizeof s));
  if (d0 < 0 || d1 < 0 || d0 >= x->ndim || d1 >= x->ndim)
    return mt_fail(MT_EINDEX, "%s: dimension out of range (tensor has %d dimensions)", op, x->ndim);
  if (d0 == d1) return mt_fail(MT_EARG, "%s: the two dimensions must differ, both are %d", op, d0 + 1);
  int pair[2] = {d0, d1};
  int64_t kshape[MT_MAXDIM];
  memcpy(kshape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  kshape[d0] = kshape[d1] = 1;
  mt_tensor *t1 = NULL, *t2 = NULL, *r = NULL;
  if (sord && strcmp(sord, "fro") == 0) return mt_linalg_vector_norm(x, 2, pair, 2, keepdim, -1, out);
  bool nuc = sord && strcmp(sord, "nuc") == 0;
  if (sord && !nuc) return mt_fail(MT_EARG, "%s: ord must be 'fro', 'nuc' or a number, got '%s'", op, sord);
  if ((nuc || fabs(ord) == 2) && mt_tdevice(x).type == MT_CUDA) /* LAPACK reads host memory */
    return mt_cuda_unsupported("linalg.matrix_norm with ord 2, -2 or 'nuc'");
  if (nuc || fabs(ord) == 2) { /* from the singular values */
    int perm[MT_MAXDIM], n = 0;
    for (int i = 0; i < x->ndim; i++)
      if (i != d0 && i != d1) perm[n++] = i;
    perm[n++] = d0;
    perm[n++] = d1;
    mt_dtype dt = (mt_dtype)x->dtype, sdt = dt == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
    mt_tensor *p = NULL, *pc = NULL, *sv = NULL;
    int last = x->ndim - 2;
    st = mt_permute(x, perm, x->ndim, &p);
    if (!st) st = mt_to_dtype(p, sdt, false, &pc);
    if (!st) st = mt_linalg_svd(pc, false, NULL, &sv, NULL);
    if (!st) st = mt_linalg_vector_norm(sv, nuc ? 1 : ord > 0 ? INFINITY : -INFINITY, &last, 1, false, dt, &t1);
    if (!st) st = keepdim ? mt_reshape(t1, kshape, x->ndim, &r) : (r = mt_retain(t1), MT_OK);
    mt_release(p);
    mt_release(pc);
    mt_release(sv);
  } else if (fabs(ord) == 1 || isinf(ord)) { /* max/min of absolute column (1) or row (inf) sums */
    int sum_dim = fabs(ord) == 1 ? d0 : d1, ext_dim = fabs(ord) == 1 ? d1 : d0;
    st = mt_linalg_vector_norm(x, 1, &sum_dim, 1, true, -1, &t1);
    if (!st) st = mt_linalg_vector_norm(t1, ord > 0 ? INFINITY : -INFINITY, &ext_dim, 1, true, -1, &t2);
    if (!st) st = keepdim ? (r = mt_retain(t2), MT_OK) : drop_two(t2, x->shape, x->ndim, d0, d1, &r);
  } else {
    return mt_fail(MT_EARG, "%s: ord must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got %g", op, ord);
  }
  mt_release(t1);
  mt_release(t2);
  if (st) {
    mt_release(r);
    return st;
  }
  mt_tensor *c = NULL;
  st = mt_contiguous(r, &c);
  mt_release(r);
  if (st) return st;
  return hand_over(op, c, out);
}

mt_status mt_linalg_norm(const mt_tensor *x, bool has_ord, const char *sord, double ord, const int *dims, int ndims,
                         bool keepdim, mt_tensor **out) {
  const char *op = "linalg.norm";
  mt_status st = need_float(op, x);
  if (st) return st;
  if (ndims > 2) return mt_fail(MT_EARG, "%s: dim must name one or two dimensions, got %d", op, ndims);
  if (!has_ord && !sord) {
    if (ndims == 0) return mt_linalg_vector_norm(x, 2, NULL, 0, keepdim, -1, out);
    return mt_linalg_vector_norm(x, 2, dims, ndims, keepdim, -1, out);
  }
  if (ndims == 0) {
    if (x->ndim == 2) return mt_linalg_matrix_norm(x, sord, ord, 0, 1, keepdim, out);
    if (x->ndim == 1 && !sord) return mt_linalg_vector_norm(x, ord, NULL, 0, keepdim, -1, out);
    return mt_fail(MT_ESHAPE, "%s: when ord is given without dim, the input must be %s, got %d-D", op,
                   sord ? "2-D" : "1-D or 2-D", x->ndim);
  }
  if (ndims == 2) return mt_linalg_matrix_norm(x, sord, ord, dims[0], dims[1], keepdim, out);
  if (sord) return mt_fail(MT_EARG, "%s: ord '%s' needs two dimensions (a matrix norm)", op, sord);
  return mt_linalg_vector_norm(x, ord, dims, 1, keepdim, -1, out);
}

mt_status mt_linalg_cross(const mt_tensor *a, const mt_tensor *b, int dim, mt_tensor **out) {
  const char *op = "linalg.cross";
  char s1[128], s2[128];
  int64_t shape[MT_MAXDIM];
  int nd = 0;
  mt_status st = mt_broadcast_shape(op, a->shape, a->ndim, b->shape, b->ndim, shape, &nd);
  if (st) return st;
  int d;
  if ((st = mt_wrap_dim(op, dim, nd, &d))) return st;
  int da = d - (nd - a->ndim), db = d - (nd - b->ndim);
  if (nd == 0 || da < 0 || db < 0 || a->shape[da] != 3 || b->shape[db] != 3)
    return mt_fail(MT_ESHAPE, "%s: inputs must have size 3 in dimension %d, got shapes %s and %s", op, d + 1,
                   mt_shape_str(a->shape, a->ndim, s1, sizeof s1), mt_shape_str(b->shape, b->ndim, s2, sizeof s2));
  mt_tensor *ae = NULL, *be = NULL, *res = NULL;
  st = mt_expand(a, shape, nd, &ae);
  if (!st) st = mt_expand(b, shape, nd, &be);
  if (!st) st = mt_empty(shape, nd, mt_result_type(a, b), mt_tdevice(a), &res);
  for (int i = 0; !st && i < 3; i++) { /* res_i = a_j b_k - a_k b_j */
    int j = (i + 1) % 3, k = (i + 2) % 3;
    mt_tensor *aj = NULL, *ak = NULL, *bj = NULL, *bk = NULL, *t1 = NULL, *t2 = NULL, *ri = NULL;
    st = mt_select(ae, d, j, &aj);
    if (!st) st = mt_select(ae, d, k, &ak);
    if (!st) st = mt_select(be, d, j, &bj);
    if (!st) st = mt_select(be, d, k, &bk);
    if (!st) st = mt_binary(MT_OP_mul, aj, bk, &t1);
    if (!st) st = mt_binary(MT_OP_mul, ak, bj, &t2);
    if (!st) st = mt_select(res, d, i, &ri);
    if (!st) st = mt_binary(MT_OP_sub, t1, t2, &ri);
    mt_tensor *all[] = {aj, ak, bj, bk, t1, t2, ri};
    for (int q = 0; q < 7; q++) mt_release(all[q]);
  }
  mt_release(ae);
  mt_release(be);
  if (st) {
    mt_release(res);
    return st;
  }
  return hand_over(op, res, out);
}
