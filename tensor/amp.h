/* amp.h -- the engine side of mixed-precision training (amp.c). */
#ifndef MT_AMP_H
#define MT_AMP_H

#include "mt.h"

/* GradScaler's fused step on one gradient: x *= inv_scale in place, and
 * found (a float32 tensor of one element on x's device) is set to 1 when a
 * result is not finite (it is never reset here). x is floating; no host
 * read happens on CUDA. */
mt_status mt_amp_unscale_(mt_tensor *x, double inv_scale, mt_tensor *found);

#endif
