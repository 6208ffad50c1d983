/* reduce.c -- derivatives of the reductions (sum, prod, mean, nansum,
 * nanmean, var, std, var_mean, std_mean, norm, logsumexp, amax, amin,
 * aminmax), scans (cumsum, cumprod) and softmax, which are recorded by the
 * generic path (call.c: mtg_call, mtg_reduce, mtg_along), and the recorded
 * max, min and median of all elements. A reduction's gradient is the
 * incoming gradient viewed with the reduced dims kept (size 1) and
 * broadcast back over them. Node arguments are the ops' engine arguments
 * (tensor/call.c): i[0] a bit mask of reduced dims, i[1] keepdim (scans and
 * softmax: i[0] the dim), f[0] a number argument (correction, p). Saved:
 * the input in slot 0, result k in slot MTG_SLOT_OUT - k. Ops returning
 * values picked by indices (max along a dim, sort, ...) are in select.c. */
#include <math.h>

#include "creation.h"
#include "deriv.h"
#include "trace.h"
#include "shape.h"

/* ---- dims ---- */

static int64_t dim_mask(const int *dims, int ndims, int rank) {
  if (rank == 0) return 0;
  int64_t m = 0;
  for (int i = 0; i < ndims; i++) m |= (int64_t)1 << (dims[i] < 0 ? dims[i] + rank : dims[i]);
  return ndims ? m : ((int64_t)1 << rank) - 1;
}

/* The reduced dims of node n as a list; returns the count (0 only for a
 * 0-dim input, where "all dims" reduces nothing, as wanted). */
static int reduced_dims(const mtg_node *n, int *dims) {
  int nd = 0;
  for (int i = 0; i < n->in[0].ndim; i++)
    if (n->i[0] >> i & 1) dims[nd++] = i;
  return nd;
}

static int64_t reduced_count(const mtg_node *n) {
  int64_t c = 1;
  for (int i = 0; i < n->in[0].ndim; i++)
    if (n->i[0] >> i & 1) c *= n->in[0].shape[i];
  return c;
}

/* t (shaped like the reduced result) viewed with the reduced dims kept as
 * 1s: it then broadcasts against the input. */
static mt_tensor *kept(mtg_scope *s, const mt_tensor *t, const mtg_node *n) {
  const mtg_meta_shape *m = &n->in[0];
  int64_t shape[MT_MAXDIM];
  for (int i = 0; i < m->ndim; i++) shape[i] = (n->i[0] >> i & 1) ? 1 : m->shape[i];
  return mtg_d_reshape(s, t, shape, m->ndim);
}

/* g broadcast back to input 0's shape. */
static mt_tensor *unreduce(mtg_scope *s, const mt_tensor *g, const mtg_node *n) {
  return mtg_d_expand(s, kept(s, g, n), n->in[0].shape, n->in[0].ndim);
}

/* ---- scope helpers local to this family ---- */

/* Plain (unrecorded) results for masks and counts, which carry no gradient. */
static mt_tensor *P_bin(mtg_scope *s, mt_op op, const mt_tensor *a, const mt_tensor *b) {
  if (s->st || !a || !b) return NULL;
  mt_tensor *r = NULL;
  mt_status st = MTG_TRACING() ? mtg_binary(op, a, b, &r) : mt_binary(op, a, b, &r); /* traced for the JIT */
  return mtg_track(s, st, r);
}

static mt_tensor *P_un(mtg_scope *s, mt_op op, const mt_tensor *a) {
  if (s->st || !a) return NULL;
  mt_tensor *r = NULL;
  mt_status st = MTG_TRACING() ? mtg_unary(op, a, &r) : mt_unary(op, a, &r);
  return mtg_track(s, st, r);
}

static mt_tensor *P_cast(mtg_scope *s, const mt_tensor *a, mt_dtype dt) {
  if (s->st || !a) return NULL;
  mt_tensor *r = NULL;
  mt_status st = MTG_TRACING() ? mtg_to_dtype(a, dt, false, &r) : mt_to_dtype(a, dt, false, &r);
  return mtg_track(s, st, r);
}

static mt_tensor *P_sum(mtg_scope *s, const mt_tensor *a, const int *dims, int nd, bool keepdim) {
  if (s->st || !a) return NULL;
  mt_tensor *r = NULL;
  mt_status st = MTG_TRACING() ? mtg_reduce(MT_OP_sum, a, dims, nd, keepdim, -1, 0, &r, 1)
                               : mt_sum(a, dims, nd, keepdim, -1, &r);
  return mtg_track(s, st, r);
}

