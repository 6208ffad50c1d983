/* linalg_norm.c -- recorded torch.linalg norms (vector_norm, matrix_norm,
 * and norm, which dispatches to them like the engine's) and cross, with
 * their derivatives. Where a norm picks extreme entries (inf, 1 and inf
 * matrix norms) the gradient is shared evenly among ties, as in PyTorch;
 * the spectral and nuclear norms differentiate through a recorded SVD. */
#include <math.h>
#include <string.h>

#include "linalg_int.h"

#define BEGIN                                                                                                          \
  mtg_scope S_, *s = &S_;                                                                                              \
  mtg_scope_begin(s, n)
#define END return mtg_scope_end(s, gin, n->nin)

/* t (reduced over the dims in mask, keepdim or not) reshaped to the
 * keepdim shape of the node's input */
static mt_tensor *keep_shape(mtg_scope *s, const mt_tensor *t, const mtg_node *n, int64_t mask) {
  const mtg_meta_shape *m = &n->in[0];
  int64_t shape[MT_MAXDIM];
  for (int i = 0; i < m->ndim; i++) shape[i] = (mask >> i & 1) ? 1 : m->shape[i];
  return mtg_d_reshape(s, t, shape, m->ndim);
}

/* y with its zeros replaced by ones (so that x / y stays finite where x is 0) */
static mt_tensor *nonzero(mtg_scope *s, const mt_tensor *y) {
  if (!y) return NULL;
  mt_tensor *z = mtg_d_num(s, 0, (mt_dtype)y->dtype);
  mt_tensor *c = NULL;
  if (MTG_DL_LIVE(s) && z) {
    mt_status st = mt_binary(MT_OP_eq, y, z, &c);
    c = mtg_track(s, st, c);
  }
  return mtg_d_where(s, c, mtg_d_num(s, 1, (mt_dtype)y->dtype), y);
}

/* The weights of the entries that attain an extreme: sign(x) where |x| (or
 * the sum c) equals the reduced y, divided by the number of ties over the
 * dims of tie_mask. A constant. */
static mt_tensor *extreme_weights(mtg_scope *s, const mt_tensor *x, const mt_tensor *c, const mt_tensor *y,
                                  int64_t tie_mask) {
  if (!MTG_DL_LIVE(s) || !x || !c || !y) return NULL;
  int dims[MT_MAXDIM], nd = 0;
  for (int i = 0; i < x->ndim; i++)
    if (tie_mask >> i & 1) dims[nd++] = i;
  mt_tensor *eq = NULL, *m = NULL, *cnt = NULL, *w = NULL, *sg = NULL, *r = NULL;
  mt_status st = mt_binary(MT_OP_eq, c, y, &eq);
  if (!st) st = mt_to_dtype(eq, (mt_dtype)x->dtype, false, &m);
  if (!st) st = mt_sum(m, dims, nd, true, -1, &cnt);
  if (!st) st = mt_binary(MT_OP_div, m, cnt, &w);
  if (!st) st = mt_unary(MT_OP_sign, x, &sg);
  if (!st) st = mt_binary(MT_OP_mul, w, sg, &r);
  mt_tensor *all[] = {eq, m, cnt, w, sg};
  for (int i = 0; i < 5; i++) mt_release(all[i]);
  return mtg_track(s, st, r);
}

/* ---- vector_norm: i[0] mask of reduced dims, i[1] keepdim (the reductions' layout), f[0] ord ---- */

static mt_status d_vector_norm(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (!mtg_needs(n, 0)) END;
  double p = n->f[0];
  int64_t mask = n->i[0];
  mt_tensor *x = mtg_d_saved(s, 0), *g = keep_shape(s, go[0], n, mask), *gx = NULL;
  if (p == 0) {
    gx = mtg_d_zeros(s, &n->in[0]);
  } else if (p == 1) {
    gx = mtg_d_mul(s, g, mtg_d_un(s, MT_OP_sign, x));
  } else if (isinf(p)) {
    mt_tensor *ax = NULL;
    if (MTG_DL_LIVE(s) && x) {
      mt_status st = mt_unary(MT_OP_abs, x, &ax);
      ax = mtg_track(s, st, ax);
    }
    gx = mtg_d_mul(
        s, g,
        extreme_weights(s, x, ax, keep_shape(s, mtg_dl_detached(s, mtg_d_saved(s, MTG_SLOT_OUT)), n, mask), mask));
  } else {
    mt_tensor *y = nonzero(s, keep_shape(s, mtg_d_saved(s, MTG_SLOT_OUT), n, mask));
    if (p == 2) {
      gx = mtg_d_mul(s, g, mtg_d_div(s, x, y));
    } else { /* sign(x) |x|^(p-1) / y^(p-1), with |x| = 1 where x = 0 (sign is 0 there) */
      mt_tensor *ax = nonzero(s, mtg_d_un(s, MT_OP_abs, x));
      mt_tensor *r = mtg_d_div(s, mtg_dl_powc(s, ax, p - 1), mtg_dl_powc(s, y, p - 1));
      gx = mtg_d_mul(s, g, mtg_d_mul(s, mtg_d_un(s, MT_OP_sign, x), r));
    }
  }
  gin[0] = mtg_d_grad_for(s, 0, gx);
  END;
}

