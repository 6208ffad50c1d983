/* fuzz_jpeg.c -- libFuzzer target for the JPEG decoder (domains/vision/jpeg.c).
 * Build and run: make fuzz. */
#define FUZZ_DECODE mtd_jpeg_decode
#define FUZZ_ORIENTATION mtd_jpeg_orientation
#define FUZZ_SPLIT
#include "fuzz_image.h"
