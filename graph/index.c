/* index.c -- recorded index ops (gathers, scatters, masks, advanced
 * indexing) and their derivatives. Gradients of gathers are scatters into
 * zeros and the other way round; both are recorded ops, so create_graph
 * differentiates them again. Index tensors and masks are saved (version
 * checked) but never get gradients. Index values are 1-based, here as in
 * the engine. Scatters are recorded as in-place ops: the node's inputs are
 * (x's old value, src); none of their derivatives needs x's old data. */
#include <string.h>

#include "deriv.h"
#include "trace.h"
#include "views.h"

/* The arguments of an index op, whichever it is. */
typedef struct ix {
  int dim, n;
  const mt_tensor *index, *src, *mask;
  mt_tensor *const *indices; /* index / index_put: [n], NULL for a whole dim */
  const int *labels;
  mt_scalar v;
  mt_reduce r;
  bool acc;
} ix;

/* ---- saved indices ---- */

/* The index tensors of an advanced index, broadcast together and stacked
 * into one int64 tensor (a node saves at most MTG_MAXSAVED tensors); *bits
 * says which of the n dims have one. */
static mt_status pack_indices(mt_tensor *const *indices, int n, mt_tensor **packed, int64_t *bits) {
  int64_t b[MT_MAXDIM];
  int nb = 0, m = 0;
  mt_tensor *e[MT_MAXDIM] = {0};
  mt_status st = MT_OK;
  *bits = 0;
  for (int d = 0; d < n && !st; d++)
    if (indices[d]) st = mt_broadcast_shape("index", b, nb, indices[d]->shape, indices[d]->ndim, b, &nb);
  for (int d = 0; d < n && !st; d++)
    if (indices[d]) {
      st = mt_expand(indices[d], b, nb, &e[m++]);
      *bits |= (int64_t)1 << d;
    }
  if (!st) st = mt_stack(e, m, 0, packed);
  for (int j = 0; j < m; j++) mt_release(e[j]);
  return st;
}

/* The saved index tensors of node n (slot 0; i[1] dims, i[2] bits) into
 * idx[0..i[1]), tracked by s. */
static void unpack_indices(mtg_scope *s, mtg_node *n, mt_tensor **idx) {
  mt_tensor *p = mtg_d_saved(s, 0);
  for (int d = 0, j = 0; d < n->i[1]; d++) {
    idx[d] = NULL;
    if (!(n->i[2] >> d & 1) || !p) continue;
    mt_tensor *c = NULL;
    mt_status st = mt_select(p, 0, j++, &c);
    idx[d] = mtg_track(s, st, c);
  }
}

/* ---- derivative helpers: recorded ops inside a scope ---- */

/* Tracks *r in s, set by the call that returned st (read through a pointer,
 * so the read happens after the call: C leaves argument order open). */
static mt_tensor *tracked(mtg_scope *s, mt_status st, mt_tensor **r) { return mtg_track(s, st, *r); }

/* t (tracked by s) after an in-place op on it that returned st. */
static mt_tensor *after(mtg_scope *s, mt_status st, mt_tensor *t) {
  if (st) {
    if (!s->st) s->st = st;
    return NULL;
  }
  return t;
}

#define LIVE(s, x) (!(s)->st && (x))

static mt_tensor *Di_clone(mtg_scope *s, const mt_tensor *x) {
  if (!LIVE(s, x)) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_clone(x, &r), &r);
}

static mt_tensor *Di_zeros(mtg_scope *s, const int64_t *shape, int nd, mt_dtype dt, mt_device dev) {
  if (s->st) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mt_zeros(shape, nd, dt, dev, &r);
  if (!st) mtg_trace_full(r, 0);
  return tracked(s, st, &r);
}

static mt_tensor *Di_index_select(mtg_scope *s, const mt_tensor *x, int dim, const mt_tensor *idx) {
  if (!LIVE(s, x) || !idx) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_index_select(x, dim, idx, &r), &r);
}

static mt_tensor *Di_gather(mtg_scope *s, const mt_tensor *x, int dim, const mt_tensor *idx) {
  if (!LIVE(s, x) || !idx) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_gather(x, dim, idx, &r), &r);
}

static mt_tensor *Di_take(mtg_scope *s, const mt_tensor *x, const mt_tensor *idx) {
  if (!LIVE(s, x) || !idx) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_take(x, idx, &r), &r);
}

