/* png.h -- PNG encoding of 8- and 16-bit images (TensorBoard's
 * Summary.Image, torch.vision.io.encode_png). */
#ifndef MTD_PNG_H
#define MTD_PNG_H

#include <stddef.h>
#include <stdint.h>

#include "mt.h"

/* Encodes h x w pixels of c channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA),
 * row-major HWC bytes at pix, as a PNG file in memory: *out (malloc'ed;
 * free it) of *n bytes. */
mt_status mtd_png_encode(const uint8_t *pix, int64_t h, int64_t w, int c, unsigned char **out, size_t *n);
/* The same with zlib's compression level 0..9 (mtd_png_encode uses 6). */
mt_status mtd_png_encode_level(const uint8_t *pix, int64_t h, int64_t w, int c, int level, unsigned char **out,
                               size_t *n);
/* The same for samples of `depth` bits (8: uint8_t, 16: uint16_t in native
 * byte order) at pix. */
mt_status mtd_png_encode_depth(const void *pix, int64_t h, int64_t w, int c, int depth, int level, unsigned char **out,
                               size_t *n);

#endif
