/* fuzz_png.c -- libFuzzer target for the PNG decoder (domains/vision/png_decode.c).
 * Build and run: make fuzz. */
#define FUZZ_DECODE mtd_png_decode
#include "fuzz_image.h"
