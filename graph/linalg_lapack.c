/* linalg_lapack.c -- recorded LAPACK-based linear algebra (inv, det,
 * slogdet, solve, cholesky, qr, svd, eigh, lstsq, pinv) and their
 * derivatives, from the standard matrix-calculus results. Derivatives call
 * recorded ops only (the decompositions among them), so create_graph gives
 * higher-order gradients. Notation: A the input, G the incoming gradient,
 * X^T the transpose of the last two dims; batches broadcast. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "linalg_cuda.h"
#include "linalg_int.h"

#define BEGIN                                                                                                          \
  mtg_scope S_, *s = &S_;                                                                                              \
  mtg_scope_begin(s, n)
#define END return mtg_scope_end(s, gin, n->nin)
#define NEED(i) mtg_needs(n, i)
#define MM(a, b) mtg_d_matmul(s, a, b)
#define T(x) mtg_dl_mT(s, x)

/* x with two trailing unit dims (a batch of scalars against matrices) */
static mt_tensor *as_scalars(mtg_scope *s, const mt_tensor *x) {
  return x ? mtg_d_unsqueeze(s, mtg_d_unsqueeze(s, x, x->ndim), x->ndim + 1) : NULL;
}

/* ---- inv: gA = -Y^T G Y^T with Y = A^-1 ---- */

static mt_status d_inv(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  mt_tensor *yt = T(mtg_d_saved(s, MTG_SLOT_OUT));
  if (NEED(0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_neg(s, MM(MM(yt, go[0]), yt)));
  END;
}


/* ---- det ----
 * The gradient is G times the cofactor matrix: det(A) A^-T for a
 * nonsingular A. For a (nearly) singular one (|det| < 100 eps, as PyTorch
 * decides) it comes from the SVD A = U S V^T: cof(A) = det(U) det(V) U
 * diag(prod_{j != i} s_j) V^T, which holds for every A. */

/* 1/0 per matrix of d: is |det| below the singular threshold? A bool
 * tensor (for where) of d's shape; *count singular ones. */
static mt_tensor *singular_mask(mtg_scope *s, const mt_tensor *d, int64_t *count) {
  *count = 0;
  if (!MTG_DL_LIVE(s) || !d) return NULL;
  double eps = d->dtype == MT_FLOAT64 ? DBL_EPSILON : FLT_EPSILON;
  mt_tensor *c = NULL, *m = NULL;
  mt_status st = mt_to_dtype(d, MT_FLOAT64, true, &c);
  if (!st) st = mt_la_move(&c, mt_cpu()); /* read on the host */
  if (!st) st = mt_empty(d->shape, d->ndim, MT_BOOL, mt_cpu(), &m);
  for (int64_t i = 0, nn = st ? 0 : mt_numel(c); i < nn; i++) {
    bool sing = fabs(((const double *)mt_data(c))[i]) < 100 * eps;
    ((bool *)mt_data(m))[i] = sing;
    *count += sing;
  }
  mt_release(c);
  if (!st) st = mt_la_move(&m, mt_tdevice(d));
  return mtg_track(s, st, m);
}

/* cof(A) through the SVD (see above) */
static mt_tensor *cofactor_svd(mtg_scope *s, const mt_tensor *a) {
  if (!MTG_DL_LIVE(s) || !a) return NULL;
  mt_tensor *u = NULL, *sv = NULL, *vh = NULL;
  mtg_dl_svd(s, a, &u, &sv, &vh);
  if (!MTG_DL_LIVE(s)) return NULL;
  /* det(U) det(V): a constant sign per matrix */
  mt_tensor *du = NULL, *dv = NULL, *sg = NULL;
  mt_status st = mt_linalg_det(u, &du);
  if (!st) st = mt_linalg_det(vh, &dv);
  if (!st) st = mt_binary(MT_OP_mul, du, dv, &sg);
  mt_release(du);
  mt_release(dv);
  sg = mtg_track(s, st, sg);
  /* p_i = prod_{j != i} s_j: rows of M = s (off the diagonal), 1 on it */
  int64_t k = sv->shape[sv->ndim - 1];
  mt_tensor *eye = mtg_dl_mask(s, k, (mt_dtype)a->dtype, MTG_DL_EYE);
  mt_tensor *m = mtg_d_add(
      s, mtg_d_mul(s, mtg_d_unsqueeze(s, sv, sv->ndim - 1), mtg_dl_mask(s, k, (mt_dtype)a->dtype, MTG_DL_OFFDIAG)),
      eye);
  mt_tensor *p = mtg_dl_select(s, m, m ? m->ndim - 1 : 0, 0);
  for (int64_t j = 1; j < k; j++) p = mtg_d_mul(s, p, mtg_dl_select(s, m, m ? m->ndim - 1 : 0, j));
  mt_tensor *usv = MM(mtg_d_mul(s, u, mtg_d_unsqueeze(s, p, p ? p->ndim - 1 : 0)), vh);
  return mtg_d_mul(s, usv, as_scalars(s, sg));
}

static mt_status d_det(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (!NEED(0)) END;
  const mtg_meta_shape *m = &n->in[0];
  if (m->shape[m->ndim - 1] == 0) { /* det of an empty matrix is 1: no gradient */
    gin[0] = mtg_keep(s, mtg_d_zeros(s, m));
    END;
  }
  mt_tensor *a = mtg_d_saved(s, 0), *d = mtg_d_saved(s, MTG_SLOT_OUT);
  int64_t nsing = 0;
  mt_tensor *sing = singular_mask(s, d, &nsing);
  mt_tensor *gd = as_scalars(s, go[0]), *cof = NULL;
  if (nsing == 0) {
    cof = mtg_d_mul(s, as_scalars(s, d), T(mtg_dl_inv(s, a)));
  } else if (d && nsing == mt_numel(d)) {
    cof = cofactor_svd(s, a);
  } else { /* mixed batch: the inverse of the others, identities in place of the singular ones */
    mt_tensor *c = as_scalars(s, sing);
    mt_tensor *safe = mtg_d_where(s, c, mtg_dl_mask(s, m->shape[m->ndim - 1], (mt_dtype)m->dtype, MTG_DL_EYE), a);
    mt_tensor *ns = mtg_d_mul(s, as_scalars(s, d), T(mtg_dl_inv(s, safe)));
    cof = mtg_d_where(s, c, cofactor_svd(s, a), ns);
  }
  gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, gd, cof));
  END;
}

