/* norm.c -- batch, layer and group normalization ops (nn.h), forward and
 * backward: argument checks (messages name the op and the shapes), compute
 * dtypes, running-statistics updates; loops in cpu/norm_kernels.c.
 * Statistics are kept in float64 buffers and handed out in the compute
 * dtype (float32 for float32/half inputs, float64 for float64). CUDA
 * tensors run the same steps with the loops of cuda/norm.c on the device,
 * or batch norm on cuDNN where cuda/cudnn_ops.c takes it, or layer norm
 * (and group norm of (N, C) inputs in one group) on cuda/layernorm.c's
 * fast kernels where they take it. */
#include <math.h>
#include <string.h>

#include "cpu/norm_kernels.h"
#include "cuda/mt_cuda.h"
#include "nn.h"
#include "reduce_util.h"

static char *shp(const int64_t *s, int nd, char *buf) { return mt_shape_str(s, nd, buf, 96); }

static mt_status check_float(const char *op, const mt_tensor *x, const char *what) {
  if (!mt_is_floating((mt_dtype)x->dtype))
    return mt_fail(MT_EDTYPE, "%s: %s must be a floating tensor, got %s", op, what, mt_dtype_name((mt_dtype)x->dtype));
  return MT_OK;
}

/* The compute dtype of x: float64 stays, everything else runs in float32. */
static mt_dtype compute_dtype(const mt_tensor *x) { return x->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32; }

/* Contiguous copy of t in dtype cd (a new reference; NULL stays NULL). */
static mt_status as_compute(const mt_tensor *t, mt_dtype cd, mt_tensor **out) {
  *out = NULL;
  if (!t) return MT_OK;
  mt_tensor *c = NULL;
  mt_status st = mt_to_dtype(t, cd, false, &c);
  if (!st) st = mt_contiguous(c, out);
  mt_release(c);
  return st;
}

/* A per-channel parameter or statistic: NULL, or count elements in one dim
 * (any rank when shape is NULL, else exactly that shape). */
static mt_status check_param(const char *op, const mt_tensor *t, const char *what, int64_t count,
                             const int64_t *shape, int nd) {
  char a[96], b[96];
  if (!t) return MT_OK;
  mt_status st = check_float(op, t, what);
  if (st) return st;
  bool ok = mt_numel(t) == count && (shape ? t->ndim == nd : t->ndim == 1);
  for (int i = 0; ok && shape && i < nd; i++) ok = t->shape[i] == shape[i];
  if (!ok) {
    if (shape) return mt_fail(MT_ESHAPE, "%s: %s must have shape %s, got %s", op, what, shp(shape, nd, a), shp(t->shape, t->ndim, b));
    return mt_fail(MT_ESHAPE, "%s: %s must have %lld elements (one per channel), got shape %s", op, what,
                   (long long)count, shp(t->shape, t->ndim, b));
  }
  return MT_OK;
}

static mt_status dbl(int64_t n, mt_device dev, mt_tensor **t) { return mt_empty(&n, 1, MT_FLOAT64, dev, t); }
static bool on_cuda(const mt_tensor *x) { return mt_tdevice(x).type == MT_CUDA; }
static double *D(mt_tensor *t) { return t ? (double *)mt_data(t) : NULL; }

/* Hands out a float64 statistic as dtype dt with shape (shape, nd); consumes s. */
static mt_status hand_out(const char *op, mt_tensor *s, mt_dtype dt, const int64_t *shape, int nd, mt_tensor **out) {
  mt_tensor *v = NULL, *c = NULL;
  mt_status st = mt_view(s, shape, nd, &v);
  if (!st) st = mt_to_dtype(v, dt, true, &c);
  mt_release(v);
  mt_release(s);
  return st ? st : mt_deliver(op, c, out);
}

/* The CPU loops with the CUDA ones' signature (dev unused), so each op
 * picks its loops by device in one expression. */
