/* d_elementwise.c -- derivatives of the elementwise ops, written as calls
 * of recorded ops through the derivative scope (so create_graph records
 * them), and the table saying what each one needs saved. g is the incoming
 * gradient; x, y the saved input and result; a, b the saved operands. */
#include <math.h>

#include "cplx.h"
#include "deriv.h"
#include "graph.h"

#define DERIV(name) static mt_status d_##name(mtg_node *n, mt_tensor *const *go, mt_tensor **gin)
#define BEGIN                                                                                                          \
  mtg_scope S_, *s = &S_;                                                                                              \
  mtg_scope_begin(s, n);                                                                                               \
  const mt_tensor *g = go[0];                                                                                          \
  (void)g
#define END return mtg_scope_end(s, gin, n->nin)
#define NEED(i) mtg_needs(n, i)
#define SAVED(k) mtg_d_saved(s, k)
#define OUT mtg_d_saved(s, MTG_SLOT_OUT)
#define GIVE(i, expr)                                                                                                  \
  do {                                                                                                                 \
    if (NEED(i)) gin[i] = mtg_d_grad_for(s, i, (expr));                                                                \
  } while (0)
/* a unary derivative: gin[0] = expr */
#define UNARY(name, expr)                                                                                              \
  DERIV(name) {                                                                                                        \
    BEGIN;                                                                                                             \
    GIVE(0, expr);                                                                                                     \
    END;                                                                                                               \
  }

/* A comparison as a 0/1 tensor of like's dtype (no gradient). */
static mt_tensor *mask(mtg_scope *s, mt_op cmp, const mt_tensor *a, const mt_tensor *b, const mt_tensor *like) {
  if (s->st || !a || !b || !like) return NULL;
  return mtg_d_cast(s, mtg_d_bin(s, cmp, a, b), (mt_dtype)like->dtype); /* traced: a compiled backward replays it */
}

static mt_tensor *zero_of(mtg_scope *s, const mt_tensor *like) {
  return like ? mtg_d_num(s, 0, (mt_dtype)like->dtype) : NULL;
}

/* conj(t) for a complex t, t itself for a real one: PyTorch's convention for
 * complex gradients (dL/dre + i dL/dim) makes the gradient of a holomorphic
 * f(z) g * conj(f'(z)), so derivatives that multiply by f' conjugate it. */
static mt_tensor *cj(mtg_scope *s, mt_tensor *t) {
  if (!t || !mt_is_complex((mt_dtype)t->dtype)) return t;
  return mtg_d_un(s, MT_OP_conj, t);
}

/* i * t for a complex t (a constant i of t's dtype). */
static mt_tensor *times_i(mtg_scope *s, mt_tensor *t) {
  if (!t || s->st) return NULL;
  mt_tensor *i = NULL;
  mt_status st = mt_empty(NULL, 0, (mt_dtype)t->dtype, mt_tdevice(t), &i);
  if (!st) st = mt_complex_fill_(i, 0, 1);
  return mtg_d_mul(s, t, mtg_track(s, st, i));
}

#define X SAVED(0)
#define Y OUT
#define LN2 0.69314718055994530942
#define LN10 2.30258509299404568402

