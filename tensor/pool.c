/* pool.c -- pooling ops (nn.h): max, average and adaptive pools over 1 to 3
 * spatial dims and their backward ops. Checks and output sizes follow
 * PyTorch 1.13 (pooling_output_shape, pool2d_shape_check); the loops are in
 * cpu/pool_kernels.c (CUDA tensors: 2-D pools on cuDNN where cuda/cudnn_ops.c
 * takes them, else max pools in cuda/conv.c, average pools in cuda/pool.c). Inputs are
 * (N, C, *sp) or (C, *sp). */
#include <stdio.h>
#include <string.h>

#include "cpu/pool_kernels.h"
#include "cuda/mt_cuda.h"
#include "nn.h"
#include "reduce_util.h"

static char *shp(const int64_t *s, int nd, char *buf) { return mt_shape_str(s, nd, buf, 96); }

static const char *pool_name(const char *kind, int nsp, const char *suffix, char *buf, size_t n) {
  snprintf(buf, n, "%s%dd%s", kind, nsp, suffix);
  return buf;
}

/* Rank and size checks shared by every pool: x has nsp + 1 or nsp + 2 dims,
 * and no dim but the batch is empty. Fills planes and the 3-D input view. */
static mt_status check_input(const char *op, const int64_t *xs, int nd, int nsp, mt_pool_problem *p) {
  char a[96];
  if (nsp < 1 || nsp > 3) return mt_fail(MT_EARG, "%s: pools have 1 to 3 spatial dims, got %d", op, nsp);
  if (nd != nsp + 1 && nd != nsp + 2)
    return mt_fail(MT_ESHAPE, "%s: expected a %dD or %dD (batched) input, got %s", op, nsp + 1, nsp + 2,
                   shp(xs, nd, a));
  for (int i = nd == nsp + 2; i < nd; i++)
    if (xs[i] == 0)
      return mt_fail(MT_ESHAPE, "%s: input %s has an empty non-batch dimension", op, shp(xs, nd, a));
  memset(p, 0, sizeof *p);
  p->planes = 1;
  for (int i = 0; i < nd - nsp; i++) p->planes *= xs[i];
  for (int d = 0; d < 3; d++) p->in[d] = p->out[d] = p->k[d] = p->stride[d] = p->dil[d] = 1;
  for (int i = 0; i < nsp; i++) p->in[3 - nsp + i] = xs[nd - nsp + i];
  return MT_OK;
}

/* Kernel, stride, padding, dilation and output sizes of a plain pool. */
static mt_status plain_problem(const char *op, const int64_t *xs, int nd, const mt_pool_opts *o, bool avg,
                               mt_pool_problem *p, int64_t *ys) {
  char a[96], b[96];
  mt_status st = check_input(op, xs, nd, o->nsp, p);
  if (st) return st;
  int nsp = o->nsp, bad = -1;
  memcpy(ys, xs, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < nsp; i++) {
    int d = 3 - nsp + i;
    int64_t k = o->kernel[i], s = o->stride[i] ? o->stride[i] : k, pad = o->pad[i], dl = avg ? 1 : o->dilation[i];
    if (k < 1 || s < 1 || dl < 1)
      return mt_fail(MT_EARG, "%s: kernel_size, stride and dilation must be positive, got %lld, %lld, %lld", op,
                     (long long)k, (long long)s, (long long)dl);
    if (pad < 0 || pad > k / 2)
      return mt_fail(MT_EARG, "%s: padding must be between 0 and half the kernel size, got padding %lld for kernel %lld",
                     op, (long long)pad, (long long)k);
    int64_t in = p->in[d], num = in + 2 * pad - dl * (k - 1) - 1 + (o->ceil_mode ? s - 1 : 0);
    int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
    if (o->ceil_mode && (out - 1) * s >= in + pad) out--;
    if (out < 1) bad = i;
    p->k[d] = k, p->stride[d] = s, p->pad[d] = pad, p->dil[d] = dl, p->out[d] = out;
    ys[nd - nsp + i] = out;
  }
  if (bad >= 0)
    return mt_fail(MT_ESHAPE, "%s: input %s gives output size %s: too small (kernel %lld, dilation %lld, padding %lld)",
                   op, shp(xs, nd, a), shp(ys, nd, b), (long long)o->kernel[bad], (long long)(avg ? 1 : o->dilation[bad]),
                   (long long)o->pad[bad]);
  p->count_include_pad = o->count_include_pad;
  if (o->divisor_override < 0) return mt_fail(MT_EARG, "%s: divisor_override must be positive", op);
  p->divisor = o->divisor_override;
  return MT_OK;
}

