/* st_file.c -- safetensors files <-> tensors: loading reads the header,
 * validates it (safetensors.c) and reads each tensor's bytes straight into
 * its storage; saving writes contiguous copies through an atomic
 * replacement (fileio.c). Little-endian hosts only, like the format. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "safetensors.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "st_file.c writes tensor bytes as they are in memory: little-endian hosts only"
#endif

mt_status mt_st_save(const char *path, const mt_st_item *items, int n, const mt_st_meta *meta, int nmeta) {
  mt_tensor **c = calloc(n > 0 ? (size_t)n : 1, sizeof *c);
  mt_st_entry *e = calloc(n > 0 ? (size_t)n : 1, sizeof *e);
  mt_buf hdr = {0};
  mt_status st = (!c || !e) ? mt_fail(MT_ENOMEM, "out of memory") : MT_OK;
  for (int i = 0; i < n && !st; i++) {
    const mt_tensor *t = items[i].t;
    if (mt_tdevice(t).type != MT_CPU) {
      st = mt_fail(MT_EDEVICE, "only CPU tensors can be saved (move them with :cpu() first)");
      break;
    }
    st = mt_contiguous(t, &c[i]);
    e[i].name = items[i].name;
    e[i].name_len = items[i].name_len;
    e[i].dtype = (mt_dtype)t->dtype;
    e[i].ndim = t->ndim;
    memcpy(e[i].shape, t->shape, sizeof t->shape);
  }
  if (!st) st = mt_st_build_header(e, n, meta, nmeta, &hdr);
  mt_atomic_file f = {-1, NULL, NULL};
  if (!st) st = mt_atomic_open(path, &f);
  if (!st) {
    st = mt_atomic_write(&f, hdr.p, hdr.n);
    for (int i = 0; i < n && !st; i++) st = mt_atomic_write(&f, mt_data(c[i]), (size_t)(e[i].end - e[i].begin));
    if (st)
      mt_atomic_abort(&f);
    else
      st = mt_atomic_commit(&f);
  }
  for (int i = 0; c && i < n; i++)
    if (c[i]) mt_release(c[i]);
  free(c);
  free(e);
  mt_buf_free(&hdr);
  return st;
}

/* Reads exactly n bytes at offset off. */
static mt_status read_at(int fd, void *buf, size_t n, uint64_t off) {
  char *p = buf;
  while (n > 0) {
    ssize_t k = pread(fd, p, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n, (off_t)off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0)
      return mt_fail(MT_EIO, "read failed: %s", k == 0 ? "the file shrank while being read" : strerror(errno));
    p += k;
    n -= (size_t)k;
    off += (uint64_t)k;
  }
  return MT_OK;
}

/* Reads the header and validates it against the file's size. */
static mt_status load_header(int fd, mt_st_header *h) {
  struct stat sb;
  if (fstat(fd, &sb) != 0) return mt_fail(MT_EIO, "cannot read: %s", strerror(errno));
  if (!S_ISREG(sb.st_mode)) return mt_fail(MT_EIO, "cannot read: not a regular file");
  uint64_t size = (uint64_t)sb.st_size, n;
  if (size < 8)
    return mt_fail(MT_EARG, "the file is too short (%llu bytes) to be a safetensors file", (unsigned long long)size);
  unsigned char prefix[8];
  mt_status st = read_at(fd, prefix, 8, 0);
  if (!st) st = mt_st_header_len(prefix, size, &n);
  if (st) return st;
  char *text = malloc((size_t)n);
  if (!text) return mt_fail(MT_ENOMEM, "out of memory reading a %llu-byte header", (unsigned long long)n);
  st = read_at(fd, text, (size_t)n, 8);
  if (!st) st = mt_st_parse_header(text, (size_t)n, size - 8 - n, h);
  free(text);
  if (!st) h->data_start = 8 + n;
  return st;
}

mt_status mt_st_load(const char *path, mt_st_file *f) {
  memset(f, 0, sizeof *f);
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block the open */
  if (fd < 0) return mt_fail(MT_EIO, "cannot open: %s", strerror(errno));
  mt_status st = load_header(fd, &f->h);
  if (!st) {
    f->tensors = calloc(f->h.n ? (size_t)f->h.n : 1, sizeof *f->tensors);
    if (!f->tensors) st = mt_fail(MT_ENOMEM, "out of memory");
  }
  for (int i = 0; i < f->h.n && !st; i++) {
    const mt_st_entry *e = &f->h.entries[i];
    st = mt_empty(e->shape, e->ndim, e->dtype, mt_cpu(), &f->tensors[i]);
    if (!st) st = read_at(fd, mt_data(f->tensors[i]), (size_t)(e->end - e->begin), f->h.data_start + e->begin);
    if (!st && e->dtype == MT_BOOL) { /* any nonzero byte is true; our kernels expect 0 or 1 */
      unsigned char *b = (unsigned char *)mt_data(f->tensors[i]);
      for (uint64_t k = 0; k < e->end - e->begin; k++) b[k] = b[k] != 0;
    }
  }
  close(fd);
  if (st) mt_st_file_free(f);
  return st;
}

void mt_st_file_free(mt_st_file *f) {
  for (int i = 0; f->tensors && i < f->h.n; i++)
    if (f->tensors[i]) mt_release(f->tensors[i]);
  free(f->tensors);
  mt_st_header_free(&f->h);
  memset(f, 0, sizeof *f);
}
