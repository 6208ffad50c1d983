/* reduce.c -- recorded reductions and softmax, with their derivatives:
 * a reduction's gradient is the incoming gradient broadcast back over the
 * reduced dims. Node arguments: i[0] a bit mask of reduced dims (0: all),
 * i[1] keepdim. */
#include <string.h>

#include "deriv.h"

static int64_t dim_mask(const int *dims, int ndims, int rank) {
  int64_t m = 0;
  for (int i = 0; i < ndims; i++) m |= (int64_t)1 << (dims[i] < 0 ? dims[i] + rank : dims[i]);
  return ndims ? m : ((int64_t)1 << rank) - 1;
}

/* g (the reduced result's gradient) broadcast back to input 0's shape. */
static mt_tensor *unreduce(mtg_scope *s, const mt_tensor *g, mtg_node *n) {
  const mtg_meta_shape *m = &n->in[0];
  int64_t shape[MT_MAXDIM];
  for (int i = 0; i < m->ndim; i++) shape[i] = (n->i[0] >> i & 1) ? 1 : m->shape[i];
  mt_tensor *r = D_reshape(s, g, shape, m->ndim);
  return D_expand(s, r, m->shape, m->ndim);
}

static int64_t reduced_count(mtg_node *n) {
  int64_t c = 1;
  for (int i = 0; i < n->in[0].ndim; i++)
    if (n->i[0] >> i & 1) c *= n->in[0].shape[i];
  return c;
}

static mt_status d_sum(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 0)) gin[0] = D_grad_for(s, 0, unreduce(s, go[0], n));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_mean(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int64_t c = reduced_count(n);
  if (mtg_needs(n, 0)) gin[0] = D_grad_for(s, 0, D_scale(s, unreduce(s, go[0], n), c ? 1.0 / (double)c : 0));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status record_reduce(mt_op op, mtg_backward_fn fn, const mt_tensor *x, const int *dims, int ndims,
                               bool keepdim, mt_tensor *r) {
  const mt_tensor *ins[1] = {x};
  if (!mtg_any_requires_grad(ins, 1)) return MT_OK;
  mt_status st;
  mtg_node *n = mtg_record1(mtg_backward_name(op), fn, ins, 1, r, &st);
  if (n) {
    n->i[0] = dim_mask(dims, ndims, x->ndim);
    n->i[1] = keepdim;
  }
  return st;
}

mt_status mtg_sum(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  if (!x->autograd) return mt_sum(x, dims, ndims, keepdim, dtype, out);
  if (*out && mtg_requires_grad(x) && mtg_grad_enabled())
    return mt_fail(MT_EARG, "sum: out= cannot be used when an input requires grad");
  mt_tensor *r = NULL;
  mt_status st = mt_sum(x, dims, ndims, keepdim, dtype, &r);
  if (!st) st = record_reduce(MT_OP_sum, d_sum, x, dims, ndims, keepdim, r);
  if (st) {
    mt_release(r);
    return st;
  }
  return mt_deliver("sum", r, out);
}

mt_status mtg_mean(const mt_tensor *x, const int *dims, int ndims, bool keepdim, int dtype, mt_tensor **out) {
  if (!x->autograd) return mt_mean(x, dims, ndims, keepdim, dtype, out);
  if (*out && mtg_requires_grad(x) && mtg_grad_enabled())
    return mt_fail(MT_EARG, "mean: out= cannot be used when an input requires grad");
  mt_tensor *r = NULL;
  mt_status st = mt_mean(x, dims, ndims, keepdim, dtype, &r);
  if (!st) st = record_reduce(MT_OP_mean, d_mean, x, dims, ndims, keepdim, r);
  if (st) {
    mt_release(r);
    return st;
  }
  return mt_deliver("mean", r, out);
}

/* softmax: gx = y (g - sum(g y)); log_softmax: gx = g - exp(y) sum(g).
 * i[0] holds the dim. */
static mt_status d_softmax(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int dim = (int)n->i[0];
  mt_tensor *y = D_saved(s, MTG_SLOT_OUT), *gy = D_mul(s, go[0], y);
  if (mtg_needs(n, 0)) gin[0] = D_grad_for(s, 0, D_mul(s, y, D_sub(s, go[0], D_sum(s, gy, &dim, 1, true))));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_log_softmax(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int dim = (int)n->i[0];
  mt_tensor *y = D_saved(s, MTG_SLOT_OUT);
  mt_tensor *sg = D_sum(s, go[0], &dim, 1, true);
  if (mtg_needs(n, 0)) gin[0] = D_grad_for(s, 0, D_sub(s, go[0], D_mul(s, D_un(s, MT_OP_exp, y), sg)));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status softmax_like(mt_op op, mtg_backward_fn fn, const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  mt_status (*run)(const mt_tensor *, int, int, mt_tensor **) = op == MT_OP_softmax ? mt_softmax : mt_log_softmax;
  const mt_tensor *ins[1] = {x};
  if (!mtg_any_requires_grad(ins, 1)) return run(x, dim, dtype, out);
  if (*out) return mt_fail(MT_EARG, "%s: out= cannot be used when an input requires grad", mt_ops[op].name);
  mt_tensor *r = NULL;
  mt_status st = run(x, dim, dtype, &r);
  mtg_node *n = st ? NULL : mtg_record1(mtg_backward_name(op), fn, ins, 1, r, &st);
  if (n) {
    n->i[0] = dim < 0 ? dim + x->ndim : dim;
    st = mtg_save(n, MTG_SLOT_OUT, r, true, 0);
  }
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

mt_status mtg_softmax(const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  return softmax_like(MT_OP_softmax, d_softmax, x, dim, dtype, out);
}

mt_status mtg_log_softmax(const mt_tensor *x, int dim, int dtype, mt_tensor **out) {
  return softmax_like(MT_OP_log_softmax, d_log_softmax, x, dim, dtype, out);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_sum] = {d_sum, 0},
    [MT_OP_mean] = {d_mean, 0},
    [MT_OP_softmax] = {d_softmax, MTG_SAVE_OUT},
    [MT_OP_log_softmax] = {d_log_softmax, MTG_SAVE_OUT},
};

const mtg_deriv *mtg_deriv_reduce(mt_op op) { return table[op].fn ? &table[op] : NULL; }