static mt_status cpu_bn_fwd(int dev, mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *x, const void *w,
                            const void *b, bool stats, double eps, double *mean, double *var, double *inv, void *y) {
  (void)dev;
  return mt_cpu_bn_fwd(dt, N, C, S, x, w, b, stats, eps, mean, var, inv, y);
}
static mt_status cpu_bn_bwd(int dev, mt_dtype dt, int64_t N, int64_t C, int64_t S, const void *gy, const void *x,
                            const void *w, const double *mean, const double *inv, bool training, void *gx, double *gw,
                            double *gb) {
  (void)dev;
  return mt_cpu_bn_bwd(dt, N, C, S, gy, x, w, mean, inv, training, gx, gw, gb);
}
static mt_status cpu_rows_fwd(int dev, mt_dtype dt, const mt_rows_problem *p, const void *x, const void *w,
                              const void *b, double eps, double *mean, double *rstd, void *y) {
  (void)dev;
  return mt_cpu_rows_fwd(dt, p, x, w, b, eps, mean, rstd, y);
}
static mt_status cpu_rows_bwd(int dev, mt_dtype dt, const mt_rows_problem *p, const void *gy, const void *x,
                              const void *w, const double *mean, const double *rstd, void *gx, double *gw, double *gb) {
  (void)dev;
  return mt_cpu_rows_bwd(dt, p, gy, x, w, mean, rstd, gx, gw, gb);
}

/* ---- batch norm ---- */

mt_status mt_batch_norm(const mt_tensor *x, const mt_tensor *weight, const mt_tensor *bias, mt_tensor *running_mean,
                        mt_tensor *running_var, bool training, double momentum, double eps, mt_tensor **out,
                        mt_tensor **save_mean, mt_tensor **save_invstd) {
  const char *op = "batch_norm";
  char a[96];
  mt_status st = check_float(op, x, "input");
  if (st) return st;
  if (x->ndim < 2)
    return mt_fail(MT_ESHAPE, "%s: expected an input of at least 2 dimensions (N, C, ...), got %s", op,
                   shp(x->shape, x->ndim, a));
  int64_t N = x->shape[0], C = x->shape[1], S = 1;
  for (int i = 2; i < x->ndim; i++) S *= x->shape[i];
  if ((st = check_param(op, weight, "weight", C, NULL, 0)) || (st = check_param(op, bias, "bias", C, NULL, 0)) ||
      (st = check_param(op, running_mean, "running_mean", C, NULL, 0)) ||
      (st = check_param(op, running_var, "running_var", C, NULL, 0)))
    return st;
  if (!training && (!running_mean || !running_var))
    return mt_fail(MT_EARG, "%s: running_mean and running_var are needed when training is false", op);
  if (training && N * S <= 1)
    return mt_fail(MT_ESHAPE, "%s: expected more than 1 value per channel when training, got input of shape %s", op,
                   shp(x->shape, x->ndim, a));
  if (eps < 0 || momentum < 0) return mt_fail(MT_EARG, "%s: eps and momentum must be non-negative", op);
  mt_dtype cd = compute_dtype(x);
  mt_device dev = mt_tdevice(x);
  bool gpu = on_cuda(x), done = false;
  if (gpu && ((st = mt_cudnn_batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps, out,
                                        save_mean, save_invstd, &done)) ||
              done))
    return st;
  mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL, *mean = NULL, *var = NULL, *inv = NULL, *tmp = NULL;
  if ((st = as_compute(x, cd, &xc)) || (st = as_compute(weight, cd, &wc)) || (st = as_compute(bias, cd, &bc)) ||
      (st = mt_empty(x->shape, x->ndim, cd, dev, &y)) || (st = dbl(C, dev, &mean)) || (st = dbl(C, dev, &var)) ||
      (st = dbl(C, dev, &inv)))
    goto done;
  if (!training) { /* the running statistics normalize */
    if ((st = as_compute(running_mean, MT_FLOAT64, &tmp)) || (st = mt_copy_(mean, tmp))) goto done;
    mt_release(tmp), tmp = NULL;
    if ((st = as_compute(running_var, MT_FLOAT64, &tmp))) goto done;
    if (gpu && (st = mt_cuda_bn_invstd(dev.index, C, D(tmp), eps, D(inv)))) goto done;
    for (int64_t c = 0; !gpu && c < C; c++) D(inv)[c] = 1.0 / sqrt(D(tmp)[c] + eps);
    mt_release(tmp), tmp = NULL;
  }
  if (N * C * S > 0 || training)
    st = (gpu ? mt_cuda_bn_fwd : cpu_bn_fwd)(dev.index, cd, N, C, S, mt_data(xc), wc ? mt_data(wc) : NULL,
                                            bc ? mt_data(bc) : NULL, training, eps, D(mean), D(var), D(inv), mt_data(y));
  if (st) goto done;
  if (training && (running_mean || running_var)) { /* running = (1 - m) running + m stat */
    double cnt = (double)(N * S);
    for (int k = 0; k < 2 && !st; k++) {
      mt_tensor *run = k ? running_var : running_mean;
      if (!run) continue;
      if ((st = as_compute(run, MT_FLOAT64, &tmp))) break;
      double *r = D(tmp);
      if (gpu && (st = mt_cuda_bn_running(dev.index, C, r, D(k ? var : mean), momentum, k, cnt))) break;
      for (int64_t c = 0; !gpu && c < C; c++)
        r[c] = (1 - momentum) * r[c] + momentum * (k ? D(var)[c] * cnt / (cnt - 1) : D(mean)[c]);
      mt_tensor *rv = NULL;
      if (!(st = mt_view(tmp, run->shape, run->ndim, &rv))) st = mt_copy_(run, rv);
      mt_release(rv);
      mt_release(tmp), tmp = NULL;
    }
    if (st) goto done;
  }
  mt_tensor *r = NULL;
  if ((st = mt_to_dtype(y, (mt_dtype)x->dtype, false, &r)) || (st = mt_deliver(op, r, out))) goto done;
  if (save_mean) st = hand_out(op, mt_retain(mean), cd, &C, 1, save_mean);
  if (!st && save_invstd) st = hand_out(op, mt_retain(inv), cd, &C, 1, save_invstd);