UNARY(neg, mtg_d_neg(s, g))
UNARY(abs, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_sgn, X))) /* sgn: sign, or z / |z| */
UNARY(conj, cj(s, (mt_tensor *)g))
UNARY(zero, mtg_d_zeros_like(s, g)) /* sign, floor, ceil, round, trunc: flat almost everywhere */
UNARY(exp, mtg_d_mul(s, g, cj(s, Y)))
UNARY(exp2, mtg_d_mul(s, g, mtg_d_scale(s, Y, LN2)))
UNARY(expm1, mtg_d_mul(s, g, mtg_d_addc(s, Y, 1)))
UNARY(log, mtg_d_div(s, g, cj(s, X)))
UNARY(log2, mtg_d_div(s, g, mtg_d_scale(s, X, LN2)))
UNARY(log10, mtg_d_div(s, g, mtg_d_scale(s, X, LN10)))
UNARY(log1p, mtg_d_div(s, g, mtg_d_addc(s, X, 1)))
UNARY(sqrt, mtg_d_div(s, g, mtg_d_scale(s, cj(s, Y), 2)))
UNARY(rsqrt, mtg_d_mul(s, g, mtg_d_scale(s, cj(s, mtg_d_mul(s, Y, mtg_d_mul(s, Y, Y))), -0.5)))
UNARY(sin, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_cos, X)))
UNARY(cos, mtg_d_neg(s, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_sin, X))))
UNARY(tan, mtg_d_mul(s, g, mtg_d_addc(s, mtg_d_mul(s, Y, Y), 1)))
UNARY(asin, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_rsqrt, mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), mtg_d_mul(s, X, X)))))
UNARY(acos,
      mtg_d_neg(s,
                mtg_d_mul(s, g, mtg_d_un(s, MT_OP_rsqrt, mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), mtg_d_mul(s, X, X))))))
UNARY(atan, mtg_d_div(s, g, mtg_d_addc(s, mtg_d_mul(s, X, X), 1)))
UNARY(sinh, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_cosh, X)))
UNARY(cosh, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_sinh, X)))
UNARY(tanh, mtg_d_mul(s, g, mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), mtg_d_mul(s, Y, Y))))
UNARY(sigmoid, mtg_d_mul(s, g, mtg_d_mul(s, Y, mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), Y))))
UNARY(relu, mtg_d_bin(s, MT_OP_relu_backward, g, Y))
UNARY(erf,
      mtg_d_mul(s, g, mtg_d_scale(s, mtg_d_un(s, MT_OP_exp, mtg_d_neg(s, mtg_d_mul(s, X, X))), 1.12837916709551257390)))
UNARY(erfc,
      mtg_d_mul(s, g,
                mtg_d_scale(s, mtg_d_un(s, MT_OP_exp, mtg_d_neg(s, mtg_d_mul(s, X, X))), -1.12837916709551257390)))
UNARY(frac, mtg_d_mul(s, g, mtg_d_num(s, 1, g->dtype)))
UNARY(reciprocal, mtg_d_neg(s, mtg_d_mul(s, g, cj(s, mtg_d_mul(s, Y, Y)))))
UNARY(square, mtg_d_mul(s, g, mtg_d_scale(s, cj(s, X), 2)))

/* angle: flat on reals; on complex z, g i z / |z|^2 = g i / conj(z) (0 at 0) */
DERIV(angle) {
  BEGIN;
  mt_tensor *x = X;
  if (x && !mt_is_complex((mt_dtype)x->dtype)) {
    GIVE(0, mtg_d_zeros_like(s, g));
  } else if (x) {
    mt_tensor *z = zero_of(s, x), *at0 = mtg_d_bin(s, MT_OP_eq, x, z);
    mt_tensor *safe = mtg_d_where(s, at0, mtg_d_num(s, 1, x->dtype), x);
    mt_tensor *d = times_i(s, mtg_d_div(s, mtg_d_cast(s, g, (mt_dtype)x->dtype), cj(s, safe)));
    GIVE(0, mtg_d_where(s, at0, z, d));
  }
  END;
}

/* sgn: flat on reals; on complex z (PyTorch's sgn_backward):
 * (g - re(g conj(sgn z)) sgn z) / |z|, 0 at 0 */
DERIV(sgn) {
  BEGIN;
  mt_tensor *x = X;
  if (x && !mt_is_complex((mt_dtype)x->dtype)) {
    GIVE(0, mtg_d_zeros_like(s, g));
  } else if (x && !s->st) {
    mt_tensor *y = OUT, *a = mtg_d_un(s, MT_OP_abs, x), *re = NULL;
    mt_tensor *gy = mtg_d_mul(s, (mt_tensor *)g, cj(s, y));
    if (gy) s->st = mtg_complex_part(gy, 0, &re);
    re = mtg_track(s, s->st, re);
    mt_tensor *num = mtg_d_sub(s, (mt_tensor *)g, mtg_d_mul(s, re, y));
    mt_tensor *z = zero_of(s, a), *at0 = mtg_d_bin(s, MT_OP_eq, a, z);
    mt_tensor *d = mtg_d_div(s, num, mtg_d_where(s, at0, mtg_d_num(s, 1, a->dtype), a));
    GIVE(0, mtg_d_where(s, at0, zero_of(s, x), d));
  }
  END;
}
UNARY(identity, mtg_d_mul(s, g, mtg_d_num(s, 1, g->dtype))) /* copy, cast: mtg_d_grad_for casts back */

