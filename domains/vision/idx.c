/* idx.c -- decodes idx images (MNIST and friends) from memory, plain or
 * gzip-compressed (zlib, streamed straight into the caller's buffer). Sizes
 * in the header are untrusted: they are checked for overflow and against
 * what the input can hold before anything is allocated. No files here. */
#include "idx.h"

#include <limits.h>
#include <string.h>
#include <zlib.h>

#define GZ_MAX_RATIO 1032 /* deflate never expands data more than this */

static const struct {
  unsigned char code;
  mt_dtype dtype;
  unsigned size; /* here rather than from dtype.c: the fuzz target links this file alone */
} types[] = {{0x08, MT_UINT8, 1}, {0x09, MT_INT8, 1},    {0x0B, MT_INT16, 2},
             {0x0C, MT_INT32, 4}, {0x0D, MT_FLOAT32, 4}, {0x0E, MT_FLOAT64, 8}};

/* The input: a plain byte range or a gzip stream over one. */
typedef struct src {
  const unsigned char *buf;
  size_t len, pos;
  int gz, zdone;
  z_stream z;
} src;

static mt_status gz_error(src *s, int rc) {
  if (rc == Z_MEM_ERROR) return mt_fail(MT_ENOMEM, "out of memory while decompressing");
  if (rc == Z_BUF_ERROR) return mt_fail(MT_EARG, "the gzip data is truncated");
  return mt_fail(MT_EARG, "the gzip data is corrupt (%s)", s->z.msg ? s->z.msg : "bad stream");
}

/* Reads up to n bytes into dst; *got < n only at the end of the input. */
static mt_status src_read(src *s, unsigned char *dst, size_t n, size_t *got) {
  if (!s->gz) {
    size_t k = s->len - s->pos < n ? s->len - s->pos : n;
    if (k) memcpy(dst, s->buf + s->pos, k);
    s->pos += k;
    *got = k;
    return MT_OK;
  }
  size_t done = 0;
  while (done < n && !s->zdone) {
    size_t chunk = n - done > (1u << 30) ? (1u << 30) : n - done;
    s->z.next_out = dst + done;
    s->z.avail_out = (uInt)chunk;
    int rc = inflate(&s->z, Z_NO_FLUSH);
    done += chunk - s->z.avail_out;
    if (rc == Z_STREAM_END) {
      if (s->z.avail_in == 0) {
        s->zdone = 1;
      } else if (inflateReset(&s->z) != Z_OK) { /* another gzip member follows */
        return gz_error(s, Z_STREAM_ERROR);
      }
    } else if (rc == Z_BUF_ERROR && s->z.avail_in == 0) {
      return gz_error(s, Z_BUF_ERROR);
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return gz_error(s, rc);
    }
  }
  *got = done;
  return MT_OK;
}

