/* conv.c -- convolution ops (nn.h): argument checks with messages that name
 * the op and the shapes, PyTorch's output-size rules, unbatched inputs, and
 * dispatch to cpu/conv_dnnl.c (float32), cpu/conv_ref.c (float64) or, for
 * CUDA tensors, cuda/conv.c.
 * Transposed convolution is the grad-input op of the adjoint convolution. */
#include <stdio.h>
#include <string.h>

#include "cpu/conv_kernels.h"
#include "cuda/mt_cuda.h"
#include "nn.h"
#include "reduce_util.h"

void mt_conv_opts_init(mt_conv_opts *o) {
  memset(o, 0, sizeof *o);
  for (int i = 0; i < 3; i++) o->stride[i] = o->dilation[i] = 1;
  o->groups = 1;
}

void mt_conv_cache_clear(void) { mt_dnnl_conv_cache_clear(); }

static const char *conv_name(int nsp, bool transposed, const char *suffix, char *buf, size_t n) {
  snprintf(buf, n, "%s%dd%s", transposed ? "conv_transpose" : "conv", nsp, suffix);
  return buf;
}

static char *shp(const int64_t *s, int nd, char *buf) { return mt_shape_str(s, nd, buf, 96); }

mt_status mt_conv_same_padding(const char *op, const mt_tensor *w, mt_conv_opts *o) {
  int nsp = w->ndim - 2;
  if (nsp < 1 || nsp > 3) return mt_fail(MT_ESHAPE, "%s: weight must have 3 to 5 dimensions, got %d", op, w->ndim);
  for (int i = 0; i < nsp; i++) {
    if (o->stride[i] != 1)
      return mt_fail(MT_EARG, "%s: padding='same' is not supported for strided convolutions", op);
    int64_t total = o->dilation[i] * (w->shape[2 + i] - 1);
    o->pad[i] = total / 2;
    o->pad_hi[i] = total - total / 2;
  }
  return MT_OK;
}

/* The problem of a (forward-direction) convolution from x's shape xs,
 * weight shape ws (Cout, Cin/G, *k) and options; output sizes computed
 * unless `given` (then checked to be reachable). Both shapes are batched. */
static mt_status make_problem(const char *op, const int64_t *xs, const int64_t *ws, int nd, const mt_conv_opts *o,
                              mt_conv_problem *p) {
  char a[96], b[96];
  int nsp = nd - 2;
  memset(p, 0, sizeof *p);
  p->nsp = nsp;
  p->N = xs[0], p->C = xs[1], p->K = ws[0], p->G = o->groups;
  if (o->groups < 1) return mt_fail(MT_EARG, "%s: groups must be positive, got %lld", op, (long long)o->groups);
  if (p->K % p->G)
    return mt_fail(MT_ESHAPE, "%s: out_channels (%lld) must be divisible by groups (%lld) (weight %s)", op,
                   (long long)p->K, (long long)p->G, shp(ws, nd, a));
  if (ws[1] * p->G != p->C)
    return mt_fail(MT_ESHAPE,
                   "%s: input %s has %lld channels, but weight %s with groups=%lld expects %lld (in_channels must "
                   "be divisible by groups)",
                   op, shp(xs, nd, a), (long long)p->C, shp(ws, nd, b), (long long)p->G, (long long)(ws[1] * p->G));
  for (int d = 0; d < 3; d++) p->in[d] = p->out[d] = p->k[d] = p->stride[d] = p->dil[d] = 1;
  for (int i = 0; i < nsp; i++) {
    int d = 3 - nsp + i; /* the last spatial dims of the 3-D view */
    if (o->stride[i] < 1 || o->dilation[i] < 1 || o->pad[i] < 0 || o->pad_hi[i] < 0)
      return mt_fail(MT_EARG, "%s: stride and dilation must be positive and padding non-negative, got stride %lld, "
                              "dilation %lld, padding %lld",
                     op, (long long)o->stride[i], (long long)o->dilation[i],
                     (long long)(o->pad[i] < 0 ? o->pad[i] : o->pad_hi[i]));
    p->in[d] = xs[2 + i], p->k[d] = ws[2 + i], p->stride[d] = o->stride[i], p->dil[d] = o->dilation[i];
    p->pad_lo[d] = o->pad[i], p->pad_hi[d] = o->pad_hi[i];
    if (p->k[d] < 1) return mt_fail(MT_ESHAPE, "%s: weight %s has an empty kernel", op, shp(ws, nd, a));
    int64_t ext = p->dil[d] * (p->k[d] - 1) + 1, padded = p->in[d] + p->pad_lo[d] + p->pad_hi[d];
    if (ext > padded)
      return mt_fail(MT_ESHAPE,
                     "%s: kernel size %lld (dilated: %lld) in spatial dim %d is larger than the padded input size "
                     "%lld (input %s, weight %s)",
                     op, (long long)p->k[d], (long long)ext, i + 1, (long long)padded, shp(xs, nd, a), shp(ws, nd, b));
    p->out[d] = (padded - ext) / p->stride[d] + 1;
  }
  return MT_OK;
}

