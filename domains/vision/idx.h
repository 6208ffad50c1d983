/* idx.h -- the idx format of MNIST-style data sets: bytes 0 0 T D, then D
 * big-endian int32 sizes, then the big-endian data; the whole file may be
 * gzip-compressed. idx.c decodes from memory (the fuzz target links it
 * alone); idx_read.c makes a tensor from a file. */
#ifndef MTD_IDX_H
#define MTD_IDX_H

#include "mt.h"

typedef struct mtd_idx_info {
  mt_dtype dtype;
  int ndim;
  int64_t shape[MT_MAXDIM];
  size_t nbytes; /* size of the decoded data */
} mtd_idx_info;

/* Called once the header is known: sets *data to a buffer of info->nbytes
 * bytes for the data, or fails (mt_fail) to stop the decoding. */
typedef mt_status (*mtd_idx_alloc_fn)(void *ctx, const mtd_idx_info *info, void **data);

/* Decodes the idx image buf[0..len), gzip-compressed (recognised by its
 * magic bytes) or plain, into the buffer alloc returns, in host byte order.
 * Bad magic, unsupported type codes, too many dimensions, sizes that
 * overflow, truncated or trailing data and gzip errors are reported; the
 * caller owns the buffer from alloc whatever the status. */
mt_status mtd_idx_decode(const unsigned char *buf, size_t len, mtd_idx_alloc_fn alloc, void *ctx, mtd_idx_info *info);

/* Reads an idx file (plain or .gz) into a new tensor. */
mt_status mtd_idx_read(const char *path, mt_tensor **out);

#endif
