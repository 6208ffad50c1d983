/* complex_parts.c -- the complex elementwise ops by parts: each op written
 * with real ops on the real and imaginary parts (complex.c's views), so
 * it runs on every device whose real kernels exist. CUDA tensors take this
 * path (elementwise.c); the CPU has direct kernels (cpu/complex_kernels.c).
 * Division and |z| are scaled (hypot, Smith's division) as the CPU's. */
#include "cplx.h"

typedef struct {
  mt_tensor *t[64];
  int n;
  mt_status st;
} scope;

/* Registers r (NULL on failure) and returns it. */
static mt_tensor *keep(scope *s, mt_status st, mt_tensor *r) {
  if (st && !s->st) s->st = st;
  if (r && s->n < 64) s->t[s->n++] = r;
  else if (r) mt_release(r), r = NULL, s->st = s->st ? s->st : mt_fail(MT_ENOMEM, "complex: too many temporaries");
  return s->st ? NULL : r;
}
static mt_tensor *un(scope *s, mt_op op, const mt_tensor *x) {
  mt_tensor *r = NULL;
  if (s->st) return NULL;
  mt_status st = mt_unary(op, x, &r);
  return keep(s, st, r);
}
static mt_tensor *bin(scope *s, mt_op op, const mt_tensor *a, const mt_tensor *b) {
  mt_tensor *r = NULL;
  if (s->st) return NULL;
  mt_status st = mt_binary(op, a, b, &r);
  return keep(s, st, r);
}
static mt_tensor *num(scope *s, double v, mt_dtype dt) {
  mt_tensor *r = NULL;
  if (s->st) return NULL;
  mt_status st = mt_scalar_tensor(mt_sfloat(v), dt, &r);
  if (r) r->flags |= MT_TF_WRAPPED;
  return keep(s, st, r);
}
static mt_tensor *part(scope *s, const mt_tensor *z, int k) {
  mt_tensor *p = NULL, *r = NULL;
  if (s->st) return NULL;
  mt_status st = mt_complex_pairs(z, &p);
  if (!st) st = mt_select(p, p->ndim - 1, k, &r);
  mt_release(p);
  return keep(s, st, r);
}
static mt_tensor *where(scope *s, const mt_tensor *c, const mt_tensor *a, const mt_tensor *b) {
  mt_tensor *r = NULL;
  if (s->st) return NULL;
  mt_status st = mt_where(c, a, b, &r);
  return keep(s, st, r);
}

/* (re, im) of op(a[, b]) for complex a, b (b NULL for unary ops); a real
 * result in *re alone (abs, angle, predicates). */
