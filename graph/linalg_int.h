/* linalg_int.h -- what the files of graph/'s linalg family share: the
 * lookups of their derivative tables (chained by mtg_deriv_linalg in
 * linalg.c) and short derivative-scope
 * helpers (mtg_dl_*) for the ops of this family and for constant masks. Only
 * linalg.c, einsum.c, linalg_lapack.c and linalg_norm.c include it. */
#ifndef MTG_LINALG_INT_H
#define MTG_LINALG_INT_H
#include "deriv.h"

const mtg_deriv *mtg_deriv_einsum(mt_op op);        /* einsum.c */
const mtg_deriv *mtg_deriv_linalg_lapack(mt_op op); /* linalg_lapack.c */
const mtg_deriv *mtg_deriv_linalg_norm(mt_op op);   /* linalg_norm.c */

/* ---- derivative-scope helpers: NULL in, NULL out ---- */
#define MTG_DL_LIVE(s) ((s)->st == MT_OK)

/* Where the node being differentiated ran (its first input's device): the
 * constants a derivative makes (masks, ones) are made there. */
static inline mt_device mtg_dl_device(const mtg_scope *s) {
  return s->node && s->node->nin > 0 ? s->node->in[0].device : mt_cpu();
}

/* x with its last two dims swapped */
static inline mt_tensor *mtg_dl_mT(mtg_scope *s, const mt_tensor *x) {
  return x ? mtg_d_transpose(s, x, x->ndim - 2, x->ndim - 1) : NULL;
}

#define MTG_DL_WRAP(expr)                                                                                              \
  do {                                                                                                                 \
    mt_tensor *r_ = NULL;                                                                                              \
    mt_status st_ = (expr);                                                                                            \
    return mtg_track(s, st_, r_);                                                                                      \
  } while (0)

static inline mt_tensor *mtg_dl_inv(mtg_scope *s, const mt_tensor *a) {
  return MTG_DL_LIVE(s) ? mtg_d_call(s, MT_OP_linalg_inv, &a, 1, NULL) : NULL;
}
static inline mt_tensor *mtg_dl_solve(mtg_scope *s, const mt_tensor *a, const mt_tensor *b, bool left) {
  const mt_tensor *ins[2] = {a, b};
  mt_args args = {.i = {left}, .ni = 1};
  return MTG_DL_LIVE(s) ? mtg_d_call(s, MT_OP_linalg_solve, ins, 2, &args) : NULL;
}
static inline mt_tensor *mtg_dl_pinv(mtg_scope *s, const mt_tensor *a) {
  mt_args args = {.f = {0, -1}, .nf = 2}; /* atol 0, rtol the default */
  return MTG_DL_LIVE(s) ? mtg_d_call(s, MT_OP_linalg_pinv, &a, 1, &args) : NULL;
}
static inline mt_tensor *mtg_dl_cross(mtg_scope *s, const mt_tensor *a, const mt_tensor *b, int dim) {
  const mt_tensor *ins[2] = {a, b};
  mt_args args = {.i = {dim}, .ni = 1};
  return MTG_DL_LIVE(s) ? mtg_d_call(s, MT_OP_linalg_cross, ins, 2, &args) : NULL;
}
static inline mt_tensor *mtg_dl_einsum(mtg_scope *s, const char *eq, mt_tensor *const *ops, int n) {
  if (!MTG_DL_LIVE(s)) return NULL;
  for (int i = 0; i < n; i++)
    if (!ops[i]) return NULL;
  MTG_DL_WRAP(mtg_einsum(eq, ops, n, &r_));
}
/* The reduced SVD of a (recorded) into *u, *sv, *vh, tracked by the scope. */
static inline void mtg_dl_svd(mtg_scope *s, const mt_tensor *a, mt_tensor **u, mt_tensor **sv, mt_tensor **vh) {
  mt_tensor *r[3] = {NULL, NULL, NULL};
  mt_args args = {.ni = 2};
  mt_status st = MTG_DL_LIVE(s) && a ? mtg_call(MT_OP_linalg_svd, &a, 1, &args, r, 3) : MT_OK;
  *u = mtg_track(s, st, r[0]);
  *sv = mtg_track(s, st, r[1]);
  *vh = mtg_track(s, st, r[2]);
}
static inline mt_tensor *mtg_dl_select(mtg_scope *s, const mt_tensor *x, int dim, int64_t i) {
  if (!MTG_DL_LIVE(s) || !x) return NULL;
  MTG_DL_WRAP(mtg_select(x, dim, i, &r_));
}
static inline mt_tensor *mtg_dl_narrow(mtg_scope *s, const mt_tensor *x, int dim, int64_t start, int64_t len) {
  if (!MTG_DL_LIVE(s) || !x) return NULL;
  MTG_DL_WRAP(mtg_narrow(x, dim, start, len, &r_));
}
static inline mt_tensor *mtg_dl_diagonal(mtg_scope *s, const mt_tensor *x) {
  if (!MTG_DL_LIVE(s) || !x) return NULL;
  MTG_DL_WRAP(mtg_diagonal(x, 0, x->ndim - 2, x->ndim - 1, &r_));
}
static inline mt_tensor *mtg_dl_permute(mtg_scope *s, const mt_tensor *x, const int *perm) {
  if (!MTG_DL_LIVE(s) || !x) return NULL;
  MTG_DL_WRAP(mtg_permute(x, perm, x->ndim, &r_));
}
static inline mt_tensor *mtg_dl_squeeze(mtg_scope *s, const mt_tensor *x, int dim) {
  if (!MTG_DL_LIVE(s) || !x) return NULL;
  MTG_DL_WRAP(mtg_squeeze(x, dim, &r_));
}
/* x (a tensor) to the power c (a number) */
static inline mt_tensor *mtg_dl_powc(mtg_scope *s, const mt_tensor *x, double c) {
  if (!x) return NULL;
  return mtg_d_bin(s, MT_OP_pow, x, mtg_d_num(s, c, (mt_dtype)x->dtype));
}

/* Constant (unrecorded) tensors of dtype dt, tracked by the scope. */
enum { MTG_DL_EYE, MTG_DL_OFFDIAG, MTG_DL_PHI, MTG_DL_TRIL_STRICT };
/* n x n: MTG_DL_EYE the identity; MTG_DL_OFFDIAG ones off the diagonal; MTG_DL_PHI ones
 * below the diagonal and 1/2 on it (the Cholesky derivative's mask);
 * MTG_DL_TRIL_STRICT ones below the diagonal. */
mt_tensor *mtg_dl_mask(mtg_scope *s, int64_t n, mt_dtype dt, int kind);
/* ones of the given shape */
mt_tensor *mtg_dl_ones(mtg_scope *s, const int64_t *shape, int ndim, mt_dtype dt);
/* A 0/1 tensor in dtype dt: a `cmp` b, unrecorded. */
mt_tensor *mtg_dl_cmp(mtg_scope *s, mt_op cmp, const mt_tensor *a, const mt_tensor *b, mt_dtype dt);
/* diag_embed of the last dim: (..., k) -> (..., k, k) (recorded) */
mt_tensor *mtg_dl_diag_embed(mtg_scope *s, const mt_tensor *v);
/* x with its value detached from the graph (an unrecorded alias) */
mt_tensor *mtg_dl_detached(mtg_scope *s, const mt_tensor *x);
/* Is x all zeros and outside any graph? (then terms linear in it vanish) */
bool mtg_la_is_zero(const mt_tensor *x);

#endif