static mt_tensor *Di_masked_select(mtg_scope *s, const mt_tensor *x, const mt_tensor *mask) {
  if (!LIVE(s, x) || !mask) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_masked_select(x, mask, &r), &r);
}

/* x reshaped to the shape of m (a gradient with the right number of
 * elements but possibly another layout of dims). */
static mt_tensor *Di_shape_of(mtg_scope *s, const mt_tensor *x, const mtg_meta_shape *m) {
  return mtg_d_reshape(s, x, m->shape, m->ndim);
}

/* g (index-shaped) padded with zeros at the end of each dim to m's shape:
 * the gradient of a scatter's src, which may be larger than the index. */
static mt_tensor *Di_pad_to(mtg_scope *s, const mt_tensor *g, const mtg_meta_shape *m) {
  const mt_tensor *cur = g;
  for (int d = 0; d < m->ndim && LIVE(s, cur); d++) {
    if (cur->shape[d] == m->shape[d]) continue;
    mtg_meta_shape mm = {.ndim = cur->ndim, .dtype = cur->dtype, .device = mt_tdevice(cur)};
    memcpy(mm.shape, cur->shape, sizeof mm.shape);
    mm.shape[d] = m->shape[d];
    int64_t a[MTG_NARGS] = {MT_OP_slice, d, 0, cur->shape[d], 1};
    mt_tensor *r = NULL;
    cur = tracked(s, mtg_view_scatter(&mm, a, cur, &r), &r);
  }
  return (mt_tensor *)cur;
}

#define BEGIN                                                                                                          \
  mtg_scope S_, *s = &S_;                                                                                              \
  mtg_scope_begin(s, n);                                                                                               \
  const mt_tensor *g = go[0];                                                                                          \
  mt_status st_ = MT_OK;                                                                                               \
  (void)st_
#define END return mtg_scope_end(s, gin, n->nin)
/* runs an in-place recorded op on t (when the scope is live) */
#define INPLACE(t, call) (LIVE(s, t) ? after(s, (st_ = (call)), (t)) : NULL)

/* ---- derivatives of the gathers: scatters into zeros ---- */

static mt_status d_index_select(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  const mtg_meta_shape *m = &n->in[0];
  mt_tensor *idx = mtg_d_saved(s, 0), *z = Di_zeros(s, m->shape, m->ndim, (mt_dtype)g->dtype, mt_tdevice(g));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, INPLACE(z, mtg_index_add_(z, (int)n->i[0], idx, g, mt_sint(1))));
  END;
}

static mt_status d_gather(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  const mtg_meta_shape *m = &n->in[0];
  mt_tensor *idx = mtg_d_saved(s, 0), *z = Di_zeros(s, m->shape, m->ndim, (mt_dtype)g->dtype, mt_tdevice(g));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, INPLACE(z, mtg_scatter_(z, (int)n->i[0], idx, g, MT_REDUCE_ADD)));
  END;
}

static mt_status d_take(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  const mtg_meta_shape *m = &n->in[0];
  mt_tensor *idx = mtg_d_saved(s, 0), *z = Di_zeros(s, m->shape, m->ndim, (mt_dtype)g->dtype, mt_tdevice(g));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, INPLACE(z, mtg_put_(z, idx, g, true)));
  END;
}

static mt_status d_index(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  const mtg_meta_shape *m = &n->in[0];
  mt_tensor *idx[MT_MAXDIM];
  unpack_indices(s, n, idx);
  mt_tensor *z = Di_zeros(s, m->shape, m->ndim, (mt_dtype)g->dtype, mt_tdevice(g));
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, INPLACE(z, mtg_index_put_(z, idx, (int)n->i[1], NULL, g, true)));
  END;
}

/* masked_select broadcasts x and mask: g goes back into zeros of the
 * broadcast shape where the mask is true, then is summed to x's shape. */
static mt_status d_masked_select(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  const mtg_meta_shape *m = &n->in[0];
  mt_tensor *mask = mtg_d_saved(s, 0), *z = NULL;
  int64_t sh[MT_MAXDIM] = {0};
  int nd = 0;
  if (mask && !s->st) {
    mt_status st = mt_broadcast_shape("masked_select", m->shape, m->ndim, mask->shape, mask->ndim, sh, &nd);
    if (st) s->st = st;
  }
  z = Di_zeros(s, sh, nd, (mt_dtype)g->dtype, mt_tdevice(g));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, INPLACE(z, mtg_masked_scatter_(z, mask, g)));
  END;
}