/* Recorded reductions and scans used inside derivatives. */
static mt_tensor *S_prod(mtg_scope *s, const mt_tensor *x, const int *dims, int nd) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_reduce(MT_OP_prod, x, dims, nd, true, -1, 0, &r, 1);
  return mtg_track(s, st, r);
}

static mt_tensor *S_mean(mtg_scope *s, const mt_tensor *x, const int *dims, int nd) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_reduce(MT_OP_mean, x, dims, nd, true, -1, 0, &r, 1);
  return mtg_track(s, st, r);
}

static mt_tensor *S_cumsum(mtg_scope *s, const mt_tensor *x, int dim) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_along(MT_OP_cumsum, x, dim, -1, &r);
  return mtg_track(s, st, r);
}

static mt_tensor *S_cumprod(mtg_scope *s, const mt_tensor *x, int dim) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_along(MT_OP_cumprod, x, dim, -1, &r);
  return mtg_track(s, st, r);
}

static mt_status reversed_cumsum(const mt_tensor *g, int dim, mt_tensor **out);

static mt_tensor *S_rcumsum(mtg_scope *s, const mt_tensor *x, int dim) {
  if (s->st || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = reversed_cumsum(x, dim, &r);
  return mtg_track(s, st, r);
}

/* A 0/1 (or bool) mask as a tensor of `like`'s dtype. */
static mt_tensor *as_values(mtg_scope *s, const mt_tensor *m, const mt_tensor *like) {
  return like ? P_cast(s, m, (mt_dtype)like->dtype) : NULL;
}

static mt_tensor *num(mtg_scope *s, double v, const mt_tensor *like) {
  return like ? mtg_d_num(s, v, (mt_dtype)like->dtype) : NULL;
}

/* The saved input, converted to the result's dtype (ops with dtype=). */
static mt_tensor *saved_x(mtg_scope *s, const mtg_node *n) {
  mt_tensor *x = mtg_d_saved(s, 0);
  if (x && x->dtype != n->out[0].dtype) x = mtg_d_cast(s, x, (mt_dtype)n->out[0].dtype);
  return x;
}

/* ---- sum, mean, nansum, nanmean ---- */

static mt_status d_sum(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, unreduce(s, go[0], n));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_mean(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int64_t c = reduced_count(n);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_scale(s, unreduce(s, go[0], n), c ? 1.0 / (double)c : 0));
  return mtg_scope_end(s, gin, n->nin);
}

/* NaNs do not take part: their gradient is 0. */
static mt_status d_nansum(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *g = go[0], *nan = P_un(s, MT_OP_isnan, mtg_d_saved(s, 0));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_where(s, nan, num(s, 0, g), unreduce(s, g, n)));
  return mtg_scope_end(s, gin, n->nin);
}

/* g / (number of non-NaN values) at the non-NaN positions. */
static mt_status d_nanmean(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int dims[MT_MAXDIM], nd = reduced_dims(n, dims);
  mt_tensor *g = go[0], *nan = P_un(s, MT_OP_isnan, mtg_d_saved(s, 0));
  mt_tensor *cnt = as_values(s, P_sum(s, P_un(s, MT_OP_logical_not, nan), dims, nd, true), g);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, mtg_d_where(s, nan, num(s, 0, g), mtg_d_div(s, kept(s, g, n), cnt)));
  return mtg_scope_end(s, gin, n->nin);
}

/* ---- prod ----
 * Without zeros in the input, gx = g y / x. With zeros, per reduced slice
 * with zero set Z: gx[k] = prod of the others, that is, with x1 = x where
 * not 0 (else 1), p1 = prod(x1) and pz = prod(x over Z):
 *   k not in Z: p1 / x1[k] * pz
 *   k in Z:     p1 * L[k], L[k] = prod(x over Z without k)
 *               = 1 (one zero), the other zero's x (two), 0 (more).
 * Every factor is recorded and equals its true value (the zero values
 * included), so second derivatives are exact too, as with PyTorch's
 * cumprod-based form. */
