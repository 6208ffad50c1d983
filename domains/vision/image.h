/* image.h -- PNG, JPEG and WebP decoding into 8- or 16-bit HWC pixel
 * buffers and C x H x W tensors, and JPEG encoding (PNG encoding is png.h).
 * Pure C over libpng, libjpeg and libwebp: no Lua here, so DataLoader
 * workers may decode too; l_image.c binds these to Lua. */
#ifndef MTD_IMAGE_H
#define MTD_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "mt.h"

/* torchvision's ImageReadMode values */
enum { MTD_UNCHANGED = 0, MTD_GRAY, MTD_GRAY_ALPHA, MTD_RGB, MTD_RGB_ALPHA };

/* A decoded image: h x w pixels of c channels, row-major HWC, depth 8
 * (uint8_t samples) or 16 (uint16_t, native byte order); pix is malloc'ed
 * and owned by whoever holds the struct (free it). orientation is the
 * EXIF orientation 1..8 found in the file (1 when none). */
typedef struct mtd_image {
  int64_t h, w;
  int c, depth, orientation;
  void *pix;
} mtd_image;

/* Decode n bytes of a PNG / JPEG file converted to `mode`, refusing images
 * whose decoded size exceeds max_bytes. On error the message names the
 * reason and nothing is left allocated. */
mt_status mtd_png_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img);
mt_status mtd_jpeg_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img);
mt_status mtd_webp_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img);

/* Image formats; mtd_image_format tells them apart by their signature
 * (MTD_ANY: none of them). mtd_decode decodes as `format` (MTD_ANY: by the
 * signature). */
enum { MTD_ANY, MTD_PNG, MTD_JPEG, MTD_WEBP };
int mtd_image_format(const unsigned char *p, size_t n);
mt_status mtd_decode(const unsigned char *p, size_t n, int format, int mode, size_t max_bytes, mtd_image *img);

/* img (its pixels freed here, on every path) as a new C x H x W CPU tensor
 * *out, uint8 or (16 bits) int32, turned upright by its EXIF orientation
 * when orient is set. */
mt_status mtd_image_tensor(mtd_image *img, int orient, mt_tensor **out);

/* img (decoded UNCHANGED) turned into 8-bit RGB in place as PIL's
 * convert("RGB") of the file: gray spread to three channels, alpha dropped,
 * 16-bit colour reduced to its high byte and 16-bit gray clipped at 255
 * (torchvision's ImageFolder loader). On error img->pix is freed. */
mt_status mtd_image_rgb8(mtd_image *img);

/* Encodes h x w pixels of c channels (1 gray, 3 RGB), HWC bytes at pix, as a
 * JPEG of quality 1..100: *out (malloc'ed; free it) of *n bytes. */
mt_status mtd_jpeg_encode(const uint8_t *pix, int64_t h, int64_t w, int c, int quality, unsigned char **out, size_t *n);

/* The EXIF orientation (1..8) of an APP1 "Exif" payload of n bytes, or 1;
 * mtd_tiff_orientation: the same of bare TIFF data (a PNG's eXIf chunk). */
int mtd_exif_orientation(const unsigned char *p, size_t n);
int mtd_tiff_orientation(const unsigned char *p, size_t n);

#endif
