/* fuzz_webp.c -- libFuzzer target for the WebP decoder (domains/vision/webp.c).
 * Build and run: make fuzz. Seeds: tests/fuzz/corpus_webp/ (PIL-made files of
 * tests/domains/vision/webp/). */
#define FUZZ_DECODE mtd_webp_decode
#include "fuzz_image.h"