static mt_status d_prod(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int dims[MT_MAXDIM], nd = reduced_dims(n, dims);
  mt_tensor *x = saved_x(s, n), *y = kept(s, mtg_d_saved(s, MTG_SLOT_OUT), n), *g = kept(s, go[0], n);
  mt_tensor *zero = num(s, 0, x), *one = num(s, 1, x);
  mt_tensor *z = P_bin(s, MT_OP_eq, x, zero);
  mt_tensor *nz = P_sum(s, z, NULL, 0, false);
  mt_scalar total = {0};
  if (!s->st) s->st = mt_item(nz, &total);
  mt_tensor *d = NULL;
  if (s->st) {
  } else if (mt_scalar_i(total) == 0) {
    d = mtg_d_div(s, y, x);
  } else {
    mt_tensor *cnt = P_sum(s, z, dims, nd, true);
    mt_tensor *x1 = mtg_d_where(s, z, one, x), *p1 = S_prod(s, x1, dims, nd);
    mt_tensor *pz = S_prod(s, mtg_d_where(s, z, x, one), dims, nd);
    mt_tensor *other = mtg_d_sub(s, mtg_d_sum(s, mtg_d_where(s, z, x, zero), dims, nd, true), x);
    mt_tensor *l = mtg_d_where(s, P_bin(s, MT_OP_eq, cnt, one), one,
                               mtg_d_where(s, P_bin(s, MT_OP_eq, cnt, num(s, 2, x)), other, zero));
    d = mtg_d_where(s, z, mtg_d_mul(s, p1, l), mtg_d_mul(s, mtg_d_div(s, p1, x1), pz));
  }
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, g, d));
  return mtg_scope_end(s, gin, n->nin);
}

/* ---- var, std, var_mean, std_mean ----
 * var: gx = g 2 (x - mean(x)) / (N - correction); std: the same with
 * g / (2 std) (0 where std is 0); the mean result adds g / N. */
static mt_tensor *var_grad(mtg_scope *s, const mtg_node *n, const mt_tensor *x, const mt_tensor *gv) {
  int dims[MT_MAXDIM], nd = reduced_dims(n, dims);
  double c = 2.0 / ((double)reduced_count(n) - n->f[0]);
  return mtg_d_mul(s, mtg_d_scale(s, kept(s, gv, n), c), mtg_d_sub(s, x, S_mean(s, x, dims, nd)));
}

static mt_tensor *std_to_var_grad(mtg_scope *s, const mt_tensor *g, const mt_tensor *y) {
  mt_tensor *zero = num(s, 0, y), *is0 = P_bin(s, MT_OP_eq, y, zero);
  mt_tensor *safe = mtg_d_where(s, is0, num(s, 1, y), y);
  return mtg_d_where(s, is0, zero, mtg_d_div(s, g, mtg_d_scale(s, safe, 2)));
}

static mt_status d_var(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, var_grad(s, n, mtg_d_saved(s, 0), go[0]));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_std(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *gv = std_to_var_grad(s, go[0], mtg_d_saved(s, MTG_SLOT_OUT));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, var_grad(s, n, mtg_d_saved(s, 0), gv));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_tensor *mean_grad(mtg_scope *s, const mtg_node *n, const mt_tensor *gm) {
  int64_t c = reduced_count(n);
  return mtg_d_scale(s, kept(s, gm, n), c ? 1.0 / (double)c : 0);
}

static mt_status d_var_mean(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *gx = mtg_d_add(s, var_grad(s, n, mtg_d_saved(s, 0), go[0]), mean_grad(s, n, go[1]));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, gx);
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_std_mean(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *gv = std_to_var_grad(s, go[0], mtg_d_saved(s, MTG_SLOT_OUT));
  mt_tensor *gx = mtg_d_add(s, var_grad(s, n, mtg_d_saved(s, 0), gv), mean_grad(s, n, go[1]));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, gx);
  return mtg_scope_end(s, gin, n->nin);
}

/* ---- norm ----
 * PyTorch's cases: p = 0: no gradient; 1: sign(x) g; 2: g x / y (0 where
 * y = 0); +-inf: g split evenly among the elements whose |x| is the result,
 * times sign(x); p < 1: g sign(x) |x|^(p-1) y^(1-p) (0 where x = 0);
 * otherwise g x |x|^(p-2) / y^(p-1) (0 where y = 0). Denominators are made
 * safe before dividing, so that double backward sees no 0/0 either. */
