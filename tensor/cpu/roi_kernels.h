/* roi_kernels.h -- CPU loops of RoI Align and RoI pooling (roi_kernels.c;
 * engine-internal). tensor/roi.c checks the arguments and hands over
 * contiguous float32 or float64 data, rois already validated. */
#ifndef MT_CPU_ROI_KERNELS_H
#define MT_CPU_ROI_KERNELS_H

#include "mt.h"

/* One problem: rois (K, 5), input (N, C, H, W), output (K, C, ph, pw). */
typedef struct mt_roi_geo {
  int64_t K, N, C, H, W, ph, pw, sr;
  bool aligned;
  double scale;
} mt_roi_geo;

mt_status mt_cpu_roi_align(mt_dtype dt, const mt_roi_geo *g, const void *x, const void *rois, void *y);
/* gx (N, C, H, W) is written whole: zeros plus the spread of gy. */
mt_status mt_cpu_roi_align_backward(mt_dtype dt, const mt_roi_geo *g, const void *gy, const void *rois, void *gx);
/* argmax: 1-based flat positions in x (0: empty bin). */
mt_status mt_cpu_roi_pool(mt_dtype dt, const mt_roi_geo *g, const void *x, const void *rois, void *y, int64_t *argmax);
/* gx written whole: zeros plus gy added at argmax (positions in channel c
 * of some image for outputs of channel c). */
mt_status mt_cpu_roi_pool_backward(mt_dtype dt, const mt_roi_geo *g, const void *gy, const int64_t *argmax, void *gx);

#endif