/* ---- derivatives of the scatters ---- */

/* index_put: i[1] dims, i[2] bits of indexed dims, i[3] accumulate. The
 * old x gets g except where it was overwritten; the values get g there. */
static mt_status d_index_put(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx[MT_MAXDIM];
  int nd = (int)n->i[1];
  unpack_indices(s, n, idx);
  if (mtg_needs(n, 0)) {
    if (n->i[3]) {
      gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g);
    } else {
      mt_tensor *c = Di_clone(s, g), *zero = mtg_d_num(s, 0, (mt_dtype)g->dtype);
      gin[0] = mtg_d_grad_for(s, 0, INPLACE(c, mtg_index_put_(c, idx, nd, NULL, zero, false)));
    }
  }
  if (n->nin > 1 && mtg_needs(n, 1)) {
    mt_tensor *r = NULL;
    if (!s->st) r = tracked(s, mtg_index(g, idx, nd, NULL, &r), &r);
    gin[1] = mtg_d_grad_for(s, 1, r);
  }
  END;
}

/* scatter (i[0] dim, i[1] reduce): without add the old x loses the
 * overwritten positions; src gets g there (zeros where src exceeds index). */
static mt_status d_scatter(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  int dim = (int)n->i[0];
  mt_tensor *idx = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) {
    if (n->i[1] == MT_REDUCE_ADD) {
      gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g);
    } else {
      mt_tensor *c = Di_clone(s, g);
      gin[0] = mtg_d_grad_for(s, 0, INPLACE(c, mtg_scatter_value_(c, dim, idx, mt_sint(0), MT_REDUCE_NONE)));
    }
  }
  if (n->nin > 1 && mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, Di_pad_to(s, Di_gather(s, g, dim, idx), &n->in[1]));
  END;
}

/* index_add (i[0] dim, f[0] alpha) */
static mt_status d_index_add(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g);
  if (mtg_needs(n, 1)) {
    mt_tensor *r = Di_index_select(s, g, (int)n->i[0], idx);
    if (n->f[0] != 1) r = mtg_d_scale(s, r, n->f[0]);
    gin[1] = mtg_d_grad_for(s, 1, Di_shape_of(s, r, &n->in[1]));
  }
  END;
}

/* index_copy (i[0] dim) */
static mt_status d_index_copy(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  int dim = (int)n->i[0];
  mt_tensor *idx = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) {
    mt_tensor *c = Di_clone(s, g);
    gin[0] = mtg_d_grad_for(s, 0, INPLACE(c, mtg_index_fill_(c, dim, idx, mt_sint(0))));
  }
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, Di_shape_of(s, Di_index_select(s, g, dim, idx), &n->in[1]));
  END;
}

/* index_fill (i[0] dim) */
static mt_status d_index_fill(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) {
    mt_tensor *c = Di_clone(s, g);
    gin[0] = mtg_d_grad_for(s, 0, INPLACE(c, mtg_index_fill_(c, (int)n->i[0], idx, mt_sint(0))));
  }
  END;
}

/* put (i[0] accumulate) */
static mt_status d_put(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) {
    if (n->i[0]) {
      gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g);
    } else {
      mt_tensor *c = Di_clone(s, g),
                *z = idx ? Di_zeros(s, idx->shape, idx->ndim, (mt_dtype)g->dtype, mt_tdevice(g)) : NULL;
      gin[0] = mtg_d_grad_for(s, 0, INPLACE(c, mtg_put_(c, idx, z, false)));
    }
  }
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, Di_shape_of(s, Di_take(s, g, idx), &n->in[1]));
  END;
}

/* masked_fill: the filled positions get no gradient. */
static mt_status d_masked_fill(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *mask = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) {
    mt_tensor *c = Di_clone(s, g);
    gin[0] = mtg_d_grad_for(s, 0, INPLACE(c, mask ? mtg_masked_fill_(c, mask, mt_sint(0)) : MT_OK));
  }
  END;
}

/* masked_scatter: src's first k elements (k = the mask's count) get g where
 * the mask is true, in order; the rest of src gets zeros. */