static mt_tensor *evenly(mtg_scope *s, const mtg_node *n, const mt_tensor *g, const mt_tensor *x, const mt_tensor *y);

static mt_status d_norm(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  double p = n->f[0];
  mt_tensor *x = saved_x(s, n), *y = kept(s, mtg_d_saved(s, MTG_SLOT_OUT), n), *g = kept(s, go[0], n);
  mt_tensor *zero = num(s, 0, x), *one = num(s, 1, x), *d = NULL;
  if (p == 0) {
    d = mtg_d_zeros_like(s, x);
  } else if (p == 1) {
    d = mtg_d_mul(s, mtg_d_un(s, MT_OP_sign, x), g);
  } else if (isinf(p)) {
    d = mtg_d_mul(s, mtg_d_un(s, MT_OP_sign, x), evenly(s, n, go[0], P_un(s, MT_OP_abs, x), y));
  } else {
    mt_tensor *y0 = P_bin(s, MT_OP_eq, y, zero), *ysafe = mtg_d_where(s, y0, one, y);
    if (p == 2) {
      d = mtg_d_where(s, y0, zero, mtg_d_mul(s, g, mtg_d_div(s, x, ysafe)));
    } else if (p < 1) {
      mt_tensor *x0 = P_bin(s, MT_OP_eq, x, zero), *ax = mtg_d_where(s, x0, one, mtg_d_un(s, MT_OP_abs, x));
      mt_tensor *sx = mtg_d_where(
          s, x0, zero, mtg_d_mul(s, mtg_d_un(s, MT_OP_sign, x), mtg_d_bin(s, MT_OP_pow, ax, num(s, p - 1, x))));
      d = mtg_d_mul(s, mtg_d_mul(s, sx, g), mtg_d_bin(s, MT_OP_pow, y, num(s, 1 - p, x)));
    } else {
      mt_tensor *ax = mtg_d_un(s, MT_OP_abs, x);
      mt_tensor *sx = p < 2 ? mtg_d_mul(s, mtg_d_un(s, MT_OP_sign, x), mtg_d_bin(s, MT_OP_pow, ax, num(s, p - 1, x)))
                            : mtg_d_mul(s, x, mtg_d_bin(s, MT_OP_pow, ax, num(s, p - 2, x)));
      mt_tensor *scale = mtg_d_div(s, g, mtg_d_bin(s, MT_OP_pow, ysafe, num(s, p - 1, x)));
      d = mtg_d_mul(s, sx, mtg_d_where(s, y0, zero, scale));
    }
  }
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, d);
  return mtg_scope_end(s, gin, n->nin);
}

/* ---- logsumexp: gx = g exp(x - y) ---- */
static mt_status d_logsumexp(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *y = kept(s, mtg_d_saved(s, MTG_SLOT_OUT), n);
  mt_tensor *d = mtg_d_mul(s, kept(s, go[0], n), mtg_d_un(s, MT_OP_exp, mtg_d_sub(s, saved_x(s, n), y)));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, d);
  return mtg_scope_end(s, gin, n->nin);
}

/* ---- amax, amin, aminmax, max/min/median of all elements ----
 * The gradient is split evenly among the elements equal to the result (all
 * of the NaNs when the result is NaN), as in PyTorch. */
static mt_tensor *evenly(mtg_scope *s, const mtg_node *n, const mt_tensor *g, const mt_tensor *x, const mt_tensor *y) {
  int dims[MT_MAXDIM], nd = reduced_dims(n, dims);
  mt_tensor *yk = kept(s, y, n);
  mt_tensor *hit = P_bin(s, MT_OP_logical_or, P_bin(s, MT_OP_eq, x, yk),
                         P_bin(s, MT_OP_logical_and, P_un(s, MT_OP_isnan, x), P_un(s, MT_OP_isnan, yk)));
  mt_tensor *m = as_values(s, hit, g);
  return mtg_d_mul(s, mtg_d_div(s, kept(s, g, n), P_sum(s, m, dims, nd, true)), m);
}

mt_status mtg_d_evenly(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, evenly(s, n, go[0], mtg_d_saved(s, 0), mtg_d_saved(s, MTG_SLOT_OUT)));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_aminmax(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *x = mtg_d_saved(s, 0);
  mt_tensor *d = mtg_d_add(s, evenly(s, n, go[0], x, mtg_d_saved(s, MTG_SLOT_OUT)),
                           evenly(s, n, go[1], x, mtg_d_saved(s, MTG_SLOT_OUT - 1)));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, d);
  return mtg_scope_end(s, gin, n->nin);
}

