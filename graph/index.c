/* index.c -- the derivatives of the index ops (gathers, scatters, masks,
 * advanced indexing), which the generic path records (call.c; inputs and
 * args as tensor/call.c lays them out: x, the index or mask, src), and
 * their packing helpers mtg_index_op and mtg_index_adv. Gradients of
 * gathers are scatters into zeros and the other way round; both are
 * recorded ops, so create_graph differentiates them again. Index tensors
 * and masks are saved (version checked) but never get gradients. Index
 * values are 1-based, here as in the engine. A write in place is recorded
 * as the op on a copy of x and a recorded copy_ (the generic in-place
 * rule): the node's input 0 is x's old value, which none of the
 * derivatives reads. */
#include <string.h>

#include "deriv.h"
#include "trace.h"
#include "views.h"

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

#define BITS (MTG_NARGS - 1) /* the node argument that says which dims have an index tensor */

/* advanced indexing's save hook (deriv.h): the index tensors (inputs 1..
 * of index, 2.. of index_put) packed into slot 0, which dims have one in
 * i[BITS] */
static mt_status save_indices(mtg_node *n, const mt_tensor *const *ins, int nin, const mt_args *a,
                              mt_tensor *const *outs, int nout) {
  int first = nin - (int)a->i[0];
  mt_tensor *p = NULL;
  mt_status st = first < 1 ? mt_fail(MT_EARG, "index: bad operands (internal)")
                           : pack_indices((mt_tensor *const *)ins + first, nin - first, &p, &n->i[BITS]);
  if (!st) st = mtg_save(n, 0, p, false, 0);
  mt_release(p);
  return st;
}

/* The saved index tensors of node n (slot 0; i[0] dims, i[BITS] which)
 * into idx[0..i[0]), tracked by s. */
static void unpack_indices(mtg_scope *s, mtg_node *n, mt_tensor **idx) {
  mt_tensor *p = mtg_d_saved(s, 0);
  for (int d = 0, j = 0; d < n->i[0]; d++) {
    idx[d] = NULL;
    if (!(n->i[BITS] >> d & 1) || !p) continue;
    mt_tensor *c = NULL;
    mt_status st = mt_select(p, 0, j++, &c);
    idx[d] = mtg_track(s, st, c);
  }
}

/* ---- derivative helpers: recorded ops inside a scope ---- */

/* Tracks *r in s, set by the call that returned st (read through a pointer,
 * so the read happens after the call: C leaves argument order open). */
static mt_tensor *tracked(mtg_scope *s, mt_status st, mt_tensor **r) { return mtg_track(s, st, *r); }

#define LIVE(s, x) (!(s)->st && (x))

static mt_tensor *Di_zeros(mtg_scope *s, const int64_t *shape, int nd, mt_dtype dt, mt_device dev) {
  if (s->st) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mt_zeros(shape, nd, dt, dev, &r);
  if (!st) mtg_trace_full(r, 0);
  return tracked(s, st, &r);
}

/* mtg_index_op out of place (a new result, x unchanged) */
static mt_tensor *Di_op(mtg_scope *s, mt_op op, const mt_tensor *x, const mt_tensor *idx, const mt_tensor *src,
                        int dim, mt_scalar v, int flag) {
  if (!LIVE(s, x) || !idx) return NULL;
  mt_tensor *r = NULL;
  return tracked(s, mtg_index_op(op, x, idx, src, dim, v, flag, &r), &r);
}

/* mtg_index_op in place on z (fresh zeros the scope tracks): z */
static mt_tensor *Di_into(mtg_scope *s, mt_op op, mt_tensor *z, const mt_tensor *idx, const mt_tensor *src, int dim,
                          mt_scalar v, int flag) {
  if (!LIVE(s, z) || !idx) return NULL;
  mt_tensor *t = z;
  mt_status st = mtg_index_op(op, z, idx, src, dim, v, flag, &t);
  if (st && !s->st) s->st = st;
  return st ? NULL : z;
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
  const mt_tensor *g = go[0]
#define END return mtg_scope_end(s, gin, n->nin)
#define ZERO mt_sint(0)
/* zeros of input 0's shape in g's dtype, on g's device */
#define ZEROS_IN0 Di_zeros(s, n->in[0].shape, n->in[0].ndim, (mt_dtype)g->dtype, mt_tdevice(g))

/* ---- derivatives of the gathers: scatters into zeros (index in slot 1) ---- */

static mt_status d_index_select(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, Di_into(s, MT_OP_index_add, ZEROS_IN0, idx, g, (int)n->i[0], mt_sint(1), 0));
  END;
}

static mt_status d_gather(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, Di_into(s, MT_OP_scatter, ZEROS_IN0, idx, g, (int)n->i[0], ZERO, MT_REDUCE_ADD));
  END;
}

static mt_status d_take(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, Di_into(s, MT_OP_put, ZEROS_IN0, idx, g, 0, ZERO, true));
  END;
}