static void parts_of(scope *s, mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **re, mt_tensor **im) {
  mt_dtype pt = mt_complex_part((mt_dtype)a->dtype);
  mt_tensor *ar = part(s, a, 0), *ai = part(s, a, 1), *br = b ? part(s, b, 0) : NULL, *bi = b ? part(s, b, 1) : NULL;
  *im = NULL;
  switch (op) {
  case MT_OP_add: case MT_OP_sub: *re = bin(s, op, ar, br), *im = bin(s, op, ai, bi); break;
  case MT_OP_mul:
    *re = bin(s, MT_OP_sub, bin(s, MT_OP_mul, ar, br), bin(s, MT_OP_mul, ai, bi));
    *im = bin(s, MT_OP_add, bin(s, MT_OP_mul, ar, bi), bin(s, MT_OP_mul, ai, br));
    break;
  case MT_OP_div: { /* Smith: scale by the larger part of b */
    mt_tensor *big = bin(s, MT_OP_ge, un(s, MT_OP_abs, br), un(s, MT_OP_abs, bi));
    mt_tensor *q1 = bin(s, MT_OP_div, bi, br), *d1 = bin(s, MT_OP_add, br, bin(s, MT_OP_mul, bi, q1));
    mt_tensor *q2 = bin(s, MT_OP_div, br, bi), *d2 = bin(s, MT_OP_add, bi, bin(s, MT_OP_mul, br, q2));
    mt_tensor *r1 = bin(s, MT_OP_div, bin(s, MT_OP_add, ar, bin(s, MT_OP_mul, ai, q1)), d1);
    mt_tensor *i1 = bin(s, MT_OP_div, bin(s, MT_OP_sub, ai, bin(s, MT_OP_mul, ar, q1)), d1);
    mt_tensor *r2 = bin(s, MT_OP_div, bin(s, MT_OP_add, bin(s, MT_OP_mul, ar, q2), ai), d2);
    mt_tensor *i2 = bin(s, MT_OP_div, bin(s, MT_OP_sub, bin(s, MT_OP_mul, ai, q2), ar), d2);
    *re = where(s, big, r1, r2), *im = where(s, big, i1, i2);
    break;
  }
  case MT_OP_eq: case MT_OP_ne: {
    mt_tensor *e = bin(s, MT_OP_logical_and, bin(s, MT_OP_eq, ar, br), bin(s, MT_OP_eq, ai, bi));
    *re = op == MT_OP_eq ? e : un(s, MT_OP_logical_not, e);
    break;
  }
  case MT_OP_neg: *re = un(s, MT_OP_neg, ar), *im = un(s, MT_OP_neg, ai); break;
  case MT_OP_conj: *re = ar, *im = un(s, MT_OP_neg, ai); break;
  case MT_OP_abs: *re = bin(s, MT_OP_hypot, ar, ai); break;
  case MT_OP_angle: *re = bin(s, MT_OP_atan2, ai, ar); break;
  case MT_OP_exp: {
    mt_tensor *m = un(s, MT_OP_exp, ar);
    *re = bin(s, MT_OP_mul, m, un(s, MT_OP_cos, ai)), *im = bin(s, MT_OP_mul, m, un(s, MT_OP_sin, ai));
    break;
  }
  case MT_OP_log: *re = un(s, MT_OP_log, bin(s, MT_OP_hypot, ar, ai)), *im = bin(s, MT_OP_atan2, ai, ar); break;
  case MT_OP_sqrt: case MT_OP_rsqrt: { /* sqrt(r) (cos t/2, sin t/2), rsqrt its reciprocal: r^-1/2 (cos, -sin) */
    bool rs = op == MT_OP_rsqrt;
    mt_tensor *m = un(s, rs ? MT_OP_rsqrt : MT_OP_sqrt, bin(s, MT_OP_hypot, ar, ai));
    mt_tensor *h = bin(s, MT_OP_mul, bin(s, MT_OP_atan2, ai, ar), num(s, rs ? -0.5 : 0.5, pt));
    *re = bin(s, MT_OP_mul, m, un(s, MT_OP_cos, h)), *im = bin(s, MT_OP_mul, m, un(s, MT_OP_sin, h));
    break;
  }
  case MT_OP_reciprocal: { /* 1 / a by Smith's division */
    mt_tensor *big = bin(s, MT_OP_ge, un(s, MT_OP_abs, ar), un(s, MT_OP_abs, ai)), *one = num(s, 1, pt);
    mt_tensor *q1 = bin(s, MT_OP_div, ai, ar), *d1 = bin(s, MT_OP_add, ar, bin(s, MT_OP_mul, ai, q1));
    mt_tensor *q2 = bin(s, MT_OP_div, ar, ai), *d2 = bin(s, MT_OP_add, ai, bin(s, MT_OP_mul, ar, q2));
    *re = where(s, big, bin(s, MT_OP_div, one, d1), bin(s, MT_OP_div, q2, d2));
    *im = where(s, big, bin(s, MT_OP_div, un(s, MT_OP_neg, q1), d1), bin(s, MT_OP_div, un(s, MT_OP_neg, one), d2));
    break;
  }
  case MT_OP_square: parts_of(s, MT_OP_mul, a, a, re, im); break;
  case MT_OP_sgn: {
    mt_tensor *r = bin(s, MT_OP_hypot, ar, ai), *z = bin(s, MT_OP_eq, r, num(s, 0, pt));
    mt_tensor *safe = where(s, z, num(s, 1, pt), r);
    *re = bin(s, MT_OP_div, ar, safe), *im = bin(s, MT_OP_div, ai, safe);
    break;
  }
  case MT_OP_pow: { /* exp(b log a); 0^b = 0 for re(b) > 0 comes out of exp(-inf) */
    mt_tensor *lr = NULL, *li = NULL, *pr = NULL, *pi = NULL;
    parts_of(s, MT_OP_log, a, NULL, &lr, &li);
    pr = bin(s, MT_OP_sub, bin(s, MT_OP_mul, lr, br), bin(s, MT_OP_mul, li, bi));
    pi = bin(s, MT_OP_add, bin(s, MT_OP_mul, lr, bi), bin(s, MT_OP_mul, li, br));
    mt_tensor *m = un(s, MT_OP_exp, pr);
    *re = bin(s, MT_OP_mul, m, un(s, MT_OP_cos, pi)), *im = bin(s, MT_OP_mul, m, un(s, MT_OP_sin, pi));
    break;
  }
  case MT_OP_isnan: *re = bin(s, MT_OP_logical_or, un(s, MT_OP_isnan, ar), un(s, MT_OP_isnan, ai)); break;
  case MT_OP_isinf: *re = bin(s, MT_OP_logical_or, un(s, MT_OP_isinf, ar), un(s, MT_OP_isinf, ai)); break;
  case MT_OP_isfinite: *re = bin(s, MT_OP_logical_and, un(s, MT_OP_isfinite, ar), un(s, MT_OP_isfinite, ai)); break;
  default:
    if (!s->st) s->st = mt_fail(MT_EDTYPE, "%s: %s tensors are not supported", mt_ops[op].name,
                                mt_dtype_name((mt_dtype)a->dtype));
    *re = NULL;
  }
}

mt_status mt_complex_ew_parts(mt_op op, const mt_tensor *a, const mt_tensor *b, mt_tensor **out) {
  scope s = {.n = 0, .st = MT_OK};
  mt_dtype cdt = b ? mt_result_type(a, b) : (mt_dtype)a->dtype;
  mt_tensor *ac = NULL, *bc = NULL, *re = NULL, *im = NULL, *r = NULL;
  mt_status st = mt_to_dtype(a, cdt, false, &ac);
  if (!st && b) st = mt_to_dtype(b, cdt, false, &bc);
  if (!st && b && !mt_same_device(mt_tdevice(ac), mt_tdevice(bc))) { /* a 0-dim host operand: onto the device */
    mt_tensor **host = mt_tdevice(ac).type == MT_CPU ? &ac : &bc, *moved = NULL;
    st = mt_empty((*host)->shape, (*host)->ndim, cdt, mt_tdevice(host == &ac ? bc : ac), &moved);
    if (!st) st = mt_copy_(moved, *host);
    mt_release(*host);
    *host = moved;
  }
  if (!st) parts_of(&s, op, ac, bc, &re, &im);
  st = st ? st : s.st;
  if (!st && im) st = mt_complex(re, im, &r);
  else if (!st) r = mt_retain(re);
  mt_release(ac), mt_release(bc);
  for (int i = 0; i < s.n; i++) mt_release(s.t[i]);
  if (st) return st;
  return mt_deliver(mt_ops[op].name, r, out);
}