mt_status mtg_all_elements(mt_op op, const mt_tensor *x, mt_tensor **out) {
  mt_args a = {.i = {dim_mask(NULL, 0, x->ndim), false, 0, 0, 0, true}, .ni = 6};
  return mtg_call(op, &x, 1, &a, out, 1);
}

/* ---- cumsum, cumprod ----
 * cumsum's gradient is the reversed cumulative sum of g (flip, cumsum,
 * flip: exact, unlike sum - cumsum), itself recorded with cumsum as its
 * derivative, so that gradients of any order exist. i[0] is the dim. */
static mt_status d_reversed_cumsum(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, S_cumsum(s, go[0], (int)n->i[0]));
  return mtg_scope_end(s, gin, n->nin);
}

/* out[k] = sum of g[j] for j >= k along dim (recorded). Along a dim of
 * size 1 that is g itself. */
static mt_status reversed_cumsum(const mt_tensor *g, int dim, mt_tensor **out) {
  if (g->ndim == 0 || g->shape[dim] <= 1) return mtg_ref(g, out);
  mt_tensor *f = NULL, *c = NULL, *r = NULL;
  mt_status st = mt_flip(g, &dim, 1, &f);
  if (!st) st = mt_cumsum(f, dim, -1, &c);
  if (!st) st = mt_flip(c, &dim, 1, &r);
  mt_release(f);
  mt_release(c);
  const mt_tensor *ins[1] = {g};
  if (!st && mtg_any_requires_grad(ins, 1)) {
    mtg_node *n = mtg_record1("ReversedCumsumBackward0", d_reversed_cumsum, ins, 1, r, &st);
    if (n) n->i[0] = dim;
  }
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

static mt_status d_cumsum(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, S_rcumsum(s, go[0], (int)n->i[0]));
  return mtg_scope_end(s, gin, n->nin);
}

/* cumprod's gradient for inputs with zeros when the backward is itself
 * recorded: the O(n^2) form, exact to every order (as PyTorch does then):
 * U[.., k, i] = (i == k ? 1 : x[i]), gx[k] = sum_{j >= k} g[j] cumprod(U[.., k, :])[j]. */
static mt_tensor *cumprod_grad_all_orders(mtg_scope *s, const mt_tensor *x, const mt_tensor *g, int dim) {
  if (s->st || !x || !g) return NULL;
  int last = x->ndim - 1;
  int64_t n = x->shape[dim], col[2] = {n, 1};
  mt_tensor *ar = NULL, *rows = NULL;
  mt_status st = mt_arange(mt_sint(0), mt_sint(n), mt_sint(1), MT_INT64, mt_tdevice(x), &ar);
  ar = mtg_track(s, st, ar);
  st = s->st ? s->st : mt_reshape(ar, col, 2, &rows);
  rows = mtg_track(s, st, rows);
  mt_tensor *diag = P_bin(s, MT_OP_eq, rows, ar), *upper = as_values(s, P_bin(s, MT_OP_le, rows, ar), x);
  mt_tensor *u = mtg_d_where(s, diag, num(s, 1, x), mtg_d_unsqueeze(s, mtg_d_transpose(s, x, dim, last), last));
  mt_tensor *terms = mtg_d_mul(s, mtg_d_mul(s, S_cumprod(s, u, last + 1), upper),
                               mtg_d_unsqueeze(s, mtg_d_transpose(s, g, dim, last), last));
  int sum_dim = last + 1;
  return mtg_d_transpose(s, mtg_d_sum(s, terms, &sum_dim, 1, false), dim, last);
}

/* cumprod. Without zeros gx = rcumsum(g y) / x. With zeros, per scanned
 * row with its first zero at z1 (PyTorch's zero-safe formula, written with
 * recorded ops): before z1, rcumsum(g y) / x as usual (y is 0 from z1 on);
 * at z1, prod(x[..z1)) * sum_{j >= z1} g[j] prod(x(z1..j]); after z1, 0.
 * That form misses second derivatives between a zero and later elements,
 * so a recorded backward (create_graph) uses cumprod_grad_all_orders. */