static mt_status d_masked_scatter(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *mask = mtg_d_saved(s, 0);
  if (mtg_needs(n, 0)) {
    mt_tensor *c = Di_clone(s, g);
    gin[0] = mtg_d_grad_for(s, 0, INPLACE(c, mask ? mtg_masked_fill_(c, mask, mt_sint(0)) : MT_OK));
  }
  if (mtg_needs(n, 1)) {
    const mtg_meta_shape *m = &n->in[1];
    int64_t total = 1;
    for (int d = 0; d < m->ndim; d++) total *= m->shape[d];
    mt_tensor *sel = Di_masked_select(s, g, mask);
    if (sel && sel->shape[0] < total) {
      int64_t rest = total - sel->shape[0];
      mt_tensor *parts[2] = {sel, Di_zeros(s, &rest, 1, (mt_dtype)g->dtype, mt_tdevice(g))}, *r = NULL;
      sel = parts[1] ? tracked(s, mtg_join(MT_OP_cat, parts, 2, 0, &r), &r) : NULL;
    }
    gin[1] = mtg_d_grad_for(s, 1, Di_shape_of(s, sel, m));
  }
  END;
}

/* ---- recording ---- */

/* out= into a separate tensor cannot be differentiated (as in PyTorch). */
static mt_status check_out(const char *op, bool rec, mt_tensor *const *out) {
  if (*out && (rec || (mtg_grad_enabled() && mtg_requires_grad(*out))))
    return mt_fail(MT_EARG, "%s: out= cannot be used when an input requires grad (the result would have no "
                            "history); drop out= or use torch.no_grad()", op);
  return MT_OK;
}

/* Fills node nd's arguments for op and saves the index, mask or packed
 * indices it needs (slot 0). */
static mt_status setup_node(mtg_node *nd, mt_op op, const ix *a) {
  mt_status st = MT_OK;
  nd->i[0] = a->dim;
  switch ((int)op) {
  case MT_OP_index:
  case MT_OP_index_put: {
    mt_tensor *p = NULL;
    nd->i[1] = a->n;
    nd->i[3] = a->acc;
    if (!(st = pack_indices(a->indices, a->n, &p, &nd->i[2]))) st = mtg_save(nd, 0, p, false, 0);
    mt_release(p);
    return st;
  }
  case MT_OP_masked_fill:
  case MT_OP_masked_select:
  case MT_OP_masked_scatter: return mtg_save(nd, 0, a->mask, false, 0);
  case MT_OP_put:
    nd->i[0] = a->acc;
    return mtg_save(nd, 0, a->index, false, 0);
  case MT_OP_scatter:
  case MT_OP_scatter_add: nd->i[1] = a->r; return mtg_save(nd, 0, a->index, false, 0);
  case MT_OP_index_add: nd->f[0] = mt_scalar_f(a->v); /* fall through */
  default: return mtg_save(nd, 0, a->index, false, 0);
  }
}

/* A gather: runs run(x, a) into a new result and, when x requires grad,
 * records it under op with derivative fn. */
