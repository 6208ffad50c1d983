/* cuda_vision.h -- CUDA kernels of the vision ops (roi.c and nms.c in
 * tensor/cuda, kernels in roi.cu and nms.cu). tensor/roi.c and nms.c check
 * the arguments and hand over contiguous float32/float64 tensors. */
#ifndef MT_CUDA_VISION_H
#define MT_CUDA_VISION_H

#include "../cpu/roi_kernels.h"

/* kind 0: y = roi_align(a = x, b = rois); 1: y = roi_align_backward(a =
 * grad, b = rois) (y zeroed first); 2: y, argmax = roi_pool(a = x, b =
 * rois); 3: y = roi_pool_backward(a = grad, argmax) (y zeroed first).
 * Rois whose batch number is outside 1..N give zeros. */
mt_status mt_cuda_roi(int kind, const mt_roi_geo *g, const mt_tensor *a, const mt_tensor *b, mt_tensor *y,
                      mt_tensor *argmax);
/* Greedy NMS of boxes (m, 4), already sorted by decreasing score, on the
 * GPU: a bitmask of suppressions (64 boxes per word), then one block walks
 * it in order. cls (int64, m) or NULL: only boxes of equal cls suppress
 * each other. order (int64, m): the original 1-based position of each
 * sorted box. keep gets those of the kept boxes, in order; the only
 * transfer to the host is their count (the result's size). */
mt_status mt_cuda_nms(const mt_tensor *boxes, const mt_tensor *cls, const mt_tensor *order, double thr,
                      mt_tensor **keep);

#endif
