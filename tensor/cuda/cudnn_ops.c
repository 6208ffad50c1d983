/* cudnn_ops.c (cuda) -- 2-D pooling and batch norm through cuDNN's legacy
 * cudnn_ops calls (cudnnPoolingForward/Backward, cudnnBatchNormalization*;
 * deprecated in cuDNN 9 but present), loaded by cudnn.c as optional
 * entries. Each op runs here only where cuDNN has the calls, takes the
 * problem, and the route allows it: under the auto route, only where it
 * measured faster than our kernels (the table `faster`; docs/cuda.md has
 * the figures). Otherwise *done is false and tensor/pool.c or norm.c run
 * the native kernels. A call that fails marks its (op, dtype) as broken
 * for the process, so the native path takes over without retrying. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cpu/pool_kernels.h"
#include "cudnn_api.h"
#include "mt_cuda.h"

enum { OP_MAX_POOL, OP_AVG_POOL, OP_AVG_POOL_BWD, OP_BN_TRAIN, OP_BN_EVAL, OP_BN_BWD, NOPS };
static const char *const op_names[NOPS] = {"max_pool2d",   "avg_pool2d",          "avg_pool2d_backward",
                                           "batch_norm", "batch_norm (eval)", "batch_norm_backward"};

static _Atomic int route = -1; /* -1: $MOONTORCH_CUDNN_ROUTE not read yet */
static _Atomic int64_t n_pools, n_norms, n_declined;
static _Atomic bool broken[NOPS][3];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char last_declined[160]; /* under lock */

/* 0, 1, 2 for float32, float16, bfloat16; -1 for dtypes left to the native kernels. */
static int dt_index(mt_dtype dt) { return dt == MT_FLOAT32 ? 0 : dt == MT_FLOAT16 ? 1 : dt == MT_BFLOAT16 ? 2 : -1; }

static int data_type(mt_dtype dt) {
  return dt == MT_FLOAT32 ? MT_CUDNN_DATA_FLOAT : dt == MT_FLOAT16 ? MT_CUDNN_DATA_HALF : MT_CUDNN_DATA_BFLOAT16;
}

/* Where cuDNN measured faster than the native kernels on an H100 (float32,
 * float16, bfloat16): everywhere, 1.4x (avg_pool2d forward + backward) to
 * 5.4x (bfloat16 batch_norm eval) on ResNet shapes; docs/cuda.md "cuDNN
 * pooling and batch norm" has the table. A row turned false sends that op
 * back to our kernels under the auto route. */
static const bool faster[NOPS][3] = {
    [OP_MAX_POOL] = {true, true, true},   [OP_AVG_POOL] = {true, true, true}, [OP_AVG_POOL_BWD] = {true, true, true},
    [OP_BN_TRAIN] = {true, true, true},   [OP_BN_EVAL] = {true, true, true},  [OP_BN_BWD] = {true, true, true},
};

void mt_cudnn_set_route(int r) { route = r; }

/* The route: set, else $MOONTORCH_CUDNN_ROUTE ("cudnn", "native"), else auto. */
static int current_route(void) {
  int r = route;
  if (r < 0) {
    const char *e = getenv("MOONTORCH_CUDNN_ROUTE");
    r = !e                          ? MT_CUDNN_ROUTE_AUTO
        : strcmp(e, "cudnn") == 0  ? MT_CUDNN_ROUTE_CUDNN
        : strcmp(e, "native") == 0 ? MT_CUDNN_ROUTE_NATIVE
                                   : MT_CUDNN_ROUTE_AUTO;
    route = r;
  }
  return r;
}

void mt_cudnn_ops_stats(mt_cudnn_info *r) {
  r->pools = n_pools, r->norms = n_norms, r->ops_declined = n_declined, r->route = current_route();
  pthread_mutex_lock(&lock);
  snprintf(r->last_ops_declined, sizeof r->last_ops_declined, "%s", last_declined);
  pthread_mutex_unlock(&lock);
}

