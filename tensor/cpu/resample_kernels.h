/* resample_kernels.h -- CPU loops of the polyphase resampling filter
 * (resample_kernels.c), fed by tensor/resample.c's checked plan. */
#ifndef MT_RESAMPLE_KERNELS_H
#define MT_RESAMPLE_KERNELS_H

#include "../resample.h"

/* The geometry of one call: rows of in_len input samples, rows of out_len
 * output samples, pad_left zeros before each input row. */
typedef struct mt_rsmp_geo {
  int64_t rows, in_len, out_len, pad_left;
} mt_rsmp_geo;

/* y[rows, out_len] = the filter of p over x[rows, in_len]; dt float32 or
 * float64, both contiguous. */
mt_status mt_cpu_resample(mt_dtype dt, const mt_resample_plan *p, const mt_rsmp_geo *g, const void *x, void *y);
/* gx[rows, in_len] = the adjoint applied to gy[rows, out_len]. */
mt_status mt_cpu_resample_adjoint(mt_dtype dt, const mt_resample_plan *p, const mt_rsmp_geo *g, const void *gy,
                                  void *gx);

#endif