static mt_status check_floats(const char *op, const mt_tensor *a, const char *an, const mt_tensor *b, const char *bn) {
  if (!mt_is_floating((mt_dtype)a->dtype))
    return mt_fail(MT_EDTYPE, "%s: needs floating tensors, got %s %s", op, an, mt_dtype_name((mt_dtype)a->dtype));
  if (b && b->dtype != a->dtype)
    return mt_fail(MT_EDTYPE, "%s: %s (%s) and %s (%s) must have the same dtype", op, an,
                   mt_dtype_name((mt_dtype)a->dtype), bn, mt_dtype_name((mt_dtype)b->dtype));
  return MT_OK;
}

/* Contiguous compute copy: float16/bfloat16 to float32 (on the CPU; CUDA
 * takes them as they are, cuda/conv.c decides). */
static mt_status prep(const mt_tensor *t, mt_tensor **out) {
  if (mt_tdevice(t).type == MT_CUDA) return mt_contiguous(t, out);
  mt_tensor *u = NULL;
  mt_status st = mt_upcast_half(t, &u);
  if (!st) st = mt_contiguous(u, out);
  mt_release(u);
  return st;
}

enum { FWD, BWD_DATA, BWD_WEIGHTS };

/* Runs one direction on contiguous compute tensors: a and b are the
 * operands (fwd: x, w; data: gy, w; weights: gy, x), y the result, y2 the
 * bias (fwd, input) or grad bias (weights, output), may be NULL. A forward
 * oneDNN run applies act to y and sets *applied; other paths leave it. */
static mt_status run_kernel(int kind, const mt_conv_problem *p, const mt_tensor *a, const mt_tensor *b, mt_tensor *y,
                            mt_tensor *y2, mt_act act, double alpha, bool *applied) {
  if (mt_tdevice(y).type == MT_CUDA) return mt_cuda_conv(kind, p, a, b, y, y2); /* act applied after */
  mt_dtype dt = (mt_dtype)y->dtype;
  const void *pa = mt_data(a), *pb = mt_data(b);
  void *py = mt_data(y), *py2 = y2 ? mt_data(y2) : NULL;
  if (dt == MT_FLOAT32) {
    bool done = false;
    mt_status st = kind == FWD           ? mt_dnnl_conv_fwd(p, pa, pb, py2, act, alpha, &done, py)
                   : kind == BWD_DATA    ? mt_dnnl_conv_bwd_data(p, pa, pb, py)
                                         : mt_dnnl_conv_bwd_weights(p, pa, pb, py, py2);
    if (kind == FWD && applied && !st && done) *applied = true;
    if (st != MT_EARG) return st; /* oneDNN declined: reference loops below */
  }
  return kind == FWD        ? mt_ref_conv_fwd(dt, p, pa, pb, py2, py)
         : kind == BWD_DATA ? mt_ref_conv_bwd_data(dt, p, pa, pb, py)
                            : mt_ref_conv_bwd_weights(dt, p, pa, pb, py, py2);
}

static bool has_zero(const int64_t *s, int n) {
  for (int i = 0; i < n; i++)
    if (s[i] == 0) return true;
  return false;
}

/* Batched shape of an input of rank nd (w_nd - 1: unbatched, gets N = 1). */
static mt_status batched(const char *op, const char *what, const int64_t *s, int nd, int w_nd, int64_t *bs,
                         bool *unb) {
  char a[96];
  if (nd != w_nd && nd != w_nd - 1)
    return mt_fail(MT_ESHAPE, "%s: expected %s of %d or %d dimensions (batched or unbatched), got %s", op, what,
                   w_nd - 1, w_nd, shp(s, nd, a));
  *unb = nd == w_nd - 1;
  bs[0] = 1;
  memcpy(bs + *unb, s, sizeof(int64_t) * (size_t)nd);
  return MT_OK;
}

