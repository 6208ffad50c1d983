/* linalg.c -- derivatives of the matrix products (matmul, mm, bmm, mv, dot,
 * inner, outer, kron, the addmm family), which the generic path records
 * (call.c; args as tensor/call.c lays them out), the recorded matmul, the
 * helpers the linalg family's files share (linalg_int.h), and the family's
 * derivative lookup. matmul is recorded on operands of rank >= 2 (1-D
 * operands are unsqueezed and the result squeezed through recorded views),
 * so one derivative serves every case: ga = g b^T, gb = a^T g, each summed
 * over broadcast batch dims. Derivatives only call recorded ops. */
#include <string.h>

#include "linalg_cuda.h"
#include "linalg_int.h"
#include "trace.h"

/* ---- shared helpers ---- */

mt_tensor *mtg_dl_mask(mtg_scope *s, int64_t n, mt_dtype dt, int kind) {
  if (!MTG_DL_LIVE(s)) return NULL;
  int64_t shape[2] = {n, n};
  mt_tensor *m = NULL, *r = NULL;
  mt_status st = mt_zeros(shape, 2, MT_FLOAT64, mt_cpu(), &m);
  for (int64_t i = 0; !st && i < n; i++)
    for (int64_t j = 0; j < n; j++) {
      double v = 0;
      switch (kind) {
      case MTG_DL_EYE: v = i == j; break;
      case MTG_DL_OFFDIAG: v = i != j; break;
      case MTG_DL_PHI: v = i > j ? 1 : i == j ? 0.5 : 0; break;
      default: v = i > j; break;
      }
      ((double *)mt_data(m))[i * n + j] = v;
    }
  if (!st) st = mt_to_dtype(m, dt, false, &r);
  if (!st) st = mt_la_move(&r, mtg_dl_device(s));
  mt_release(m);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_dl_ones(mtg_scope *s, const int64_t *shape, int ndim, mt_dtype dt) {
  if (!MTG_DL_LIVE(s)) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mt_full(shape, ndim, mt_sfloat(1), dt, mtg_dl_device(s), &r);
  return mtg_track(s, st, r);
}

mt_tensor *mtg_dl_cmp(mtg_scope *s, mt_op cmp, const mt_tensor *a, const mt_tensor *b, mt_dtype dt) {
  if (!MTG_DL_LIVE(s) || !a || !b) return NULL;
  mt_tensor *m = NULL, *f = NULL;
  mt_status st = mt_binary(cmp, a, b, &m);
  if (!st) st = mt_to_dtype(m, dt, false, &f);
  mt_release(m);
  return mtg_track(s, st, f);
}

mt_tensor *mtg_dl_diag_embed(mtg_scope *s, const mt_tensor *v) {
  if (!v) return NULL;
  int64_t k = v->shape[v->ndim - 1];
  return mtg_d_mul(s, mtg_d_unsqueeze(s, v, v->ndim), mtg_dl_mask(s, k, (mt_dtype)v->dtype, MTG_DL_EYE));
}

mt_tensor *mtg_dl_detached(mtg_scope *s, const mt_tensor *x) {
  if (!MTG_DL_LIVE(s) || !x) return NULL;
  mt_tensor *r = NULL;
  mt_status st = mt_alias(x, &r);
  return mtg_track(s, st, r);
}

bool mtg_la_is_zero(const mt_tensor *x) {
  if (mtg_requires_grad(x) && mtg_grad_enabled()) return false;
  mt_tensor *c = NULL, *d = NULL;
  bool zero = false;
  if (!mt_contiguous(x, &c) && !mt_to_dtype(c, MT_FLOAT64, false, &d) && !mt_la_move(&d, mt_cpu())) {
    const double *p = (const double *)mt_data(d);
    int64_t n = mt_numel(d);
    zero = true;
    for (int64_t i = 0; i < n && zero; i++) zero = p[i] == 0;
  }
  mt_release(c);
  mt_release(d);
  return zero;
}

/* x cast to the dtype of like (a recorded cast, or x itself) */
static mt_tensor *as_dtype_of(mtg_scope *s, const mt_tensor *x, const mt_tensor *like) {
  if (!x || !like) return NULL;
  if (x->dtype == like->dtype) return (mt_tensor *)x;
  return mtg_d_cast(s, x, (mt_dtype)like->dtype);
}

/* ---- matmul, mm, bmm ---- */

static mt_status d_matmul(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *a = mtg_d_saved(s, 0), *b = mtg_d_saved(s, 1);
  if (!a || !b) return mtg_scope_end(s, gin, n->nin);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_matmul(s, go[0], mtg_dl_mT(s, b)));
  /* b a transposed matrix (x @ w:t(), a linear layer): the gradient as
   * (g^T a)^T has b's strides, so w's own gradient comes out contiguous
   * (as PyTorch's mm backward does) instead of transposed */
  bool bt = a->ndim == 2 && b->ndim == 2 && b->strides[0] == 1 && b->shape[0] > 1 && b->shape[1] > 1;
  if (mtg_needs(n, 1))
    gin[1] = mtg_d_grad_for(
        s, 1, bt ? mtg_dl_mT(s, mtg_d_matmul(s, mtg_dl_mT(s, go[0]), a)) : mtg_d_matmul(s, mtg_dl_mT(s, a), go[0]));
  return mtg_scope_end(s, gin, n->nin);
}