static mt_status adaptive_problem(const char *op, const int64_t *xs, int nd, int nsp, const int64_t *size,
                                  mt_pool_problem *p, int64_t *ys) {
  mt_status st = check_input(op, xs, nd, nsp, p);
  if (st) return st;
  memcpy(ys, xs, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < nsp; i++) {
    if (size[i] < 0) return mt_fail(MT_EARG, "%s: output_size must be non-negative, got %lld", op, (long long)size[i]);
    p->out[3 - nsp + i] = ys[nd - nsp + i] = size[i];
    p->k[3 - nsp + i] = size[i] ? (p->in[3 - nsp + i] + size[i] - 1) / size[i] + 1 : 1; /* for work estimates */
  }
  p->adaptive = true;
  return MT_OK;
}

static mt_status check_float(const char *op, const mt_tensor *x) {
  if (!mt_is_floating((mt_dtype)x->dtype))
    return mt_fail(MT_EDTYPE, "%s: needs a floating tensor, got %s (convert with x:float())", op,
                   mt_dtype_name((mt_dtype)x->dtype));
  return MT_OK;
}

static mt_status prep(const mt_tensor *t, mt_tensor **out) {
  mt_tensor *u = NULL;
  mt_status st = mt_upcast_half(t, &u);
  if (!st) st = mt_contiguous(u, out);
  mt_release(u);
  return st;
}

/* Converts r (compute dtype) to dt and delivers it; consumes r. */
static mt_status finish(const char *op, mt_tensor *r, mt_dtype dt, mt_tensor **out) {
  mt_tensor *c = NULL;
  mt_status st = mt_to_dtype(r, dt, false, &c);
  mt_release(r);
  return st ? st : mt_deliver(op, c, out);
}

static int64_t numel(const int64_t *s, int nd) { return mt_checked_numel(s, nd); }

/* A CUDA pool on cuDNN (cuda/cudnn_ops.c: 2-D or 1-D, max without
 * indices, avg and its backward) in x's dtype, where it takes the problem:
 * out = the result of shape (ys, nd) from in; *done false otherwise. */
static mt_status cudnn_pool(const char *op, const mt_tensor *in, int nsp, const mt_pool_problem *p, bool avg, bool back,
                            const int64_t *ys, int nd, mt_tensor **out, bool *done) {
  *done = false;
  if (mt_tdevice(in).type != MT_CUDA || !mt_cudnn_pool_takes(p, avg, back, (mt_dtype)in->dtype)) return MT_OK;
  const int64_t *xs = back ? ys : in->shape; /* the input's shape: C is the dim before the spatial ones */
  mt_tensor *c = NULL, *r = NULL;
  mt_status st = mt_contiguous(in, &c);
  if (!st) st = mt_empty(ys, nd, (mt_dtype)in->dtype, mt_tdevice(in), &r);
  if (!st) st = mt_cudnn_pool(p, avg, back, xs[nd - nsp - 1], c, r, done);
  mt_release(c);
  if (!st && *done) return mt_deliver(op, r, out);
  mt_release(r);
  return st;
}

/* Forward of max (kind 0) or avg (kind 1) pools given a problem. */
static mt_status pool_fwd(const char *op, const mt_tensor *x, int nsp, const mt_pool_problem *p, const int64_t *ys,
                          bool avg, mt_tensor **out, mt_tensor **indices) {
  mt_tensor *xc = NULL, *y = NULL, *ix = NULL;
  mt_status st;
  mt_device dev = mt_tdevice(x);
  bool done = false;
  if (!indices && numel(ys, x->ndim) > 0 &&
      ((st = cudnn_pool(op, x, nsp, p, avg, false, ys, x->ndim, out, &done)) || done))
    return st;
  if ((st = prep(x, &xc)) || (st = mt_empty(ys, x->ndim, (mt_dtype)xc->dtype, dev, &y)) ||
      (indices && (st = mt_empty(ys, x->ndim, MT_INT64, dev, &ix))))
    goto fail;
  if (numel(ys, x->ndim) > 0) {
    mt_dtype dt = (mt_dtype)xc->dtype;
    st = dev.type == MT_CUDA ? (avg ? mt_cuda_avg_pool(p, false, xc, y) : mt_cuda_max_pool(p, xc, y, ix))
         : avg               ? mt_cpu_avg_pool(dt, p, mt_data(xc), mt_data(y))
                             : mt_cpu_max_pool(dt, p, mt_data(xc), mt_data(y), ix ? (int64_t *)mt_data(ix) : NULL);
    if (st) goto fail;
  }
  mt_release(xc);
  xc = NULL;
  if ((st = finish(op, y, (mt_dtype)x->dtype, out))) {
    mt_release(ix);
    return st;
  }
  if (indices) st = mt_deliver(op, ix, indices);
  return st;
fail:
  mt_release(xc), mt_release(y), mt_release(ix);
  return st;
}