/* Result tensor of shape (batched) s, dropping dim 0 when unbatched. */
static mt_status result(const int64_t *s, int nd, bool unb, mt_dtype dt, bool zero, mt_device dev, mt_tensor **r) {
  return (zero ? mt_zeros : mt_empty)(s + unb, nd - unb, dt, dev, r);
}

/* View of contiguous t (unbatched) as batched: a new reference. */
static mt_status as_batched(mt_tensor *t, bool unb, mt_tensor **out) {
  if (!unb) return *out = mt_retain(t), MT_OK;
  return mt_unsqueeze(t, 0, out);
}

/* Shared by convolution and conv_transpose: y = act(op(x, w) + bias) where
 * the forward direction is FWD (convolution) or BWD_DATA (transposed). act
 * is a oneDNN post-op where oneDNN runs the problem, else applied after. */
static mt_status conv_impl(const char *op, bool transposed, const mt_tensor *x, const mt_tensor *w,
                           const mt_tensor *bias, const mt_conv_opts *o, mt_act act, double alpha, mt_tensor **out) {
  char a[96], b[96];
  int nd = w->ndim, nsp = nd - 2;
  mt_status st;
  if (nsp < 1 || nsp > 3)
    return mt_fail(MT_ESHAPE, "%s: weight must have 3 to 5 dimensions (out, in/groups, kernel...), got %s", op,
                   shp(w->shape, w->ndim, a));
  if ((st = check_floats(op, x, "input", w, "weight")) || (bias && (st = check_floats(op, x, "input", bias, "bias"))))
    return st;
  int64_t xs[5], ys[5];
  bool unb;
  if ((st = batched(op, "input", x->shape, x->ndim, nd, xs, &unb))) return st;
  mt_conv_problem p;
  int64_t cout = transposed ? w->shape[1] * o->groups : w->shape[0];
  if (!transposed) {
    if ((st = make_problem(op, xs, w->shape, nd, o, &p))) return st;
  } else { /* the adjoint conv maps our output (N, Cout, *o) to x */
    if (o->groups < 1) return mt_fail(MT_EARG, "%s: groups must be positive, got %lld", op, (long long)o->groups);
    ys[0] = xs[0], ys[1] = cout;
    for (int i = 0; i < nsp; i++) {
      if (o->output_padding[i] < 0 || (o->output_padding[i] >= o->stride[i] && o->output_padding[i] >= o->dilation[i]))
        return mt_fail(MT_EARG, "%s: output_padding (%lld) must be non-negative and smaller than stride or dilation",
                       op, (long long)o->output_padding[i]);
      ys[2 + i] = (xs[2 + i] - 1) * o->stride[i] - o->pad[i] - o->pad_hi[i] + o->dilation[i] * (w->shape[2 + i] - 1) +
                  o->output_padding[i] + 1;
      if (ys[2 + i] < 1 || xs[2 + i] < 1)
        return mt_fail(MT_ESHAPE, "%s: input %s gives an empty or negative output size %lld in spatial dim %d", op,
                       shp(x->shape, x->ndim, a), (long long)ys[2 + i], i + 1);
    }
    if (xs[1] != w->shape[0])
      return mt_fail(MT_ESHAPE, "%s: input %s has %lld channels, but weight %s expects %lld (in_channels)", op,
                     shp(x->shape, x->ndim, a), (long long)xs[1], shp(w->shape, w->ndim, b), (long long)w->shape[0]);
    if ((st = make_problem(op, ys, w->shape, nd, o, &p))) return st;
    for (int i = 0; i < nsp; i++)
      if (p.out[3 - nsp + i] != xs[2 + i])
        return mt_fail(MT_ESHAPE, "%s: input %s does not fit weight %s with these options", op,
                       shp(x->shape, x->ndim, a), shp(w->shape, w->ndim, b));
  }
  if (!transposed) {
    ys[0] = p.N, ys[1] = p.K;
    for (int i = 0; i < nsp; i++) ys[2 + i] = p.out[3 - nsp + i];
  }
  if (bias && (bias->ndim != 1 || bias->shape[0] != cout))
    return mt_fail(MT_ESHAPE, "%s: bias must have shape %lld (out_channels), got %s", op, (long long)cout,
                   shp(bias->shape, bias->ndim, a));
  mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL, *yb = NULL, *r = NULL, *xb = NULL;
  bool applied = act == MT_ACT_NONE;
  if ((st = prep(x, &xc)) || (st = prep(w, &wc)) || (bias && (st = prep(bias, &bc))) ||
      (st = as_batched(xc, unb, &xb)) || (st = result(ys, nd, unb, (mt_dtype)xc->dtype, has_zero(xs, nd), mt_tdevice(x), &y)) ||
      (st = as_batched(y, unb, &yb)))
    goto done;
  if (!has_zero(xs, nd) && !has_zero(ys, nd)) {
    st = run_kernel(transposed ? BWD_DATA : FWD, &p, xb, wc, yb, transposed ? NULL : bc, act, alpha, &applied);
    if (!st && transposed && bc) { /* y += bias per channel */
      int64_t bshape[5] = {cout, 1, 1, 1, 1};
      mt_tensor *bv = NULL;
      if (!(st = mt_view(bc, bshape, nd - 1, &bv))) st = mt_binary(MT_OP_add, yb, bv, &yb);
      mt_release(bv);
    }
  } else if (!has_zero(ys, nd) && bc) { /* nothing to sum: y = bias */
    int64_t bshape[5] = {cout, 1, 1, 1, 1};
    mt_tensor *bv = NULL;
    if (!(st = mt_view(bc, bshape, nd - 1, &bv))) st = mt_copy_(yb, bv);
    mt_release(bv);
  }
  if (!st && !(st = mt_to_dtype(y, (mt_dtype)x->dtype, false, &r)) && !applied) {
    mt_tensor *t = NULL;
    st = mt_activation(r, act, alpha, &t);
    mt_release(r);
    r = t;
  }
  if (!st) st = mt_deliver(op, r, out);
done:
  mt_release(xc), mt_release(wc), mt_release(bc), mt_release(y), mt_release(yb), mt_release(xb);
  return st;
}

