/* webp.c -- WebP decoding (lossy, lossless, with or without alpha) over
 * libwebp's simple decoding API, from memory into an 8-bit HWC buffer.
 * Animated files are refused (libwebp's simple API cannot decode them).
 * No Lua here; errors are mt_status with a message. */
#include <stdlib.h>
#include <string.h>

#include <webp/decode.h>

#include "image.h"

static const char *status_text(VP8StatusCode s) {
  switch (s) {
  case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
  case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
  case VP8_STATUS_BITSTREAM_ERROR: return "corrupt bitstream";
  case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
  case VP8_STATUS_SUSPENDED: return "suspended";
  case VP8_STATUS_USER_ABORT: return "aborted";
  case VP8_STATUS_NOT_ENOUGH_DATA: return "truncated file (not enough data)";
  default: return "unknown error";
  }
}

/* Decodes n bytes of a WebP file: mode UNCHANGED gives RGB, or RGBA when the
 * file has alpha; RGB and RGB_ALPHA force 3 or 4 channels; the gray modes
 * are refused, as torchvision does. The pixels go where img asks (image.h). */
mt_status mtd_webp_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img) {
  mtd_image_reset(img);
  WebPBitstreamFeatures f;
  VP8StatusCode s = WebPGetFeatures(data, n, &f);
  if (s != VP8_STATUS_OK) return mt_fail(MT_EIO, "WebP decoder: %s", status_text(s));
  if (f.has_animation) return mt_fail(MT_EIO, "WebP decoder: animated WebP files are not supported");
  if (mode == MTD_GRAY || mode == MTD_GRAY_ALPHA)
    return mt_fail(MT_EARG, "WebP decoder: mode %s is not supported (use UNCHANGED, RGB or RGB_ALPHA)",
                   mode == MTD_GRAY ? "GRAY" : "GRAY_ALPHA");
  int c = mode == MTD_RGB ? 3 : mode == MTD_RGB_ALPHA ? 4 : f.has_alpha ? 4 : 3;
  if (f.width < 1 || f.height < 1) return mt_fail(MT_EIO, "WebP decoder: image of %d x %d pixels", f.width, f.height);
  size_t stride = (size_t)f.width * (size_t)c, bytes = stride * (size_t)f.height;
  if (bytes > max_bytes) return mt_fail(MT_ENOMEM, "WebP decoder: the image (%d x %d) is too large", f.width, f.height);
  img->h = f.height, img->w = f.width, img->c = c, img->depth = 8, img->orientation = 1;
  uint8_t *pix = mtd_image_pixels(img, bytes);
  if (!pix) return img->alloc ? MT_ENOMEM : mt_fail(MT_ENOMEM, "WebP decoder: out of memory");
  uint8_t *ok = c == 4 ? WebPDecodeRGBAInto(data, n, pix, bytes, (int)stride)
                       : WebPDecodeRGBInto(data, n, pix, bytes, (int)stride);
  if (!ok) {
    mtd_image_drop(img);
    return mt_fail(MT_EIO, "WebP decoder: corrupt or truncated file");
  }
  return MT_OK;
}