static mt_status gather_op(mt_op op, mtg_backward_fn fn, const mt_tensor *x, const ix *a,
                           mt_status (*run)(const mt_tensor *, const ix *, mt_tensor **), mt_tensor **out) {
  const mt_tensor *ins[1] = {x};
  bool rec = mtg_any_requires_grad(ins, 1);
  mt_status st = check_out(mt_ops[op].name, rec, out);
  if (st) return st;
  if (!rec) return run(x, a, out);
  mt_tensor *r = NULL;
  st = run(x, a, &r);
  mtg_node *nd = st ? NULL : mtg_record1(mtg_backward_name(op), fn, ins, 1, r, &st);
  if (nd) st = setup_node(nd, op, a);
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

/* An in-place op (name, as the user wrote it) on x: run(x, a) does the
 * work; when autograd needs it, a node (inputs: x's old value and a->src)
 * rewrites x's history (CopySlices for views). */
static mt_status inplace_untraced(mt_op op, const char *name, const char *node_name, mtg_backward_fn fn,
                                  mt_tensor *x, const ix *a, mt_status (*run)(mt_tensor *, const ix *));
static void trace_ix(mt_op op, bool inplace, const mt_tensor *x, const ix *a, mt_tensor *out);

static mt_status inplace_op(mt_op op, const char *name, const char *node_name, mtg_backward_fn fn, mt_tensor *x,
                            const ix *a, mt_status (*run)(mt_tensor *, const ix *)) {
  mt_status st = inplace_untraced(op, name, node_name, fn, x, a, run);
  if (!st && MTG_TRACING()) {
    if (op == MT_OP_index_put) mtg_trace_refuse("index_put_ (x[idx] = v) is not replayed by the JIT yet");
    else trace_ix(op, true, x, a, x);
  }
  return st;
}

static mt_status inplace_untraced(mt_op op, const char *name, const char *node_name, mtg_backward_fn fn,
                                  mt_tensor *x, const ix *a, mt_status (*run)(mt_tensor *, const ix *)) {
  const mt_tensor *ins[2] = {x, a->src};
  int nin = a->src ? 2 : 1;
  if (!x->autograd && !(a->src && a->src->autograd) && !(x->base && x->base->autograd)) return run(x, a);
  bool rec = mtg_any_requires_grad(ins, nin) || (mtg_grad_enabled() && x->base && mtg_requires_grad(x->base));
  mt_status st = mtg_check_inplace(name, x);
  if (!st && x->base) st = mtg_check_inplace(name, x->base);
  if (st) return st;
  if (!rec) return run(x, a);
  if (a->r == MT_REDUCE_MUL)
    return mt_fail(MT_EARG, "scatter: reduce='multiply' is not differentiable; use it under torch.no_grad() or "
                            "on tensors that do not require grad");
  mtg_node *f = NULL;
  if ((st = mtg_node_new(node_name, fn, ins, nin, &x, 1, &f))) return st;
  if ((st = setup_node(f, op, a)) || (st = run(x, a))) {
    mtg_node_release(f);
    return st;
  }
  return mtg_attach_inplace(f, x);
}

/* ---- the ops ---- */

static mt_status run_index_select(const mt_tensor *x, const ix *a, mt_tensor **out) {
  return mt_index_select(x, a->dim, a->index, out);
}
static mt_status run_gather(const mt_tensor *x, const ix *a, mt_tensor **out) {
  return mt_gather(x, a->dim, a->index, out);
}
static mt_status run_take(const mt_tensor *x, const ix *a, mt_tensor **out) { return mt_take(x, a->index, out); }
static mt_status run_index(const mt_tensor *x, const ix *a, mt_tensor **out) {
  return mt_index(x, a->indices, a->n, a->labels, out);
}
static mt_status run_masked_select(const mt_tensor *x, const ix *a, mt_tensor **out) {
  return mt_masked_select(x, a->mask, out);
}

static mt_status run_scatter(mt_tensor *x, const ix *a) { return mt_scatter_(x, a->dim, a->index, a->src, a->r); }
static mt_status run_scatter_value(mt_tensor *x, const ix *a) {
  return mt_scatter_value_(x, a->dim, a->index, a->v, a->r);
}
static mt_status run_index_add(mt_tensor *x, const ix *a) { return mt_index_add_(x, a->dim, a->index, a->src, a->v); }
static mt_status run_index_copy(mt_tensor *x, const ix *a) { return mt_index_copy_(x, a->dim, a->index, a->src); }
static mt_status run_index_fill(mt_tensor *x, const ix *a) { return mt_index_fill_(x, a->dim, a->index, a->v); }
static mt_status run_put(mt_tensor *x, const ix *a) { return mt_put_(x, a->index, a->src, a->acc); }
static mt_status run_index_put(mt_tensor *x, const ix *a) {
  return mt_index_put_(x, a->indices, a->n, a->labels, a->src, a->acc);
}
static mt_status run_masked_fill(mt_tensor *x, const ix *a) { return mt_masked_fill_(x, a->mask, a->v); }
static mt_status run_masked_scatter(mt_tensor *x, const ix *a) { return mt_masked_scatter_(x, a->mask, a->src); }

/* ---- JIT replay (trace.h): ops with one index/mask and one src tensor ---- */

typedef struct ix_attr {
  int64_t op, dim, r, acc;
  mt_scalar v;
} ix_attr;

/* ins: x, index or mask, src (any may be absent) -> the ix of the call. */
static ix ix_of(const ix_attr *t, const mt_tensor *const *ins) {
  bool masked = t->op == MT_OP_masked_fill || t->op == MT_OP_masked_select || t->op == MT_OP_masked_scatter;
  ix a = {.dim = (int)t->dim, .src = ins[2], .v = t->v, .r = (mt_reduce)t->r, .acc = t->acc != 0};
  if (masked) a.mask = ins[1];
  else a.index = ins[1];
  return a;
}

static mt_status replay_gather(const int64_t *w, const double *f, const mt_tensor *const *ins, mt_tensor **outs) {
  const ix_attr *t = (const ix_attr *)w;
  ix a = ix_of(t, ins);
  switch ((int)t->op) {
  case MT_OP_index_select: return run_index_select(ins[0], &a, &outs[0]);
  case MT_OP_gather: return run_gather(ins[0], &a, &outs[0]);
  default: return run_take(ins[0], &a, &outs[0]);
  }
}

static mt_status (*const inplace_runs[MT_NOPS])(mt_tensor *, const ix *) = {
    [MT_OP_scatter] = run_scatter,       [MT_OP_scatter_add] = run_scatter, [MT_OP_index_add] = run_index_add,
    [MT_OP_index_copy] = run_index_copy, [MT_OP_index_fill] = run_index_fill, [MT_OP_put] = run_put,
    [MT_OP_masked_fill] = run_masked_fill, [MT_OP_masked_scatter] = run_masked_scatter,
};

static mt_status replay_inplace(const int64_t *w, const double *f, const mt_tensor *const *ins, mt_tensor **outs) {
  const ix_attr *t = (const ix_attr *)w;
  ix a = ix_of(t, ins);
  if (t->op == MT_OP_scatter && !a.src) return run_scatter_value(outs[0], &a);
  return inplace_runs[t->op](outs[0], &a);
}

/* Appends the trace entry of an index op on x (result out; x itself when in place). */
static void trace_ix(mt_op op, bool inplace, const mt_tensor *x, const ix *a, mt_tensor *out) {
  if (!MTG_TRACING()) return;
  if (op == MT_OP_masked_select) {
    mtg_trace_refuse("masked_select has a result size that depends on the data; the JIT does not replay it");
    return;
  }
  ix_attr t = {.op = op, .dim = a->dim, .r = a->r, .acc = a->acc, .v = a->v};
  const mt_tensor *ins[3] = {x, a->mask ? a->mask : a->index, a->src};
  mtg_trace_call(mt_ops[op].name, inplace ? replay_inplace : replay_gather, inplace, ins, 3, &out, 1, &t, sizeof t,
                 NULL, 0);
}

mt_status mtg_index_select(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out) {
  ix a = {.dim = dim, .index = index};
  mt_tensor *given = *out;
  mt_status st = !x->autograd ? mt_index_select(x, dim, index, out)
                              : gather_op(MT_OP_index_select, d_index_select, x, &a, run_index_select, out);
  if (!st && MTG_TRACING()) given ? mtg_trace_refuse("index_select with out= is not replayed by the JIT")
                                  : trace_ix(MT_OP_index_select, false, x, &a, *out);
  return st;
}

mt_status mtg_gather(const mt_tensor *x, int dim, const mt_tensor *index, mt_tensor **out) {
  ix a = {.dim = dim, .index = index};
  mt_tensor *given = *out;
  mt_status st =
      !x->autograd ? mt_gather(x, dim, index, out) : gather_op(MT_OP_gather, d_gather, x, &a, run_gather, out);
  if (!st && MTG_TRACING()) given ? mtg_trace_refuse("gather with out= is not replayed by the JIT")
                                  : trace_ix(MT_OP_gather, false, x, &a, *out);
  return st;
}

mt_status mtg_take(const mt_tensor *x, const mt_tensor *index, mt_tensor **out) {
  ix a = {.index = index};
  mt_tensor *given = *out;
  mt_status st = !x->autograd ? mt_take(x, index, out) : gather_op(MT_OP_take, d_take, x, &a, run_take, out);
  if (!st && MTG_TRACING()) given ? mtg_trace_refuse("take with out= is not replayed by the JIT")
                                  : trace_ix(MT_OP_take, false, x, &a, *out);
  return st;
}

mt_status mtg_index(const mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, mt_tensor **out) {
  if (MTG_TRACING()) mtg_trace_refuse("advanced indexing x[idx] is not replayed by the JIT yet");
  if (!x->autograd) return mt_index(x, indices, n, labels, out);
  ix a = {.indices = indices, .n = n, .labels = labels};
  return gather_op(MT_OP_index, d_index, x, &a, run_index, out);
}

mt_status mtg_masked_select(const mt_tensor *x, const mt_tensor *mask, mt_tensor **out) {
  if (MTG_TRACING()) trace_ix(MT_OP_masked_select, false, x, &(ix){0}, NULL);
  if (!x->autograd) return mt_masked_select(x, mask, out);
  ix a = {.mask = mask};
  return gather_op(MT_OP_masked_select, d_masked_select, x, &a, run_masked_select, out);
}

mt_status mtg_scatter_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_reduce r) {
  ix a = {.dim = dim, .index = index, .src = src, .r = r};
  bool add = r == MT_REDUCE_ADD;
  return inplace_op(add ? MT_OP_scatter_add : MT_OP_scatter, add ? "scatter_add_" : "scatter_",
                    add ? "ScatterAddBackward0" : "ScatterBackward0", d_scatter, x, &a, run_scatter);
}