/* matmul of operands of rank >= 2, recorded (the trace entry is
 * mtg_matmul's, of the original operands) */
static mt_status matmul2(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_matmul(a, b, &r);
  const mt_tensor *ins[2] = {a, b};
  mtg_node *n = st ? NULL : mtg_record1(mtg_backward_name(MT_OP_matmul), d_matmul, ins, 2, r, &st);
  if (n) st = mtg_save(n, 0, a, false, 0);
  if (n && !st) st = mtg_save(n, 1, b, false, 0);
  if (st) mt_release(r);
  if (!st) *out = r;
  return st;
}

static mt_status matmul_untraced(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  const mt_tensor *ins[2] = {a, b};
  if (!mtg_any_requires_grad(ins, 2)) return mt_matmul(a, b, out);
  if (*out)
    return mt_fail(MT_EARG, "matmul: out= cannot be used when an input requires grad (the result would have no "
                            "history); drop out= or use torch.no_grad()");
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

/* ---- mv, dot, inner, outer ---- */

/* mv: ga = g v^T (an outer product), gv = a^T g */
static mt_status d_mv(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *a = mtg_d_saved(s, 0), *v = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, mtg_d_unsqueeze(s, go[0], 1), v));
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, mtg_d_matmul(s, mtg_dl_mT(s, a), go[0]));
  return mtg_scope_end(s, gin, n->nin);
}


/* dot: ga = g b, gb = g a (g is 0-dim) */
static mt_status d_dot(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *a = mtg_d_saved(s, 0), *b = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, go[0], b));
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, mtg_d_mul(s, go[0], a));
  return mtg_scope_end(s, gin, n->nin);
}


/* inner: with a as an (A, k) matrix, b as (B, k) and g as (A, B):
 * ga = g b, gb = g^T a, reshaped back. */
static mt_status d_inner(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *a = mtg_d_saved(s, 0), *b = mtg_d_saved(s, 1);
  const mtg_meta_shape *ma = &n->in[0], *mb = &n->in[1];
  int64_t k = ma->shape[ma->ndim - 1], na = 1, nb = 1;
  for (int i = 0; i < ma->ndim - 1; i++) na *= ma->shape[i];
  for (int i = 0; i < mb->ndim - 1; i++) nb *= mb->shape[i];
  int64_t ga2[2] = {na, nb}, a2[2] = {na, k}, b2[2] = {nb, k};
  mt_tensor *g = mtg_d_reshape(s, go[0], ga2, 2);
  if (mtg_needs(n, 0))
    gin[0] =
        mtg_d_grad_for(s, 0, mtg_d_reshape(s, mtg_d_matmul(s, g, mtg_d_reshape(s, b, b2, 2)), ma->shape, ma->ndim));
  if (mtg_needs(n, 1))
    gin[1] = mtg_d_grad_for(
        s, 1, mtg_d_reshape(s, mtg_d_matmul(s, mtg_dl_mT(s, g), mtg_d_reshape(s, a, a2, 2)), mb->shape, mb->ndim));
  return mtg_scope_end(s, gin, n->nin);
}