/* gelu and gelu_tanh: g * gelu'(x) in one fused op (gelu_backward below
 * is differentiable, so create_graph records it like any op) */
UNARY(gelu, mtg_d_bin(s, MT_OP_gelu_backward, g, X))
UNARY(gelu_tanh, mtg_d_bin(s, MT_OP_gelu_tanh_backward, g, X))

/* gelu_backward(a, x) = a gelu'(x): linear in a; d/dx = a gelu''(x), with
 * gelu''(x) = phi(x) (2 - x^2) */
DERIV(gelu_backward) {
  BEGIN;
  mt_tensor *a = SAVED(0), *x = SAVED(1);
  GIVE(0, mtg_d_bin(s, MT_OP_gelu_backward, g, x));
  if (NEED(1)) {
    mt_tensor *pdf =
        mtg_d_scale(s, mtg_d_un(s, MT_OP_exp, mtg_d_scale(s, mtg_d_mul(s, x, x), -0.5)), 0.39894228040143267794);
    mt_tensor *dd = mtg_d_mul(s, pdf, mtg_d_sub(s, mtg_d_num(s, 2, g->dtype), mtg_d_mul(s, x, x)));
    GIVE(1, mtg_d_mul(s, g, mtg_d_mul(s, a, dd)));
  }
  END;
}

/* gelu_tanh_backward(a, x) = a d(x), d = (1 + t)/2 + x/2 (1 - t^2) u' with
 * u = k (x + c x^3), t = tanh u, u' = k (1 + 3 c x^2):
 * d'(x) = (1 - t^2) (u' - x t u'^2 + 3 k c x^2) */
DERIV(gelu_tanh_backward) {
  BEGIN;
  const double k = 0.79788456080286535588, c = 0.044715;
  mt_tensor *a = SAVED(0), *x = SAVED(1);
  GIVE(0, mtg_d_bin(s, MT_OP_gelu_tanh_backward, g, x));
  if (NEED(1)) {
    mt_tensor *x2 = mtg_d_mul(s, x, x);
    mt_tensor *t = mtg_d_un(s, MT_OP_tanh, mtg_d_scale(s, mtg_d_add(s, x, mtg_d_scale(s, mtg_d_mul(s, x2, x), c)), k));
    mt_tensor *du = mtg_d_scale(s, mtg_d_addc(s, mtg_d_scale(s, x2, 3 * c), 1), k);
    mt_tensor *sech2 = mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), mtg_d_mul(s, t, t));
    mt_tensor *in = mtg_d_add(s, mtg_d_sub(s, du, mtg_d_mul(s, mtg_d_mul(s, x, t), mtg_d_mul(s, du, du))),
                              mtg_d_scale(s, x2, 3 * k * c));
    GIVE(1, mtg_d_mul(s, g, mtg_d_mul(s, a, mtg_d_mul(s, sech2, in))));
  }
  END;
}

/* silu(x) = x sigmoid(x): d/dx = sig (1 + x (1 - sig)) */
DERIV(silu) {
  BEGIN;
  mt_tensor *x = X, *sg = mtg_d_un(s, MT_OP_sigmoid, x);
  GIVE(0, mtg_d_mul(s, g,
                    mtg_d_mul(s, sg, mtg_d_addc(s, mtg_d_mul(s, x, mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), sg)), 1))));
  END;
}

/* logit(x[, eps]): g / (x (1 - x)); with eps (f[0] >= 0), 0 where x was
 * clamped, outside [eps, 1 - eps] */
