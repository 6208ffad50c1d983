/* lfilter_kernels.h -- CPU loops of the audio filter ops (tensor/audio.h),
 * over contiguous float32 or float64 operands that tensor/lfilter.c
 * checked. */
#ifndef MT_CPU_LFILTER_KERNELS_H
#define MT_CPU_LFILTER_KERNELS_H

#include "../mt.h"

/* The problem: N*C channels of len samples, K coefficients. */
typedef struct mt_lf_geo {
  int64_t N, C, len, K; /* len: samples per channel */
  int mode;     /* mt_lf_mode */
  bool reverse; /* time runs backwards */
} mt_lf_geo;

/* y = mt_lfilter(x, a, b, zi) (zi may be NULL); a, b [C, K], a0 != 0. */
mt_status mt_cpu_lfilter(mt_dtype dt, const mt_lf_geo *g, const void *x, const void *a, const void *b,
                         const void *zi, void *y);
/* out [C, K] = mt_lfilter_corr(w, x) */
mt_status mt_cpu_lfilter_corr(mt_dtype dt, const mt_lf_geo *g, const void *w, const void *x, void *out);

#endif