/* outer: ga = g b, gb = g^T a (types were promoted: g's dtype rules) */
static mt_status d_outer(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  mt_tensor *a = mtg_d_saved(s, 0), *b = mtg_d_saved(s, 1);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_matmul(s, go[0], as_dtype_of(s, b, go[0])));
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, mtg_d_matmul(s, mtg_dl_mT(s, go[0]), as_dtype_of(s, a, go[0])));
  return mtg_scope_end(s, gin, n->nin);
}


/* ---- kron ----
 * With both operands padded to nd = i[0] dims (the larger rank: args), the result viewed with
 * interleaved dims (a0, b0, a1, b1, ...) is a[:, 1, :, 1, ...] * b[1, :, 1,
 * :, ...]; each operand's gradient is g times the other, summed over the
 * other's dims. */
static mt_status d_kron(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  int nd = (int)n->i[0];
  const mtg_meta_shape *ma = &n->in[0], *mb = &n->in[1];
  int64_t ash[MT_MAXDIM], bsh[MT_MAXDIM], gsh[MT_MAXDIM];
  int even[MT_MAXDIM / 2], odd[MT_MAXDIM / 2];
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - ma->ndim), ib = i - (nd - mb->ndim);
    ash[2 * i] = gsh[2 * i] = ia >= 0 ? ma->shape[ia] : 1;
    bsh[2 * i + 1] = gsh[2 * i + 1] = ib >= 0 ? mb->shape[ib] : 1;
    ash[2 * i + 1] = bsh[2 * i] = 1;
    even[i] = 2 * i;
    odd[i] = 2 * i + 1;
  }
  mt_tensor *g = mtg_d_reshape(s, go[0], gsh, 2 * nd);
  if (mtg_needs(n, 0)) {
    mt_tensor *b = mtg_d_reshape(s, as_dtype_of(s, mtg_d_saved(s, 1), go[0]), bsh, 2 * nd);
    gin[0] =
        mtg_d_grad_for(s, 0, mtg_d_reshape(s, mtg_d_sum(s, mtg_d_mul(s, g, b), odd, nd, true), ma->shape, ma->ndim));
  }
  if (mtg_needs(n, 1)) {
    mt_tensor *a = mtg_d_reshape(s, as_dtype_of(s, mtg_d_saved(s, 0), go[0]), ash, 2 * nd);
    gin[1] =
        mtg_d_grad_for(s, 1, mtg_d_reshape(s, mtg_d_sum(s, mtg_d_mul(s, g, a), even, nd, true), mb->shape, mb->ndim));
  }
  return mtg_scope_end(s, gin, n->nin);
}


/* ---- addmm, addmv, baddbmm, addbmm: beta * input + alpha * product ----
 * f[0] = beta, f[1] = alpha. For the matrix products gm1 = alpha g m2^T and
 * gm2 = alpha m1^T g, which also covers addbmm (g broadcasts over the
 * batch of b1 and b2). */
/* addmm as a linear layer on CUDA (a 1-D bias, beta = alpha = 1, no
 * create_graph): the weight and bias gradients in one cuBLASLt call; the
 * weight's comes out as (g^T m1)^T, so a w:t() operand's gradient is
 * contiguous. False when that path does not apply. */
