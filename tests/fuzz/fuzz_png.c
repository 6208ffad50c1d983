/* fuzz_png.c -- libFuzzer target for the PNG decoders (domains/vision/png_fast.c,
 * png_decode.c): what the fast path decodes, libpng alone must decode to the
 * same pixels. The fuzz build checks no CRCs (MTD_FUZZ_NO_CRC, both paths),
 * so that mutations reach the pixels. Build and run: make fuzz. */
#define FUZZ_DECODE mtd_png_decode
#define FUZZ_REFERENCE mtd_png_decode_libpng
#include "fuzz_image.h"
