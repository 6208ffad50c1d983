/* cuda_vision.h -- CUDA kernels of the vision ops (roi.c, nms.c and
 * resize.c in tensor/cuda, kernels in roi.cu, nms.cu and resize.cu).
 * tensor/roi.c, nms.c and resize.c check the arguments and hand over
 * contiguous tensors. */
#ifndef MT_CUDA_VISION_H
#define MT_CUDA_VISION_H

#include "../cpu/roi_kernels.h"

/* kind 0: y = roi_align(a = x, b = rois); 1: y = roi_align_backward(a =
 * grad, b = rois) (y zeroed first); 2: y, argmax = roi_pool(a = x, b =
 * rois); 3: y = roi_pool_backward(a = grad, argmax) (y zeroed first).
 * Rois whose batch number is outside 1..N give zeros. */
mt_status mt_cuda_roi(int kind, const mt_roi_geo *g, const mt_tensor *a, const mt_tensor *b, mt_tensor *y,
                      mt_tensor *argmax);
/* Greedy NMS of boxes (n, 4) by decreasing scores (n; equal scores in
 * position order, NaN first), all on the GPU: the scores ranked, a bitmask
 * of suppressions (64 boxes per word), then one block walks it in rank
 * order. boxes float32/float64, scores float32/float64, cls (int64, n) or
 * NULL, all contiguous: only boxes of equal cls suppress each other. keep
 * gets the 1-based positions of the kept boxes, in rank order; the only
 * transfer to the host is their count (the result's size). */
mt_status mt_cuda_nms(const mt_tensor *boxes, const mt_tensor *scores, const mt_tensor *cls, double thr,
                      mt_tensor **keep);

/* A plain resize (tensor/resize.c) of planes [ih, iw] to [oh, ow], mode one
 * of resize.h's, kx and ky its taps per output along x and y (taps_of). */
typedef struct mt_rs_shape {
  int64_t planes, ih, iw, oh, ow;
  int mode, kx, ky;
  bool antialias;
} mt_rs_shape;
/* out from in (contiguous [planes, ...] of uint8, float32 or float64), or
 * (back, floating) the adjoint, as mt_cuda_resize with the plan of
 * resize.c's plain_plan, whose windows and weights the GPU computes. */
mt_status mt_cuda_resize_plain(const mt_rs_shape *r, bool back, const mt_tensor *in, mt_tensor *out);

#endif
