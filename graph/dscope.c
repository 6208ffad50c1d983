/* dscope.c -- the derivative scope: short helpers through which derivative
 * code calls recorded ops without checking each status. Each helper returns
 * a new tensor tracked by the scope (released at mtg_scope_end), or NULL
 * once any step failed; the first error's status is kept. Ops go through
 * the mtg_ layer, so with create_graph the backward pass is recorded. */
#include <string.h>

#include "node.h"
#include "trace.h"

void mtg_scope_begin(mtg_scope *s, mtg_node *node) {
  s->n = 0;
  s->st = MT_OK;
  s->node = node;
}

mt_status mtg_scope_end(mtg_scope *s, mt_tensor **gin, int nin) {
  for (int i = 0; i < s->n; i++) mt_release(s->tmp[i]);
  s->n = 0;
  if (s->st)
    for (int i = 0; i < nin; i++) {
      mt_release(gin[i]);
      gin[i] = NULL;
    }
  return s->st;
}

mt_tensor *mtg_track(mtg_scope *s, mt_status st, mt_tensor *t) {
  if (st) {
    if (!s->st) s->st = st;
    mt_release(t);
    return NULL;
  }
  if (s->n == (int)(sizeof s->tmp / sizeof *s->tmp)) {
    mt_release(t);
    s->st = mt_fail(MT_EARG, "%s: too many temporaries in a derivative (internal error)", s->node->name);
    return NULL;
  }
  s->tmp[s->n++] = t;
  return t;
}

mt_tensor *mtg_keep(mtg_scope *s, mt_tensor *t) {
  if (!t) return NULL;
  for (int i = s->n - 1; i >= 0; i--)
    if (s->tmp[i] == t) {
      s->tmp[i] = s->tmp[--s->n];
      return t;
    }
  return mt_retain(t); /* not a temporary (e.g. an incoming gradient) */
}

#define LIVE(s) ((s)->st == MT_OK)

mt_tensor *mtg_d_saved(mtg_scope *s, int k) {
  if (!LIVE(s)) return NULL;
  mt_tensor *t = NULL;
  mt_status st = mtg_unpack(s->node, k, &t);
  return mtg_track(s, st, t);
}

mt_tensor *mtg_d_un(mtg_scope *s, mt_op op, const mt_tensor *x) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_unary(op, x, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_bin(mtg_scope *s, mt_op op, const mt_tensor *a, const mt_tensor *b) {
  if (!LIVE(s) || !a || !b) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_binary(op, a, b, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_mul(mtg_scope *s, const mt_tensor *a, const mt_tensor *b) { return mtg_d_bin(s, MT_OP_mul, a, b); }
mt_tensor *mtg_d_add(mtg_scope *s, const mt_tensor *a, const mt_tensor *b) { return mtg_d_bin(s, MT_OP_add, a, b); }
mt_tensor *mtg_d_sub(mtg_scope *s, const mt_tensor *a, const mt_tensor *b) { return mtg_d_bin(s, MT_OP_sub, a, b); }
mt_tensor *mtg_d_div(mtg_scope *s, const mt_tensor *a, const mt_tensor *b) { return mtg_d_bin(s, MT_OP_div, a, b); }
mt_tensor *mtg_d_neg(mtg_scope *s, const mt_tensor *a) { return mtg_d_un(s, MT_OP_neg, a); }

mt_tensor *mtg_d_num(mtg_scope *s, double v, mt_dtype dt) {
  if (!LIVE(s)) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mt_scalar_tensor(mt_sfloat(v), mt_is_floating(dt) ? dt : MT_FLOAT64, &r);
  if (!st) r->flags |= MT_TF_WRAPPED;
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_scale(mtg_scope *s, const mt_tensor *a, double c) {
  if (!a) return NULL;
  return mtg_d_mul(s, a, mtg_d_num(s, c, (mt_dtype)a->dtype));
}

mt_tensor *mtg_d_addc(mtg_scope *s, const mt_tensor *a, double c) {
  if (!a) return NULL;
  return mtg_d_add(s, a, mtg_d_num(s, c, (mt_dtype)a->dtype));
}

mt_tensor *mtg_d_zeros(mtg_scope *s, const mtg_meta_shape *m) {
  if (!LIVE(s)) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mt_zeros(m->shape, m->ndim, (mt_dtype)m->dtype, m->device, &r);
  if (!st) mtg_trace_full(r, 0);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_zeros_like(mtg_scope *s, const mt_tensor *t) {
  if (!LIVE(s) || !t) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mt_zeros(t->shape, t->ndim, (mt_dtype)t->dtype, mt_tdevice(t), &r);
  if (!st) mtg_trace_full(r, 0);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_where(mtg_scope *s, const mt_tensor *c, const mt_tensor *a, const mt_tensor *b) {
  if (!LIVE(s) || !c || !a || !b) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_where(c, a, b, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_cast(mtg_scope *s, const mt_tensor *t, mt_dtype dt) {
  if (!LIVE(s) || !t) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_to_dtype(t, dt, false, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_call(mtg_scope *s, mt_op op, const mt_tensor *const *ins, int nin, const mt_args *a) {
  if (s->st) return NULL;
  for (int i = 0; i < nin; i++)
    if (!ins[i]) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_call(op, ins, nin, a, &r, 1);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_sum(mtg_scope *s, const mt_tensor *x, const int *dims, int ndims, bool keepdim) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_reduce(MT_OP_sum, x, dims, ndims, keepdim, -1, 0, &r, 1);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_sum_to(mtg_scope *s, const mt_tensor *g, const mtg_meta_shape *m) {
  if (!LIVE(s) || !g) return NULL;
  const mt_tensor *r = g;
  int lead = g->ndim - m->ndim;
  if (lead > 0) {
    int dims[MT_MAXDIM];
    for (int i = 0; i < lead; i++) dims[i] = i;
    r = mtg_d_sum(s, r, dims, lead, false);
  }
  if (r) {
    int dims[MT_MAXDIM], nd = 0;
    for (int i = 0; i < m->ndim; i++)
      if (m->shape[i] == 1 && r->shape[i] != 1) dims[nd++] = i;
    if (nd) r = mtg_d_sum(s, r, dims, nd, true);
  }
  if (r && r->dtype != m->dtype) r = mtg_d_cast(s, r, (mt_dtype)m->dtype);
  if (r == g) return mtg_track(s, MT_OK, mt_retain((mt_tensor *)g));
  return (mt_tensor *)r;
}

mt_tensor *mtg_d_grad_for(mtg_scope *s, int i, mt_tensor *g) {
  if (!g) return NULL;
  return mtg_keep(s, mtg_d_sum_to(s, g, &s->node->in[i]));
}

mt_tensor *mtg_d_expand(mtg_scope *s, const mt_tensor *x, const int64_t *shape, int ndim) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_expand(x, shape, ndim, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_reshape(mtg_scope *s, const mt_tensor *x, const int64_t *shape, int ndim) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_reshape(x, shape, ndim, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_transpose(mtg_scope *s, const mt_tensor *x, int d0, int d1) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_transpose(x, d0, d1, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_matmul(mtg_scope *s, const mt_tensor *a, const mt_tensor *b) {
  if (!LIVE(s) || !a || !b) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_matmul(a, b, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_unsqueeze(mtg_scope *s, const mt_tensor *x, int dim) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_unsqueeze(x, dim, &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_d_contiguous(mtg_scope *s, const mt_tensor *x) {
  if (!LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mtg_contiguous(x, &r);
  return mtg_track(s, st, r);
}