done:
  mt_release(xc), mt_release(wc), mt_release(bc), mt_release(y), mt_release(mean), mt_release(var), mt_release(inv);
  mt_release(tmp);
  return st;
}

/* Checks grad_out against x's shape. */
static mt_status check_same(const char *op, const mt_tensor *g, const mt_tensor *x) {
  char a[96], b[96];
  bool same = g->ndim == x->ndim;
  for (int i = 0; same && i < x->ndim; i++) same = g->shape[i] == x->shape[i];
  if (!same)
    return mt_fail(MT_ESHAPE, "%s: grad_output has shape %s but input has shape %s", op, shp(g->shape, g->ndim, a),
                   shp(x->shape, x->ndim, b));
  return check_float(op, g, "grad_output");
}

/* Delivers the float64 parameter gradient g (count) as dtype dt with the
 * parameter's shape (or 1-D). */
static mt_status param_grad(const char *op, mt_tensor *g, const mt_tensor *like, mt_dtype dt, mt_tensor **out) {
  if (!out) return mt_release(g), MT_OK;
  int64_t n = mt_numel(g);
  return hand_out(op, g, like ? (mt_dtype)like->dtype : dt, like ? like->shape : &n, like ? like->ndim : 1, out);
}

mt_status mt_batch_norm_backward(const mt_tensor *grad_out, const mt_tensor *x, const mt_tensor *weight,
                                 const mt_tensor *save_mean, const mt_tensor *save_invstd, bool training,
                                 mt_tensor **grad_in, mt_tensor **grad_weight, mt_tensor **grad_bias) {
  const char *op = "batch_norm_backward";
  char a[96];
  mt_status st = check_float(op, x, "input");
  if (st) return st;
  if (x->ndim < 2)
    return mt_fail(MT_ESHAPE, "%s: expected an input of at least 2 dimensions (N, C, ...), got %s", op,
                   shp(x->shape, x->ndim, a));
  int64_t N = x->shape[0], C = x->shape[1], S = 1;
  for (int i = 2; i < x->ndim; i++) S *= x->shape[i];
  if ((st = check_same(op, grad_out, x)) || (st = check_param(op, weight, "weight", C, NULL, 0)) ||
      (st = check_param(op, save_mean, "save_mean", C, NULL, 0)) ||
      (st = check_param(op, save_invstd, "save_invstd", C, NULL, 0)))
    return st;
  if (!save_mean || !save_invstd) return mt_fail(MT_EARG, "%s: save_mean and save_invstd are required", op);
  bool done = false;
  if (training && on_cuda(x) &&
      ((st = mt_cudnn_batch_norm_backward(grad_out, x, weight, save_mean, save_invstd, grad_in, grad_weight, grad_bias,
                                          &done)) ||
       done))
    return st;
  mt_dtype cd = compute_dtype(x);
  mt_device dev = mt_tdevice(x);
  mt_tensor *xc = NULL, *gc = NULL, *wc = NULL, *mc = NULL, *ic = NULL, *gx = NULL, *gw = NULL, *gb = NULL, *r = NULL;
  if ((st = as_compute(x, cd, &xc)) || (st = as_compute(grad_out, cd, &gc)) || (st = as_compute(weight, cd, &wc)) ||
      (st = as_compute(save_mean, MT_FLOAT64, &mc)) || (st = as_compute(save_invstd, MT_FLOAT64, &ic)) ||
      (grad_in && (st = mt_empty(x->shape, x->ndim, cd, dev, &gx))) || (grad_weight && (st = dbl(C, dev, &gw))) ||
      (grad_bias && (st = dbl(C, dev, &gb))))
    goto done;
  if ((st = (on_cuda(x) ? mt_cuda_bn_bwd : cpu_bn_bwd)(dev.index, cd, N, C, S, mt_data(gc), mt_data(xc),
                                                      wc ? mt_data(wc) : NULL, D(mc), D(ic), training,
                                                      gx ? mt_data(gx) : NULL, D(gw), D(gb))))
    goto done;
  if (grad_in && ((st = mt_to_dtype(gx, (mt_dtype)x->dtype, false, &r)) || (st = mt_deliver(op, r, grad_in)))) goto done;
  st = param_grad(op, gw, weight, (mt_dtype)x->dtype, grad_weight);
  gw = NULL;
  if (!st) st = param_grad(op, gb, weight, (mt_dtype)x->dtype, grad_bias);
  gb = NULL;
done:
  mt_release(xc), mt_release(gc), mt_release(wc), mt_release(mc), mt_release(ic), mt_release(gx);
  mt_release(gw), mt_release(gb);
  return st;
}