/* The table when op may run on cuDNN for dtype dt (NULL: the native kernels). */
static const mt_cudnn_fns *usable(int op, mt_dtype dt, size_t *version) {
  int i = dt_index(dt);
  int r = current_route();
  if (i < 0 || r == MT_CUDNN_ROUTE_NATIVE || broken[op][i]) return NULL;
  if (r == MT_CUDNN_ROUTE_AUTO && !faster[op][i]) return NULL;
  const mt_cudnn_fns *f = mt_cudnn_lib(version, NULL);
  if (!f) return NULL;
  bool pools = f->CreatePoolingDescriptor && f->DestroyPoolingDescriptor && f->SetPooling2dDescriptor &&
               f->PoolingForward && f->PoolingBackward;
  bool norms = f->DeriveBNTensorDescriptor && f->BNForwardTraining && f->BNForwardInference && f->BNBackward;
  return (op <= OP_AVG_POOL_BWD ? pools : norms) ? f : NULL;
}

/* A cuDNN call for op failed with s: remembered, and op/dt goes native from now on. */
static void failed(const mt_cudnn_fns *f, int op, mt_dtype dt, const char *what, cudnnStatus_t s) {
  n_declined++;
  broken[op][dt_index(dt)] = true;
  pthread_mutex_lock(&lock);
  snprintf(last_declined, sizeof last_declined, "%s (%s): %s: %s", op_names[op], mt_dtype_name(dt), what,
           s ? f->GetErrorString(s) : "refused");
  pthread_mutex_unlock(&lock);
}

static bool fits32(int64_t v) { return v >= 0 && v <= 0x7fffffff; }

/* A contiguous NCHW descriptor. */
static cudnnStatus_t set4d(const mt_cudnn_fns *f, TD d, int ty, int64_t n, int64_t c, int64_t h, int64_t w) {
  int dims[4] = {(int)n, (int)c, (int)h, (int)w}, str[4] = {(int)(c * h * w), (int)(h * w), (int)w, 1};
  return f->SetTensorNdDescriptor(d, ty, 4, dims, str);
}

static const void *one_f(void) {
  static const float v = 1;
  return &v;
}
static const void *zero_f(void) {
  static const float v = 0;
  return &v;
}

/* ---- pooling ---- */

bool mt_cudnn_pool_takes(const mt_pool_problem *p, bool avg, bool back, mt_dtype dt) {
  int op = !avg ? OP_MAX_POOL : back ? OP_AVG_POOL_BWD : OP_AVG_POOL;
  if ((!avg && back) || !usable(op, dt, NULL)) return false;
  if (p->adaptive || p->divisor || p->in[0] != 1 || p->k[0] != 1 || p->pad[0] || p->out[0] != 1) return false;
  int64_t total = p->planes;
  for (int d = 1; d < 3; d++) {
    if (p->dil[d] != 1 || !fits32(p->in[d]) || !fits32(p->k[d]) || !fits32(p->stride[d])) return false;
    if (p->in[d] + 2 * p->pad[d] < p->k[d]) return false;
    if (p->out[d] != (p->in[d] + 2 * p->pad[d] - p->k[d]) / p->stride[d] + 1) return false; /* ceil_mode grew it */
    total *= p->in[d];
  }
  return fits32(total) && total > 0;
}

mt_status mt_cudnn_pool(const mt_pool_problem *p, bool avg, bool back, int64_t C, const mt_tensor *in, mt_tensor *out,
                        bool *done) {
  *done = false;
  mt_dtype dt = (mt_dtype)in->dtype;
  int op = !avg ? OP_MAX_POOL : back ? OP_AVG_POOL_BWD : OP_AVG_POOL;
  const mt_cudnn_fns *f = usable(op, dt, NULL);
  if (!f || C < 1 || p->planes % C) return MT_OK;
  int dev = mt_tdevice(in).index, ty = data_type(dt);
  int mode = !avg ? MT_CUDNN_POOLING_MAX_DETERMINISTIC
             : p->count_include_pad ? MT_CUDNN_POOLING_AVG_INCLUDE_PAD
                                    : MT_CUDNN_POOLING_AVG_EXCLUDE_PAD;
  cudnnHandle_t h = NULL;
  TD xd = NULL, yd = NULL;
  PD pd = NULL;
  const char *what = "handle";
  cudnnStatus_t s = mt_cudnn_handle(dev, &h);
  if (!s) what = "descriptors";
  if (!s && !(s = f->CreateTensorDescriptor(&xd)) && !(s = f->CreateTensorDescriptor(&yd)) &&
      !(s = f->CreatePoolingDescriptor(&pd)) && !(s = set4d(f, xd, ty, p->planes / C, C, p->in[1], p->in[2])) &&
      !(s = set4d(f, yd, ty, p->planes / C, C, p->out[1], p->out[2])) &&
      !(s = f->SetPooling2dDescriptor(pd, mode, MT_CUDNN_PROPAGATE_NAN, (int)p->k[1], (int)p->k[2], (int)p->pad[1],
                                      (int)p->pad[2], (int)p->stride[1], (int)p->stride[2]))) {
    what = back ? "cudnnPoolingBackward" : "cudnnPoolingForward";
    mt_cuda_note_launch(dev, op_names[op]);
    /* average pooling's backward reads neither x nor y: gy and gx stand in */
    s = back ? f->PoolingBackward(h, pd, one_f(), yd, mt_data(in), yd, mt_data(in), xd, mt_data(out), zero_f(), xd,
                                  mt_data(out))
             : f->PoolingForward(h, pd, one_f(), xd, mt_data(in), zero_f(), yd, mt_data(out));
  }
  if (xd) f->DestroyTensorDescriptor(xd);
  if (yd) f->DestroyTensorDescriptor(yd);
  if (pd) f->DestroyPoolingDescriptor(pd);
  if (s) {
    failed(f, op, dt, what, s);
  } else {
    n_pools++;
    *done = true;
  }
  return MT_OK;
}

