/* idx_read.c -- reads an idx file (plain or gzip) into a new tensor: the
 * file comes into memory whole, then idx.c decodes it straight into the
 * tensor's storage. */
#include <stdlib.h>

#include "idx.h"
#include "io/fileio.h"

static mt_status new_tensor(void *ctx, const mtd_idx_info *info, void **data) {
  mt_tensor **t = ctx;
  mt_status st = mt_empty(info->shape, info->ndim, info->dtype, mt_cpu(), t);
  if (!st) *data = mt_data(*t);
  return st;
}

mt_status mtd_idx_read(const char *path, mt_tensor **out) {
  unsigned char *buf;
  size_t len;
  mt_status st = mt_read_file(path, (size_t)1 << 40, &buf, &len);
  if (st) return st;
  mt_tensor *t = NULL;
  mtd_idx_info info;
  st = mtd_idx_decode(buf, len, new_tensor, &t, &info);
  free(buf);
  if (st) {
    if (t) mt_release(t);
    return st;
  }
  *out = t;
  return MT_OK;
}
