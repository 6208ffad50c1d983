/* image_decode.c -- the format-independent half of image decoding, free of
 * Lua so that DataLoader worker threads can use it too: telling PNG, JPEG
 * and WebP apart by their signature, decoding straight into an H x W x C
 * tensor and returning it as a C x H x W view (upright by EXIF when asked,
 * then a copy). The formats' own code is png_fast.c, png_decode.c, jpeg.c
 * and webp.c. */
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
  case MTD_PNG_LIBPNG: return mtd_png_decode_libpng(p, n, mode, max_bytes, img);
  case MTD_JPEG: return mtd_jpeg_decode(p, n, mode, max_bytes, img);
  case MTD_WEBP: return mtd_webp_decode(p, n, mode, max_bytes, img);
  default: return mt_fail(MT_EIO, "not a PNG, JPEG or WebP file (unknown signature)");
  }
}

/* img's alloc hook: the pixels go into a new H x W x C tensor (uint8, or
 * uint16 for 16 bits) kept in *(mt_tensor **)img->ctx, which the caller
 * releases. A decoder that asks twice gets a fresh tensor. */
static void *tensor_alloc(mtd_image *img, size_t n) {
  mt_tensor **t = img->ctx;
  int64_t shape[3] = {img->h, img->w, img->c};
  if (*t) mt_release(*t);
  *t = NULL;
  if (n != (size_t)img->h * img->w * img->c * (img->depth / 8)) {
    mt_fail(MT_EARG, "image decoder: %zu bytes asked for a %lld x %lld x %d image", n, (long long)img->h,
            (long long)img->w, img->c);
    return NULL;
  }
  return mt_empty(shape, 3, img->depth == 16 ? MT_UINT16 : MT_UINT8, mt_cpu(), t) ? NULL : mt_data(*t);
}

/* Decodes into *t (tensor_alloc's); on error *t is released. */
static mt_status decode_hwc(const unsigned char *p, size_t n, int format, int mode, int threads, size_t max_bytes,
                            mtd_image *img, mt_tensor **t) {
  *t = NULL;
  memset(img, 0, sizeof *img);
  img->alloc = tensor_alloc, img->ctx = t, img->threads = threads;
  mt_status st = mtd_decode(p, n, format, mode, max_bytes, img);
  if (st && *t) mt_release(*t), *t = NULL;
  return st;
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

/* The H x W x C pixels of t (img's; released here on every path) as a new
 * C x H x W tensor *out: a view when o is 1, else a contiguous copy shown
 * in EXIF orientation o. */
static mt_status to_chw(const mtd_image *img, mt_tensor *t, int o, mt_tensor **out) {
  mt_status st;
  if (o == 1) {
    int64_t shape[3] = {img->c, img->h, img->w}, strides[3] = {1, img->w * img->c, img->c};
    if (img->c == 1) strides[0] = img->h * img->w;
    st = mt_as_strided(t, 3, shape, strides, 0, out);
    mt_release(t);
    return st;
  }
  int64_t H = o >= 5 ? img->w : img->h, W = o >= 5 ? img->h : img->w, shape[3] = {img->c, H, W};
  st = mt_empty(shape, 3, img->depth == 16 ? MT_UINT16 : MT_UINT8, mt_cpu(), out);
  if (st) {
    mt_release(t);
    return st;
  }
  int64_t c = img->c, hw = H * W;
  const void *src = mt_data(t);
  void *dst = mt_data(*out);
  for (int64_t i = 0; i < H; i++)
    for (int64_t j = 0; j < W; j++) {
      int64_t y, x;
      source_of(o, img->h, img->w, i, j, &y, &x);
      int64_t s = (y * img->w + x) * c, d = i * W + j;
      for (int64_t k = 0; k < c; k++) {
        if (img->depth == 16)
          ((uint16_t *)dst)[k * hw + d] = ((const uint16_t *)src)[s + k];
        else
          ((uint8_t *)dst)[k * hw + d] = ((const uint8_t *)src)[s + k];
      }
    }
  mt_release(t);
  return MT_OK;
}

mt_status mtd_decode_tensor(const unsigned char *p, size_t n, int format, int mode, int orient, int threads,
                            size_t max_bytes, mt_tensor **out) {
  mtd_image img;
  mt_tensor *t;
  mt_status st = decode_hwc(p, n, format, mode, threads, max_bytes, &img, &t);
  if (st) return st;
  return to_chw(&img, t, orient ? img.orientation : 1, out);
}

mt_status mtd_decode_rgb8(const unsigned char *p, size_t n, size_t max_bytes, mt_tensor **out) {
  mtd_image img;
  mt_tensor *t;
  mt_status st = decode_hwc(p, n, MTD_ANY, MTD_UNCHANGED, 1, max_bytes, &img, &t);
  if (st) return st;
  if (img.depth == 8 && img.c == 3) return to_chw(&img, t, 1, out); /* already RGB: no copy */
  int64_t shape[3] = {img.h, img.w, 3}, npix = img.h * img.w;
  mt_tensor *rgb = NULL;
  st = mt_empty(shape, 3, MT_UINT8, mt_cpu(), &rgb);
  if (st) {
    mt_release(t);
    return st;
  }
  const void *src = mt_data(t);
  uint8_t *dst = (uint8_t *)mt_data(rgb);
  int c = img.c;
  for (int64_t i = 0; i < npix; i++)
    for (int k = 0; k < 3; k++) {
      int from = c >= 3 ? k : 0; /* gray spreads, alpha is dropped */
      unsigned v;
      if (img.depth == 16) {
        v = ((const uint16_t *)src)[i * c + from];
        v = c >= 3 ? v >> 8 : v > 255 ? 255 : v; /* PIL: colour keeps the high byte, gray clips */
      } else {
        v = ((const uint8_t *)src)[i * c + from];
      }
      dst[i * 3 + k] = (uint8_t)v;
    }
  mt_release(t);
  img.c = 3, img.depth = 8;
  return to_chw(&img, rgb, 1, out);
}