/* ---- batch norm ---- */

/* x seen as (N, C, H, W): its own sizes when 4-D, else (N, C, S, 1);
 * false when a size or the total does not fit cuDNN's 32-bit ints. */
static bool bn_dims(const mt_tensor *x, int64_t d[4]) {
  d[0] = x->shape[0], d[1] = x->shape[1], d[2] = 1, d[3] = 1;
  if (x->ndim == 4) d[2] = x->shape[2], d[3] = x->shape[3];
  else
    for (int i = 2; i < x->ndim; i++) d[2] *= x->shape[i];
  return fits32(d[0]) && fits32(d[1]) && fits32(d[2]) && fits32(d[3]) && fits32(mt_numel(x)) && mt_numel(x) > 0;
}

/* A float32 contiguous copy of per-channel t (a new reference; t itself
 * when it already is one), or C elements of fill when t is NULL. */
static mt_status chan32(const mt_tensor *t, int64_t C, double fill, mt_device dev, mt_tensor **out) {
  if (!t) {
    mt_status st = mt_empty(&C, 1, MT_FLOAT32, dev, out);
    return st ? st : mt_fill_(*out, mt_sfloat(fill));
  }
  mt_tensor *c = NULL;
  mt_status st = mt_to_dtype(t, MT_FLOAT32, false, &c);
  if (!st) st = mt_contiguous(c, out);
  mt_release(c);
  return st;
}

/* Descriptors of x (and dy, y) and of the per-channel float32 tensors. */
typedef struct bn_descs {
  TD x, c;
} bn_descs;

static cudnnStatus_t bn_make(const mt_cudnn_fns *f, const int64_t d[4], mt_dtype dt, int mode, bn_descs *b) {
  cudnnStatus_t s;
  if ((s = f->CreateTensorDescriptor(&b->x)) || (s = f->CreateTensorDescriptor(&b->c)) ||
      (s = set4d(f, b->x, data_type(dt), d[0], d[1], d[2], d[3])))
    return s;
  return f->DeriveBNTensorDescriptor(b->c, b->x, mode);
}

static void bn_free(const mt_cudnn_fns *f, bn_descs *b) {
  if (b->x) f->DestroyTensorDescriptor(b->x);
  if (b->c) f->DestroyTensorDescriptor(b->c);
}

/* SPATIAL, as PyTorch uses for NCHW; SPATIAL_PERSISTENT (faster in places,
 * with limits on the range of values) only on request. */
static int bn_mode(void) {
  static int mode;
  if (!mode) {
    const char *e = getenv("MOONTORCH_CUDNN_BN_PERSISTENT");
    mode = e && *e == '1' ? MT_CUDNN_BATCHNORM_SPATIAL_PERSISTENT : MT_CUDNN_BATCHNORM_SPATIAL;
  }
  return mode;
}

/* Evaluation's saved statistics, as the native path hands them out:
 * the running mean and 1 / sqrt(running_var + eps), float32. */