mt_status mtg_scatter_value_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v, mt_reduce r) {
  ix a = {.dim = dim, .index = index, .v = v, .r = r};
  return inplace_op(MT_OP_scatter, "scatter_", "ScatterBackward1", d_scatter, x, &a, run_scatter_value);
}

mt_status mtg_index_add_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, mt_scalar alpha) {
  ix a = {.dim = dim, .index = index, .src = src, .v = alpha};
  return inplace_op(MT_OP_index_add, "index_add_", mtg_backward_name(MT_OP_index_add), d_index_add, x, &a,
                    run_index_add);
}

mt_status mtg_index_copy_(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src) {
  ix a = {.dim = dim, .index = index, .src = src};
  return inplace_op(MT_OP_index_copy, "index_copy_", mtg_backward_name(MT_OP_index_copy), d_index_copy, x, &a,
                    run_index_copy);
}

mt_status mtg_index_fill_(mt_tensor *x, int dim, const mt_tensor *index, mt_scalar v) {
  ix a = {.dim = dim, .index = index, .v = v};
  return inplace_op(MT_OP_index_fill, "index_fill_", mtg_backward_name(MT_OP_index_fill), d_index_fill, x, &a,
                    run_index_fill);
}

mt_status mtg_put_(mt_tensor *x, const mt_tensor *index, const mt_tensor *src, bool accumulate) {
  ix a = {.index = index, .src = src, .acc = accumulate};
  return inplace_op(MT_OP_put, "put_", mtg_backward_name(MT_OP_put), d_put, x, &a, run_put);
}

