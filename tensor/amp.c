/* amp.c -- GradScaler's fused unscale and inf/NaN check (mt_amp_unscale_):
 * one pass over each gradient that multiplies by 1/scale and raises a flag
 * in a device tensor, so that a training step needs a single host read
 * (the flag) however many parameters there are. CUDA: cuda/amp.c. */
#include <math.h>

#include "amp.h"
#include "cuda/mt_cuda.h"

/* One contiguous run of n elements of dtype dt; returns true if a result is not finite. */
static bool unscale_run(char *p, int64_t n, mt_dtype dt, double inv) {
  bool bad = false;
  switch (dt) {
  case MT_FLOAT64:
    for (int64_t i = 0; i < n; i++) {
      double v = ((double *)p)[i] * inv;
      bad |= !isfinite(v);
      ((double *)p)[i] = v;
    }
    break;
  case MT_FLOAT32:
    for (int64_t i = 0; i < n; i++) {
      float v = ((float *)p)[i] * (float)inv;
      bad |= !isfinite(v);
      ((float *)p)[i] = v;
    }
    break;
  case MT_FLOAT16:
    for (int64_t i = 0; i < n; i++) {
      float v = mt_half_to_float(((uint16_t *)p)[i]) * (float)inv;
      bad |= !isfinite(v);
      ((uint16_t *)p)[i] = mt_float_to_half(v);
    }
    break;
  default: /* MT_BFLOAT16 */
    for (int64_t i = 0; i < n; i++) {
      float v = mt_bf16_to_float(((uint16_t *)p)[i]) * (float)inv;
      bad |= !isfinite(v);
      ((uint16_t *)p)[i] = mt_float_to_bf16(v);
    }
    break;
  }
  return bad;
}

mt_status mt_amp_unscale_(mt_tensor *x, double inv_scale, mt_tensor *found) {
  const char *op = "_amp_foreach_non_finite_check_and_unscale_";
  mt_dtype dt = (mt_dtype)x->dtype;
  if (!mt_is_floating(dt))
    return mt_fail(MT_EDTYPE, "%s: expected floating gradients, got a %s tensor", op, mt_dtype_name(dt));
  if ((mt_dtype)found->dtype != MT_FLOAT32 || mt_numel(found) != 1)
    return mt_fail(MT_EDTYPE, "%s: found_inf must be a float32 tensor of one element", op);
  if (!mt_same_device(mt_tdevice(x), mt_tdevice(found)))
    return mt_fail(MT_EDEVICE, "%s: found_inf must be on the gradients' device", op);
  if (mt_numel(x) == 0) return MT_OK;
  mt_tensor *c = NULL;
  mt_status st = MT_OK;
  if (!mt_is_contiguous(x)) { /* rare for gradients: work on a copy, write it back */
    st = mt_contiguous(x, &c);
    if (st) return st;
  }
  mt_tensor *w = c ? c : x;
  if (mt_tdevice(x).type == MT_CUDA) {
    st = mt_cuda_amp_unscale_(w, inv_scale, found);
  } else if (unscale_run(mt_data(w), mt_numel(w), dt, inv_scale)) {
    *(float *)mt_data(found) = 1.0f;
  }
  if (!st && c) st = mt_copy_(x, c);
  else if (!st) mt_bump_version(x);
  mt_release(c);
  return st;
}