/* index: i[0] dims, the packed indices in slot 0 */
static mt_status d_index(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx[MT_MAXDIM], *z = ZEROS_IN0, *r = NULL;
  unpack_indices(s, n, idx);
  if (mtg_needs(n, 0) && LIVE(s, z)) { /* in place on the fresh zeros */
    r = z;
    mt_status st = mtg_index_adv(z, idx, (int)n->i[0], NULL, g, true, &r);
    if (st && !s->st) s->st = st;
    gin[0] = mtg_d_grad_for(s, 0, st ? NULL : z);
  }
  END;
}

/* masked_select broadcasts x and mask: g goes back into zeros of the
 * broadcast shape where the mask is true, then is summed to x's shape. */
static mt_status d_masked_select(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  const mtg_meta_shape *m = &n->in[0];
  mt_tensor *mask = mtg_d_saved(s, 1), *z = NULL;
  int64_t sh[MT_MAXDIM] = {0};
  int nd = 0;
  if (mask && !s->st) {
    mt_status st = mt_broadcast_shape("masked_select", m->shape, m->ndim, mask->shape, mask->ndim, sh, &nd);
    if (st) s->st = st;
  }
  z = Di_zeros(s, sh, nd, (mt_dtype)g->dtype, mt_tdevice(g));
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, Di_into(s, MT_OP_masked_scatter, z, mask, g, 0, ZERO, 0));
  END;
}

/* ---- derivatives of the writes (index or mask in slot 1; src is input 2) ---- */

/* index_put (x, values, indices...): i[0] dims, i[1] accumulate. The old
 * x gets g except where it was overwritten; the values get g there. */
static mt_status d_index_put(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx[MT_MAXDIM];
  int nd = (int)n->i[0];
  unpack_indices(s, n, idx);
  if (mtg_needs(n, 0)) {
    mt_tensor *zero = n->i[1] ? NULL : mtg_d_num(s, 0, (mt_dtype)g->dtype), *r = NULL;
    if (n->i[1])
      gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g);
    else if (LIVE(s, zero))
      gin[0] = mtg_d_grad_for(s, 0, tracked(s, mtg_index_adv(g, idx, nd, NULL, zero, false, &r), &r));
  }
  if (mtg_needs(n, 1) && !s->st) {
    mt_tensor *r = NULL;
    gin[1] = mtg_d_grad_for(s, 1, tracked(s, mtg_index_adv(g, idx, nd, NULL, NULL, false, &r), &r));
  }
  END;
}

/* scatter and scatter_add (i[0] dim, i[3] reduce): without add the old x
 * loses the overwritten positions; src gets g there (zeros where src
 * exceeds index). */
static mt_status d_scatter(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  int dim = (int)n->i[0];
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, n->i[3] == MT_REDUCE_ADD ? (mt_tensor *)g
                                                            : Di_op(s, MT_OP_scatter, g, idx, NULL, dim, ZERO, 0));
  if (n->nin > 2 && mtg_needs(n, 2))
    gin[2] = mtg_d_grad_for(s, 2, Di_pad_to(s, Di_op(s, MT_OP_gather, g, idx, NULL, dim, ZERO, 0), &n->in[2]));
  END;
}

/* index_add (i[0] dim, f[0] alpha) */
static mt_status d_index_add(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g);
  if (mtg_needs(n, 2)) {
    mt_tensor *r = Di_op(s, MT_OP_index_select, g, idx, NULL, (int)n->i[0], ZERO, 0);
    if (n->f[0] != 1) r = mtg_d_scale(s, r, n->f[0]);
    gin[2] = mtg_d_grad_for(s, 2, Di_shape_of(s, r, &n->in[2]));
  }
  END;
}

/* index_copy (i[0] dim) */
static mt_status d_index_copy(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  int dim = (int)n->i[0];
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, Di_op(s, MT_OP_index_fill, g, idx, NULL, dim, ZERO, 0));
  if (mtg_needs(n, 2))
    gin[2] =
        mtg_d_grad_for(s, 2, Di_shape_of(s, Di_op(s, MT_OP_index_select, g, idx, NULL, dim, ZERO, 0), &n->in[2]));
  END;
}

/* index_fill (i[0] dim) */
static mt_status d_index_fill(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0))
    gin[0] = mtg_d_grad_for(s, 0, Di_op(s, MT_OP_index_fill, g, idx, NULL, (int)n->i[0], ZERO, 0));
  END;
}

/* put (i[0] accumulate) */
static mt_status d_put(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *idx = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) {
    if (n->i[0]) {
      gin[0] = mtg_d_grad_for(s, 0, (mt_tensor *)g);
    } else {
      mt_tensor *z = idx ? Di_zeros(s, idx->shape, idx->ndim, (mt_dtype)g->dtype, mt_tdevice(g)) : NULL;
      gin[0] = mtg_d_grad_for(s, 0, z ? Di_op(s, MT_OP_put, g, idx, z, 0, ZERO, false) : NULL);
    }
  }
  if (mtg_needs(n, 2))
    gin[2] = mtg_d_grad_for(s, 2, Di_shape_of(s, Di_op(s, MT_OP_take, g, idx, NULL, 0, ZERO, 0), &n->in[2]));
  END;
}