mt_status mt_convolution(const mt_tensor *x, const mt_tensor *w, const mt_tensor *bias, const mt_conv_opts *o,
                         mt_tensor **out) {
  char op[40];
  return conv_impl(conv_name(w->ndim - 2, false, "", op, sizeof op), false, x, w, bias, o, MT_ACT_NONE, 0, out);
}

mt_status mt_convolution_act(const mt_tensor *x, const mt_tensor *w, const mt_tensor *bias, const mt_conv_opts *o,
                             mt_act act, double alpha, mt_tensor **out) {
  char op[40];
  return conv_impl(conv_name(w->ndim - 2, false, "", op, sizeof op), false, x, w, bias, o, act, alpha, out);
}

mt_status mt_conv_transpose(const mt_tensor *x, const mt_tensor *w, const mt_tensor *bias, const mt_conv_opts *o,
                            mt_tensor **out) {
  char op[40];
  return conv_impl(conv_name(w->ndim - 2, true, "", op, sizeof op), true, x, w, bias, o, MT_ACT_NONE, 0, out);
}

/* Checks that grad_out has the shape a convolution of input shape xs
 * (batched) with weight shape ws gives. */
static mt_status check_grad(const char *op, const mt_tensor *gy, const int64_t *gys, const int64_t *xs,
                            const int64_t *ws, int nd, const mt_conv_opts *o, mt_conv_problem *p) {
  char a[96], b[96];
  mt_status st = make_problem(op, xs, ws, nd, o, p);
  if (st) return st;
  int64_t want[5] = {p->N, p->K};
  for (int i = 0; i < nd - 2; i++) want[2 + i] = p->out[3 - (nd - 2) + i];
  for (int i = 0; i < nd; i++)
    if (gys[i] != want[i])
      return mt_fail(MT_ESHAPE, "%s: grad_output has shape %s, but the convolution's output has shape %s", op,
                     shp(gy->shape, gy->ndim, a), shp(want, nd, b));
  return MT_OK;
}

