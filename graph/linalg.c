/* linalg.c -- recorded matrix products and linear algebra, with their
 * derivatives. matmul is recorded on operands of rank >= 2 (1-D operands
 * are unsqueezed and the result squeezed through recorded views), so one
 * derivative serves every case: ga = g b^T, gb = a^T g, each summed over
 * broadcast batch dims. */
#include "deriv.h"

static mt_status d_matmul(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *a = D_saved(s, 0), *b = D_saved(s, 1);
  if (!a || !b) return mtg_scope_end(s, gin, n->nin);
  if (mtg_needs(n, 0)) gin[0] = D_grad_for(s, 0, D_matmul(s, go[0], D_transpose(s, b, b->ndim - 1, b->ndim - 2)));
  if (mtg_needs(n, 1)) gin[1] = D_grad_for(s, 1, D_matmul(s, D_transpose(s, a, a->ndim - 1, a->ndim - 2), go[0]));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status matmul2(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_matmul(a, b, &r);
  const mt_tensor *ins[2] = {a, b};
  mtg_node *n = !st ? mtg_record1(mtg_backward_name(MT_OP_matmul), d_matmul, ins, 2, r, &st) : NULL;
  if (n && !(st = mtg_save(n, 0, a, false, 0))) st = mtg_save(n, 1, b, false, 0);
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

mt_status mtg_matmul(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  const mt_tensor *ins[2] = {a, b};
  if (!mtg_any_requires_grad(ins, 2)) return mt_matmul(a, b, out);
  if (*out) return mt_fail(MT_EARG, "matmul: out= cannot be used when an input requires grad");
  if (a->ndim == 0 || b->ndim == 0) return mt_matmul(a, b, out); /* the engine's error */
  mt_tensor *a2 = NULL, *b2 = NULL, *r = NULL;
  mt_status st = a->ndim == 1 ? mtg_unsqueeze(a, 0, &a2) : mtg_ref(a, &a2);
  if (!st) st = b->ndim == 1 ? mtg_unsqueeze(b, 1, &b2) : mtg_ref(b, &b2);
  if (!st) st = matmul2(a2, b2, &r);
  if (!st && b->ndim == 1) {
    mt_tensor *q = NULL;
    st = mtg_squeeze(r, r->ndim - 1, &q);
    mt_release(r);
    r = q;
  }
  if (!st && a->ndim == 1) {
    mt_tensor *q = NULL;
    st = mtg_squeeze(r, r->ndim - (b->ndim == 1 ? 1 : 2), &q);
    mt_release(r);
    r = q;
  }
  mt_release(a2);
  mt_release(b2);
  if (st) {
    mt_release(r);
    return st;
  }
  *out = r;
  return MT_OK;
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_matmul] = {d_matmul, MTG_SAVE_IN(0) | MTG_SAVE_IN(1)},
};

const mtg_deriv *mtg_deriv_linalg(mt_op op) { return table[op].fn ? &table[op] : NULL; }