mt_status mtg_index_put_(mt_tensor *x, mt_tensor *const *indices, int n, const int *labels, const mt_tensor *values,
                         bool accumulate) {
  ix a = {.indices = indices, .n = n, .labels = labels, .src = values, .acc = accumulate};
  return inplace_op(MT_OP_index_put, "index_put_", mtg_backward_name(MT_OP_index_put), d_index_put, x, &a,
                    run_index_put);
}

mt_status mtg_masked_fill_(mt_tensor *x, const mt_tensor *mask, mt_scalar v) {
  ix a = {.mask = mask, .v = v};
  return inplace_op(MT_OP_masked_fill, "masked_fill_", mtg_backward_name(MT_OP_masked_fill), d_masked_fill, x, &a,
                    run_masked_fill);
}

mt_status mtg_masked_scatter_(mt_tensor *x, const mt_tensor *mask, const mt_tensor *src) {
  ix a = {.mask = mask, .src = src};
  return inplace_op(MT_OP_masked_scatter, "masked_scatter_", mtg_backward_name(MT_OP_masked_scatter),
                    d_masked_scatter, x, &a, run_masked_scatter);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_index] = {d_index, 0},
    [MT_OP_index_put] = {d_index_put, 0},
    [MT_OP_index_select] = {d_index_select, 0},
    [MT_OP_gather] = {d_gather, 0},
    [MT_OP_take] = {d_take, 0},
    [MT_OP_scatter] = {d_scatter, 0},
    [MT_OP_scatter_add] = {d_scatter, 0},
    [MT_OP_index_add] = {d_index_add, 0},
    [MT_OP_index_copy] = {d_index_copy, 0},
    [MT_OP_index_fill] = {d_index_fill, 0},
    [MT_OP_put] = {d_put, 0},
    [MT_OP_masked_fill] = {d_masked_fill, 0},
    [MT_OP_masked_select] = {d_masked_select, 0},
    [MT_OP_masked_scatter] = {d_masked_scatter, 0},
};

const mtg_deriv *mtg_deriv_index(mt_op op) { return table[op].fn ? &table[op] : NULL; }
