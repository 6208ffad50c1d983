/* resize.h -- image resampling for torch.vision (resize.c): the resize of
 * [..., H, W] planes with torchvision's interpolation modes, its adjoint,
 * and a batched crop-and-resize. */
#ifndef MT_RESIZE_H
#define MT_RESIZE_H

#include "mt.h"

/* interpolation modes (the args word of the ops) */
enum { MT_RS_NEAREST, MT_RS_NEAREST_EXACT, MT_RS_BILINEAR, MT_RS_BICUBIC, MT_RS_NMODES };

/* *out = x [..., H, W] resampled to [..., oh, ow]: nearest, nearest-exact,
 * bilinear or bicubic (antialias: the filter widens by the scale on
 * downscale, as PyTorch's _upsample_*_aa; else interpolate's
 * align_corners=false). x uint8 (rounded, clamped), float16, bfloat16,
 * float32 or float64; CPU or CUDA. */
mt_status mt_image_resize(const mt_tensor *x, int64_t oh, int64_t ow, int mode, bool antialias, mt_tensor **out);
/* *out [..., ih, iw] = the adjoint of mt_image_resize applied to g [..., oh, ow]. */
mt_status mt_image_resize_backward(const mt_tensor *g, int64_t ih, int64_t iw, int mode, bool antialias,
                                   mt_tensor **out);
/* *out [N, ..., oh, ow]: image n of x [N, ..., H, W] cropped to boxes[n] =
 * {top, left, height, width} (int64, 0-based, inside the image),
 * resampled as mt_image_resize and, for boxes [N, 6] = {..., hflip, vflip},
 * flipped where the flags are set, all in one kernel. */
mt_status mt_image_crop_resize(const mt_tensor *x, const mt_tensor *boxes, int64_t oh, int64_t ow, int mode,
                               bool antialias, mt_tensor **out);

#endif
