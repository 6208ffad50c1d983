/* equalize_kernels.h -- torch.vision's histogram equalization of uint8
 * planes on the CPU (tensor/color.c checks the image and builds the plan;
 * equalize_kernels.c runs it). Engine-internal. */
#ifndef MT_CPU_EQUALIZE_KERNELS_H
#define MT_CPU_EQUALIZE_KERNELS_H

#include "mt.h"

/* planes of h rows of w uint8 pixels: plane i starts at src + i * ps, its
 * rows rs apart (pixels of a row contiguous); dst is contiguous
 * [planes, h, w]. */
typedef struct mt_eq_plan {
  int64_t planes, h, w;
  const uint8_t *src;
  int64_t ps, rs;
  uint8_t *dst;
} mt_eq_plan;

/* Equalizes each plane (PIL's lookup table, as torchvision), split over
 * planes by mt_parallel_for. */
mt_status mt_cpu_equalize(const mt_eq_plan *p);

#endif
