/* fuzz_idx.c -- libFuzzer target for the idx decoder (domains/vision/idx.c),
 * plain and gzip. Accepted inputs must report a size that matches their
 * shape and dtype; the decoded buffer is written in full.
 * Build and run: make fuzz. */
#include <stdint.h>
#include <stdlib.h>

#include "../../domains/vision/idx.h"

#define LIMIT ((size_t)64 << 20) /* keep each run fast */

static mt_status alloc(void *ctx, const mtd_idx_info *info, void **data) {
  if (info->nbytes > LIMIT) return mt_fail(MT_ENOMEM, "too large for fuzzing");
  *data = malloc(info->nbytes ? info->nbytes : 1);
  *(void **)ctx = *data;
  return *data ? MT_OK : mt_fail(MT_ENOMEM, "out of memory");
}

static volatile unsigned sink; /* reads of the data must not be optimised away */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  void *buf = NULL;
  mtd_idx_info info;
  if (mtd_idx_decode(data, size, alloc, &buf, &info) == MT_OK) {
    static const unsigned size[MT_NDTYPE] = {
        [MT_UINT8] = 1, [MT_INT8] = 1, [MT_INT16] = 2, [MT_INT32] = 4, [MT_FLOAT32] = 4, [MT_FLOAT64] = 8};
    uint64_t n = size[info.dtype];
    for (int i = 0; i < info.ndim; i++) n *= (uint64_t)info.shape[i];
    if (n != info.nbytes) abort();

    for (size_t k = 0; k < info.nbytes; k++) sink += ((unsigned char *)buf)[k];
  }
  free(buf);
  return 0;
}
