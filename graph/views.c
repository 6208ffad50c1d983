/* views.c -- recorded views (view, reshape, permute, expand, squeeze,
 * slice, select, diagonal, unfold, ...), the scatter that undoes a view in
 * backward, and in-place writes into views: the base tensor's history is
 * rewritten through a CopySlices node, as in PyTorch, so gradients flow
 * through x[{...}] = v and y:narrow(...):mul_(2). */
#include <string.h>

#include "cplx.h"
#include "deriv.h"
#include "layout.h"
#include "trace.h"
#include "views.h"

/* ---- applying a described view ---- */

mt_status mtg_apply_view(const int64_t *a, const mt_tensor *t, mt_tensor **out) {
  switch ((int)a[0]) {
  case MT_OP_slice: return mt_slice(t, (int)a[1], a[2], a[3], a[4], out);
  case MT_OP_select: return mt_select(t, (int)a[1], a[2], out);
  case MT_OP_diagonal: return mt_diagonal(t, a[1], (int)a[2], (int)a[3], out);
  case MT_OP_unfold: return mt_unfold(t, (int)a[1], a[2], a[3], out);
  case MT_OP_permute: {
    int perm[MT_MAXDIM];
    for (int i = 0; i < a[1]; i++) perm[i] = (int)a[2 + i];
    return mt_permute(t, perm, (int)a[1], out);
  }
  case MTG_VK_AS_STRIDED: {
    int nd = (int)a[1];
    return mt_as_strided(t, nd, a + 3, a + 3 + nd, t->offset + a[2], out);
  }
  case MTG_VK_AS_STRIDED_PARTS: { /* a real view of complex t, through its pairs */
    int nd = (int)a[1];
    mt_tensor *p = NULL;
    mt_status st = mt_complex_pairs(t, &p);
    if (!st) st = mt_as_strided(p, nd, a + 3, a + 3 + nd, p->offset + a[2], out);
    if (!st) {
      mt_release((*out)->base); /* a view of t, not of the pairs */
      (*out)->base = mt_retain(t->base ? t->base : (mt_tensor *)t);
    }
    mt_release(p);
    return st;
  }
  default: return mt_fail(MT_EARG, "internal error: unknown view kind %d", (int)a[0]);
  }
}

/* zeros of m's shape, with g added into the view a of it. Windows of unfold
 * may overlap, so they are added one window position at a time. */
static mt_status scatter_into_zeros(const mtg_meta_shape *m, const int64_t *a, const mt_tensor *g, mt_tensor **out) {
  mt_tensor *z = NULL, *v = NULL;
  mt_status st = mt_zeros(m->shape, m->ndim, (mt_dtype)m->dtype, m->device, &z);
  if (!st && a[0] == MT_OP_unfold) {
    int dim = (int)a[1];
    int64_t size = a[2], step = a[3], nwin = g->shape[dim];
    for (int64_t j = 0; j < size && !st; j++) {
      mt_tensor *zj = NULL, *gj = NULL;
      st = mt_slice(z, dim, j, j + step * (nwin - 1) + 1, step, &zj);
      if (!st) st = mt_select(g, g->ndim - 1, j, &gj);
      mt_tensor *sum = zj;
      if (!st) st = mt_binary(MT_OP_add, zj, gj, &sum);
      mt_release(zj);
      mt_release(gj);
    }
  } else if (!st) {
    st = mtg_apply_view(a, z, &v);
    if (!st) st = mt_copy_(v, g);
    mt_release(v);
  }
  if (st) {
    mt_release(z);
    return st;
  }
  *out = z;
  return MT_OK;
}

/* backward of the scatter: apply the view to the incoming gradient */
static mt_status d_scatter(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  return mtg_view_op(n->i, go[0], &gin[0]);
}

/* Replays mtg_view_scatter: w = {ndim, dtype, shape[MT_MAXDIM], view description[MTG_NARGS]}. */
static mt_status rp_view_scatter(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  mtg_meta_shape m = {.ndim = (int8_t)w[0], .dtype = (int8_t)w[1], .device = mt_tdevice(in[0])}; /* g's device */
  memcpy(m.shape, w + 2, sizeof m.shape);
  return scatter_into_zeros(&m, w + 2 + MT_MAXDIM, in[0], out);
}

