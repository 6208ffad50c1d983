/* optim.c -- fused optimizer steps: the checks of mt_adam_step_, its CPU
 * loop (float32/float64; torch.optim uses it only when asked for with
 * fused=true) and the route to the kernel (cuda/adam.c). */
#include <math.h>
#include <stdio.h>

#include "cuda/mt_cuda.h"
#include "optim.h"

static mt_status check_state(const char *op, const char *what, const mt_tensor *p, const mt_tensor *t) {
  char s1[128], s2[128], d1[32], d2[32];
  if (!mt_same_device(mt_tdevice(p), mt_tdevice(t)))
    return mt_fail(MT_EDEVICE, "%s: %s is on %s, the parameter on %s", op, what,
                   mt_device_str(mt_tdevice(t), d1, sizeof d1), mt_device_str(mt_tdevice(p), d2, sizeof d2));
  if (t->dtype != p->dtype)
    return mt_fail(MT_EDTYPE, "%s: %s is %s, the parameter %s", op, what, mt_dtype_name((mt_dtype)t->dtype),
                   mt_dtype_name((mt_dtype)p->dtype));
  bool same = t->ndim == p->ndim;
  for (int d = 0; same && d < p->ndim; d++) same = t->shape[d] == p->shape[d];
  if (!same)
    return mt_fail(MT_ESHAPE, "%s: %s has shape %s, the parameter %s", op, what,
                   mt_shape_str(t->shape, t->ndim, s1, sizeof s1), mt_shape_str(p->shape, p->ndim, s2, sizeof s2));
  if (!mt_is_contiguous(t)) return mt_fail(MT_EARG, "%s: %s must be contiguous", op, what);
  return MT_OK;
}

/* The CPU twin of cuda/adam.cu (float32 in float, float64 in double): the
 * same expressions, element by element. */
#define ADAM_LOOP(T)                                                                                                   \
  do {                                                                                                                 \
    T *pp = (T *)mt_data(p), *pm = (T *)mt_data(m), *pv = (T *)mt_data(v), *px = vmax ? (T *)mt_data(vmax) : NULL;     \
    const T *pg = (const T *)mt_data(g);                                                                               \
    T beta1 = (T)o->beta1, beta2 = (T)o->beta2, eps = (T)o->eps, wd = (T)o->weight_decay, bc2 = (T)o->bc2_sqrt;        \
    T decay = (T)(1 - o->lr * o->weight_decay), nstep = (T)(-o->step_size), c1 = (T)(1 - o->beta1),                   \
      c2 = (T)(1 - o->beta2);                                                                                          \
    for (int64_t i = 0; i < n; i++) {                                                                                  \
      T gi = o->maximize ? -pg[i] : pg[i], pi = pp[i];                                                                 \
      if (o->decoupled)                                                                                                \
        pi = pi * decay;                                                                                               \
      else if (o->weight_decay != 0)                                                                                   \
        gi = gi + wd * pi;                                                                                             \
      T mi = pm[i] * beta1 + c1 * gi, vi = pv[i] * beta2 + gi * c2 * gi, d = vi;                                       \
      pm[i] = mi, pv[i] = vi;                                                                                          \
      if (px) d = px[i] > vi || px[i] != px[i] ? px[i] : vi, px[i] = d;                                               \
      pp[i] = pi + mi * nstep / (sqrt(d) / bc2 + eps);                                                                 \
    }                                                                                                                  \
  } while (0)

static mt_status adam_cpu(mt_tensor *p, const mt_tensor *g, mt_tensor *m, mt_tensor *v, mt_tensor *vmax,
                          const mt_adam_opts *o) {
  int64_t n = mt_numel(p);
  if (p->dtype == MT_FLOAT32)
    ADAM_LOOP(float);
  else if (p->dtype == MT_FLOAT64)
    ADAM_LOOP(double);
  else
    return mt_fail(MT_EDTYPE, "_fused_adam_: %s parameters on the CPU are not supported (float32, float64)",
                   mt_dtype_name((mt_dtype)p->dtype));
  return MT_OK;
}

mt_status mt_adam_step_(mt_tensor *p, const mt_tensor *g, mt_tensor *m, mt_tensor *v, mt_tensor *vmax,
                        const mt_adam_opts *o) {
  const char *op = "_fused_adam_";
  mt_dtype dt = (mt_dtype)p->dtype;
  if (!mt_is_floating(dt))
    return mt_fail(MT_EDTYPE, "%s: expected floating parameters, got %s", op, mt_dtype_name(dt));
  mt_status st = check_state(op, "the parameter", p, p);
  if (!st) st = check_state(op, "the gradient", p, g);
  if (!st) st = check_state(op, "exp_avg", p, m);
  if (!st) st = check_state(op, "exp_avg_sq", p, v);
  if (!st && o->amsgrad && !vmax) st = mt_fail(MT_EARG, "%s: amsgrad needs max_exp_avg_sq", op);
  if (!st && o->amsgrad) st = check_state(op, "max_exp_avg_sq", p, vmax);
  if (st || mt_numel(p) == 0) return st;
  if (mt_tdevice(p).type == MT_CUDA)
    st = mt_cuda_adam_step_(p, g, m, v, o->amsgrad ? vmax : NULL, o);
  else if (mt_tdevice(p).type == MT_CPU)
    st = adam_cpu(p, g, m, v, o->amsgrad ? vmax : NULL, o);
  else {
    char d[32];
    st = mt_fail(MT_EDEVICE, "%s: parameters on %s have no fused step", op, mt_device_str(mt_tdevice(p), d, sizeof d));
  }
  if (!st) {
    mt_bump_version(p), mt_bump_version(m), mt_bump_version(v);
    if (o->amsgrad) mt_bump_version(vmax);
  }
  return st;
}