/* ---- layer and group norm: statistics per row ---- */

/* Forward shared by layer and group norm. sshape: shape of mean/rstd. */
static mt_status rows_forward(const char *op, const mt_tensor *x, const mt_rows_problem *p, const mt_tensor *weight,
                              const mt_tensor *bias, double eps, const int64_t *sshape, int snd, mt_tensor **out,
                              mt_tensor **mean, mt_tensor **rstd) {
  mt_dtype cd = compute_dtype(x);
  mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL, *m = NULL, *rs = NULL, *r = NULL;
  mt_status st;
  if (eps < 0) return mt_fail(MT_EARG, "%s: eps must be non-negative", op);
  bool done = false;
  if (on_cuda(x) && p->G == 1 && p->S == 1 && /* parameters per element of a row: the fast kernels */
      ((st = mt_cuda_layer_norm(op, x, p->R, p->L, weight, bias, eps, sshape, snd, out, mean, rstd, &done)) || done))
    return st;
  if ((st = as_compute(x, cd, &xc)) || (st = as_compute(weight, cd, &wc)) || (st = as_compute(bias, cd, &bc)) ||
      (st = mt_empty(x->shape, x->ndim, cd, mt_tdevice(x), &y)) || (st = dbl(p->R, mt_tdevice(x), &m)) ||
      (st = dbl(p->R, mt_tdevice(x), &rs)))
    goto done;
  if (p->R * p->L > 0 &&
      (st = (on_cuda(x) ? mt_cuda_rows_fwd : cpu_rows_fwd)(mt_tdevice(x).index, cd, p, mt_data(xc),
                                                          wc ? mt_data(wc) : NULL, bc ? mt_data(bc) : NULL, eps, D(m),
                                                          D(rs), mt_data(y))))
    goto done;
  if (p->L == 0 && ((st = mt_fill_(m, mt_sfloat(NAN))) || (st = mt_fill_(rs, mt_sfloat(NAN))))) goto done;
  if ((st = mt_to_dtype(y, (mt_dtype)x->dtype, false, &r)) || (st = mt_deliver(op, r, out))) goto done;
  if (mean) st = hand_out(op, mt_retain(m), cd, sshape, snd, mean);
  if (!st && rstd) st = hand_out(op, mt_retain(rs), cd, sshape, snd, rstd);
done:
  mt_release(xc), mt_release(wc), mt_release(bc), mt_release(y), mt_release(m), mt_release(rs);
  return st;
}