mt_status mtg_view_scatter(const mtg_meta_shape *m, const int64_t *a, const mt_tensor *g, mt_tensor **out) {
  mt_status st = scatter_into_zeros(m, a, g, out);
  if (!st && MTG_TRACING()) {
    int64_t w[2 + MT_MAXDIM + MTG_NARGS] = {m->ndim, m->dtype};
    memcpy(w + 2, m->shape, sizeof m->shape);
    memcpy(w + 2 + MT_MAXDIM, a, MTG_NARGS * sizeof *a);
    mtg_trace_call("view_scatter", rp_view_scatter, false, &g, 1, out, 1, w, sizeof w, NULL, 0);
  }
  const mt_tensor *ins[1] = {g};
  if (st || !mtg_any_requires_grad(ins, 1)) return st;
  mtg_node *n = mtg_record1("ViewScatterBackward0", d_scatter, ins, 1, *out, &st);
  if (n) memcpy(n->i, a, sizeof n->i);
  return st;
}

/* ---- recording views ---- */

/* The derivative of every view: reshape-likes reshape back, permute
 * permutes back, expand sums, the rest scatter into zeros. */
static mt_status d_view(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  const mt_tensor *g = go[0];
  const mtg_meta_shape *m = &n->in[0];
  if (mtg_needs(n, 0)) switch ((int)n->i[0]) {
    case MT_OP_view:
    case MT_OP_reshape:
    case MT_OP_squeeze:
    case MT_OP_unsqueeze:
    case MT_OP_contiguous: gin[0] = mtg_keep(s, mtg_d_reshape(s, g, m->shape, m->ndim)); break;
    case MT_OP_expand: gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g); break;
    case MT_OP_permute: {
      int64_t inv[MTG_NARGS] = {MT_OP_permute, n->i[1]}; /* record_view copies MTG_NARGS entries */
      for (int i = 0; i < n->i[1]; i++) inv[2 + n->i[2 + i]] = i;
      mt_tensor *r = NULL;
      mt_status st = mtg_view_op(inv, g, &r);
      gin[0] = mtg_keep(s, mtg_track(s, st, r));
      break;
    }
    default: {
      mt_tensor *r = NULL;
      mt_status st = mtg_view_scatter(m, n->i, g, &r);
      gin[0] = mtg_keep(s, mtg_track(s, st, r));
    }
    }
  return mtg_scope_end(s, gin, n->nin);
}

/* Records an already computed view `out` of t described by a. */
static mt_status record_view(const int64_t *a, const mt_tensor *t, mt_tensor *out) {
  const mt_tensor *ins[1] = {t};
  if (!mtg_any_requires_grad(ins, 1)) return MT_OK;
  mt_status st;
  mt_op op = a[0] < MT_NOPS ? (mt_op)a[0] : MT_OP_view;
  mtg_node *n = mtg_record1(a[0] >= MTG_VK_AS_STRIDED ? "AsStridedBackward0" : mtg_backward_name(op), d_view, ins, 1,
                            out, &st);
  if (n) memcpy(n->i, a, sizeof n->i);
  return st;
}

/* Replays a view at an offset (select, slice, diagonal, unfold, as_strided)
 * for the JIT: w holds the view's description (MTG_NARGS words). The JIT
 * makes the result contiguous: a copy, which is the view's value. */
static mt_status rp_view(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  return mtg_apply_view(w, in[0], &out[0]);
}

/* Replays an in-place write through view w for the JIT (runtime.c hands
 * in-place calls a private copy of their first operand in out[0]). */
static mt_status rp_view_write(const int64_t *w, const double *f, const mt_tensor *const *in, mt_tensor **out) {
  mt_tensor *v = NULL;
  mt_status st = mtg_apply_view(w, out[0], &v);
  if (!st) st = mt_copy_(v, in[1]);
  mt_release(v);
  return st;
}

