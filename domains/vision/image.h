/* image.h -- PNG, JPEG and WebP decoding into 8- or 16-bit HWC pixel
 * buffers and C x H x W tensors, and JPEG encoding (PNG encoding is png.h).
 * Pure C over libpng, libjpeg and libwebp: no Lua here, so DataLoader
 * workers may decode too; l_image.c binds these to Lua. */
#ifndef MTD_IMAGE_H
#define MTD_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mt.h"

/* torchvision's ImageReadMode values */
enum { MTD_UNCHANGED = 0, MTD_GRAY, MTD_GRAY_ALPHA, MTD_RGB, MTD_RGB_ALPHA };

/* A decoded image: h x w pixels of c channels, row-major HWC, depth 8
 * (uint8_t samples) or 16 (uint16_t, native byte order). orientation is the
 * EXIF orientation 1..8 found in the file (1 when none). Where the pixels
 * go: when alloc is NULL, pix is malloc'ed and owned by whoever holds the
 * struct (free it); else the decoder calls alloc(img, bytes) once h, w, c
 * and depth are set and writes there, and never frees it (alloc's owner,
 * ctx, does; alloc returns NULL with the message set on failure). */
typedef struct mtd_image {
  int64_t h, w;
  int c, depth, orientation;
  void *pix;
  void *(*alloc)(struct mtd_image *img, size_t n);
  void *ctx;
  int threads; /* JPEG: decode in up to this many parts at once (0, 1: one) */
} mtd_image;

/* For the decoders: clears img but its alloc, ctx and threads; gets /
 * drops the pixel buffer the way img asks. */
static inline void mtd_image_reset(mtd_image *img) {
  void *(*alloc)(struct mtd_image *, size_t) = img->alloc;
  void *ctx = img->ctx;
  int threads = img->threads;
  memset(img, 0, sizeof *img);
  img->alloc = alloc, img->ctx = ctx, img->threads = threads;
}
static inline void *mtd_image_pixels(mtd_image *img, size_t n) {
  return img->pix = img->alloc ? img->alloc(img, n) : malloc(n);
}
static inline void mtd_image_drop(mtd_image *img) {
  if (!img->alloc) free(img->pix);
  img->pix = NULL;
}

/* Decode n bytes of a PNG / JPEG file converted to `mode`, refusing images
 * whose decoded size exceeds max_bytes. img's alloc and ctx are read (set
 * them, or zero the struct). On error the message names the reason and
 * nothing malloc'ed is left (what alloc gave is its owner's). */
mt_status mtd_png_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img);
mt_status mtd_jpeg_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img);
/* mtd_png_decode is mtd_png_fast (png_fast.c: common files without libpng;
 * returns 0, leaving img alone, for any other, else 1 with *st set) or
 * else mtd_png_decode_libpng (png_decode.c: every file). */
int mtd_png_fast(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img, mt_status *st);
mt_status mtd_png_decode_libpng(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img);
mt_status mtd_webp_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img);

/* Image formats; mtd_image_format tells them apart by their signature
 * (MTD_ANY: none of them). mtd_decode decodes as `format` (MTD_ANY: by the
 * signature; MTD_PNG_LIBPNG: a PNG through libpng alone, for tests). */
enum { MTD_ANY, MTD_PNG, MTD_JPEG, MTD_WEBP, MTD_PNG_LIBPNG };
int mtd_image_format(const unsigned char *p, size_t n);
mt_status mtd_decode(const unsigned char *p, size_t n, int format, int mode, size_t max_bytes, mtd_image *img);

/* Decodes as mtd_decode into a new C x H x W CPU tensor *out, uint8 or (16
 * bits) uint16: a view (strides 1, W*C, C) of the decoder's H x W x C
 * pixels, as torchvision's, or a contiguous copy turned upright when orient
 * is set and the file's EXIF orientation is not 1. JPEGs are decoded in up
 * to `threads` parts at once (0, 1: one pass). */
mt_status mtd_decode_tensor(const unsigned char *p, size_t n, int format, int mode, int orient, int threads,
                            size_t max_bytes, mt_tensor **out);

/* The file (any format) as PIL's convert("RGB") of it, torchvision's
 * ImageFolder loader: a uint8 3 x H x W view as above. Gray spreads to three
 * channels, alpha is dropped, 16-bit colour keeps its high byte and 16-bit
 * gray clips at 255. One pass, no Lua: worker threads call it. */
mt_status mtd_decode_rgb8(const unsigned char *p, size_t n, size_t max_bytes, mt_tensor **out);

/* Encodes h x w pixels of c channels (1 gray, 3 RGB), HWC bytes at pix, as a
 * JPEG of quality 1..100: *out (malloc'ed; free it) of *n bytes. */
mt_status mtd_jpeg_encode(const uint8_t *pix, int64_t h, int64_t w, int c, int quality, unsigned char **out, size_t *n);

/* The EXIF orientation (1..8) of an APP1 "Exif" payload of n bytes, or 1;
 * mtd_tiff_orientation: the same of bare TIFF data (a PNG's eXIf chunk). */
int mtd_exif_orientation(const unsigned char *p, size_t n);
/* The EXIF orientation (1..8) of n bytes of a JPEG file, found by walking
 * its marker segments up to the first scan; 1 when none or malformed. */
int mtd_jpeg_orientation(const unsigned char *p, size_t n);
int mtd_tiff_orientation(const unsigned char *p, size_t n);

#endif