/* ---- matrix_norm: i[0], i[1] the dims, i[2] keepdim, i[3] the kind
 * (0 'fro', 1 'nuc', 2 numeric with f[0] the ord) ---- */

/* the gradient of the spectral (which = 0 largest, 1 smallest singular
 * value) or nuclear (which = 2) norm: U_k V_k^T in x's layout */
static mt_tensor *svd_grad(mtg_scope *s, mtg_node *n, const mt_tensor *x, const mt_tensor *g, int which) {
  if (!MTG_DL_LIVE(s) || !x || !g) return NULL;
  int d0 = (int)n->i[0], d1 = (int)n->i[1], nd = x->ndim, perm[MT_MAXDIM], inv[MT_MAXDIM], q = 0;
  int64_t gshape[MT_MAXDIM];
  for (int i = 0; i < nd; i++)
    if (i != d0 && i != d1) {
      gshape[q] = x->shape[i];
      perm[q++] = i;
    }
  perm[q] = d0;
  perm[q + 1] = d1;
  gshape[q] = gshape[q + 1] = 1;
  for (int i = 0; i < nd; i++) inv[perm[i]] = i;
  mt_tensor *xp = mtg_dl_permute(s, x, perm), *u = NULL, *sv = NULL, *vh = NULL;
  if (!xp) return NULL;
  mtg_dl_svd(s, xp, &u, &sv, &vh);
  if (!MTG_DL_LIVE(s)) return NULL;
  int64_t k = sv->shape[sv->ndim - 1];
  if (which < 2) {
    int64_t j = which == 0 ? 0 : k - 1;
    u = mtg_dl_narrow(s, u, nd - 1, j, 1);
    vh = mtg_dl_narrow(s, vh, nd - 2, j, 1);
  }
  mt_tensor *gp = mtg_d_mul(s, mtg_d_reshape(s, g, gshape, nd), mtg_d_matmul(s, u, vh));
  return mtg_dl_permute(s, gp, inv);
}

static mt_status d_matrix_norm(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (!mtg_needs(n, 0)) END;
  int d0 = (int)n->i[0], d1 = (int)n->i[1], kind = (int)n->i[3];
  double ord = n->f[0];
  int64_t mask = ((int64_t)1 << d0) | ((int64_t)1 << d1);
  mt_tensor *x = mtg_d_saved(s, 0), *g = keep_shape(s, go[0], n, mask), *gx = NULL;
  if (kind == 0) {
    gx = mtg_d_mul(s, g, mtg_d_div(s, x, nonzero(s, keep_shape(s, mtg_d_saved(s, MTG_SLOT_OUT), n, mask))));
  } else if (kind == 1 || fabs(ord) == 2) {
    gx = svd_grad(s, n, x, g, kind == 1 ? 2 : ord > 0 ? 0 : 1);
  } else { /* 1: max/min over columns of the absolute column sums; inf: rows */
    int sum_dim = fabs(ord) == 1 ? d0 : d1, ext_dim = fabs(ord) == 1 ? d1 : d0;
    mt_tensor *c = NULL;
    if (MTG_DL_LIVE(s) && x) {
      mt_status st = mt_linalg_vector_norm(x, 1, &sum_dim, 1, true, -1, &c);
      c = mtg_track(s, st, c);
    }
    mt_tensor *y = keep_shape(s, mtg_dl_detached(s, mtg_d_saved(s, MTG_SLOT_OUT)), n, mask);
    gx = mtg_d_mul(s, g, extreme_weights(s, x, c, y, (int64_t)1 << ext_dim));
  }
  gin[0] = mtg_d_grad_for(s, 0, gx);
  END;
}

/* ---- cross: ga = b x g, gb = g x a; i[0] the dim (counted from the end
 * when negative) ---- */

static mt_status d_cross(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  int dim = (int)n->i[0];
  if (dim >= 0) dim -= n->out[0].ndim;
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_dl_cross(s, mtg_d_saved(s, 1), go[0], dim));
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, mtg_dl_cross(s, go[0], mtg_d_saved(s, 0), dim));
  END;
}


static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_linalg_vector_norm] = {d_vector_norm, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_linalg_matrix_norm] = {d_matrix_norm, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_linalg_cross] = {d_cross, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
};

const mtg_deriv *mtg_deriv_linalg_norm(mt_op op) { return table[op].fn ? &table[op] : NULL; }
