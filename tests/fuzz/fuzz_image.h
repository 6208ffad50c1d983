/* fuzz_image.h -- the body of the image decoders' libFuzzer targets
 * (fuzz_png.c, fuzz_jpeg.c, fuzz_webp.c): define FUZZ_DECODE as the
 * decoder, then include this. Every ImageReadMode is tried (chosen by the
 * input's last byte); accepted inputs must report a sane shape and are read
 * in full. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../domains/vision/image.h"

#define LIMIT ((size_t)64 << 20) /* keep each run fast */

static volatile unsigned sink; /* reads of the data must not be optimised away */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int mode = size ? data[size - 1] % 5 : 0;
  mtd_image img = {0};
  if (FUZZ_DECODE(data, size, mode, LIMIT, &img) == MT_OK) {
    if (img.h < 1 || img.w < 1 || img.c < 1 || img.c > 4 || (img.depth != 8 && img.depth != 16)) abort();
    if (mode != MTD_UNCHANGED && img.c != (mode == MTD_GRAY ? 1 : mode == MTD_GRAY_ALPHA ? 2 : mode == MTD_RGB ? 3 : 4))
      abort();
    size_t n = (size_t)img.h * img.w * img.c * (img.depth / 8);
    for (size_t k = 0; k < n; k++) sink += ((unsigned char *)img.pix)[k];
#ifdef FUZZ_ORIENTATION /* the marker walk of the CUDA path agrees with the decoder */
    if (img.orientation != FUZZ_ORIENTATION(data, size)) abort();
#endif
#ifdef FUZZ_REFERENCE /* a second decoder (libpng alone) gives the same pixels */
    mtd_image ref = {0};
    if (FUZZ_REFERENCE(data, size, mode, LIMIT, &ref) != MT_OK) abort();
    if (ref.h != img.h || ref.w != img.w || ref.c != img.c || ref.depth != img.depth || memcmp(img.pix, ref.pix, n))
      abort();
    free(ref.pix);
#endif
#ifdef FUZZ_SPLIT /* decoding in parts gives the same pixels */
    mtd_image img2 = {0};
    img2.threads = 3;
    if (FUZZ_DECODE(data, size, mode, LIMIT, &img2) != MT_OK) abort();
    if (img2.h != img.h || img2.w != img.w || img2.c != img.c || memcmp(img.pix, img2.pix, n)) abort();
    free(img2.pix);
#endif
    free(img.pix);
  } else if (img.pix) {
    abort(); /* a failed decode leaves nothing allocated */
  }
  return 0;
}
