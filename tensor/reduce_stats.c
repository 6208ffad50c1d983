/* reduce_stats.c -- reductions composed from the primitives of reduce.c and
 * elementwise ops: nansum, nanmean, var/std (two passes in float64: the
 * mean, then squared deviations), norm, logsumexp (shifted by the max),
 * count_nonzero and aminmax. Temporaries are full-size tensors; none of
 * these is a hot path. */
#include <math.h>

#include "reduce_util.h"

static void release_all(mt_tensor **ts, int n) {
  for (int i = 0; i < n; i++) mt_release(ts[i]);
}

static mt_status need_float(const char *op, mt_dtype dt) {
  if (mt_is_floating(dt)) return MT_OK;
  return mt_fail(MT_EDTYPE, "%s: needs a floating tensor, got %s (convert with x:float())", op, mt_dtype_name(dt));
}

/* A 0-dim float64 tensor holding v, weakly typed like a Lua number. */
static mt_status number(double v, mt_tensor **out) {
  mt_status st = mt_scalar_tensor(mt_sfloat(v), MT_FLOAT64, out);
  if (!st) (*out)->flags |= MT_TF_WRAPPED;
  return st;
}

/* x != 0 as bool (x itself, retained, for bool x). */
static mt_status nonzero_mask(const mt_tensor *x, mt_tensor **out) {
  if (x->dtype == MT_BOOL) {
    *out = mt_retain((mt_tensor *)x);
    return MT_OK;
  }
  mt_tensor *zero = NULL;
  mt_status st = mt_scalar_tensor(mt_sint(0), (mt_dtype)x->dtype, &zero);
  if (!st) st = mt_binary(MT_OP_ne, x, zero, out);
  mt_release(zero);
  return st;
}

/* x with NaNs replaced by 0 (x itself, retained, for non-floating x). */
static mt_status nan_zeroed(const mt_tensor *x, mt_tensor **out) {
  if (!mt_is_floating((mt_dtype)x->dtype)) {
    *out = mt_retain((mt_tensor *)x);
    return MT_OK;
  }
  mt_tensor *isn = NULL, *zero = NULL;
  mt_status st = mt_unary(MT_OP_isnan, x, &isn);
  if (!st) st = mt_scalar_tensor(mt_sint(0), (mt_dtype)x->dtype, &zero);
  if (!st) st = mt_where(isn, zero, x, out);
  mt_release(isn);
  mt_release(zero);
  return st;
}

mt_status mt_nansum(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  mt_tensor *c = NULL;
  mt_status st = nan_zeroed(x, &c);
  if (!st) st = mt_sum(c, dims, ndims, keepdim, dtype, out);
  mt_release(c);
  return st;
}

mt_status mt_nanmean(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  mt_dtype dt = dtype >= 0 ? (mt_dtype)dtype : (mt_dtype)x->dtype;
  mt_status st = need_float("nanmean", dt);
  if (st) return st;
  mt_tensor *t[6] = {NULL}; /* xc, sum, isnan, notnan, count, result */
  if (!(st = mt_to_dtype(x, dt, false, &t[0])) && !(st = mt_nansum(t[0], dims, ndims, keepdim, -1, &t[1])) &&
      !(st = mt_unary(MT_OP_isnan, t[0], &t[2])) && !(st = mt_unary(MT_OP_logical_not, t[2], &t[3])) &&
      !(st = mt_sum(t[3], dims, ndims, keepdim, -1, &t[4])) && !(st = mt_binary(MT_OP_div, t[1], t[4], &t[5])))
    st = mt_deliver("nanmean", t[5], out), t[5] = NULL;
  release_all(t, 6);
  return st;
}

/* var (or std with take_sqrt) and optionally the mean, in x's dtype. */
static mt_status var_impl(const char *op, const mt_tensor *x, const int *dims, int ndims, double correction,
                          bool keepdim, bool take_sqrt, mt_tensor **out, mt_tensor **mean_out) {
  mt_dtype dt = (mt_dtype)x->dtype;
  mt_status st = need_float(op, dt);
  uint32_t mask = 0;
  if (!st) st = mt_dims_mask(op, dims, ndims, x->ndim, &mask);
  if (st) return st;
  int64_t n = 1;
  for (int d = 0; d < x->ndim; d++)
    if (mask & (1u << d)) n *= x->shape[d];
  double denom = (double)n - correction > 0 ? (double)n - correction : 0;
  /* xd, mean (keepdim), dev, dev^2, sum, denom, var, std, result, mean result */
  mt_tensor *t[10] = {NULL};
  if (!(st = mt_to_dtype(x, MT_FLOAT64, false, &t[0])) && !(st = mt_mean(t[0], dims, ndims, true, -1, &t[1])) &&
      !(st = mt_binary(MT_OP_sub, t[0], t[1], &t[2])) && !(st = mt_binary(MT_OP_mul, t[2], t[2], &t[3])) &&
      !(st = mt_sum(t[3], dims, ndims, keepdim, -1, &t[4])) && !(st = number(denom, &t[5])) &&
      !(st = mt_binary(MT_OP_div, t[4], t[5], &t[6])) && !(take_sqrt && (st = mt_unary(MT_OP_sqrt, t[6], &t[7]))) &&
      !(st = mt_to_dtype(t[7] ? t[7] : t[6], dt, false, &t[8])))
    st = mt_deliver(op, t[8], out), t[8] = NULL;
  if (!st && mean_out) {
    int64_t shape[MT_MAXDIM];
    int nd = mt_reduced_shape(x, mask, keepdim, shape);
    mt_tensor *m = NULL;
    if (!(st = mt_to_dtype(t[1], dt, true, &m)) && !(st = mt_reshape_new(m, shape, nd, &t[9])))
      st = mt_deliver(op, t[9], mean_out), t[9] = NULL;
    mt_release(m);
  }
  release_all(t, 10);
  return st;
}