static mt_status eval_stats(const mt_tensor *rm, const mt_tensor *rv, double eps, int64_t C, mt_tensor **sm,
                            mt_tensor **si) {
  mt_tensor *m = NULL, *v = NULL, *vc = NULL, *inv = NULL, *r = NULL;
  mt_status st = MT_OK;
  if (sm && !(st = mt_to_dtype(rm, MT_FLOAT32, true, &m))) st = mt_deliver("batch_norm", m, sm);
  if (!st && si && !(st = mt_to_dtype(rv, MT_FLOAT64, false, &v)) && !(st = mt_contiguous(v, &vc)) &&
      !(st = mt_empty(&C, 1, MT_FLOAT64, mt_tdevice(rv), &inv)) &&
      !(st = mt_cuda_bn_invstd(mt_tdevice(rv).index, C, (const double *)mt_data(vc), eps, (double *)mt_data(inv))) &&
      !(st = mt_to_dtype(inv, MT_FLOAT32, false, &r)))
    st = mt_deliver("batch_norm", r, si);
  mt_release(v), mt_release(vc), mt_release(inv);
  return st;
}

mt_status mt_cudnn_batch_norm(const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, mt_tensor *running_mean,
                              mt_tensor *running_var, bool training, double momentum, double eps, mt_tensor **out,
                              mt_tensor **save_mean, mt_tensor **save_invstd, bool *done) {
  *done = false;
  mt_dtype dt = (mt_dtype)x->dtype;
  int op = training ? OP_BN_TRAIN : OP_BN_EVAL;
  size_t version = 0;
  int64_t d[4];
  const mt_cudnn_fns *f = usable(op, dt, &version);
  if (!f || !bn_dims(x, d) || (version < 9000 && eps < 1e-5)) return MT_OK;
  if (training && !running_mean != !running_var) return MT_OK;
  int dev = mt_tdevice(x).index, mode = bn_mode();
  int64_t C = d[1];
  mt_device dv = mt_tdevice(x);
  mt_tensor *xc = NULL, *wc = NULL, *bc = NULL, *rm = NULL, *rv = NULL, *y = NULL, *sm = NULL, *si = NULL;
  bn_descs ds = {0};
  cudnnHandle_t h = NULL;
  cudnnStatus_t s = 0;
  const char *what = "descriptors";
  mt_status st;
  if ((st = mt_contiguous(x, &xc)) || (st = chan32(w, C, 1, dv, &wc)) || (st = chan32(b, C, 0, dv, &bc)) ||
      (running_mean && ((st = chan32(running_mean, C, 0, dv, &rm)) || (st = chan32(running_var, C, 1, dv, &rv)))) ||
      (st = mt_empty(x->shape, x->ndim, dt, dv, &y)) ||
      (training && ((st = mt_empty(&C, 1, MT_FLOAT32, dv, &sm)) || (st = mt_empty(&C, 1, MT_FLOAT32, dv, &si)))))
    goto done;
  if ((s = mt_cudnn_handle(dev, &h)) || (s = bn_make(f, d, dt, mode, &ds))) goto done;
  mt_cuda_note_launch(dev, op_names[op]);
  what = training ? "cudnnBatchNormalizationForwardTraining" : "cudnnBatchNormalizationForwardInference";
  s = training ? f->BNForwardTraining(h, mode, one_f(), zero_f(), ds.x, mt_data(xc), ds.x, mt_data(y), ds.c,
                                      mt_data(wc), mt_data(bc), momentum, rm ? mt_data(rm) : NULL,
                                      rv ? mt_data(rv) : NULL, eps, mt_data(sm), mt_data(si))
               : f->BNForwardInference(h, mode, one_f(), zero_f(), ds.x, mt_data(xc), ds.x, mt_data(y), ds.c,
                                       mt_data(wc), mt_data(bc), mt_data(rm), mt_data(rv), eps);
  if (s) goto done;
  /* running statistics kept elsewhere than the float32 copies: copied back */
  if (training && rm && rm != running_mean && (st = mt_copy_(running_mean, rm))) goto done;
  if (training && rv && rv != running_var && (st = mt_copy_(running_var, rv))) goto done;
  *done = true;
  n_norms++;
  st = mt_deliver("batch_norm", y, out), y = NULL;
  if (!st && !training) st = eval_stats(running_mean, running_var, eps, C, save_mean, save_invstd);
  if (!st && training && save_mean) st = mt_deliver("batch_norm", sm, save_mean), sm = NULL;
  if (!st && training && save_invstd) st = mt_deliver("batch_norm", si, save_invstd), si = NULL;
done:
  if (!st && s) failed(f, op, dt, what, s);
  if (ds.x || ds.c) bn_free(f, &ds);
  mt_release(xc), mt_release(wc), mt_release(bc), mt_release(rm), mt_release(rv), mt_release(y), mt_release(sm);
  mt_release(si);
  return st;
}

