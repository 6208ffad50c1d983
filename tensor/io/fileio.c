/* fileio.c -- whole-file reads and atomic replacement (write a temporary
 * file in the same directory, fsync, rename, fsync the directory). POSIX
 * only; no knowledge of any format. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

mt_status mt_read_file(const char *path, size_t max, unsigned char **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO must not block the open */
  if (fd < 0) return mt_fail(MT_EIO, "cannot open: %s", strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0) {
    int e = errno;
    close(fd);
    return mt_fail(MT_EIO, "cannot read: %s", strerror(e));
  }
  if (!S_ISREG(sb.st_mode)) {
    close(fd);
    return mt_fail(MT_EIO, "cannot read: %s", S_ISDIR(sb.st_mode) ? "it is a directory" : "not a regular file");
  }
  if ((uint64_t)sb.st_size > max) {
    close(fd);
    return mt_fail(MT_ENOMEM, "the file is too large (%lld bytes)", (long long)sb.st_size);
  }
  size_t cap = (size_t)sb.st_size, n = 0;
  unsigned char *p = malloc(cap ? cap : 1);
  if (!p) {
    close(fd);
    return mt_fail(MT_ENOMEM, "out of memory reading %zu bytes", cap);
  }
  while (n < cap) {
    ssize_t k = read(fd, p + n, cap - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) {
      int e = errno;
      free(p);
      close(fd);
      return mt_fail(MT_EIO, "read failed: %s", k == 0 ? "the file shrank while being read" : strerror(e));
    }
    n += (size_t)k;
  }
  close(fd);
  *buf = p;
  *len = n;
  return MT_OK;
}

static atomic_uint tmp_counter;

mt_status mt_atomic_open(const char *path, mt_atomic_file *f) {
  f->fd = -1;
  f->path = strdup(path);
  size_t cap = strlen(path) + 64;
  f->tmp = malloc(cap);
  if (!f->path || !f->tmp) {
    free(f->path), free(f->tmp);
    f->path = f->tmp = NULL;
    return mt_fail(MT_ENOMEM, "out of memory");
  }
  for (int tries = 0; tries < 100; tries++) {
    snprintf(f->tmp, cap, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&tmp_counter, 1));
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (f->fd >= 0 || errno != EEXIST) break;
  }
  if (f->fd < 0) {
    mt_status st = mt_fail(MT_EIO, "cannot create '%s': %s", f->tmp, strerror(errno));
    free(f->path), free(f->tmp);
    f->path = f->tmp = NULL;
    return st;
  }
  return MT_OK;
}

mt_status mt_atomic_write(mt_atomic_file *f, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t k = write(f->fd, c, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return mt_fail(MT_EIO, "cannot write '%s': %s", f->tmp, k < 0 ? strerror(errno) : "no space written");
    c += k;
    n -= (size_t)k;
  }
  return MT_OK;
}

static void finish(mt_atomic_file *f) {
  free(f->path);
  free(f->tmp);
  f->path = f->tmp = NULL;
  f->fd = -1;
}

void mt_atomic_abort(mt_atomic_file *f) {
  if (f->fd >= 0) close(f->fd);
  if (f->tmp) unlink(f->tmp);
  finish(f);
}

/* fsyncs the directory holding path, so that a rename in it is durable. */
static void sync_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
  if (!dir) return;
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  free(dir);
}

mt_status mt_atomic_commit(mt_atomic_file *f) {
  mt_status st = MT_OK;
  if (fsync(f->fd) != 0) st = mt_fail(MT_EIO, "cannot flush '%s' to disk: %s", f->tmp, strerror(errno));
  int rc = close(f->fd);
  f->fd = -1;
  if (!st && rc != 0) st = mt_fail(MT_EIO, "cannot close '%s': %s", f->tmp, strerror(errno));
  if (!st && rename(f->tmp, f->path) != 0)
    st = mt_fail(MT_EIO, "cannot rename '%s' to '%s': %s", f->tmp, f->path, strerror(errno));
  if (st) {
    unlink(f->tmp);
  } else {
    sync_dir(f->path);
  }
  finish(f);
  return st;
}
