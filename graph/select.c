/* select.c -- the derivative of the ops whose results are values picked
 * out of their input along a dim, with 1-based indices saying where from:
 * max and min along a dim, sort, topk, kthvalue, median and nanmedian along
 * a dim, mode, cummax and cummin (recorded by the generic path, call.c,
 * with args {dim, keepdim, ...}). The values' gradient is added into zeros at the
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
  mt_tensor *z = NULL;
  mt_status st = mt_zeros(m->shape, m->ndim, (mt_dtype)g->dtype, mt_tdevice(g), &z);
  if (!st) mtg_trace_full(z, 0);
  mt_tensor *t = z; /* in place on the fresh zeros */
  if (!st) st = mtg_index_op(MT_OP_scatter_add, z, idx, g, dim, mt_sint(0), 0, &t);
  if (st) {
    mt_release(z);
    return st;
  }
  *out = z;
  return MT_OK;
}

/* ---- the value-selecting ops ----
 * Node arguments: i[0] the dim (0-based), i[1] whether the results kept it
 * (sort, topk, cummax: always); slot 0 the indices. */
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

/* max, min, median, nanmedian: i[5] set is the form of all elements (one
 * result; i = {every dim's mask, keepdim false}), which splits the gradient
 * evenly among ties instead, from x (slot 0) and the result (the last). */
static mt_status d_pick(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  return n->i[5] ? mtg_d_evenly(n, go, gin) : d_select(n, go, gin);
}
static mt_status save_all_elements(mtg_node *n, const mt_tensor *const *ins, int nin, const mt_args *a,
                                   mt_tensor *const *outs, int nout) {
  mt_status st = MT_OK;
  if (a->i[5] && !(st = mtg_save(n, 0, ins[0], false, 0))) st = mtg_save(n, MTG_SLOT_OUT, outs[0], true, 0);
  return st;
}

#define IDX MTG_SAVE_IDX1
#define PICK_ {d_pick, IDX, save_all_elements}
static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_max] = PICK_,                [MT_OP_min] = PICK_,              [MT_OP_cummax] = {d_select, IDX},
    [MT_OP_cummin] = {d_select, IDX},   [MT_OP_sort] = {d_select, IDX},   [MT_OP_topk] = {d_select, IDX},
    [MT_OP_kthvalue] = {d_select, IDX}, [MT_OP_median] = PICK_,           [MT_OP_nanmedian] = PICK_,
    [MT_OP_mode] = {d_select, IDX},
};

const mtg_deriv *mtg_deriv_select(mt_op op) { return table[op].fn ? &table[op] : NULL; }