/* masked_fill: the filled positions get no gradient. */
static mt_status d_masked_fill(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *mask = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, Di_op(s, MT_OP_masked_fill, g, mask, NULL, 0, ZERO, 0));
  END;
}

/* masked_scatter: src's first k elements (k = the mask's count) get g where
 * the mask is true, in order; the rest of src gets zeros. */
static mt_status d_masked_scatter(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *mask = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, Di_op(s, MT_OP_masked_fill, g, mask, NULL, 0, ZERO, 0));
  if (mtg_needs(n, 2)) {
    const mtg_meta_shape *m = &n->in[2];
    int64_t total = 1;
    for (int d = 0; d < m->ndim; d++) total *= m->shape[d];
    mt_tensor *sel = Di_op(s, MT_OP_masked_select, g, mask, NULL, 0, ZERO, 0);
    if (sel && sel->shape[0] < total) {
      int64_t rest = total - sel->shape[0];
      mt_tensor *parts[2] = {sel, Di_zeros(s, &rest, 1, (mt_dtype)g->dtype, mt_tdevice(g))}, *r = NULL;
      sel = parts[1] ? tracked(s, mtg_join(MT_OP_cat, parts, 2, 0, &r), &r) : NULL;
    }
    gin[2] = mtg_d_grad_for(s, 2, Di_shape_of(s, sel, m));
  }
  END;
}

/* ---- packing helpers ---- */

mt_status mtg_index_op(mt_op op, const mt_tensor *x, const mt_tensor *index, const mt_tensor *src, int dim,
                       mt_scalar v, int flag, mt_tensor **out) {
  if (op == MT_OP_scatter && src && flag == MT_REDUCE_ADD) op = MT_OP_scatter_add;
  if (op == MT_OP_scatter_add) flag = MT_REDUCE_ADD;
  const mt_tensor *ins[3] = {x, index, src};
  int nin = src ? 3 : 2;
  if (op == MT_OP_scatter && flag == MT_REDUCE_MUL && mtg_any_requires_grad(ins, nin))
    return mt_fail(MT_EARG, "scatter: reduce='multiply' is not differentiable; use it under torch.no_grad() or "
                            "on tensors that do not require grad");
  mt_args a = {.i = {op == MT_OP_put ? flag : dim, v.kind, v.kind == MT_SK_FLOAT ? 0 : v.v.i, flag},
               .f = {mt_scalar_f(v)},
               .ni = 4,
               .nf = 1};
  return mtg_call(op, ins, nin, &a, out, 1);
}

mt_status mtg_index_adv(const mt_tensor *x, mt_tensor *const *indices, int n, const int *labels,
                        const mt_tensor *values, bool accumulate, mt_tensor **out) {
  if (n < 0 || n > MT_MAXDIM) return mt_fail(MT_EARG, "index: at most %d index dims, got %d", MT_MAXDIM, n);
  const mt_tensor *ins[2 + MT_MAXDIM] = {x, values};
  int first = values ? 2 : 1;
  for (int d = 0; d < n; d++) ins[first + d] = indices[d];
  mt_args a = {.i = {n, accumulate, labels != NULL}, .ni = 3 + n};
  for (int d = 0; labels && d < n; d++) a.i[3 + d] = labels[d];
  return mtg_call(values ? MT_OP_index_put : MT_OP_index, ins, first + n, &a, out, 1);
}

/* scatter of a value (no src) is PyTorch's ScatterBackward1 */
static const char *scatter_name(const mt_tensor *const *ins, int nin) {
  return nin > 2 && ins[2] ? "ScatterBackward0" : "ScatterBackward1";
}

#define AT_IDX MTG_SAVE_IN(1)
static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_index] = {d_index, 0, save_indices},
    [MT_OP_index_put] = {d_index_put, 0, save_indices},
    [MT_OP_index_select] = {d_index_select, AT_IDX},
    [MT_OP_gather] = {d_gather, AT_IDX},
    [MT_OP_take] = {d_take, AT_IDX},
    [MT_OP_scatter] = {d_scatter, AT_IDX, NULL, scatter_name},
    [MT_OP_scatter_add] = {d_scatter, AT_IDX},
    [MT_OP_index_add] = {d_index_add, AT_IDX},
    [MT_OP_index_copy] = {d_index_copy, AT_IDX},
    [MT_OP_index_fill] = {d_index_fill, AT_IDX},
    [MT_OP_put] = {d_put, AT_IDX},
    [MT_OP_masked_fill] = {d_masked_fill, AT_IDX},
    [MT_OP_masked_select] = {d_masked_select, AT_IDX},
    [MT_OP_masked_scatter] = {d_masked_scatter, AT_IDX},
};

const mtg_deriv *mtg_deriv_index(mt_op op) { return table[op].fn ? &table[op] : NULL; }
