/* png_decode.c -- PNG decoding over libpng from memory. libpng's transforms
 * do the conversions (palette and low bit depths expanded, tRNS to alpha,
 * gray <-> RGB, alpha added or stripped); libpng's errors longjmp to the
 * setjmp in decode_rows, which frees everything and returns an mt_status. */
#include <png.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

typedef struct {
  const unsigned char *p;
  size_t n, at;
} src;

static void read_mem(png_structp png, png_bytep out, png_size_t len) {
  src *s = png_get_io_ptr(png);
  if (len > s->n - s->at) png_error(png, "the file is truncated");
  memcpy(out, s->p + s->at, len);
  s->at += len;
}

static void on_error(png_structp png, png_const_charp msg) {
  mt_fail(MT_EIO, "PNG decoder: %s", msg);
  png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* Sets libpng's transforms turning the file's color type into `mode`
 * (torchvision's choices, with the gray weights of its decode_png). */
static void set_mode(png_structp png, png_infop info, int mode) {
  int type = png_get_color_type(png, info);
  png_set_expand(png); /* palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha */
  int color = (type & PNG_COLOR_MASK_COLOR) != 0;
  int alpha = (type & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, info, PNG_INFO_tRNS);
  if ((mode == MTD_GRAY || mode == MTD_GRAY_ALPHA) && color) png_set_rgb_to_gray(png, 1, 0.2989, 0.587);
  if ((mode == MTD_RGB || mode == MTD_RGB_ALPHA) && !color) png_set_gray_to_rgb(png);
  if ((mode == MTD_GRAY || mode == MTD_RGB) && alpha) png_set_strip_alpha(png);
  if ((mode == MTD_GRAY_ALPHA || mode == MTD_RGB_ALPHA) && !alpha) png_set_add_alpha(png, 0xffff, PNG_FILLER_AFTER);
  if (png_get_bit_depth(png, info) == 16) png_set_swap(png); /* little-endian hosts: native uint16 */
  png_set_interlace_handling(png);
}

/* Reads the header and the rows into img (pix left for the caller to free
 * on error: it is set before any row is read). */
static mt_status decode_rows(png_structp png, png_infop info, int mode, size_t max_bytes, mtd_image *img,
                             png_bytep **rows) {
  if (setjmp(png_jmpbuf(png))) return MT_EIO; /* on_error set the message */
  /* ancillary chunks that do not change the pixels we return are skipped
   * unread (an ICC profile is otherwise inflated and checked) */
  static const png_byte skip[] = "iCCP\0sRGB\0gAMA\0cHRM\0iTXt\0tEXt\0zTXt\0sPLT\0hIST\0bKGD\0pHYs\0tIME\0sBIT\0";
  png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skip, (int)(sizeof skip / 5));
#ifdef MTD_FUZZ_NO_CRC /* the fuzz build: mutations reach the pixels (png_fast.c skips them too) */
  png_set_crc_action(png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
#endif
  png_read_info(png, info);
  png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
  set_mode(png, info, mode);
  png_read_update_info(png, info);
  int c = png_get_channels(png, info), depth = png_get_bit_depth(png, info);
  size_t rowbytes = png_get_rowbytes(png, info);
  if (w == 0 || h == 0) return mt_fail(MT_EIO, "PNG decoder: the image has no pixels");
  if (rowbytes != (size_t)w * (size_t)c * (depth / 8) || (uint64_t)rowbytes * h > max_bytes)
    return mt_fail(MT_EARG, "PNG decoder: an image of %lu x %lu pixels, %d channels of %d bits, is too large",
                   (unsigned long)h, (unsigned long)w, c, depth);
  img->h = h, img->w = w, img->c = c, img->depth = depth, img->orientation = 1;
  if (!mtd_image_pixels(img, rowbytes * h)) return img->alloc ? MT_ENOMEM : mt_fail(MT_ENOMEM, "PNG decoder: out of memory");
  *rows = malloc(h * sizeof **rows);
  if (!*rows) return mt_fail(MT_ENOMEM, "PNG decoder: out of memory");
  for (png_uint_32 y = 0; y < h; y++) (*rows)[y] = (png_bytep)img->pix + y * rowbytes;
  png_read_image(png, *rows);
  png_read_end(png, info); /* an eXIf chunk may follow the pixels */
  png_bytep exif = NULL;
  png_uint_32 nexif = 0;
  if (png_get_eXIf_1(png, info, &nexif, &exif) && exif) img->orientation = mtd_tiff_orientation(exif, nexif);
  return MT_OK;
}

mt_status mtd_png_decode(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img) {
  mt_status st;
  mtd_image_reset(img);
  return mtd_png_fast(data, n, mode, max_bytes, img, &st) ? st : mtd_png_decode_libpng(data, n, mode, max_bytes, img);
}

mt_status mtd_png_decode_libpng(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img) {
  mtd_image_reset(img);
  if (n < 8 || png_sig_cmp(data, 0, 8)) return mt_fail(MT_EARG, "PNG decoder: not a PNG file (wrong signature)");
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return mt_fail(MT_ENOMEM, "PNG decoder: out of memory");
  }
  src s = {data, n, 0};
  png_set_read_fn(png, &s, read_mem);
  png_bytep *rows = NULL;
  mt_status st = decode_rows(png, info, mode, max_bytes, img, &rows);
  png_destroy_read_struct(&png, &info, NULL);
  free(rows);
  if (st) mtd_image_drop(img);
  return st;
}
