/* vision.c -- derivatives of the vision ops (tensor/vision.h). roi_align
 * and roi_align_backward are each other's adjoints (both linear in the
 * tensor they take first); roi_pool's gradient goes through its argmax
 * (kept as data), and roi_pool_backward's is the gradient read back at the
 * argmax positions. Rois get no gradient, as in torchvision. Every
 * derivative is written with recorded ops, so higher orders work. */
#include <string.h>

#include "deriv.h"

#define LIVE(s) ((s)->st == MT_OK)

/* The node's arguments with the input's shape (N, C, H, W) in i[4..8). */
static mt_args args_of(const mtg_node *n, const mtg_meta_shape *shape) {
  mt_args a = {.ni = 8, .nf = 1};
  for (int k = 0; k < 4; k++) a.i[k] = n->i[k];
  for (int k = 0; k < 4; k++) a.i[4 + k] = shape->shape[k];
  a.f[0] = n->f[0];
  return a;
}

/* roi_align (x, rois), rois in slot 1 */
static mt_status d_roi_align(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *rois = mtg_d_saved(s, 1);
  mt_args a = args_of(n, &n->in[0]);
  const mt_tensor *ins[2] = {go[0], rois};
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, mtg_d_call(s, MT_OP_roi_align_backward, ins, 2, &a));
  return mtg_scope_end(s, gin, n->nin);
}

/* roi_align_backward (g, rois): roi_align of the gradient; i[4..8) kept */
static mt_status d_roi_align_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *rois = mtg_d_saved(s, 1);
  mt_args a = args_of(n, &n->out[0]);
  const mt_tensor *ins[2] = {go[0], rois};
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, mtg_d_call(s, MT_OP_roi_align, ins, 2, &a));
  return mtg_scope_end(s, gin, n->nin);
}

/* roi_pool (x, rois): argmax in slot 0 */
static mt_status d_roi_pool(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *ix = mtg_d_saved(s, 0);
  mt_args a = args_of(n, &n->in[0]);
  const mt_tensor *ins[2] = {go[0], ix};
  if (mtg_needs(n, 0)) gin[0] = mtg_keep(s, mtg_d_call(s, MT_OP_roi_pool_backward, ins, 2, &a));
  return mtg_scope_end(s, gin, n->nin);
}

/* roi_pool_backward (g, argmax), argmax in slot 1: the gradient gg (input
 * shaped) read at each argmax, 0 where a bin was empty (argmax 0) */
static mt_status d_roi_pool_backward(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *ix = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0) && ix) {
    mt_tensor *one = NULL, *zero = NULL, *at = NULL, *live = NULL;
    mt_status st = mt_scalar_tensor(mt_sint(1), MT_INT64, &one);
    if (!st) st = mt_scalar_tensor(mt_sint(0), MT_INT64, &zero);
    if (!st) st = mt_binary(MT_OP_maximum, ix, one, &at); /* empty bins read position 1, then masked */
    if (!st) st = mt_binary(MT_OP_gt, ix, zero, &live);
    mt_release(one), mt_release(zero);
    mtg_track(s, st, at), mtg_track(s, st, live);
    const mt_tensor *ins[2] = {go[0], at};
    mt_tensor *v = mtg_d_call(s, MT_OP_take, ins, 2, NULL);
    mt_tensor *z = v ? mtg_d_num(s, 0, (mt_dtype)v->dtype) : NULL;
    gin[0] = mtg_keep(s, mtg_d_where(s, live, v, z));
  }
  return mtg_scope_end(s, gin, n->nin);
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_roi_align] = {d_roi_align, MTG_SAVE_IN(1)},
    [MT_OP_roi_align_backward] = {d_roi_align_backward, MTG_SAVE_IN(1)},
    [MT_OP_roi_pool] = {d_roi_pool, MTG_SAVE_IDX1},
    [MT_OP_roi_pool_backward] = {d_roi_pool_backward, MTG_SAVE_IN(1)},
};

const mtg_deriv *mtg_deriv_vision(mt_op op) { return table[op].fn ? &table[op] : NULL; }