/* The float32 parameter gradient g handed out as the parameter's dtype and
 * shape (1-D in x's dtype without a weight); consumes g. */
static mt_status param_out(mt_tensor *g, const mt_tensor *w, mt_dtype xdt, mt_tensor **out) {
  if (!out) return mt_release(g), MT_OK;
  mt_tensor *v = NULL, *c = NULL;
  mt_status st = w ? mt_view(g, w->shape, w->ndim, &v) : (v = mt_retain(g), MT_OK);
  if (!st) st = mt_to_dtype(v, w ? (mt_dtype)w->dtype : xdt, false, &c);
  mt_release(v), mt_release(g);
  return st ? st : mt_deliver("batch_norm_backward", c, out);
}

mt_status mt_cudnn_batch_norm_backward(const mt_tensor *gy, const mt_tensor *x, const mt_tensor *w,
                                       const mt_tensor *save_mean, const mt_tensor *save_invstd, mt_tensor **grad_in,
                                       mt_tensor **grad_weight, mt_tensor **grad_bias, bool *done) {
  *done = false;
  mt_dtype dt = (mt_dtype)x->dtype;
  int64_t d[4];
  const mt_cudnn_fns *f = usable(OP_BN_BWD, dt, NULL);
  if (!f || gy->dtype != x->dtype || !bn_dims(x, d)) return MT_OK;
  int dev = mt_tdevice(x).index, mode = bn_mode();
  int64_t C = d[1];
  mt_device dv = mt_tdevice(x);
  mt_tensor *xc = NULL, *gc = NULL, *wc = NULL, *mc = NULL, *ic = NULL, *gx = NULL, *gw = NULL, *gb = NULL;
  bn_descs ds = {0};
  cudnnHandle_t h = NULL;
  cudnnStatus_t s = 0;
  const char *what = "descriptors";
  mt_status st;
  if ((st = mt_contiguous(x, &xc)) || (st = mt_contiguous(gy, &gc)) || (st = chan32(w, C, 1, dv, &wc)) ||
      (st = chan32(save_mean, C, 0, dv, &mc)) || (st = chan32(save_invstd, C, 0, dv, &ic)) ||
      (st = mt_empty(x->shape, x->ndim, dt, dv, &gx)) || (st = mt_empty(&C, 1, MT_FLOAT32, dv, &gw)) ||
      (st = mt_empty(&C, 1, MT_FLOAT32, dv, &gb)))
    goto done;
  if ((s = mt_cudnn_handle(dev, &h)) || (s = bn_make(f, d, dt, mode, &ds))) goto done;
  mt_cuda_note_launch(dev, "batch_norm_backward");
  what = "cudnnBatchNormalizationBackward";
  /* eps only matters without the saved statistics; 1e-5 suits every version */
  if ((s = f->BNBackward(h, mode, one_f(), zero_f(), one_f(), zero_f(), ds.x, mt_data(xc), ds.x, mt_data(gc), ds.x,
                         mt_data(gx), ds.c, mt_data(wc), mt_data(gw), mt_data(gb), 1e-5, mt_data(mc), mt_data(ic))))
    goto done;
  *done = true;
  n_norms++;
  if (grad_in) st = mt_deliver("batch_norm_backward", gx, grad_in), gx = NULL;
  if (!st) st = param_out(gw, w, dt, grad_weight), gw = NULL;
  if (!st) st = param_out(gb, w, dt, grad_bias), gb = NULL;
done:
  if (!st && s) failed(f, OP_BN_BWD, dt, what, s);
  if (ds.x || ds.c) bn_free(f, &ds);
  mt_release(xc), mt_release(gc), mt_release(wc), mt_release(mc), mt_release(ic), mt_release(gx), mt_release(gw);
  mt_release(gb);
  return st;
}
