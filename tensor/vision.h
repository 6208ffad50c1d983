/* vision.h -- engine ops behind torch.vision: RoI Align, RoI pooling
 * (forward and backward, roi.c), non-maximum suppression (nms.c), and
 * the fused color jitter and histogram equalization of the transforms
 * (color.c).
 * Conventions of mt.h: mt_status results, `**out` NULL to allocate. Boxes
 * are (x1, y1, x2, y2) in continuous input coordinates (0-based, as
 * torchvision); rois are (K, 5) rows (batch, x1, y1, x2, y2) whose batch
 * column holds 1-based image numbers, and every index a result holds is
 * 1-based, as everywhere in the engine. float32 and float64 compute in their
 * own dtype (float16/bfloat16 in float32). */
#ifndef MT_VISION_H
#define MT_VISION_H

#include "mt.h"

/* Options of roi_align and its backward (and roi_pool: ph, pw, scale). */
typedef struct mt_roi_opts {
  int64_t ph, pw;         /* output size per roi: pooled height and width */
  int64_t sampling_ratio; /* samples per bin along each axis; <= 0: ceil(roi size / output size) */
  bool aligned;           /* shift the box by -0.5 pixel (pixel centres at integers + 0.5) */
  double scale;           /* spatial_scale: box coordinates times this are input coordinates */
} mt_roi_opts;

/* out (K, C, ph, pw) = the average of bilinear samples of x (N, C, H, W)
 * inside each bin of each roi; rois (K, 5) of x's device and a floating
 * dtype. A roi whose batch number is out of 1..N is an error on CPU and
 * gives zeros on CUDA (checked without a host round-trip). */
mt_status mt_roi_align(const mt_tensor *x, const mt_tensor *rois, const mt_roi_opts *o, mt_tensor **out);
/* The gradient wrt x of mt_roi_align: g (K, C, ph, pw) spread back into a
 * tensor of x_shape (N, C, H, W). Linear in g; its adjoint is roi_align. */
mt_status mt_roi_align_backward(const mt_tensor *g, const mt_tensor *rois, const int64_t *x_shape,
                                const mt_roi_opts *o, mt_tensor **out);
/* out (K, C, ph, pw) = the max of x over each bin of each roi (torchvision's
 * RoIPool: rounded box corners, bins of at least one pixel, 0 for an empty
 * bin); argmax (int64) the 1-based flat position in all of x of each max
 * (0: empty bin). Both are allocated (pass pointers to NULL). */
mt_status mt_roi_pool(const mt_tensor *x, const mt_tensor *rois, const mt_roi_opts *o, mt_tensor **out,
                      mt_tensor **argmax);
/* The gradient wrt x of mt_roi_pool: g (K, C, ph, pw) added at argmax into
 * a zero tensor of x_shape. */
mt_status mt_roi_pool_backward(const mt_tensor *g, const mt_tensor *argmax, const int64_t *x_shape,
                               mt_tensor **out);

/* Greedy non-maximum suppression: boxes (n, 4), scores (n); idxs (n,
 * integer) or NULL: when given, boxes suppress only boxes of the same idx
 * (batched_nms). keep (int64) holds the 1-based positions of the kept boxes
 * by decreasing score; equal scores keep their input order (a stable
 * sort), so the result is the same on CPU and CUDA. A box is suppressed
 * when its IoU with a kept higher-ranked box is > iou_threshold. */
mt_status mt_nms(const mt_tensor *boxes, const mt_tensor *scores, const mt_tensor *idxs, double iou_threshold,
                 mt_tensor **keep);

/* The steps of mt_color_jitter, as codes in its order rows (0: no step). */
enum { MT_CJ_NONE, MT_CJ_BRIGHTNESS, MT_CJ_CONTRAST, MT_CJ_SATURATION, MT_CJ_HUE };

/* out [N, 3, H, W] (x's dtype): image n of x (uint8 or float32, CPU) run
 * through the steps that row n of order ([N, K] int64, K <= 4, each code at
 * most once) lists, in that order, with the factors of row n of factors
 * ([N, 4] floating: brightness, contrast, saturation >= 0, hue in [-0.5,
 * 0.5]). Each step computes as torchvision's adjust_* in float32: blends
 * clamp, and uint8 images are truncated back to uint8 after every step;
 * contrast blends with the mean gray of the image as it is at that step.
 * Not differentiable. */
mt_status mt_color_jitter(const mt_tensor *x, const mt_tensor *factors, const mt_tensor *order, mt_tensor **out);
/* out (x's shape, contiguous uint8): each plane [H, W] of the uint8 image x
 * [..., H, W] (CPU) equalized as torchvision's equalize: lut[k] = (pixels
 * below value k + step / 2) / step, clamped to 255, with step = (pixels
 * outside the last non-empty value) / 255; planes with step 0 are copied. */
mt_status mt_image_equalize(const mt_tensor *x, mt_tensor **out);

#endif
