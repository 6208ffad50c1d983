/* dnnl_act.h -- an activation (mt_act) as a oneDNN eltwise post-op, shared
 * by the primitives that apply one to their result (cpu/conv_dnnl.c,
 * cpu/matmul_dnnl.c). Engine-internal; needs <oneapi/dnnl/dnnl.h>. */
#ifndef MT_CPU_DNNL_ACT_H
#define MT_CPU_DNNL_ACT_H

#include <oneapi/dnnl/dnnl.h>

#include "mt.h"

/* Appends act (alpha: leaky_relu's slope) to attr's post-ops; MT_ACT_NONE
 * appends nothing. Each oneDNN algorithm computes what our op does:
 * relu with alpha is x > 0 ? x : alpha * x, logistic is sigmoid, swish with
 * alpha 1 is silu, gelu_erf the exact gelu, gelu_tanh its tanh form. False if oneDNN refuses. */
static inline bool mt_dnnl_set_act(dnnl_primitive_attr_t attr, mt_act act, double alpha) {
  static const dnnl_alg_kind_t alg[MT_NACT] = {
      [MT_ACT_RELU] = dnnl_eltwise_relu,          [MT_ACT_LEAKY_RELU] = dnnl_eltwise_relu,
      [MT_ACT_TANH] = dnnl_eltwise_tanh,          [MT_ACT_SIGMOID] = dnnl_eltwise_logistic,
      [MT_ACT_SILU] = dnnl_eltwise_swish,         [MT_ACT_GELU] = dnnl_eltwise_gelu_erf,
      [MT_ACT_GELU_TANH] = dnnl_eltwise_gelu_tanh};
  if (act == MT_ACT_NONE) return true;
  if (act < 0 || act >= MT_NACT) return false;
  float a = act == MT_ACT_LEAKY_RELU ? (float)alpha : act == MT_ACT_SILU ? 1.0f : 0.0f;
  dnnl_post_ops_t po;
  if (dnnl_post_ops_create(&po) != dnnl_success) return false;
  bool ok = dnnl_post_ops_append_eltwise(po, 1.0f, alg[act], a, 0.0f) == dnnl_success &&
            dnnl_primitive_attr_set_post_ops(attr, po) == dnnl_success;
  dnnl_post_ops_destroy(po);
  return ok;
}

#endif