mt_status mt_max_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out, mt_tensor **indices) {
  char op[32];
  pool_name("max_pool", o->nsp, "", op, sizeof op);
  mt_pool_problem p;
  int64_t ys[5];
  mt_status st = check_float(op, x);
  if (!st) st = plain_problem(op, x->shape, x->ndim, o, false, &p, ys);
  return st ? st : pool_fwd(op, x, o->nsp, &p, ys, false, out, indices);
}

mt_status mt_avg_pool(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out) {
  char op[32];
  pool_name("avg_pool", o->nsp, "", op, sizeof op);
  mt_pool_problem p;
  int64_t ys[5];
  mt_status st = check_float(op, x);
  if (!st) st = plain_problem(op, x->shape, x->ndim, o, true, &p, ys);
  return st ? st : pool_fwd(op, x, o->nsp, &p, ys, true, out, NULL);
}

mt_status mt_adaptive_avg_pool(const mt_tensor *x, int nsp, const int64_t *output_size, mt_tensor **out) {
  char op[40];
  pool_name("adaptive_avg_pool", nsp, "", op, sizeof op);
  mt_pool_problem p;
  int64_t ys[5];
  mt_status st = check_float(op, x);
  if (!st) st = adaptive_problem(op, x->shape, x->ndim, nsp, output_size, &p, ys);
  return st ? st : pool_fwd(op, x, nsp, &p, ys, true, out, NULL);
}

mt_status mt_adaptive_max_pool(const mt_tensor *x, int nsp, const int64_t *output_size, mt_tensor **out,
                               mt_tensor **indices) {
  char op[40];
  pool_name("adaptive_max_pool", nsp, "", op, sizeof op);
  mt_pool_problem p;
  int64_t ys[5];
  mt_status st = check_float(op, x);
  if (!st) st = adaptive_problem(op, x->shape, x->ndim, nsp, output_size, &p, ys);
  return st ? st : pool_fwd(op, x, nsp, &p, ys, false, out, indices);
}

/* grad_out must have shape ys (what the forward gave for input shape xs). */
static mt_status check_grad_shape(const char *op, const mt_tensor *g, const int64_t *ys, int nd) {
  char a[96], b[96];
  bool same = g->ndim == nd;
  for (int i = 0; same && i < nd; i++) same = g->shape[i] == ys[i];
  if (!same)
    return mt_fail(MT_ESHAPE, "%s: grad_output has shape %s, but the pool's output has shape %s", op,
                   shp(g->shape, g->ndim, a), shp(ys, nd, b));
  return MT_OK;
}

static mt_status avg_bwd(const char *op, const mt_tensor *g, const int64_t *xs, int nd, int nsp,
                         const mt_pool_problem *p, mt_tensor **grad_in) {
  mt_tensor *gc = NULL, *gx = NULL;
  mt_status st;
  bool gpu = mt_tdevice(g).type == MT_CUDA, done = false;
  if (numel(xs, nd) > 0 && mt_numel(g) > 0 &&
      ((st = cudnn_pool(op, g, nsp, p, true, true, xs, nd, grad_in, &done)) || done))
    return st;
  if ((st = prep(g, &gc)) || (st = mt_zeros(xs, nd, (mt_dtype)gc->dtype, mt_tdevice(g), &gx))) goto fail;
  if (numel(xs, nd) > 0 && (st = gpu ? mt_cuda_avg_pool(p, true, gc, gx)
                                     : mt_cpu_avg_pool_backward((mt_dtype)gc->dtype, p, mt_data(gc), mt_data(gx))))
    goto fail;
  mt_release(gc);
  return finish(op, gx, (mt_dtype)g->dtype, grad_in);
fail:
  mt_release(gc), mt_release(gx);
  return st;
}

