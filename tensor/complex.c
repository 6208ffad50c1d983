/* complex.c -- complex tensors as pairs of reals: the views between the two
 * layouts (view_as_real, view_as_complex, .real, .imag), construction from
 * parts (complex, polar), and copies, casts and fills that involve a
 * complex side. Everything here works through real views of the same
 * storage, so it runs on every device that handles the real dtypes. */
#include "cplx.h"

/* A [..., 2] real view of complex t; with_base says whether autograd sees
 * it as a view of t. */
static mt_status pairs(const mt_tensor *t, bool with_base, mt_tensor **out) {
  if (!mt_is_complex((mt_dtype)t->dtype))
    return mt_fail(MT_EDTYPE, "view_as_real: expected a complex tensor, got %s", mt_dtype_name((mt_dtype)t->dtype));
  if (t->ndim >= MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "view_as_real: tensors have at most %d dimensions, got %d (plus 1)", MT_MAXDIM,
                   t->ndim);
  int64_t shape[MT_MAXDIM], strides[MT_MAXDIM];
  for (int i = 0; i < t->ndim; i++) shape[i] = t->shape[i], strides[i] = t->strides[i] * 2;
  shape[t->ndim] = 2, strides[t->ndim] = 1;
  mt_tensor *v = NULL;
  mt_status st = mt_as_strided(t, t->ndim + 1, shape, strides, t->offset * 2, &v);
  if (st) return st;
  v->dtype = (int8_t)mt_complex_part((mt_dtype)t->dtype);
  if (!with_base) {
    mt_release(v->base);
    v->base = NULL;
  }
  *out = v;
  return MT_OK;
}

mt_status mt_view_as_real(const mt_tensor *t, mt_tensor **out) { return pairs(t, true, out); }
mt_status mt_complex_pairs(const mt_tensor *t, mt_tensor **out) { return pairs(t, false, out); }

mt_status mt_view_as_complex(const mt_tensor *t, mt_tensor **out) {
  mt_dtype dt = (mt_dtype)t->dtype;
  if (dt != MT_FLOAT32 && dt != MT_FLOAT64)
    return mt_fail(MT_EDTYPE, "view_as_complex: only float32 and float64 tensors are supported, got %s",
                   mt_dtype_name(dt));
  if (t->ndim == 0) return mt_fail(MT_ESHAPE, "view_as_complex: the input must have at least one dimension");
  int n = t->ndim - 1;
  if (t->shape[n] != 2)
    return mt_fail(MT_ESHAPE, "view_as_complex: the last dimension must have size 2, got %lld",
                   (long long)t->shape[n]);
  if (t->strides[n] != 1)
    return mt_fail(MT_ESHAPE, "view_as_complex: the last dimension must have stride 1, got %lld",
                   (long long)t->strides[n]);
  int64_t strides[MT_MAXDIM];
  for (int i = 0; i < n; i++) {
    if (t->strides[i] % 2 != 0)
      return mt_fail(MT_ESHAPE, "view_as_complex: every stride but the last must be divisible by 2, dim %d has %lld",
                     i + 1, (long long)t->strides[i]);
    strides[i] = t->strides[i] / 2;
  }
  if (t->offset % 2 != 0)
    return mt_fail(MT_ESHAPE, "view_as_complex: the storage offset must be divisible by 2, got %lld",
                   (long long)t->offset);
  mt_tensor *v = NULL;
  mt_status st = mt_as_strided(t, n, t->shape, strides, t->offset / 2, &v);
  if (st) return st;
  v->dtype = (int8_t)mt_complex_of(dt);
  mt_complex_seen = true;
  *out = v;
  return MT_OK;
}

/* Part k (0 re, 1 im) of the pairs view p, a view of p's base. */
static mt_status part_of(const mt_tensor *p, int k, mt_tensor **out) {
  return mt_select(p, p->ndim - 1, k, out);
}

mt_status mt_complex_part_view(const mt_tensor *t, int part, mt_tensor **out) {
  if (!mt_is_complex((mt_dtype)t->dtype)) {
    if (part == 1) return mt_fail(MT_EDTYPE, "imag: not implemented for real tensors (%s)", mt_dtype_name((mt_dtype)t->dtype));
    *out = mt_retain((mt_tensor *)t);
    return MT_OK;
  }
  mt_tensor *p = NULL;
  mt_status st = pairs(t, true, &p);
  if (!st) st = part_of(p, part, out);
  mt_release(p);
  return st;
}