static bool wgrad_fused(mtg_scope *s, mtg_node *n, mt_tensor *g, mt_tensor **gin) {
  if (n->f[0] != 1 || n->f[1] != 1 || !mtg_needs(n, 0) || !mtg_needs(n, 2) || mtg_grad_enabled() ||
      n->in[0].ndim != 1 || n->in[1].ndim != 2 || n->in[2].ndim != 2 || g->ndim != 2 ||
      mt_tdevice(g).type != MT_CUDA)
    return false;
  mt_tensor *m1 = mtg_d_saved(s, 1), *gw = NULL, *gb = NULL;
  if (!m1 || mt_linear_wgrad(g, m1, &gw, &gb) != MT_OK) return false;
  gin[0] = mtg_d_grad_for(s, 0, mtg_track(s, MT_OK, gb));
  gin[2] = mtg_d_grad_for(s, 2, mtg_dl_mT(s, mtg_track(s, MT_OK, gw)));
  return true;
}

static mt_status d_addmm(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  double beta = n->f[0], alpha = n->f[1];
  mt_tensor *g = go[0], *ga = alpha == 1 ? g : mtg_d_scale(s, g, alpha);
  bool fused = wgrad_fused(s, n, g, gin);
  if (mtg_needs(n, 0) && !fused) gin[0] = mtg_d_grad_for(s, 0, mtg_d_scale(s, g, beta));
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, mtg_d_matmul(s, ga, mtg_dl_mT(s, mtg_d_saved(s, 2))));
  if (mtg_needs(n, 2) && !fused) gin[2] = mtg_d_grad_for(s, 2, mtg_d_matmul(s, mtg_dl_mT(s, mtg_d_saved(s, 1)), ga));
  return mtg_scope_end(s, gin, n->nin);
}

static mt_status d_addmv(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  mtg_scope S, *s = &S;
  mtg_scope_begin(s, n);
  double beta = n->f[0], alpha = n->f[1];
  mt_tensor *g = go[0], *ga = alpha == 1 ? g : mtg_d_scale(s, g, alpha);
  if (mtg_needs(n, 0)) gin[0] = mtg_d_grad_for(s, 0, mtg_d_scale(s, g, beta));
  if (mtg_needs(n, 1)) gin[1] = mtg_d_grad_for(s, 1, mtg_d_mul(s, mtg_d_unsqueeze(s, ga, 1), mtg_d_saved(s, 2)));
  if (mtg_needs(n, 2)) gin[2] = mtg_d_grad_for(s, 2, mtg_d_matmul(s, mtg_dl_mT(s, mtg_d_saved(s, 1)), ga));
  return mtg_scope_end(s, gin, n->nin);
}

#define IN01 (MTG_SAVE_IN(0) | MTG_SAVE_IN(1))
#define IN12 (MTG_SAVE_IN(1) | MTG_SAVE_IN(2))
static const mtg_deriv table[MT_NOPS] = {
    [MT_OP_matmul] = {d_matmul, IN01}, [MT_OP_mm] = {d_matmul, IN01},    [MT_OP_bmm] = {d_matmul, IN01},
    [MT_OP_mv] = {d_mv, IN01},         [MT_OP_dot] = {d_dot, IN01},      [MT_OP_inner] = {d_inner, IN01},
    [MT_OP_outer] = {d_outer, IN01},   [MT_OP_kron] = {d_kron, IN01},    [MT_OP_addmm] = {d_addmm, IN12},
    [MT_OP_addmv] = {d_addmv, IN12},   [MT_OP_baddbmm] = {d_addmm, IN12}, [MT_OP_addbmm] = {d_addmm, IN12},
};

const mtg_deriv *mtg_deriv_linalg(mt_op op) {
  if (table[op].fn) return &table[op];
  const mtg_deriv *d = mtg_deriv_einsum(op);
  if (!d) d = mtg_deriv_linalg_lapack(op);
  if (!d) d = mtg_deriv_linalg_norm(op);
  return d;
}

/* matmul traced as an extern call of the engine */
mt_status mtg_matmul(const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  mt_tensor *given = *out;
  mt_status st = matmul_untraced(a, b, out);
  if (!st && MTG_TRACING()) {
    const mt_tensor *ins[2] = {a, b};
    mtg_trace_op(MT_OP_matmul, given, ins, 2, *out, NULL, 0, NULL, 0);
  }
  return st;
}
