/* color_kernels.h -- the fused color jitter of torch.vision on the CPU
 * (tensor/color.c checks the arguments and builds the plan;
 * color_kernels.c runs it). Engine-internal. */
#ifndef MT_CPU_COLOR_KERNELS_H
#define MT_CPU_COLOR_KERNELS_H

#include "mt.h"

/* One image's steps: codes (vision.h's MT_CJ_*) in the order they run;
 * split is the position of the contrast step (nsteps when there is none).
 * f and om hold, by step code, (float)factor and (float)(1 - factor) with
 * the factor in double, as the Lua ops round them. term is contrast's
 * mean * (1 - factor), which the first pass computes. */
typedef struct mt_cj_image {
  int8_t steps[4];
  int nsteps, split;
  float f[5], om[5];
  float term;
} mt_cj_image;

/* n images of 3 planes h x w: src (uint8 or float32, pixels of a row
 * contiguous, strides in elements per image, plane and row) into dst,
 * contiguous [n, 3, h, w] of the same dtype. rowsum [n * h] is scratch. */
typedef struct mt_cj_plan {
  int64_t n, h, w;
  bool u8;
  const char *src;
  int64_t sn, sc, sh;
  char *dst;
  mt_cj_image *img;
  double *rowsum;
} mt_cj_plan;

/* Runs the plan, split over rows by mt_parallel_for (the result does not
 * depend on the thread count). No checks here. */
mt_status mt_cpu_color_jitter(mt_cj_plan *p);

#endif