/* Reads the magic and sizes into info; *esize gets the element size. */
static mt_status read_header(src *s, size_t len, mtd_idx_info *info, unsigned *esize) {
  unsigned char h[4 * 256];
  size_t got;
  mt_status st = src_read(s, h, 4, &got);
  if (st) return st;
  if (got < 4) return mt_fail(MT_EARG, "the file is too short (%zu bytes) to be an idx file", got);
  if (h[0] != 0 || h[1] != 0)
    return mt_fail(MT_EARG, "bad magic number %02x %02x %02x %02x (an idx file starts with 00 00)", h[0], h[1], h[2],
                   h[3]);
  unsigned es = 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (types[i].code == h[2]) info->dtype = types[i].dtype, es = types[i].size;
  if (!es)
    return mt_fail(MT_EDTYPE, "unknown data type code 0x%02x (idx knows 08 u8, 09 i8, 0B i16, 0C i32, 0D f32, 0E f64)",
                   h[2]);
  info->ndim = h[3];
  if (info->ndim > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "%d dimensions; moontorch tensors have at most %d", info->ndim, MT_MAXDIM);
  if ((st = src_read(s, h, 4 * (size_t)info->ndim, &got))) return st;
  if (got < 4 * (size_t)info->ndim)
    return mt_fail(MT_EARG, "truncated header: %d dimension sizes expected", info->ndim);
  uint64_t bytes = es;
  for (int i = 0; i < info->ndim; i++) {
    const unsigned char *d = h + 4 * i;
    uint32_t v = (uint32_t)d[0] << 24 | (uint32_t)d[1] << 16 | (uint32_t)d[2] << 8 | d[3];
    if (v > INT32_MAX) return mt_fail(MT_ESHAPE, "dimension %d has a negative size", i + 1);
    info->shape[i] = v;
    if (v && bytes > (uint64_t)INT64_MAX / v)
      return mt_fail(MT_ESHAPE, "the sizes overflow (their product is too large)");
    bytes *= v;
  }
  size_t hdr = 4 + 4 * (size_t)info->ndim;
  if (!s->gz && bytes != len - hdr)
    return bytes > len - hdr ? mt_fail(MT_EARG, "truncated: the header promises %llu bytes of data, the file holds %zu",
                                       (unsigned long long)bytes, len - hdr)
                             : mt_fail(MT_EARG, "%llu bytes of trailing data after the %llu promised by the header",
                                       (unsigned long long)(len - hdr - bytes), (unsigned long long)bytes);
  if (s->gz && bytes / GZ_MAX_RATIO > len)
    return mt_fail(MT_EARG, "the header promises %llu bytes, more than %zu bytes of gzip data can hold (corrupt file?)",
                   (unsigned long long)bytes, len);
  if (bytes > SIZE_MAX) return mt_fail(MT_ENOMEM, "the data is too large");
  info->nbytes = (size_t)bytes;
  *esize = es;
  return MT_OK;
}

/* Big-endian elements of size es to host order, in place. */
static void to_host(unsigned char *p, size_t nbytes, size_t es) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  (void)p, (void)nbytes, (void)es;
#else
  if (es == 1) return;
  for (size_t i = 0; i + es <= nbytes; i += es)
    for (size_t a = i, b = i + es - 1; a < b; a++, b--) {
      unsigned char t = p[a];
      p[a] = p[b];
      p[b] = t;
    }
#endif
}

static mt_status decode(src *s, size_t len, mtd_idx_alloc_fn alloc, void *ctx, mtd_idx_info *info) {
  unsigned es;
  mt_status st = read_header(s, len, info, &es);
  if (st) return st;
  void *data = NULL;
  if ((st = alloc(ctx, info, &data))) return st;
  size_t got;
  if ((st = src_read(s, data, info->nbytes, &got))) return st;
  if (got < info->nbytes)
    return mt_fail(MT_EARG, "truncated: the header promises %zu bytes of data, the file holds %zu", info->nbytes, got);
  unsigned char extra;
  if ((st = src_read(s, &extra, 1, &got))) return st;
  if (got) return mt_fail(MT_EARG, "trailing data after the %zu bytes promised by the header", info->nbytes);
  to_host(data, info->nbytes, es);
  return MT_OK;
}

mt_status mtd_idx_decode(const unsigned char *buf, size_t len, mtd_idx_alloc_fn alloc, void *ctx, mtd_idx_info *info) {
  memset(info, 0, sizeof *info);
  src s;
  memset(&s, 0, sizeof s);
  s.buf = buf;
  s.len = len;
  s.gz = len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
  if (!s.gz) return decode(&s, len, alloc, ctx, info);
  if (len > UINT_MAX) return mt_fail(MT_ENOMEM, "the gzip file is too large (more than 4 GB)");
  s.z.next_in = (unsigned char *)buf;
  s.z.avail_in = (uInt)len;
  if (inflateInit2(&s.z, 16 + MAX_WBITS) != Z_OK) return mt_fail(MT_ENOMEM, "cannot start zlib");
  mt_status st = decode(&s, len, alloc, ctx, info);
  inflateEnd(&s.z);
  return st;
}