DERIV(logit) {
  BEGIN;
  mt_tensor *x = X, *d = mtg_d_div(s, g, mtg_d_mul(s, x, mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), x)));
  double eps = n->f[0];
  if (eps >= 0 && x) {
    mt_tensor *in = mtg_d_bin(s, MT_OP_logical_and, mtg_d_bin(s, MT_OP_ge, x, mtg_d_num(s, eps, x->dtype)),
                          mtg_d_bin(s, MT_OP_le, x, mtg_d_num(s, 1 - eps, x->dtype)));
    d = mtg_d_where(s, in, d, zero_of(s, g));
  }
  GIVE(0, d);
  END;
}

/* sinc(x) = sin(pi x) / (pi x): g (pi x cos(pi x) - sin(pi x)) / (pi x^2),
 * 0 at x = 0 (computed there on x = 1, so no 0/0 reaches double backward) */
DERIV(sinc) {
  BEGIN;
  mt_tensor *z = zero_of(s, g), *at0 = mtg_d_bin(s, MT_OP_eq, X, z);
  mt_tensor *x = mtg_d_where(s, at0, mtg_d_num(s, 1, g->dtype), X), *px = mtg_d_scale(s, x, 3.14159265358979323846);
  mt_tensor *d = mtg_d_div(s, mtg_d_sub(s, mtg_d_mul(s, px, mtg_d_un(s, MT_OP_cos, px)), mtg_d_un(s, MT_OP_sin, px)),
                           mtg_d_mul(s, px, x));
  GIVE(0, mtg_d_mul(s, g, mtg_d_where(s, at0, z, d)));
  END;
}

DERIV(nan_to_num) {
  BEGIN;
  GIVE(0, mtg_d_mul(s, g, mtg_d_cast(s, mtg_d_un(s, MT_OP_isfinite, X), (mt_dtype)g->dtype)));
  END;
}

DERIV(leaky_relu) {
  BEGIN;
  mt_tensor *pos = mask(s, MT_OP_gt, X, zero_of(s, g), g);
  /* slope + (1 - slope) * pos */
  mt_tensor *f = mtg_d_addc(s, mtg_d_scale(s, pos, 1 - n->f[0]), n->f[0]);
  GIVE(0, mtg_d_mul(s, g, f));
  END;
}

/* ---- binary ---- */
#define A SAVED(0)
#define B SAVED(1)

DERIV(add) {
  BEGIN;
  GIVE(0, (mt_tensor *)g);
  GIVE(1, (mt_tensor *)g);
  END;
}

DERIV(sub) {
  BEGIN;
  GIVE(0, (mt_tensor *)g);
  GIVE(1, mtg_d_neg(s, g));
  END;
}

DERIV(mul) { /* each operand is saved only when the other needs a gradient */
  BEGIN;
  GIVE(0, mtg_d_mul(s, g, cj(s, B)));
  GIVE(1, mtg_d_mul(s, g, cj(s, A)));
  END;
}

DERIV(div) {
  BEGIN;
  mt_tensor *b = B;
  GIVE(0, mtg_d_div(s, g, cj(s, b)));
  GIVE(1, mtg_d_neg(s, mtg_d_div(s, mtg_d_mul(s, g, cj(s, A)), cj(s, mtg_d_mul(s, b, b)))));
  END;
}

/* d/da a^b = b a^(b-1) (0 where b == 0); d/db a^b = a^b log a (0 where a == 0
 * and b >= 0), as PyTorch defines them. */
