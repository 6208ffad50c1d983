/* jpeg_cuda.h -- JPEG decoding on CUDA devices through nvJPEG (jpeg_cuda.c).
 * No Lua here; l_image.c binds it as decode_jpeg(..., {device='cuda'}). */
#ifndef MTD_JPEG_CUDA_H
#define MTD_JPEG_CUDA_H

#include <stddef.h>

#include "mt.h"

/* Decodes count JPEG files (data[i] of n[i] bytes, host memory) on CUDA
 * device dev into out[i]: new contiguous uint8 C x H x W tensors there, C = 1
 * or 3 as mode (MTD_UNCHANGED, MTD_GRAY or MTD_RGB) asks, written on the
 * device's current stream; count > 1 decodes as batches. Images whose decoded
 * size exceeds max_bytes are refused. On error nothing is left allocated
 * and the message names the image (1-based) when one is at fault. */
mt_status mtd_jpeg_decode_cuda(const unsigned char *const *data, const size_t *n, int count, int mode, int dev,
                               size_t max_bytes, mt_tensor **out);

/* Whether nvJPEG loads (the reason in *why when not), and its version as
 * major * 1000 + minor * 10 + patch (0 when it does not load). */
int mtd_nvjpeg_version(const char **why);

#endif