mt_status mt_conv_backward_input(const mt_tensor *grad_out, const mt_tensor *w, const int64_t *input_shape, int ndim,
                                 const mt_conv_opts *o, mt_tensor **grad_in) {
  char op[48], a[96];
  int nd = w->ndim;
  if (nd < 3 || nd > 5)
    return mt_fail(MT_ESHAPE, "conv_backward_input: weight must have 3 to 5 dimensions, got %s",
                   shp(w->shape, w->ndim, a));
  conv_name(nd - 2, false, "_backward_input", op, sizeof op);
  mt_status st = check_floats(op, grad_out, "grad_output", w, "weight");
  if (st) return st;
  int64_t xs[5], gys[5];
  bool unb, unb2;
  mt_conv_problem p;
  if ((st = batched(op, "input_shape", input_shape, ndim, nd, xs, &unb)) ||
      (st = batched(op, "grad_output", grad_out->shape, grad_out->ndim, nd, gys, &unb2)))
    return st;
  if (unb != unb2) return mt_fail(MT_ESHAPE, "%s: grad_output and input_shape must both be batched or unbatched", op);
  if ((st = check_grad(op, grad_out, gys, xs, w->shape, nd, o, &p))) return st;
  mt_tensor *gc = NULL, *wc = NULL, *gb = NULL, *y = NULL, *yb = NULL, *r = NULL;
  bool empty = has_zero(xs, nd) || has_zero(gys, nd);
  if ((st = prep(grad_out, &gc)) || (st = prep(w, &wc)) || (st = as_batched(gc, unb, &gb)) ||
      (st = result(xs, nd, unb, (mt_dtype)gc->dtype, empty, mt_tdevice(grad_out), &y)) || (st = as_batched(y, unb, &yb)))
    goto done;
  if (!empty) st = run_kernel(BWD_DATA, &p, gb, wc, yb, NULL, MT_ACT_NONE, 0, NULL);
  if (!st && !(st = mt_to_dtype(y, (mt_dtype)grad_out->dtype, false, &r))) st = mt_deliver(op, r, grad_in);
done:
  mt_release(gc), mt_release(wc), mt_release(gb), mt_release(y), mt_release(yb);
  return st;
}

mt_status mt_conv_backward_weight(const mt_tensor *grad_out, const mt_tensor *x, const int64_t *weight_shape, int ndim,
                                  const mt_conv_opts *o, mt_tensor **grad_weight, mt_tensor **grad_bias) {
  char op[48], a[96];
  int nd = ndim;
  if (nd < 3 || nd > 5)
    return mt_fail(MT_ESHAPE, "conv_backward_weight: weight shape must have 3 to 5 dimensions, got %s",
                   shp(weight_shape, ndim, a));
  conv_name(nd - 2, false, "_backward_weight", op, sizeof op);
  mt_status st = check_floats(op, grad_out, "grad_output", x, "input");
  if (st) return st;
  int64_t xs[5], gys[5];
  bool unb, unb2;
  mt_conv_problem p;
  if ((st = batched(op, "input", x->shape, x->ndim, nd, xs, &unb)) ||
      (st = batched(op, "grad_output", grad_out->shape, grad_out->ndim, nd, gys, &unb2)))
    return st;
  if (unb != unb2) return mt_fail(MT_ESHAPE, "%s: grad_output and input must both be batched or unbatched", op);
  if ((st = check_grad(op, grad_out, gys, xs, weight_shape, nd, o, &p))) return st;
  mt_tensor *gc = NULL, *xc = NULL, *gbt = NULL, *xb = NULL, *gw = NULL, *gbias = NULL, *r = NULL;
  bool empty = has_zero(xs, nd) || has_zero(gys, nd);
  if ((st = prep(grad_out, &gc)) || (st = prep(x, &xc)) || (st = as_batched(gc, unb, &gbt)) ||
      (st = as_batched(xc, unb, &xb)) ||
      (st = (empty ? mt_zeros : mt_empty)(weight_shape, nd, (mt_dtype)gc->dtype, mt_tdevice(x), &gw)) ||
      (grad_bias && (st = (empty ? mt_zeros : mt_empty)(&p.K, 1, (mt_dtype)gc->dtype, mt_tdevice(x), &gbias))))
    goto done;
  if (!empty) st = run_kernel(BWD_WEIGHTS, &p, gbt, xb, gw, gbias, MT_ACT_NONE, 0, NULL);
  if (!st && !(st = mt_to_dtype(gw, (mt_dtype)grad_out->dtype, false, &r))) st = mt_deliver(op, r, grad_weight);
  if (!st && grad_bias) {
    r = NULL;
    if (!(st = mt_to_dtype(gbias, (mt_dtype)grad_out->dtype, false, &r))) st = mt_deliver(op, r, grad_bias);
  }
done:
  mt_release(gc), mt_release(xc), mt_release(gbt), mt_release(xb), mt_release(gw), mt_release(gbias);
  return st;
}

const char *mt_conv_algorithm(const mt_tensor *x, const mt_tensor *w, const mt_conv_opts *o) {
  static const char *names[] = {"direct", "gemm", "winograd", "ref"};
  mt_conv_problem p;
  int64_t xs[5];
  bool unb;
  if (w->ndim < 3 || w->ndim > 5 || batched("convolution", "input", x->shape, x->ndim, w->ndim, xs, &unb) ||
      make_problem("convolution", xs, w->shape, w->ndim, o, &p))
    return NULL;
  if (x->dtype != MT_FLOAT32) return names[MT_CONV_REF];
  return names[mt_dnnl_conv_fwd_algo(&p)];
}