DERIV(pow) {
  BEGIN;
  mt_tensor *a = A, *b = B, *z = zero_of(s, g);
  if (NEED(0)) {
    mt_tensor *d = mtg_d_mul(s, b, mtg_d_bin(s, MT_OP_pow, a, mtg_d_addc(s, b, -1)));
    mt_tensor *keep = mask(s, MT_OP_ne, b, z, d);
    gin[0] = mtg_d_grad_for(s, 0, mtg_d_mul(s, g, cj(s, mtg_d_mul(s, d, keep))));
  }
  if (NEED(1)) {
    mt_tensor *d = cj(s, mtg_d_mul(s, OUT, mtg_d_un(s, MT_OP_log, a)));
    mt_tensor *bre = b; /* complex exponents: PyTorch tests re(b) >= 0 */
    if (b && mt_is_complex((mt_dtype)b->dtype) && !s->st) {
      mt_tensor *re = NULL;
      mt_status st = mtg_complex_part(b, 0, &re);
      bre = mtg_track(s, st, re);
    }
    mt_tensor *az = mask(s, MT_OP_eq, a, z, d), *bnn = mask(s, MT_OP_ge, bre, zero_of(s, bre), d);
    mt_tensor *kill = mtg_d_mul(s, az, bnn); /* 1 where the derivative is defined as 0 */
    mt_tensor *dd = mtg_d_where(s, mtg_d_cast(s, kill, MT_BOOL), zero_of(s, d), d);
    gin[1] = mtg_d_grad_for(s, 1, mtg_d_mul(s, g, dd));
  }
  END;
}

DERIV(atan2) {
  BEGIN;
  mt_tensor *a = A, *b = B, *r2 = mtg_d_add(s, mtg_d_mul(s, a, a), mtg_d_mul(s, b, b));
  GIVE(0, mtg_d_div(s, mtg_d_mul(s, g, b), r2));
  GIVE(1, mtg_d_neg(s, mtg_d_div(s, mtg_d_mul(s, g, a), r2)));
  END;
}

DERIV(hypot) {
  BEGIN;
  mt_tensor *y = OUT;
  GIVE(0, mtg_d_div(s, mtg_d_mul(s, g, A), y));
  GIVE(1, mtg_d_div(s, mtg_d_mul(s, g, B), y));
  END;
}

DERIV(fmod) {
  BEGIN;
  GIVE(0, (mt_tensor *)g);
  GIVE(1, mtg_d_neg(s, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_trunc, mtg_d_div(s, A, B)))));
  END;
}

DERIV(remainder) {
  BEGIN;
  GIVE(0, (mt_tensor *)g);
  GIVE(1, mtg_d_neg(s, mtg_d_mul(s, g, mtg_d_un(s, MT_OP_floor, mtg_d_div(s, A, B)))));
  END;
}

/* maximum/minimum: the gradient goes to the chosen operand, split in
 * halves on ties (PyTorch's rule). */
static mt_status d_extreme(mtg_node *n, mt_tensor *const *go, mt_tensor **gin, mt_op win) {
  BEGIN;
  mt_tensor *a = A, *b = B;
  mt_tensor *tie = mask(s, MT_OP_eq, a, b, g);
  mt_tensor *gt = mask(s, win, a, b, g), *lt = mask(s, win, b, a, g);
  mt_tensor *half = mtg_d_scale(s, tie, 0.5);
  GIVE(0, mtg_d_mul(s, g, mtg_d_add(s, gt, half)));
  GIVE(1, mtg_d_mul(s, g, mtg_d_add(s, lt, half)));
  END;
}
/* relu_backward(a, b) = a where b > 0: linear in a, flat in b */
DERIV(relu_backward) {
  BEGIN;
  GIVE(0, mtg_d_bin(s, MT_OP_relu_backward, g, B));
  GIVE(1, mtg_d_zeros_like(s, B));
  END;
}

DERIV(maximum) { return d_extreme(n, go, gin, MT_OP_gt); }
DERIV(minimum) { return d_extreme(n, go, gin, MT_OP_lt); }

/* ---- ternary ---- */
/* clamp(x, lo, hi): x's gradient where lo <= x <= hi; the bound's gradient
 * where it was applied. */