const mtg_replay_fn mtg_rp_view = rp_view, mtg_rp_view_write = rp_view_write;

/* Appends a view described by a to the active trace: shape changes and
 * permutations as views of the IR, views at offsets as extern calls. */
static void trace_view(const int64_t *a, const mt_tensor *t, const mt_tensor *r) {
  if (!MTG_TRACING()) return;
  switch (a[0]) {
  case MT_OP_view: case MT_OP_reshape: case MT_OP_squeeze: case MT_OP_unsqueeze: case MT_OP_expand:
  case MT_OP_permute: {
    const mt_tensor *ins[1] = {t};
    mtg_trace_op((int)a[0], NULL, ins, 1, r, a + 1, a[0] == MT_OP_permute ? 1 + t->ndim : 0, NULL, 0);
    return;
  }
  default: {
    mt_tensor *o = (mt_tensor *)r;
    mtg_trace_call(a[0] < MT_NOPS ? mt_ops[a[0]].name : "as_strided", rp_view, false, &t, 1, &o, 1, a,
                   MTG_NARGS * sizeof *a, NULL, 0);
  }
  }
}

mt_status mtg_view_op(const int64_t *a, const mt_tensor *t, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mtg_apply_view(a, t, &r);
  if (!st) st = record_view(a, t, r);
  if (!st) trace_view(a, t, r);
  if (!st) return mt_deliver("view", r, out);
  mt_release(r);
  return st;
}


/* Runs view function call `expr` into r, then records it with args a. */
#define VIEW(args, expr)                                                                                               \
  do {                                                                                                                 \
    mt_tensor *r = NULL;                                                                                               \
    mt_status st = (expr);                                                                                             \
    if (!st && t->autograd) st = record_view(args, t, r);                                                              \
    if (!st) trace_view(args, t, r);                                                                                   \
    if (st) {                                                                                                          \
      mt_release(r);                                                                                                   \
      return st;                                                                                                       \
    }                                                                                                                  \
    return mt_deliver("view", r, out);                                                                                 \
  } while (0)

mt_status mtg_view(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_view};
  VIEW(a, mt_view(t, shape, ndim, &r));
}

mt_status mtg_reshape(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_reshape};
  mt_tensor *r = NULL;
  mt_status st = mt_reshape(t, shape, ndim, &r);
  /* a reshape that had to copy is a new tensor: record it as such */
  if (!st && t->autograd) st = record_view(a, t, r);
  if (!st) trace_view(a, t, r);
  if (st) {
    mt_release(r);
    return st;
  }
  return mt_deliver("reshape", r, out);
}

mt_status mtg_flatten(const mt_tensor *t, int start, int end, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_reshape};
  VIEW(a, mt_flatten(t, start, end, &r));
}

mt_status mtg_squeeze(const mt_tensor *t, int dim, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_squeeze};
  VIEW(a, mt_squeeze(t, dim, &r));
}

mt_status mtg_unsqueeze(const mt_tensor *t, int dim, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_unsqueeze};
  VIEW(a, mt_unsqueeze(t, dim, &r));
}

mt_status mtg_expand(const mt_tensor *t, const int64_t *shape, int ndim, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_expand};
  VIEW(a, mt_expand(t, shape, ndim, &r));
}

mt_status mtg_permute(const mt_tensor *t, const int *perm, int n, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_permute, n};
  for (int i = 0; i < n && i < MT_MAXDIM; i++) a[2 + i] = perm[i] < 0 ? perm[i] + n : perm[i];
  VIEW(a, mt_permute(t, perm, n, &r));
}

mt_status mtg_transpose(const mt_tensor *t, int d0, int d1, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_permute, t->ndim};
  for (int i = 0; i < t->ndim; i++) a[2 + i] = i;
  if (t->ndim) {
    int x = d0 < 0 ? d0 + t->ndim : d0, y = d1 < 0 ? d1 + t->ndim : d1;
    if (x >= 0 && y >= 0 && x < t->ndim && y < t->ndim) {
      a[2 + x] = y;
      a[2 + y] = x;
    }
  }
  VIEW(a, mt_transpose(t, d0, d1, &r));
}

