/* complex.c -- recorded complex views and constructions: view_as_real and
 * view_as_complex are nodes whose derivatives are each other (PyTorch's
 * convention: the gradient of a real loss with respect to z = x + iy is
 * dL/dx + i dL/dy, so the pairs view passes gradients through unchanged);
 * real, imag, complex and polar are compositions of recorded ops. The JIT
 * does not compile complex values: tracing one refuses the trace. */
#include "cplx.h"
#include "deriv.h"
#include "graph.h"
#include "trace.h"

static void refuse_trace(const char *op) {
  if (MTG_TRACING()) mtg_trace_refuse("%s: complex tensors are not compiled by the JIT", op);
}

/* d view_as_real: the real [..., 2] gradient seen as complex. */
static mt_status d_view_as_real(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  mt_tensor *c = NULL;
  mt_status st = mtg_contiguous(go[0], &c);
  if (!st) st = mtg_view_as_complex(c, &gin[0]);
  mt_release(c);
  return st;
}

/* d view_as_complex: the complex gradient as its pairs. */
static mt_status d_view_as_complex(mtg_node *n, mt_tensor *const *go, mt_tensor **gin) {
  if (!mtg_needs(n, 0)) return MT_OK;
  mt_tensor *g = NULL, *r = NULL;
  mt_status st = mtg_to_dtype(go[0], mt_complex_of((mt_dtype)n->in[0].dtype), false, &g);
  if (!st) st = mtg_view_as_real(g, &r);
  if (!st) st = mtg_contiguous(r, &gin[0]);
  mt_release(g), mt_release(r);
  return st;
}

static mt_status record_view(const char *name, mtg_backward_fn fn, const mt_tensor *t, mt_status st, mt_tensor *r,
                             mt_tensor **out) {
  if (!st && t->autograd) {
    const mt_tensor *ins[1] = {t};
    if (mtg_any_requires_grad(ins, 1)) mtg_record1(name, fn, ins, 1, r, &st);
  }
  if (st) {
    mt_release(r);
    return st;
  }
  refuse_trace(name);
  return mt_deliver("view", r, out);
}

mt_status mtg_view_as_real(const mt_tensor *t, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_view_as_real(t, &r);
  return record_view("ViewAsRealBackward0", d_view_as_real, t, st, r, out);
}

mt_status mtg_view_as_complex(const mt_tensor *t, mt_tensor **out) {
  mt_tensor *r = NULL;
  mt_status st = mt_view_as_complex(t, &r);
  return record_view("ViewAsComplexBackward0", d_view_as_complex, t, st, r, out);
}

mt_status mtg_complex_part(const mt_tensor *t, int part, mt_tensor **out) {
  if (!mt_is_complex((mt_dtype)t->dtype)) return mt_complex_part_view(t, part, out);
  mt_tensor *p = NULL;
  mt_status st = mtg_view_as_real(t, &p);
  if (!st) st = mtg_select(p, p->ndim - 1, part, out);
  mt_release(p);
  return st;
}

mt_status mtg_complex(const mt_tensor *re, const mt_tensor *im, mt_tensor **out) {
  mt_tensor *probe = NULL;
  mt_status st = mt_complex(re, im, &probe); /* checks dtypes and shapes, the value when nothing records */
  const mt_tensor *ins[2] = {re, im};
  if (st || !mtg_any_requires_grad(ins, 2)) {
    if (!st) refuse_trace("complex");
    return st ? st : mt_deliver("complex", probe, out);
  }
  mt_release(probe);
  /* stacked parts, broadcast to one shape, viewed as complex */
  int64_t shape[MT_MAXDIM];
  int nd = 0;
  st = mt_broadcast_shape("complex", re->shape, re->ndim, im->shape, im->ndim, shape, &nd);
  mt_tensor *ps[2] = {NULL, NULL}, *s = NULL;
  if (!st) st = mtg_expand(re, shape, nd, &ps[0]);
  if (!st) st = mtg_expand(im, shape, nd, &ps[1]);
  if (!st) st = mtg_join(MT_OP_stack, ps, 2, -1, &s);
  if (!st) st = mtg_view_as_complex(s, out);
  mt_release(ps[0]), mt_release(ps[1]), mt_release(s);
  return st;
}

mt_status mtg_polar(const mt_tensor *abs, const mt_tensor *angle, mt_tensor **out) {
  mt_dtype a = (mt_dtype)abs->dtype, b = (mt_dtype)angle->dtype;
  if ((a != MT_FLOAT32 && a != MT_FLOAT64) || a != b)
    return mt_fail(MT_EDTYPE, "polar: expected abs and angle of the same dtype, float32 or float64, got %s and %s",
                   mt_dtype_name(a), mt_dtype_name(b));
  mt_tensor *c = NULL, *s = NULL, *re = NULL, *im = NULL;
  mt_status st = mtg_unary(MT_OP_cos, angle, &c);
  if (!st) st = mtg_unary(MT_OP_sin, angle, &s);
  if (!st) st = mtg_binary(MT_OP_mul, abs, c, &re);
  if (!st) st = mtg_binary(MT_OP_mul, abs, s, &im);
  if (!st) st = mtg_complex(re, im, out);
  mt_release(c), mt_release(s), mt_release(re), mt_release(im);
  return st;
}