DERIV(clamp) {
  BEGIN;
  mt_tensor *x = SAVED(0), *lo = n->saved[1].t ? SAVED(1) : NULL, *hi = n->saved[2].t ? SAVED(2) : NULL;
  mt_tensor *in = mtg_d_num(s, 1, g->dtype);
  if (lo) in = mtg_d_mul(s, in, mask(s, MT_OP_ge, x, lo, g));
  if (hi) in = mtg_d_mul(s, in, mask(s, MT_OP_le, x, hi, g));
  GIVE(0, mtg_d_mul(s, g, in));
  if (lo) GIVE(1, mtg_d_mul(s, g, mask(s, MT_OP_lt, x, lo, g)));
  if (hi) GIVE(2, mtg_d_mul(s, g, mask(s, MT_OP_gt, x, hi, g)));
  END;
}

/* where(cond, a, b): the condition gets no gradient */
DERIV(where) {
  BEGIN;
  mt_tensor *c = SAVED(0), *z = zero_of(s, g);
  GIVE(1, mtg_d_where(s, c, g, z));
  GIVE(2, mtg_d_where(s, c, z, g));
  END;
}

/* lerp(a, b, w) = a + w (b - a) */
DERIV(lerp) {
  BEGIN;
  mt_tensor *a = SAVED(0), *b = SAVED(1), *w = SAVED(2);
  GIVE(0, mtg_d_mul(s, g, mtg_d_sub(s, mtg_d_num(s, 1, g->dtype), w)));
  GIVE(1, mtg_d_mul(s, g, w));
  GIVE(2, mtg_d_mul(s, g, mtg_d_sub(s, b, a)));
  END;
}

#define I0 MTG_SAVE_IN(0)
#define I1 MTG_SAVE_IN(1)
#define I2 MTG_SAVE_IN(2)
#define O MTG_SAVE_OUT
#define E(op, f, sv) [MT_OP_##op] = {d_##f, sv}

static const mtg_deriv table[MT_NOPS] = {
    E(neg, neg, 0),          E(abs, abs, I0),         E(conj, conj, 0),        E(angle, angle, I0),
    E(sgn, sgn, I0 | O),         E(sign, zero, 0),        E(exp, exp, O),
    E(exp2, exp2, O),        E(expm1, expm1, O),      E(log, log, I0),         E(log2, log2, I0),
    E(log10, log10, I0),     E(log1p, log1p, I0),     E(sqrt, sqrt, O),        E(rsqrt, rsqrt, O),
    E(sin, sin, I0),         E(cos, cos, I0),         E(tan, tan, O),          E(asin, asin, I0),
    E(acos, acos, I0),       E(atan, atan, I0),       E(sinh, sinh, I0),       E(cosh, cosh, I0),
    E(tanh, tanh, O),        E(sigmoid, sigmoid, O),  E(relu, relu, O),        E(gelu, gelu, I0),
    E(gelu_tanh, gelu_tanh, I0), E(silu, silu, I0),   E(erf, erf, I0),         E(erfc, erfc, I0),
    E(floor, zero, 0),       E(ceil, zero, 0),        E(round, zero, 0),       E(trunc, zero, 0),
    E(frac, frac, 0),        E(reciprocal, reciprocal, O), E(square, square, I0),
    E(add, add, 0),          E(sub, sub, 0),          E(mul, mul, I0 | I1 | MTG_SAVE_CROSS),    E(div, div, I0 | I1),
    E(pow, pow, I0 | I1 | O), E(atan2, atan2, I0 | I1), E(hypot, hypot, I0 | I1 | O),
    E(fmod, fmod, I0 | I1),  E(remainder, remainder, I0 | I1), E(maximum, maximum, I0 | I1),
    E(minimum, minimum, I0 | I1), E(relu_backward, relu_backward, I1), E(gelu_backward, gelu_backward, I0 | I1),
    E(gelu_tanh_backward, gelu_tanh_backward, I0 | I1), E(clamp, clamp, I0 | I1 | I2), E(where, where, I0),
    E(lerp, lerp, I0 | I1 | I2), E(nan_to_num, nan_to_num, I0), E(leaky_relu, leaky_relu, I0),
    E(copy, identity, 0),    E(cast, identity, 0),    E(logit, logit, I0),   E(sinc, sinc, I0),
};

const mtg_deriv *mtg_deriv_ew(mt_op op) { return table[op].fn ? &table[op] : NULL; }
