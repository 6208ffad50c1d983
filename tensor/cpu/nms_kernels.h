/* nms_kernels.h -- greedy non-maximum suppression on the CPU
 * (nms_kernels.c; engine-internal). tensor/nms.c sorts and checks. */
#ifndef MT_CPU_NMS_KERNELS_H
#define MT_CPU_NMS_KERNELS_H

#include "mt.h"

/* boxes: n rows of (x1, y1, x2, y2), float32 or float64, contiguous, in
 * decreasing score order already; cls: n class ids or NULL (one class).
 * Sets keep[r] to 1 for each kept row r, 0 for the others. */
mt_status mt_cpu_nms(mt_dtype dt, const void *boxes, const int64_t *cls, int64_t n, double thr, uint8_t *keep);

#endif
