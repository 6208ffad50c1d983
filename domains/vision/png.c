/* png.c -- in-memory PNG encoder over libpng (decoding: png_decode.c). libpng reports errors by
 * longjmp to the jmp_buf of its write struct; that jump stays inside
 * mtd_png_encode, which turns it into an mt_status like every engine call. */
#include "png.h"

#include <png.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned char *p;
  size_t n, cap;
  int oom;
} membuf;

static void write_mem(png_structp png, png_bytep data, png_size_t len) {
  membuf *b = png_get_io_ptr(png);
  if (b->oom) return;
  if (b->n + len > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + len) cap *= 2;
    unsigned char *q = realloc(b->p, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->p = q, b->cap = cap;
  }
  memcpy(b->p + b->n, data, len);
  b->n += len;
}

static void flush_mem(png_structp png) { (void)png; }

/* libpng's message goes into the engine's error slot before the jump. */
static void on_error(png_structp png, png_const_charp msg) {
  mt_fail(MT_EIO, "PNG encoder: %s", msg);
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

mt_status mtd_png_encode(const uint8_t *pix, int64_t h, int64_t w, int c, unsigned char **out, size_t *n) {
  return mtd_png_encode_level(pix, h, w, c, 6, out, n);
}

mt_status mtd_png_encode_level(const uint8_t *pix, int64_t h, int64_t w, int c, int level, unsigned char **out,
                               size_t *n) {
  return mtd_png_encode_depth(pix, h, w, c, 8, level, out, n);
}

mt_status mtd_png_encode_depth(const void *pix, int64_t h, int64_t w, int c, int depth, int level, unsigned char **out,
                               size_t *n) {
  static const int types[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                               PNG_COLOR_TYPE_RGB_ALPHA};
  *out = NULL, *n = 0;
  if (c < 1 || c > 4) return mt_fail(MT_EARG, "PNG encoder: %d channels (expected 1, 2, 3 or 4)", c);
  if (depth != 8 && depth != 16) return mt_fail(MT_EARG, "PNG encoder: %d-bit samples (expected 8 or 16)", depth);
  if (h < 1 || w < 1 || h > 0x7fffffff / 4 || w > 0x7fffffff / 4 / c / (depth / 8))
    return mt_fail(MT_EARG, "PNG encoder: image of %lld x %lld pixels cannot be encoded", (long long)h, (long long)w);
  int64_t rowbytes = w * c * (depth / 8);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info) {
    png_destroy_write_struct(&png, NULL);
    return mt_fail(MT_ENOMEM, "PNG encoder: out of memory");
  }
  membuf b = {NULL, 0, 0, 0};
  png_bytep *rows = malloc((size_t)h * sizeof *rows);
  mt_status st = MT_OK;
  if (!rows) {
    st = mt_fail(MT_ENOMEM, "PNG encoder: out of memory");
  } else if (setjmp(png_jmpbuf(png))) {
    st = MT_EIO; /* on_error set the message */
  } else {
    png_set_write_fn(png, &b, write_mem, flush_mem);
    png_set_compression_level(png, level);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, types[c], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    for (int64_t y = 0; y < h; y++) rows[y] = (png_bytep)pix + y * rowbytes;
    png_write_info(png, info);
    if (depth == 16) png_set_swap(png); /* native (little-endian) samples -> PNG's big-endian */
    png_write_image(png, rows);
    png_write_end(png, NULL);
    if (b.oom) st = mt_fail(MT_ENOMEM, "PNG encoder: out of memory");
  }
  png_destroy_write_struct(&png, &info);
  free(rows);
  if (st) {
    free(b.p);
    return st;
  }
  *out = b.p, *n = b.n;
  return MT_OK;
}
