/* fileio.h -- whole-file reads and atomic file replacement, shared by the
 * file formats (tensor/io/). Messages name the file; callers add their op. */
#ifndef MT_FILEIO_H
#define MT_FILEIO_H

#include <stddef.h>

#include "mt.h"

/* Reads the whole file into a malloc'ed buffer (*buf, *len; free it).
 * Files larger than max bytes are refused. */
mt_status mt_read_file(const char *path, size_t max, unsigned char **buf, size_t *len);

/* A file being written to a temporary name beside its final path. */
typedef struct mt_atomic_file {
  int fd;
  char *path, *tmp;
} mt_atomic_file;

/* Creates "<path>.tmp.<pid>.<n>" for writing (exclusively; mode 0666 less the umask). */
mt_status mt_atomic_open(const char *path, mt_atomic_file *f);
/* Writes all n bytes (retrying short writes and EINTR). */
mt_status mt_atomic_write(mt_atomic_file *f, const void *p, size_t n);
/* fsyncs the file, renames it over path and fsyncs the directory, so that
 * after a crash path holds either the old or the complete new content.
 * On failure the temporary file is removed. f is finished either way. */
mt_status mt_atomic_commit(mt_atomic_file *f);
/* Closes and removes the temporary file. */
void mt_atomic_abort(mt_atomic_file *f);

#endif