mt_status mt_complex_copy_(mt_tensor *dst, const mt_tensor *src, bool nb) {
  bool cd = mt_is_complex((mt_dtype)dst->dtype), cs = mt_is_complex((mt_dtype)src->dtype);
  mt_tensor *pd = NULL, *ps = NULL, *d0 = NULL, *s0 = NULL;
  mt_status st = MT_OK;
  if (cd && cs) { /* complex to complex: the pairs, cast between float widths */
    st = mt_complex_pairs(dst, &pd);
    if (!st) st = mt_complex_pairs(src, &ps);
    if (!st) st = mt_copy_nb_(pd, ps, nb);
  } else if (cd) { /* real to complex: imaginary part 0 */
    st = mt_complex_pairs(dst, &pd);
    if (!st) st = part_of(pd, 0, &d0);
    if (!st) st = mt_copy_nb_(d0, src, nb);
    mt_release(d0), d0 = NULL;
    if (!st) st = part_of(pd, 1, &d0);
    if (!st) st = mt_fill_(d0, mt_sfloat(0));
  } else { /* complex to real: the real part, as PyTorch does */
    st = mt_complex_pairs(src, &ps);
    if (!st) st = part_of(ps, 0, &s0);
    if (!st) st = mt_copy_nb_(dst, s0, nb);
  }
  if (!st) mt_bump_version(dst);
  mt_release(pd), mt_release(ps), mt_release(d0), mt_release(s0);
  return st;
}

mt_status mt_complex_fill_(mt_tensor *dst, double re, double im) {
  if (!mt_is_complex((mt_dtype)dst->dtype)) return mt_fill_(dst, mt_sfloat(re));
  mt_tensor *p = NULL, *r = NULL, *i = NULL;
  mt_status st = mt_complex_pairs(dst, &p);
  if (!st) st = part_of(p, 0, &r);
  if (!st) st = part_of(p, 1, &i);
  if (!st) st = mt_fill_(r, mt_sfloat(re));
  if (!st) st = mt_fill_(i, mt_sfloat(im));
  if (!st) mt_bump_version(dst);
  mt_release(p), mt_release(r), mt_release(i);
  return st;
}

mt_status mt_complex(const mt_tensor *re, const mt_tensor *im, mt_tensor **out) {
  mt_dtype a = (mt_dtype)re->dtype, b = (mt_dtype)im->dtype;
  if ((a != MT_FLOAT32 && a != MT_FLOAT64) || a != b)
    return mt_fail(MT_EDTYPE, "complex: expected real and imag of the same dtype, float32 or float64, got %s and %s",
                   mt_dtype_name(a), mt_dtype_name(b));
  if (!mt_same_device(mt_tdevice(re), mt_tdevice(im))) {
    char x[32], y[32];
    return mt_fail(MT_EDEVICE, "complex: real and imag are on different devices (%s and %s)",
                   mt_device_str(mt_tdevice(re), x, sizeof x), mt_device_str(mt_tdevice(im), y, sizeof y));
  }
  int64_t shape[MT_MAXDIM];
  int nd = 0;
  mt_status st = mt_broadcast_shape("complex", re->shape, re->ndim, im->shape, im->ndim, shape, &nd);
  if (st) return st;
  mt_tensor *o = NULL, *p = NULL, *r = NULL, *i = NULL;
  st = mt_empty(shape, nd, mt_complex_of(a), mt_tdevice(re), &o);
  if (!st) st = mt_complex_pairs(o, &p);
  if (!st) st = part_of(p, 0, &r);
  if (!st) st = part_of(p, 1, &i);
  if (!st) st = mt_copy_(r, re);
  if (!st) st = mt_copy_(i, im);
  mt_release(p), mt_release(r), mt_release(i);
  if (st) {
    mt_release(o);
    return st;
  }
  o->storage->version = 0;
  return mt_deliver("complex", o, out);
}

mt_status mt_polar(const mt_tensor *abs, const mt_tensor *angle, mt_tensor **out) {
  mt_dtype a = (mt_dtype)abs->dtype, b = (mt_dtype)angle->dtype;
  if ((a != MT_FLOAT32 && a != MT_FLOAT64) || a != b)
    return mt_fail(MT_EDTYPE, "polar: expected abs and angle of the same dtype, float32 or float64, got %s and %s",
                   mt_dtype_name(a), mt_dtype_name(b));
  mt_tensor *c = NULL, *s = NULL, *re = NULL, *im = NULL;
  mt_status st = mt_unary(MT_OP_cos, angle, &c);
  if (!st) st = mt_unary(MT_OP_sin, angle, &s);
  if (!st) st = mt_binary(MT_OP_mul, abs, c, &re);
  if (!st) st = mt_binary(MT_OP_mul, abs, s, &im);
  if (!st) st = mt_complex(re, im, out);
  mt_release(c), mt_release(s), mt_release(re), mt_release(im);
  return st;
}
