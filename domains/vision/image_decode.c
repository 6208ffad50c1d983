/* image_decode.c -- the format-independent half of image decoding, free of
 * Lua so that DataLoader worker threads can use it too: telling PNG, JPEG
 * and WebP apart by their signature, decoding into an mtd_image, and turning
 * that HWC buffer into a C x H x W tensor (upright by EXIF when asked). */
#include <stdlib.h>
#include <string.h>

#include "image.h"

/* MTD_PNG, MTD_JPEG or MTD_WEBP for the signature of the n bytes at p, or
 * MTD_ANY when it is none of them. */
int mtd_image_format(const unsigned char *p, size_t n) {
  if (n >= 8 && !memcmp(p, "\x89PNG\r\n\x1a\n", 8)) return MTD_PNG;
  if (n >= 3 && !memcmp(p, "\xff\xd8\xff", 3)) return MTD_JPEG;
  if (n >= 12 && !memcmp(p, "RIFF", 4) && !memcmp(p + 8, "WEBP", 4)) return MTD_WEBP;
  return MTD_ANY;
}

mt_status mtd_decode(const unsigned char *p, size_t n, int format, int mode, size_t max_bytes, mtd_image *img) {
  if (format == MTD_ANY) format = mtd_image_format(p, n);
  switch (format) {
  case MTD_PNG: return mtd_png_decode(p, n, mode, max_bytes, img);
  case MTD_JPEG: return mtd_jpeg_decode(p, n, mode, max_bytes, img);
  case MTD_WEBP: return mtd_webp_decode(p, n, mode, max_bytes, img);
  default: return mt_fail(MT_EIO, "not a PNG, JPEG or WebP file (unknown signature)");
  }
}

/* Source pixel (y, x) of output pixel (i, j) of an h x w image shown in
 * EXIF orientation o (2..8 flip and/or rotate it; 5..8 swap its sides). */
static void source_of(int o, int64_t h, int64_t w, int64_t i, int64_t j, int64_t *y, int64_t *x) {
  /* per orientation: 1 = swap the sides, 2 = flip rows, 4 = flip columns */
  static const unsigned char how[9] = {0, 0, 4, 6, 2, 1, 3, 7, 5};
  int f = o >= 1 && o <= 8 ? how[o] : 0;
  *y = f & 1 ? j : i, *x = f & 1 ? i : j;
  if (f & 2) *y = h - 1 - *y;
  if (f & 4) *x = w - 1 - *x;
}

mt_status mtd_image_tensor(mtd_image *img, int orient, mt_tensor **out) {
  int o = orient ? img->orientation : 1;
  int64_t H = o >= 5 ? img->w : img->h, W = o >= 5 ? img->h : img->w, shape[3] = {img->c, H, W};
  mt_tensor *t = NULL;
  mt_status st = mt_empty(shape, 3, img->depth == 16 ? MT_INT32 : MT_UINT8, mt_cpu(), &t);
  if (st) {
    free(img->pix);
    img->pix = NULL;
    return st;
  }
  int64_t c = img->c, hw = H * W;
  for (int64_t i = 0; i < H; i++)
    for (int64_t j = 0; j < W; j++) {
      int64_t y, x;
      source_of(o, img->h, img->w, i, j, &y, &x);
      int64_t s = (y * img->w + x) * c, d = i * W + j;
      for (int64_t k = 0; k < c; k++) {
        if (img->depth == 16)
          ((int32_t *)mt_data(t))[k * hw + d] = ((uint16_t *)img->pix)[s + k];
        else
          ((uint8_t *)mt_data(t))[k * hw + d] = ((uint8_t *)img->pix)[s + k];
      }
    }
  free(img->pix);
  img->pix = NULL;
  *out = t;
  return MT_OK;
}

mt_status mtd_image_rgb8(mtd_image *img) {
  int64_t n = img->h * img->w;
  int c = img->c;
  uint8_t *out = malloc((size_t)n * 3);
  if (!out) {
    free(img->pix);
    img->pix = NULL;
    return mt_fail(MT_ENOMEM, "out of memory for a %lld x %lld image", (long long)img->h, (long long)img->w);
  }
  for (int64_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) {
      int from = c >= 3 ? k : 0; /* gray spreads, alpha is dropped */
      unsigned v;
      if (img->depth == 16) {
        v = ((uint16_t *)img->pix)[i * c + from];
        v = c >= 3 ? v >> 8 : v > 255 ? 255 : v; /* PIL: colour keeps the high byte, gray clips */
      } else {
        v = ((uint8_t *)img->pix)[i * c + from];
      }
      out[i * 3 + k] = (uint8_t)v;
    }
  free(img->pix);
  img->pix = out, img->c = 3, img->depth = 8;
  return MT_OK;
}
