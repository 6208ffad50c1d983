/* optim.h -- the engine side of the fused optimizer steps (optim.c). */
#ifndef MT_OPTIM_H
#define MT_OPTIM_H

#include "mt.h"

/* One Adam/AdamW step's scalars: step_size = lr / (1 - beta1^step),
 * bc2_sqrt = sqrt(1 - beta2^step) (computed by the caller from its step
 * count); decoupled: AdamW's p *= 1 - lr * weight_decay instead of the L2
 * term added to the gradient. */
typedef struct mt_adam_opts {
  double lr, beta1, beta2, eps, weight_decay, step_size, bc2_sqrt;
  bool amsgrad, maximize, decoupled;
} mt_adam_opts;

/* Adam's update of p in place from its gradient g, with the moments m and
 * v (and vmax, the running maximum of v, when amsgrad) updated in place:
 * the op sequence of lua/torch/optim/adam.lua in one pass. All tensors on
 * one CUDA device, of p's floating dtype and shape, contiguous. */
mt_status mt_adam_step_(mt_tensor *p, const mt_tensor *g, mt_tensor *m, mt_tensor *v, mt_tensor *vmax,
                        const mt_adam_opts *o);

#endif