mt_status mtg_slice(const mt_tensor *t, int dim, int64_t start, int64_t stop, int64_t step, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_slice, dim, start, stop, step};
  VIEW(a, mt_slice(t, dim, start, stop, step, &r));
}

mt_status mtg_narrow(const mt_tensor *t, int dim, int64_t start, int64_t len, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_narrow(t, dim, start, len, &r);
  if (!st && (t->autograd || MTG_TRACING())) { /* arguments checked now: recorded and traced as a slice */
    int d = dim < 0 ? dim + t->ndim : dim;
    int64_t s0 = start < 0 ? start + t->shape[d] : start;
    int64_t a[MTG_NARGS] = {MT_OP_slice, d, s0, s0 + len, 1};
    if (t->autograd) st = record_view(a, t, r);
    if (!st) trace_view(a, t, r);
  }
  if (st) {
    mt_release(r);
    return st;
  }
  return mt_deliver("narrow", r, out);
}

mt_status mtg_select(const mt_tensor *t, int dim, int64_t index, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_select, dim, index};
  VIEW(a, mt_select(t, dim, index, &r));
}

/* unbind's backward: the pieces' gradients stacked along dim. Gradients
 * that already are one strided view of one buffer (as a fused SDPA
 * backward writes dq, dk, dv of q, k, v unbound from one qkv tensor) are
 * that view, with no kernel; otherwise (or under create_graph, which needs
 * the recorded op) one stack. Traced for the JIT as select's scatter into
 * zeros and adds, which it fuses. */
static mt_status d_unbind(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  int dim = (int)n->i[0];
  mt_status st = MT_OK;
  if (MTG_TRACING()) { /* the JIT knows select's scatter and add (stack is not traced) */
    mt_tensor *acc = NULL;
    for (int j = 0; j < n->nout && !st; j++) {
      int64_t a[MTG_NARGS] = {MT_OP_select, dim, j};
      mt_tensor *g = NULL, *sum = NULL;
      st = mtg_view_scatter(&n->in[0], a, go[j], &g);
      if (!st && acc) st = mtg_binary(MT_OP_add, acc, g, &sum);
      if (!st && acc) mt_release(acc), mt_release(g), g = sum;
      if (!st) acc = g;
      else mt_release(g);
    }
    if (st) mt_release(acc);
    else gin[0] = acc;
    return st;
  }
  if (!mtg_grad_enabled()) {
    st = mt_stack_view((const mt_tensor *const *)go, n->nout, dim, &gin[0]);
    if (st || gin[0]) return st;
  }
  return mtg_join(MT_OP_stack, go, n->nout, dim, &gin[0]);
}

mt_status mtg_unbind(const mt_tensor *t, int dim, mt_tensor **outs) {
  int64_t n = t->shape[dim];
  mt_status st = MT_OK;
  for (int64_t i = 0; i < n; i++) outs[i] = NULL;
  for (int64_t i = 0; i < n && !st; i++) {
    int64_t a[MTG_NARGS] = {MT_OP_select, dim, i};
    if (!(st = mt_select(t, dim, i, &outs[i]))) trace_view(a, t, outs[i]);
  }
  const mt_tensor *ins[1] = {t};
  if (!st && n > 0 && n <= INT32_MAX && mtg_any_requires_grad(ins, 1)) {
    mtg_node *x = NULL;
    st = mtg_node_new("UnbindBackward0", d_unbind, ins, 1, outs, (int)n, &x);
    if (!st) {
      x->i[0] = dim;
      st = mtg_attach(x, outs, (int)n);
    }
  }
  if (st)
    for (int64_t i = 0; i < n; i++) mt_release(outs[i]), outs[i] = NULL;
  return st;
}

mt_status mtg_diagonal(const mt_tensor *t, int64_t offset, int d0, int d1, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_diagonal, offset, d0, d1};
  VIEW(a, mt_diagonal(t, offset, d0, d1, &r));
}