mt_status mt_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim,
                               const mt_pool_opts *o, mt_tensor **grad_in) {
  char op[40];
  pool_name("avg_pool", o->nsp, "_backward", op, sizeof op);
  mt_pool_problem p;
  int64_t ys[5];
  mt_status st = check_float(op, grad_out);
  if (!st) st = plain_problem(op, input_shape, ndim, o, true, &p, ys);
  if (!st) st = check_grad_shape(op, grad_out, ys, ndim);
  return st ? st : avg_bwd(op, grad_out, input_shape, ndim, o->nsp, &p, grad_in);
}

mt_status mt_adaptive_avg_pool_backward(const mt_tensor *grad_out, const int64_t *input_shape, int ndim, int nsp,
                                        mt_tensor **grad_in) {
  char op[48];
  pool_name("adaptive_avg_pool", nsp, "_backward", op, sizeof op);
  mt_pool_problem p;
  int64_t ys[5], size[3];
  mt_status st = check_float(op, grad_out);
  if (!st && grad_out->ndim != ndim) st = mt_fail(MT_ESHAPE, "%s: grad_output and input ranks differ", op);
  if (st) return st;
  for (int i = 0; i < nsp && i < ndim; i++) size[i] = grad_out->shape[ndim - nsp + i];
  if (!(st = adaptive_problem(op, input_shape, ndim, nsp, size, &p, ys))) st = check_grad_shape(op, grad_out, ys, ndim);
  return st ? st : avg_bwd(op, grad_out, input_shape, ndim, nsp, &p, grad_in);
}

mt_status mt_max_pool_backward(const mt_tensor *grad_out, const mt_tensor *indices, const int64_t *input_shape,
                               int ndim, int nsp, mt_tensor **grad_in) {
  char op[40], a[96], b[96], c[96];
  pool_name("max_pool", nsp, "_backward", op, sizeof op);
  mt_pool_problem p;
  mt_status st = check_float(op, grad_out);
  if (st) return st;
  if (indices->dtype != MT_INT64)
    return mt_fail(MT_EDTYPE, "%s: indices must be int64, got %s", op, mt_dtype_name((mt_dtype)indices->dtype));
  if ((st = check_input(op, input_shape, ndim, nsp, &p))) return st;
  bool same = grad_out->ndim == ndim && indices->ndim == ndim;
  for (int i = 0; same && i < ndim; i++)
    same = grad_out->shape[i] == indices->shape[i] && (i >= ndim - nsp || grad_out->shape[i] == input_shape[i]);
  if (!same)
    return mt_fail(MT_ESHAPE, "%s: grad_output %s, indices %s and input %s do not fit together", op,
                   shp(grad_out->shape, grad_out->ndim, a), shp(indices->shape, indices->ndim, b),
                   shp(input_shape, ndim, c));
  int64_t out_plane = 1, in_plane = 1;
  for (int i = ndim - nsp; i < ndim; i++) out_plane *= grad_out->shape[i], in_plane *= input_shape[i];
  mt_tensor *gc = NULL, *ic = NULL, *gx = NULL;
  if ((st = prep(grad_out, &gc)) || (st = mt_contiguous(indices, &ic)) ||
      (st = mt_empty(input_shape, ndim, (mt_dtype)gc->dtype, mt_tdevice(grad_out), &gx)))
    goto fail;
  if (mt_tdevice(grad_out).type == MT_CUDA) {
    if ((st = mt_cuda_max_pool_backward(p.planes, in_plane, out_plane, gc, ic, gx))) goto fail;
  } else if (p.planes * out_plane == 0) {
    st = mt_fill_(gx, mt_sint(0)); /* nothing to scatter */
  }
  if (!st && mt_tdevice(grad_out).type != MT_CUDA && p.planes * out_plane > 0 &&
      (st = mt_cpu_max_pool_backward((mt_dtype)gc->dtype, p.planes, in_plane, out_plane, mt_data(gc),
                                     (const int64_t *)mt_data(ic), mt_data(gx))))
    goto fail;
  mt_release(gc), mt_release(ic);
  return finish(op, gx, (mt_dtype)grad_out->dtype, grad_in);
fail:
  mt_release(gc), mt_release(ic), mt_release(gx);
  return st;
}