static mt_status rows_backward(const char *op, const mt_tensor *g, const mt_tensor *x, const mt_rows_problem *p,
                               const mt_tensor *mean, const mt_tensor *rstd, const mt_tensor *weight,
                               mt_tensor **grad_in, mt_tensor **grad_weight, mt_tensor **grad_bias) {
  char a[96];
  mt_status st = check_same(op, g, x);
  if (st) return st;
  if (!mean || !rstd || mt_numel(mean) != p->R || mt_numel(rstd) != p->R)
    return mt_fail(MT_ESHAPE, "%s: mean and rstd must have %lld elements, got %s", op, (long long)p->R,
                   mean ? shp(mean->shape, mean->ndim, a) : "none");
  bool done = false;
  if (on_cuda(x) && p->G == 1 && p->S == 1 &&
      ((st = mt_cuda_layer_norm_backward(op, g, x, p->R, p->L, mean, rstd, weight, grad_in, grad_weight, grad_bias,
                                         &done)) ||
       done))
    return st;
  mt_dtype cd = compute_dtype(x);
  int64_t P = p->G * p->Cg;
  mt_tensor *xc = NULL, *gc = NULL, *wc = NULL, *mc = NULL, *rc = NULL, *gx = NULL, *gw = NULL, *gb = NULL, *r = NULL;
  if ((st = as_compute(x, cd, &xc)) || (st = as_compute(g, cd, &gc)) || (st = as_compute(weight, cd, &wc)) ||
      (st = as_compute(mean, MT_FLOAT64, &mc)) || (st = as_compute(rstd, MT_FLOAT64, &rc)) ||
      (grad_in && (st = mt_empty(x->shape, x->ndim, cd, mt_tdevice(x), &gx))) ||
      (grad_weight && (st = dbl(P, mt_tdevice(x), &gw))) || (grad_bias && (st = dbl(P, mt_tdevice(x), &gb))))
    goto done;
  if ((gw && (st = mt_fill_(gw, mt_sint(0)))) || (gb && (st = mt_fill_(gb, mt_sint(0))))) goto done;
  if (p->R * p->L > 0 &&
      (st = (on_cuda(x) ? mt_cuda_rows_bwd : cpu_rows_bwd)(mt_tdevice(x).index, cd, p, mt_data(gc), mt_data(xc),
                                                          wc ? mt_data(wc) : NULL, D(mc), D(rc),
                                                          gx ? mt_data(gx) : NULL, D(gw), D(gb))))
    goto done;
  if (grad_in && ((st = mt_to_dtype(gx, (mt_dtype)x->dtype, false, &r)) || (st = mt_deliver(op, r, grad_in)))) goto done;
  st = param_grad(op, gw, weight, (mt_dtype)x->dtype, grad_weight);
  gw = NULL;
  if (!st) st = param_grad(op, gb, weight, (mt_dtype)x->dtype, grad_bias);
  gb = NULL;
done:
  mt_release(xc), mt_release(gc), mt_release(wc), mt_release(mc), mt_release(rc), mt_release(gx);
  mt_release(gw), mt_release(gb);
  return st;
}