mt_status mtg_unfold(const mt_tensor *t, int dim, int64_t size, int64_t step, mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MT_OP_unfold, dim < 0 ? dim + t->ndim : dim, size, step};
  VIEW(a, mt_unfold(t, dim, size, step, &r));
}

mt_status mtg_as_strided(const mt_tensor *t, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                         mt_tensor **out) {
  int64_t a[MTG_NARGS] = {MTG_VK_AS_STRIDED, ndim, offset - t->offset};
  for (int i = 0; i < ndim && i < MT_MAXDIM; i++) {
    a[3 + i] = shape[i];
    a[3 + ndim + i] = strides[i];
  }
  VIEW(a, mt_as_strided(t, ndim, shape, strides, offset, &r));
}

/* ---- in-place writes into views ---- */

/* CopySlices: the base b was changed through its view v by the in-place op
 * recorded in n->sub. Inputs: (b's old value, the op's other inputs). The
 * view's geometry relative to b is in n->i (an as_strided description).
 * Written with recorded ops, so create_graph differentiates it too. */
static mt_status d_copy_slices(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_node *f = n->sub;
  mt_tensor *gb = NULL, *gv = NULL, *gvc = NULL, *fg[8] = {0};
  mt_status st = f->nin > 8 ? mt_fail(MT_EARG, "internal error: in-place op with too many inputs") : MT_OK;
  if (!st) st = mtg_clone(go[0], &gb); /* contiguous, b's shape: the view's geometry applies */
  if (!st) st = mtg_view_op(n->i, gb, &gv);
  if (!st) st = mtg_clone(gv, &gvc);
  if (!st) st = f->backward(f, &gvc, fg);
  /* the view's old values got fg[0] through the op; the rest of b keeps g */
  if (!st) st = fg[0] ? mtg_copy_(gv, fg[0]) : mtg_fill_(gv, mt_sfloat(0));
  for (int i = 1; !st && i < f->nin; i++) {
    gin[i] = fg[i];
    fg[i] = NULL;
  }
  if (!st) {
    gin[0] = gb;
    gb = NULL;
  }
  for (int i = 0; i < 8; i++) mt_release(fg[i]);
  mt_release(gb);
  mt_release(gv);
  mt_release(gvc);
  return st;
}

/* Attaches the node f of an in-place op on v. For a view v of base b, b's
 * history becomes CopySlices(b's old history, f) and v's history a view of
 * b; for any other tensor, f simply becomes v's history. Consumes f. */
mt_status mtg_attach_inplace(mtg_node *f, mt_tensor *v) {
  mt_tensor *b = v->base;
  if (!b) return mtg_attach(f, &v, 1);
  if (!mt_is_contiguous(b)) {
    mtg_node_release(f);
    return mt_fail(MT_EARG, "%s: in-place change of a view of a non-contiguous tensor that takes part in autograd "
                            "is not supported (make the base contiguous first)", f->name);
  }
  if (f->nin > 8) {
    mtg_node_release(f);
    return mt_fail(MT_EARG, "internal error: in-place op with too many inputs");
  }
  const mt_tensor *ins[8] = {b};
  mtg_node *c = NULL;
  mt_status st = mtg_node_new("CopySlices", d_copy_slices, ins, f->nin, &b, 1, &c);
  if (st) {
    mtg_node_release(f);
    return st;
  }
  for (int i = 1; i < f->nin; i++) { /* the op's other inputs feed c directly */
    c->next[i].node = mtg_node_retain(f->next[i].node);
    c->next[i].input_nr = f->next[i].input_nr;
    c->in[i] = f->in[i];
  }
  int64_t *a = c->i;
  bool parts = mt_is_complex((mt_dtype)b->dtype) && !mt_is_complex((mt_dtype)v->dtype); /* x.real, x.imag */
  a[0] = parts ? MTG_VK_AS_STRIDED_PARTS : MTG_VK_AS_STRIDED;
  a[1] = v->ndim;
  a[2] = v->offset - b->offset * (parts ? 2 : 1);
  for (int i = 0; i < v->ndim; i++) {
    a[3 + i] = v->shape[i];
    a[3 + v->ndim + i] = v->strides[i];
  }
  c->sub = f;
  st = mtg_attach(c, &b, 1);
  if (!st) { /* v is now a view of the new b */
    mtg_node *vn = NULL;
    const mt_tensor *bi[1] = {b};
    st = mtg_node_new("AsStridedBackward0", d_view, bi, 1, &v, 1, &vn);
    if (!st) {
      memcpy(vn->i, a, sizeof vn->i);
      st = mtg_attach(vn, &v, 1);
    }
  }
  return st;
}