mt_status mt_var(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **out) {
  return var_impl("var", x, dims, ndims, correction, keepdim, false, out, NULL);
}

mt_status mt_std(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **out) {
  return var_impl("std", x, dims, ndims, correction, keepdim, true, out, NULL);
}

mt_status mt_var_mean(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **var,
                      mt_tensor **mean) {
  return var_impl("var_mean", x, dims, ndims, correction, keepdim, false, var, mean);
}

mt_status mt_std_mean(const mt_tensor *x, const int *dims, int ndims, double correction, bool keepdim, mt_tensor **std,
                      mt_tensor **mean) {
  return var_impl("std_mean", x, dims, ndims, correction, keepdim, true, std, mean);
}

mt_status mt_norm(const mt_tensor *x, double p, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  mt_dtype dt = dtype >= 0 ? (mt_dtype)dtype : (mt_dtype)x->dtype;
  mt_status st = need_float("norm", dt);
  if (st) return st;
  /* xc, |x|, step 1, step 2, exponent, result */
  mt_tensor *t[6] = {NULL}, *xc = NULL;
  if ((st = mt_to_dtype(x, dt, false, &xc)) || (st = mt_upcast_half(xc, &t[0])) ||
      (st = mt_unary(MT_OP_abs, t[0], &t[1]))) {
    mt_release(xc);
    release_all(t, 6);
    return st;
  }
  mt_tensor *a = t[1], **r = &t[5];
  if (p == INFINITY) {
    st = mt_amax(a, dims, ndims, keepdim, r);
  } else if (p == -INFINITY) {
    st = mt_amin(a, dims, ndims, keepdim, r);
  } else if (p == 0) {
    if (!(st = nonzero_mask(a, &t[2])) && !(st = mt_to_dtype(t[2], (mt_dtype)a->dtype, false, &t[3])))
      st = mt_sum(t[3], dims, ndims, keepdim, -1, r);
  } else if (p == 1) {
    st = mt_sum(a, dims, ndims, keepdim, -1, r);
  } else if (p == 2) {
    if (!(st = mt_binary(MT_OP_mul, a, a, &t[2])) && !(st = mt_sum(t[2], dims, ndims, keepdim, -1, &t[3])))
      st = mt_unary(MT_OP_sqrt, t[3], r);
  } else {
    if (!(st = number(p, &t[4])) && !(st = mt_binary(MT_OP_pow, a, t[4], &t[2])) &&
        !(st = mt_sum(t[2], dims, ndims, keepdim, -1, &t[3]))) {
      mt_release(t[4]);
      t[4] = NULL;
      if (!(st = number(1.0 / p, &t[4]))) st = mt_binary(MT_OP_pow, t[3], t[4], r);
    }
  }
  mt_tensor *res = NULL;
  if (!st && !(st = mt_to_dtype(*r, dt, false, &res))) st = mt_deliver("norm", res, out);
  mt_release(xc);
  release_all(t, 6);
  return st;
}

mt_status mt_logsumexp(const mt_tensor *x, const int *dims, int ndims, bool keepdim, mt_tensor **out) {
  mt_dtype dt = mt_is_floating((mt_dtype)x->dtype) ? (mt_dtype)x->dtype : mt_default_dtype();
  uint32_t mask;
  mt_status st = mt_dims_mask("logsumexp", dims, ndims, x->ndim, &mask);
  if (st) return st;
  int64_t shape[MT_MAXDIM];
  int nd = mt_reduced_shape(x, mask, keepdim, shape);
  /* xf, xu, max, isinf(max), zero, shift, x - shift, exp, sum, log, +shift, cast, result */
  mt_tensor *t[13] = {NULL};
  if (!(st = mt_to_dtype(x, dt, false, &t[0])) && !(st = mt_upcast_half(t[0], &t[1])) &&
      !(st = mt_amax(t[1], dims, ndims, true, &t[2])) && !(st = mt_unary(MT_OP_isinf, t[2], &t[3])) &&
      !(st = mt_scalar_tensor(mt_sint(0), (mt_dtype)t[1]->dtype, &t[4])) && !(st = mt_where(t[3], t[4], t[2], &t[5])) &&
      !(st = mt_binary(MT_OP_sub, t[1], t[5], &t[6])) && !(st = mt_unary(MT_OP_exp, t[6], &t[7])) &&
      !(st = mt_sum(t[7], dims, ndims, true, -1, &t[8])) && !(st = mt_unary(MT_OP_log, t[8], &t[9])) &&
      !(st = mt_binary(MT_OP_add, t[9], t[5], &t[10])) && !(st = mt_to_dtype(t[10], dt, false, &t[11])) &&
      !(st = mt_reshape_new(t[11], shape, nd, &t[12])))
    st = mt_deliver("logsumexp", t[12], out), t[12] = NULL;
  release_all(t, 13);
  return st;
}

mt_status mt_count_nonzero(const mt_tensor *x, const int *dims, int ndims, mt_tensor **out) {
  mt_tensor *nz = NULL;
  mt_status st = nonzero_mask(x, &nz);
  if (!st) st = mt_sum(nz, dims, ndims, false, -1, out);
  mt_release(nz);
  return st;
}

mt_status mt_aminmax(const mt_tensor *x, const int *dim, bool keepdim, mt_tensor **min, mt_tensor **max) {
  bool fresh = *min == NULL;
  mt_status st = mt_amin(x, dim, dim ? 1 : 0, keepdim, min);
  if (!st && (st = mt_amax(x, dim, dim ? 1 : 0, keepdim, max)) && fresh) {
    mt_release(*min);
    *min = NULL;
  }
  return st;
}