/* ---- slogdet: only logabsdet (result 1) has a gradient, G A^-T ---- */

static mt_status d_slogdet(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (NEED(0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, as_scalars(s, go[1]), T(mtg_dl_inv(s, mtg_d_saved(s, 0)))));
  END;
}

/* ---- solve ----
 * AX = B: gB = A^-T G, gA = -gB X^T. XA = B: gB = G A^-T, gA = -X^T gB.
 * i[0] left; B may be a (batch of) vector(s) (the engine's rule, from the
 * shapes): columns for left, rows otherwise. */

static mt_tensor *as_matrix(mtg_scope *s, const mt_tensor *x, bool vec, bool left) {
  if (!x || !vec) return (mt_tensor *)x;
  return mtg_d_unsqueeze(s, x, left ? x->ndim : x->ndim - 1);
}

static mt_status d_solve(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  const mtg_meta_shape *ma = &n->in[0], *mb = &n->in[1];
  bool left = n->i[0], vec = mb->ndim == 1;
  if (mb->ndim == ma->ndim - 1) {
    vec = true;
    for (int i = 0; i < mb->ndim; i++) vec = vec && mb->shape[i] == ma->shape[i];
  }
  mt_tensor *a = mtg_d_saved(s, 0), *x = mtg_d_saved(s, MTG_SLOT_OUT);
  mt_tensor *gb = mtg_dl_solve(s, T(a), go[0], left);
  if (NEED(1)) gin[1] = mtg_d_grad_for(s, 1, gb);
  if (NEED(0)) {
    mt_tensor *gbm = as_matrix(s, gb, vec, left), *xm = as_matrix(s, x, vec, left);
    gin[0] = mtg_d_grad_for(s, 0, mtg_d_neg(s, left ? MM(gbm, T(xm)) : MM(T(xm), gbm)));
  }
  END;
}