static mt_status d_cumprod(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int dim = (int)n->i[0];
  mt_tensor *x = saved_x(s, n), *y = mtg_d_saved(s, MTG_SLOT_OUT), *g = go[0];
  mt_tensor *zero = num(s, 0, x), *one = num(s, 1, x);
  mt_tensor *z = P_bin(s, MT_OP_eq, x, zero);
  mt_tensor *nz = P_sum(s, z, NULL, 0, false);
  mt_scalar total = {0};
  if (!s->st) s->st = mt_item(nz, &total);
  mt_tensor *d = NULL;
  if (s->st) {
  } else if (mt_scalar_i(total) == 0) {
    d = mtg_d_div(s, S_rcumsum(s, mtg_d_mul(s, g, y), dim), x);
  } else if (mtg_grad_enabled() && x->ndim > 0 && x->ndim < MT_MAXDIM) {
    d = cumprod_grad_all_orders(s, x, g, dim);
  } else {
    mt_tensor *c = NULL;
    if (!s->st) s->st = mt_cumsum(z, dim, -1, &c);
    c = mtg_track(s, s->st, c);
    mt_tensor *before = P_bin(s, MT_OP_eq, c, zero);
    mt_tensor *first = P_bin(s, MT_OP_logical_and, z, P_bin(s, MT_OP_eq, c, one));
    mt_tensor *xa = mtg_d_where(s, before, x, one);
    mt_tensor *part0 = mtg_d_div(s, S_rcumsum(s, mtg_d_mul(s, g, y), dim), xa);
    mt_tensor *xb = mtg_d_where(s, P_bin(s, MT_OP_logical_or, before, first), one, x);
    mt_tensor *tail = mtg_d_sum(s, mtg_d_mul(s, mtg_d_where(s, before, zero, g), S_cumprod(s, xb, dim)), &dim, 1, true);
    mt_tensor *part1 = mtg_d_mul(s, S_prod(s, xa, &dim, 1), tail);
    d = mtg_d_where(s, before, part0, mtg_d_where(s, first, part1, zero));
  }
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, d);
  return mtg_scope_end(s, gin, n->nin);
}

/* ---- softmax, log_softmax ----
 * softmax: gx = y (g - sum(g y)); log_softmax: gx = g - exp(y) sum(g).
 * i[0] holds the dim. */
static mt_status d_softmax(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int dim = (int)n->i[0];
  mt_tensor *y = mtg_d_saved(s, MTG_SLOT_OUT), *gy = mtg_d_mul(s, go[0], y);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, y, mtg_d_sub(s, go[0], mtg_d_sum(s, gy, &dim, 1, true))));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_log_softmax(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int dim = (int)n->i[0];
  mt_tensor *y = mtg_d_saved(s, MTG_SLOT_OUT);
  mt_tensor *sg = mtg_d_sum(s, go[0], &dim, 1, true);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_sub(s, go[0], mtg_d_mul(s, mtg_d_un(s, MT_OP_exp, y), sg)));
  return mtg_scope_end(s, gin, n->nin);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_sum] = {d_sum, 0},
    [MT_OP_mean] = {d_mean, 0},
    [MT_OP_prod] = {d_prod, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_nansum] = {d_nansum, MTG_SAVE_IN(0)},
    [MT_OP_nanmean] = {d_nanmean, MTG_SAVE_IN(0)},
    [MT_OP_var] = {d_var, MTG_SAVE_IN(0)},
    [MT_OP_std] = {d_std, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_var_mean] = {d_var_mean, MTG_SAVE_IN(0)},
    [MT_OP_std_mean] = {d_std_mean, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_norm] = {d_norm, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_logsumexp] = {d_logsumexp, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_amax] = {mtg_d_evenly, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_amin] = {mtg_d_evenly, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_aminmax] = {d_aminmax, MTG_SAVE_IN(0) | MTG_SAVE_OUT | MTG_SAVE_OUT1},
    [MT_OP_cumsum] = {d_cumsum, 0},
    [MT_OP_cumprod] = {d_cumprod, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_softmax] = {d_softmax, MTG_SAVE_OUT},
    [MT_OP_log_softmax] = {d_log_softmax, MTG_SAVE_OUT},
};

/* max, min, median and nanmedian have both an all-elements form
 * (mtg_d_evenly) and a form along a dim: select.c's table holds them. */
const mtg_deriv *mtg_deriv_reduce(mt_op op) { return table[op].fn ? &table[op] : mtg_deriv_select(op); }
