/* select.c -- recorded ops whose results are values picked out of their
 * input along a dim, with 1-based indices saying where from: max and min
 * along a dim, sort, topk, kthvalue, median and nanmedian along a dim,
 * mode, cummax and cummin. The values' gradient is added into zeros at the
 * indexed positions (as PyTorch's value_selecting_reduction_backward);
 * indices carry no gradient. That scatter and the gather undoing it are
 * recorded as each other's derivative, so gradients of any order exist.
 * Part of the reduce family: its table is reached through reduce.c. */
#include "deriv.h"
#include "trace.h"
#include "index.h"

/* Zeros shaped like m with g added at positions idx along dim: the adjoint
 * of gather (repeated positions, as in cummax, add up), through the index
 * family's recorded scatter-add, so it is differentiable in turn. */
static mt_status put_along(const mtg_meta_shape *m, int dim, const mt_tensor *idx, const mt_tensor *g,
                           mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_zeros(m->shape, m->ndim, (mt_dtype)g->dtype, mt_tdevice(g), &r);
  if (!st) mtg_trace_full(r, 0);
  if (!st) st = mtg_scatter_(r, dim, idx, g, MT_REDUCE_ADD);
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

/* ---- the value-selecting ops ----
 * Node arguments: i[0] the dim, i[1] whether the results kept it (sort,
 * topk, cummax: always); slot 0 the indices. */
static mt_status d_select(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (!mtg_needs(n, 0)) return mtg_scope_end(s, gin, n->nin);
  const mtg_meta_shape *m = &n->in[0];
  int dim = (int)n->i[0];
  mt_tensor *g = go[0], *idx = mtg_d_saved(s, 0), *r = NULL;
  if (m->ndim == 0) { /* a 0-dim input is its own (only) value */
    gin[0] = mtg_d_grad_for(s, 0, g);
    return mtg_scope_end(s, gin, n->nin);
  }
  if (!n->i[1]) {
    g = mtg_d_unsqueeze(s, g, dim);
    mt_tensor *u = NULL;
    mt_status st = s->st || !idx ? s->st : mt_unsqueeze(idx, dim, &u);
    idx = mtg_track(s, st, u);
  }
  if (!s->st && g && idx) {
    mt_status st = put_along(m, dim, idx, g, &r);
    gin[0] = mtg_d_grad_for(s, 0, mtg_track(s, st, r));
  }
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status no_out(const char *op) {
  return mt_fail(MT_EARG,
                 "%s: out= cannot be used when an input requires grad (the result would have no "
                 "history); drop out= or use torch.no_grad()",
                 op);
}

static mt_status record_select(mt_op op, const mt_tensor *x, int dim, bool keepdim, mt_tensor *v, mt_tensor *idx) {
  if (!mt_is_floating((mt_dtype)v->dtype)) return MT_OK;
  const mt_tensor *ins[1] = {x};
  mt_status st;
  mtg_node *n = mtg_record1(mtg_backward_name(op), d_select, ins, 1, v, &st);
  if (n) {
    n->i[0] = x->ndim == 0 ? 0 : dim < 0 ? dim + x->ndim : dim;
    n->i[1] = keepdim;
    st = mtg_save(n, 0, idx, false, 0);
  }
  return st;
}

/* The body of every op here: `call` runs the engine with results into *V
 * and *I -- the caller's (values, indices) when not recording, fresh ones
 * that get a node otherwise. */
#define SELECT(op, dim, keepdim, call)                                                                                 \
  do {                                                                                                                 \
    mt_tensor **V = values, **I = indices;                                                                             \
    const mt_tensor *ins_[1] = {x};                                                                                    \
    if (!x->autograd || !mtg_any_requires_grad(ins_, 1)) return (call);                                                \
    if (*values || *indices) return no_out(mt_ops[op].name);                                                           \
    mt_tensor *v_ = NULL, *i_ = NULL;                                                                                  \
    V = &v_;                                                                                                           \
    I = &i_;                                                                                                           \
    mt_status st_ = (call);                                                                                            \
    if (!st_) st_ = record_select(op, x, dim, keepdim, v_, i_);                                                        \
    if (st_) {                                                                                                         \
      mt_release(v_);                                                                                                  \
      mt_release(i_);                                                                                                  \
      return st_;                                                                                                      \
    }                                                                                                                  \
    *values = v_;                                                                                                      \
    *indices = i_;                                                                                                     \
    return MT_OK;                                                                                                      \
  } while (0)

mt_status mtg_max_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  SELECT(MT_OP_max, dim, keepdim, mt_max_dim(x, dim, keepdim, V, I));
}

mt_status mtg_min_dim(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  SELECT(MT_OP_min, dim, keepdim, mt_min_dim(x, dim, keepdim, V, I));
}

mt_status mtg_cummax(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices) {
  SELECT(MT_OP_cummax, dim, true, mt_cummax(x, dim, V, I));
}

mt_status mtg_cummin(const mt_tensor *x, int dim, mt_tensor **values, mt_tensor **indices) {
  SELECT(MT_OP_cummin, dim, true, mt_cummin(x, dim, V, I));
}

mt_status mtg_sort(const mt_tensor *x, int dim, bool descending, bool stable, mt_tensor **values, mt_tensor **indices) {
  SELECT(MT_OP_sort, dim, true, mt_sort(x, dim, descending, stable, V, I));
}

mt_status mtg_topk(const mt_tensor *x, int64_t k, int dim, bool largest, bool sorted, mt_tensor **values,
                   mt_tensor **indices) {
  SELECT(MT_OP_topk, dim, true, mt_topk(x, k, dim, largest, sorted, V, I));
}

mt_status mtg_kthvalue(const mt_tensor *x, int64_t k, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  SELECT(MT_OP_kthvalue, dim, keepdim, mt_kthvalue(x, k, dim, keepdim, V, I));
}

mt_status mtg_median_dim(const mt_tensor *x, int dim, bool keepdim, bool ignore_nan, mt_tensor **values,
                         mt_tensor **indices) {
  SELECT(ignore_nan ? MT_OP_nanmedian : MT_OP_median, dim, keepdim, mt_median_dim(x, dim, keepdim, ignore_nan, V, I));
}

mt_status mtg_mode(const mt_tensor *x, int dim, bool keepdim, mt_tensor **values, mt_tensor **indices) {
  SELECT(MT_OP_mode, dim, keepdim, mt_mode(x, dim, keepdim, V, I));
}

/* max, min, median, nanmedian: the form along a dim (the all-elements
 * forms, in reduce.c, split the gradient evenly among ties instead). */
static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_max] = {d_select, 0},      [MT_OP_min] = {d_select, 0},    [MT_OP_cummax] = {d_select, 0},
    [MT_OP_cummin] = {d_select, 0},   [MT_OP_sort] = {d_select, 0},   [MT_OP_topk] = {d_select, 0},
    [MT_OP_kthvalue] = {d_select, 0}, [MT_OP_median] = {d_select, 0}, [MT_OP_nanmedian] = {d_select, 0},
    [MT_OP_mode] = {d_select, 0},
};

const mtg_deriv *mtg_deriv_select(mt_op op) { return table[op].fn ? &table[op] : NULL; }