/* Layer norm's problem and the shape of its statistics. */
static mt_status layer_setup(const char *op, const mt_tensor *x, int nnorm, const mt_tensor *w, const mt_tensor *b,
                             mt_rows_problem *p, int64_t *sshape) {
  char a[96];
  mt_status st = check_float(op, x, "input");
  if (st) return st;
  if (nnorm < 1 || nnorm > x->ndim)
    return mt_fail(MT_ESHAPE, "%s: normalized_shape must name 1 to %d trailing dims of input %s, got %d", op, x->ndim,
                   shp(x->shape, x->ndim, a), nnorm);
  int lead = x->ndim - nnorm;
  p->R = 1, p->L = 1, p->G = 1, p->S = 1;
  for (int i = 0; i < x->ndim; i++) {
    if (i < lead) p->R *= x->shape[i], sshape[i] = x->shape[i];
    else p->L *= x->shape[i], sshape[i] = 1;
  }
  p->Cg = p->L;
  if ((st = check_param(op, w, "weight", p->L, x->shape + lead, nnorm)) ||
      (st = check_param(op, b, "bias", p->L, x->shape + lead, nnorm)))
    return st;
  return MT_OK;
}

mt_status mt_layer_norm(const mt_tensor *x, int nnorm, const mt_tensor *weight, const mt_tensor *bias, double eps,
                        mt_tensor **out, mt_tensor **mean, mt_tensor **rstd) {
  mt_rows_problem p;
  int64_t ss[MT_MAXDIM];
  mt_status st = layer_setup("layer_norm", x, nnorm, weight, bias, &p, ss);
  return st ? st : rows_forward("layer_norm", x, &p, weight, bias, eps, ss, x->ndim, out, mean, rstd);
}

mt_status mt_layer_norm_backward(const mt_tensor *grad_out, const mt_tensor *x, int nnorm, const mt_tensor *mean,
                                 const mt_tensor *rstd, const mt_tensor *weight, mt_tensor **grad_in,
                                 mt_tensor **grad_weight, mt_tensor **grad_bias) {
  mt_rows_problem p;
  int64_t ss[MT_MAXDIM];
  mt_status st = layer_setup("layer_norm_backward", x, nnorm, weight, NULL, &p, ss);
  return st ? st
            : rows_backward("layer_norm_backward", grad_out, x, &p, mean, rstd, weight, grad_in, grad_weight,
                            grad_bias);
}

static mt_status group_setup(const char *op, const mt_tensor *x, int64_t groups, const mt_tensor *w,
                             const mt_tensor *b, mt_rows_problem *p) {
  char a[96];
  mt_status st = check_float(op, x, "input");
  if (st) return st;
  if (x->ndim < 2)
    return mt_fail(MT_ESHAPE, "%s: expected an input of at least 2 dimensions (N, C, ...), got %s", op,
                   shp(x->shape, x->ndim, a));
  int64_t C = x->shape[1];
  if (groups < 1 || C % groups)
    return mt_fail(MT_ESHAPE, "%s: the number of channels must be divisible by num_groups, got input %s and "
                              "num_groups=%lld",
                   op, shp(x->shape, x->ndim, a), (long long)groups);
  p->S = 1;
  for (int i = 2; i < x->ndim; i++) p->S *= x->shape[i];
  p->G = groups, p->Cg = C / groups, p->R = x->shape[0] * groups, p->L = p->Cg * p->S;
  if ((st = check_param(op, w, "weight", C, NULL, 0)) || (st = check_param(op, b, "bias", C, NULL, 0))) return st;
  return MT_OK;
}

mt_status mt_group_norm(const mt_tensor *x, int64_t groups, const mt_tensor *weight, const mt_tensor *bias, double eps,
                        mt_tensor **out, mt_tensor **mean, mt_tensor **rstd) {
  mt_rows_problem p;
  mt_status st = group_setup("group_norm", x, groups, weight, bias, &p);
  int64_t ss[2] = {x->ndim ? x->shape[0] : 0, groups};
  return st ? st : rows_forward("group_norm", x, &p, weight, bias, eps, ss, 2, out, mean, rstd);
}

mt_status mt_group_norm_backward(const mt_tensor *grad_out, const mt_tensor *x, int64_t groups, const mt_tensor *mean,
                                 const mt_tensor *rstd, const mt_tensor *weight, mt_tensor **grad_in,
                                 mt_tensor **grad_weight, mt_tensor **grad_bias) {
  mt_rows_problem p;
  mt_status st = group_setup("group_norm_backward", x, groups, weight, NULL, &p);
  return st ? st
            : rows_backward("group_norm_backward", grad_out, x, &p, mean, rstd, weight, grad_in, grad_weight,
                            grad_bias);
}