/* copy_: the old value of dst gets no gradient, src gets g (summed to its
 * shape and cast to its dtype). */
static mt_status d_copy_(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, go[0]);
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_fill_(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) { return MT_OK; }

/* Records an in-place write of dst (already done by run) that replaces its
 * value: fill_, copy_ and assignment through indexing. src may be NULL. */
static mt_status record_overwrite(const char *name, mtg_backward_fn fn, mt_tensor *dst, const mt_tensor *src,
                                  mt_status (*run)(mt_tensor *, const void *), const void *arg) {
  const mt_tensor *ins[2] = {dst, src};
  bool rec = mtg_any_requires_grad(ins, src ? 2 : 1) ||
             (mtg_grad_enabled() && dst->base && mtg_requires_grad(dst->base));
  mt_status st = mtg_check_inplace(name, dst);
  if (!st && dst->base) st = mtg_check_inplace(name, dst->base);
  if (st) return st;
  if (!rec) return run(dst, arg);
  mtg_node *f = NULL;
  if ((st = mtg_node_new(name, fn, ins, src ? 2 : 1, &dst, 1, &f))) return st;
  if ((st = run(dst, arg))) {
    mtg_node_release(f);
    return st;
  }
  return mtg_attach_inplace(f, dst);
}

static mt_status run_copy(mt_tensor *dst, const void *src) { return mt_copy_(dst, src); }
static mt_status run_fill(mt_tensor *dst, const void *v) { return mt_fill_(dst, *(const mt_scalar *)v); }

static mt_status copy_untraced(mt_tensor *dst, const mt_tensor *src) {
  if (!dst->autograd && !src->autograd && !(dst->base && dst->base->autograd)) return mt_copy_(dst, src);
  return record_overwrite("CopyBackwards", d_copy_, dst, src, run_copy, src);
}

static mt_status fill_untraced(mt_tensor *dst, mt_scalar v) {
  if (!dst->autograd && !(dst->base && dst->base->autograd)) return mt_fill_(dst, v);
  return record_overwrite("FillBackward0", d_fill_, dst, NULL, run_fill, &v);
}

/* Traced as an in-place copy (the JIT broadcasts src into dst's shape). */
mt_status mtg_copy_(mt_tensor *dst, const mt_tensor *src) {
  mt_status st = copy_untraced(dst, src);
  if (!st && MTG_TRACING()) mtg_trace_op(MT_OP_copy, dst, &src, 1, dst, NULL, 0, NULL, 0);
  return st;
}

mt_status mtg_fill_(mt_tensor *dst, mt_scalar v) {
  mt_status st = fill_untraced(dst, v);
  if (!st && MTG_TRACING()) {
    mtg_trace_full(dst, mt_scalar_f(v));
    mtg_tracing->e[mtg_tracing->n - 1].inplace = true;
  }
  return st;
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_view] = {d_view, 0},    [MT_OP_reshape] = {d_view, 0},   [MT_OP_permute] = {d_view, 0},
    [MT_OP_expand] = {d_view, 0},  [MT_OP_squeeze] = {d_view, 0},   [MT_OP_unsqueeze] = {d_view, 0},
    [MT_OP_slice] = {d_view, 0},   [MT_OP_select] = {d_view, 0},    [MT_OP_unfold] = {d_view, 0},
    [MT_OP_diagonal] = {d_view, 0}, [MT_OP_contiguous] = {d_view, 0},
};

const mtg_deriv *mtg_deriv_view(mt_op op) { return table[op].fn ? &table[op] : NULL; }
