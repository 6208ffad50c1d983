/* optim.c -- fused optimizer steps: the checks of mt_adam_step_ (the one
 * kernel is cuda/adam.c; the CPU keeps the unfused ops of the Lua optimizers). */
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

mt_status mt_adam_step_(mt_tensor *p, const mt_tensor *g, mt_tensor *m, mt_tensor *v, mt_tensor *vmax,
                        const mt_adam_opts *o) {
  const char *op = "_fused_adam_";
  mt_dtype dt = (mt_dtype)p->dtype;
  if (mt_tdevice(p).type != MT_CUDA)
    return mt_fail(MT_EDEVICE, "%s: expected parameters on a CUDA device (the CPU runs the unfused step)", op);
  if (!mt_is_floating(dt))
    return mt_fail(MT_EDTYPE, "%s: expected floating parameters, got %s", op, mt_dtype_name(dt));
  mt_status st = check_state(op, "the parameter", p, p);
  if (!st) st = check_state(op, "the gradient", p, g);
  if (!st) st = check_state(op, "exp_avg", p, m);
  if (!st) st = check_state(op, "exp_avg_sq", p, v);
  if (!st && o->amsgrad && !vmax) st = mt_fail(MT_EARG, "%s: amsgrad needs max_exp_avg_sq", op);
  if (!st && o->amsgrad) st = check_state(op, "max_exp_avg_sq", p, vmax);
  if (st || mt_numel(p) == 0) return st;
  st = mt_cuda_adam_step_(p, g, m, v, o->amsgrad ? vmax : NULL, o);
  if (!st) {
    mt_bump_version(p), mt_bump_version(m), mt_bump_version(v);
    if (o->amsgrad) mt_bump_version(vmax);
  }
  return st;
}