/* ---- the JIT's compact max pool: window positions instead of indices ---- */

/* The problem of a max pool whose windows tile its planes, with ys its
 * output shape; MT_EARG (message set) for any other pool. */
static mt_status tiled_problem(const char *op, const int64_t *xs, int nd, const mt_pool_opts *o, mt_pool_problem *p,
                               int64_t *ys) {
  if (o->nsp != 2 || o->ceil_mode) return mt_fail(MT_EARG, "%s: needs a 2-D pool without ceil_mode", op);
  mt_status st = plain_problem(op, xs, nd, o, false, p, ys);
  if (!st && !mt_cpu_max_pool_tiles(p))
    st = mt_fail(MT_EARG, "%s: the windows must tile the plane (stride == kernel, no padding or dilation)", op);
  return st;
}

mt_status mt_max_pool_local(const mt_tensor *x, const mt_pool_opts *o, mt_tensor **out, mt_tensor **loc) {
  const char *op = "max_pool_local";
  mt_pool_problem p;
  int64_t ys[5];
  mt_tensor *xc = NULL, *y = NULL, *lc = NULL;
  mt_status st = check_float(op, x);
  if (!st && x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    st = mt_fail(MT_EDTYPE, "%s: float32 or float64 only", op);
  if (!st) st = tiled_problem(op, x->shape, x->ndim, o, &p, ys);
  if (!st) st = prep(x, &xc);
  if (!st) st = mt_empty(ys, x->ndim, (mt_dtype)xc->dtype, mt_cpu(), &y);
  if (!st) st = mt_empty(ys, x->ndim, MT_UINT8, mt_cpu(), &lc);
  if (!st && numel(ys, x->ndim) > 0)
    st = mt_cpu_max_pool_local((mt_dtype)xc->dtype, &p, mt_data(xc), mt_data(y), (uint8_t *)mt_data(lc));
  mt_release(xc);
  if (!st) st = mt_deliver(op, y, out), y = NULL;
  if (!st) st = mt_deliver(op, lc, loc), lc = NULL;
  mt_release(y), mt_release(lc);
  return st;
}

mt_status mt_max_pool_local_backward(const mt_tensor *grad_out, const mt_tensor *loc, const int64_t *input_shape,
                                     int ndim, const mt_pool_opts *o, mt_tensor **grad_in) {
  const char *op = "max_pool_local_backward";
  char a[96], b[96];
  mt_pool_problem p;
  int64_t ys[5];
  mt_status st = check_float(op, grad_out);
  if (!st) st = tiled_problem(op, input_shape, ndim, o, &p, ys);
  if (st) return st;
  bool fits = loc->dtype == MT_UINT8 && loc->ndim == ndim && grad_out->ndim == ndim &&
         (grad_out->dtype == MT_FLOAT32 || grad_out->dtype == MT_FLOAT64);
  for (int i = 0; fits && i < ndim; i++) fits = grad_out->shape[i] == ys[i] && loc->shape[i] == ys[i];
  if (!fits)
    return mt_fail(MT_ESHAPE, "%s: grad_output %s (%s) and positions %s do not fit an input of shape %s", op,
                   shp(grad_out->shape, grad_out->ndim, a), mt_dtype_name((mt_dtype)grad_out->dtype),
                   shp(loc->shape, loc->ndim, b), mt_shape_str(input_shape, ndim, (char[96]){0}, 96));
  mt_tensor *gc = NULL, *lc = NULL, *gx = NULL;
  if (!(st = mt_contiguous(grad_out, &gc)) && !(st = mt_contiguous(loc, &lc)))
    st = mt_empty(input_shape, ndim, (mt_dtype)gc->dtype, mt_cpu(), &gx);
  if (!st && numel(input_shape, ndim) > 0)
    st = mt_cpu_max_pool_local_backward((mt_dtype)gc->dtype, &p, mt_data(gc), (const uint8_t *)mt_data(lc), mt_data(gx));
  mt_release(gc), mt_release(lc);
  if (!st) return mt_deliver(op, gx, grad_in);
  mt_release(gx);
  return st;
}