/* ---- cholesky ----
 * A = L L^T: gA = L^-T Phi(L^T G) L^-1, symmetrized (Phi: the lower
 * triangle with the diagonal halved). i[0] upper (then L = U^T, G = G^T). */

static mt_status d_cholesky(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  bool upper = n->i[0];
  mt_tensor *l = mtg_d_saved(s, MTG_SLOT_OUT), *g = go[0];
  if (upper) {
    l = T(l);
    g = T(g);
  }
  const mtg_meta_shape *m = &n->in[0];
  mt_tensor *phi = mtg_d_mul(s, MM(T(l), g), mtg_dl_mask(s, m->shape[m->ndim - 1], (mt_dtype)m->dtype, MTG_DL_PHI));
  mt_tensor *li = mtg_dl_inv(s, l);
  mt_tensor *ga = MM(MM(T(li), phi), li);
  if (NEED(0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_scale(s, mtg_d_add(s, ga, T(ga)), 0.5));
  END;
}


/* ---- qr ----
 * For A = QR with m >= n (Q m x n, R n x n upper):
 *   gA = (gQ + Q sym(M)) R^-T,  M = R gR^T - gQ^T Q,
 * where sym(M) mirrors M's strictly lower triangle above its diagonal.
 * For m < n, A = [X | Y] with X = Q U square: Y = Q V gives gY = Q gV and
 * adds Y gV^T to gQ; X then follows the square case with R = U.
 * i[0]: 0 reduced, 1 complete, 2 'r' (no Q: no derivative). */

static mt_tensor *qr_tall(mtg_scope *s, const mt_tensor *q, const mt_tensor *r, const mt_tensor *gq,
                          const mt_tensor *gr) {
  if (!r) return NULL;
  int64_t k = r->shape[r->ndim - 1];
  mt_dtype dt = (mt_dtype)r->dtype;
  mt_tensor *m = mtg_d_sub(s, MM(r, T(gr)), MM(T(gq), q));
  mt_tensor *low = mtg_d_mul(s, m, mtg_dl_mask(s, k, dt, MTG_DL_TRIL_STRICT));
  mt_tensor *sym = mtg_d_add(s, mtg_d_add(s, low, T(low)), mtg_d_mul(s, m, mtg_dl_mask(s, k, dt, MTG_DL_EYE)));
  mt_tensor *lhs = mtg_d_add(s, gq, MM(q, sym));
  return mtg_dl_solve(s, T(r), lhs, false); /* lhs R^-T */
}

/* the constant (rows x cols) matrix with ones at (i, off + i) */
static mt_tensor *shift_eye(mtg_scope *s, int64_t rows, int64_t cols, int64_t off, mt_dtype dt) {
  if (!MTG_DL_LIVE(s)) return NULL;
  int64_t shape[2] = {rows, cols};
  mt_tensor *e = NULL, *r = NULL;
  mt_status st = mt_zeros(shape, 2, MT_FLOAT64, mt_cpu(), &e);
  for (int64_t i = 0; !st && i < rows && off + i < cols; i++) ((double *)mt_data(e))[i * cols + off + i] = 1;
  if (!st) st = mt_to_dtype(e, dt, false, &r);
  if (!st) st = mt_la_move(&r, mtg_dl_device(s));
  mt_release(e);
  return mtg_track(s, st, r);
}

static mt_status d_qr(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (!NEED(0)) END;
  int mode = (int)n->i[0];
  const mtg_meta_shape *ma = &n->in[0];
  int64_t m = ma->shape[ma->ndim - 2], c = ma->shape[ma->ndim - 1];
  if (mode == 2) {
    s->st = mt_fail(MT_EARG, "linalg.qr: the derivative needs Q, which mode='r' does not compute (use "
                             "mode='reduced')");
    END;
  }
  if (mode == 1 && m > c) {
    s->st = mt_fail(MT_EARG, "linalg.qr: the derivative is not defined for mode='complete' when A has more rows "
                             "than columns (%lld > %lld); use mode='reduced'", (long long)m, (long long)c);
    END;
  }
  mt_tensor *q = mtg_d_saved(s, 0), *r = mtg_d_saved(s, 1);
  if (m >= c) {
    gin[0] = mtg_d_grad_for(s, 0, qr_tall(s, q, r, go[0], go[1]));
    END;
  }
  mt_dtype dt = (mt_dtype)ma->dtype;
  mt_tensor *u = mtg_dl_narrow(s, r, r ? r->ndim - 1 : 0, 0, m),
            *v = mtg_dl_narrow(s, r, r ? r->ndim - 1 : 0, m, c - m);
  mt_tensor *gu = mtg_dl_narrow(s, go[1], go[1]->ndim - 1, 0, m),
            *gv = mtg_dl_narrow(s, go[1], go[1]->ndim - 1, m, c - m);
  mt_tensor *y = MM(q, v);
  mt_tensor *gx = qr_tall(s, q, u, mtg_d_add(s, go[0], MM(y, T(gv))), gu);
  mt_tensor *gy = MM(q, gv);
  /* [gX | gY] = gX E1 + gY E2 with constant selections E1 (m x c), E2 ((c-m) x c) */
  mt_tensor *ga = mtg_d_add(s, MM(gx, shift_eye(s, m, c, 0, dt)), MM(gy, shift_eye(s, c - m, c, m, dt)));
  gin[0] = mtg_d_grad_for(s, 0, ga);
  END;
}

/* ---- svd ----
 * A = U S V^T (reduced; with full_matrices the extra columns of U and V
 * are left out). With J = F o (U^T gU), K = F o (V^T gV), F_ij =
 * 1/(s_j^2 - s_i^2) off the diagonal and 0 on it:
 *   gA = U [(J + J^T) S + S (K + K^T) + diag(gS)] V^T
 *        + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T).
 * When gU and gV are zero (svdvals) only U diag(gS) V^T remains. The
 * vectors' gradient is defined for distinct singular values only. */

static mt_status d_svd(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (!NEED(0)) END;
  const mtg_meta_shape *ma = &n->in[0];
  int64_t m = ma->shape[ma->ndim - 2], c = ma->shape[ma->ndim - 1], k = m < c ? m : c;
  mt_dtype dt = (mt_dtype)ma->dtype;
  mt_tensor *u = mtg_d_saved(s, 0), *sv = mtg_d_saved(s, 1), *vh = mtg_d_saved(s, 2);
  mt_tensor *gu = go[0], *gs = go[1], *gvh = go[2];
  if (u && u->shape[u->ndim - 1] != k) { /* full_matrices: keep the first k columns / rows */
    u = mtg_dl_narrow(s, u, u->ndim - 1, 0, k);
    gu = mtg_dl_narrow(s, gu, gu->ndim - 1, 0, k);
  }
  if (vh && vh->shape[vh->ndim - 2] != k) {
    vh = mtg_dl_narrow(s, vh, vh->ndim - 2, 0, k);
    gvh = mtg_dl_narrow(s, gvh, gvh->ndim - 2, 0, k);
  }
  if (!MTG_DL_LIVE(s)) END;
  mt_tensor *base = mtg_d_mul(s, u, mtg_d_unsqueeze(s, gs, gs->ndim - 1)); /* U diag(gS) */
  if (mtg_la_is_zero(gu) && mtg_la_is_zero(gvh)) {
    gin[0] = mtg_d_grad_for(s, 0, MM(base, vh));
    END;
  }
  mt_tensor *v = T(vh), *gv = T(gvh);
  mt_tensor *utgu = MM(T(u), gu), *vtgv = MM(T(v), gv);
  mt_tensor *s2 = mtg_d_mul(s, sv, sv);
  mt_tensor *diff =
      mtg_d_sub(s, mtg_d_unsqueeze(s, s2, s2->ndim - 1), mtg_d_unsqueeze(s, s2, s2->ndim)); /* s_j^2 - s_i^2 */
  mt_tensor *f =
      mtg_d_div(s, mtg_dl_mask(s, k, dt, MTG_DL_OFFDIAG), mtg_d_add(s, diff, mtg_dl_mask(s, k, dt, MTG_DL_EYE)));
  mt_tensor *j = mtg_d_mul(s, f, utgu), *kk = mtg_d_mul(s, f, vtgv);
  mt_tensor *srow = mtg_d_unsqueeze(s, sv, sv->ndim - 1), *scol = mtg_d_unsqueeze(s, sv, sv->ndim);
  mt_tensor *inner =
      mtg_d_add(s, mtg_d_mul(s, mtg_d_add(s, j, T(j)), srow), mtg_d_mul(s, scol, mtg_d_add(s, kk, T(kk))));
  inner = mtg_d_add(s, inner, mtg_dl_diag_embed(s, gs));
  mt_tensor *ga = MM(MM(u, inner), vh);
  mt_tensor *sinv = mtg_d_div(s, mtg_d_num(s, 1, dt), sv);
  if (m > k) /* (I - U U^T) gU S^-1 V^T */
    ga =
        mtg_d_add(s, ga, MM(mtg_d_mul(s, mtg_d_sub(s, gu, MM(u, utgu)), mtg_d_unsqueeze(s, sinv, sinv->ndim - 1)), vh));
  if (c > k) /* U S^-1 gV^T (I - V V^T) */
    ga =
        mtg_d_add(s, ga, MM(u, mtg_d_mul(s, mtg_d_unsqueeze(s, sinv, sinv->ndim), mtg_d_sub(s, gvh, MM(T(vtgv), vh)))));
  gin[0] = mtg_d_grad_for(s, 0, ga);
  END;
}

/* ---- eigh ----
 * A = V diag(w) V^T (symmetric): gA = V [diag(gw) + skew(V^T gV) / E] V^T
 * with skew(X) = (X - X^T)/2 and E_ij = w_j - w_i (the result is
 * symmetric, as PyTorch's). Distinct eigenvalues for the vectors' part. */

static mt_status d_eigh(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (!NEED(0)) END;
  const mtg_meta_shape *ma = &n->in[0];
  int64_t k = ma->shape[ma->ndim - 1];
  mt_dtype dt = (mt_dtype)ma->dtype;
  mt_tensor *w = mtg_d_saved(s, 0), *v = mtg_d_saved(s, 1), *gw = go[0], *gv = go[1];
  if (!MTG_DL_LIVE(s)) END;
  mt_tensor *inner = mtg_dl_diag_embed(s, gw);
  if (!mtg_la_is_zero(gv)) {
    mt_tensor *x = MM(T(v), gv);
    mt_tensor *skew = mtg_d_scale(s, mtg_d_sub(s, x, T(x)), 0.5);
    mt_tensor *e = mtg_d_sub(s, mtg_d_unsqueeze(s, w, w->ndim - 1), mtg_d_unsqueeze(s, w, w->ndim)); /* w_j - w_i */
    mt_tensor *f =
        mtg_d_div(s, mtg_dl_mask(s, k, dt, MTG_DL_OFFDIAG), mtg_d_add(s, e, mtg_dl_mask(s, k, dt, MTG_DL_EYE)));
    inner = mtg_d_add(s, inner, mtg_d_mul(s, skew, f));
  }
  gin[0] = mtg_d_grad_for(s, 0, MM(MM(v, inner), T(v)));
  END;
}

/* ---- pinv ----
 * With P = A^+ (constant rank), dP = -P dA P + P P^T dA^T (I - A P)
 * + (I - P A) dA^T P^T P, so
 *   gA = -P^T G P^T + (I - A P) G^T P P^T + P^T P G^T (I - P A). */

static mt_tensor *pinv_grad(mtg_scope *s, const mt_tensor *g, const mt_tensor *p, const mt_tensor *a) {
  mt_tensor *gt = T(g), *pt = T(p);
  mt_tensor *t1 = MM(MM(pt, g), pt);
  mt_tensor *t2 = MM(gt, MM(p, pt));
  mt_tensor *t3 = MM(a, MM(p, t2));
  mt_tensor *t4 = MM(MM(pt, p), gt);
  mt_tensor *t5 = MM(MM(t4, p), a);
  return mtg_d_sub(s, mtg_d_add(s, mtg_d_sub(s, t2, t1), t4), mtg_d_add(s, t3, t5));
}

static mt_status d_pinv(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  if (NEED(0)) gin[0] = mtg_d_grad_for(s, 0, pinv_grad(s, go[0], mtg_d_saved(s, MTG_SLOT_OUT), mtg_d_saved(s, 0)));
  END;
}


/* ---- lstsq ----
 * The solution is pinv(A) B (full rank): gB = pinv(A)^T G and gA is the
 * pinv derivative for the gradient G B^T of pinv(A). Residuals, rank and
 * singular values get no gradient (as in PyTorch). B may be a vector (one
 * dim fewer than A). */

static mt_status d_lstsq(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  BEGIN;
  bool vec = n->in[1].ndim == n->in[0].ndim - 1;
  mt_tensor *a = mtg_d_saved(s, 0), *p = mtg_dl_pinv(s, a);
  mt_tensor *g = vec ? mtg_d_unsqueeze(s, go[0], go[0]->ndim) : go[0];
  if (NEED(1)) {
    mt_tensor *gb = MM(T(p), g);
    gin[1] = mtg_d_grad_for(s, 1, vec ? mtg_dl_squeeze(s, gb, gb ? gb->ndim - 1 : 0) : gb);
  }
  if (NEED(0)) {
    mt_tensor *b = mtg_d_saved(s, 1);
    if (vec) b = mtg_d_unsqueeze(s, b, b ? b->ndim : 0);
    gin[0] = mtg_d_grad_for(s, 0, pinv_grad(s, MM(g, T(b)), p, a));
  }
  END;
}

static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_linalg_inv] = {d_inv, MTG_SAVE_OUT},
    [MT_OP_linalg_det] = {d_det, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_linalg_slogdet] = {d_slogdet, MTG_SAVE_IN(0) | MTG_NOGRAD(0)},
    [MT_OP_linalg_solve] = {d_solve, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
    [MT_OP_linalg_cholesky] = {d_cholesky, MTG_SAVE_OUT},
    [MT_OP_linalg_qr] = {d_qr, MTG_SAVE_RESULTS},
    [MT_OP_linalg_svd] = {d_svd, MTG_SAVE_RESULTS},
    [MT_OP_linalg_eigh] = {d_eigh, MTG_SAVE_RESULTS},
    [MT_OP_linalg_lstsq] = {d_lstsq, MTG_SAVE_IN(0) | MTG_SAVE_IN(1) | MTG_NOGRAD(1) | MTG_NOGRAD(2) | MTG_NOGRAD(3)},
    [MT_OP_linalg_pinv] = {d_pinv, MTG_SAVE_IN(0) | MTG_SAVE_OUT},
};

const mtg_deriv *mtg_deriv_linalg_lapack(mt_op op) { return table[op].fn ? &table[op] : NULL; }
