/* safetensors.h -- the safetensors checkpoint format: an 8-byte
 * little-endian header length N, N bytes of JSON naming each tensor's dtype,
 * shape and byte range, then the raw little-endian data.
 * safetensors.c parses and builds headers from memory (no files, no tensors:
 * the fuzz target links it alone); st_file.c moves tensors to and from files. */
#ifndef MT_SAFETENSORS_H
#define MT_SAFETENSORS_H

#include "json.h"
#include "mt.h"

#define MT_ST_MAX_HEADER ((uint64_t)100 << 20) /* the reference implementation's limit */

typedef struct mt_st_entry {
  const char *name; /* not necessarily NUL-free: use name_len */
  size_t name_len;
  mt_dtype dtype;
  int ndim;
  int64_t shape[MT_MAXDIM];
  uint64_t begin, end; /* byte range in the data buffer */
} mt_st_entry;

typedef struct mt_st_meta {
  const char *key, *val;
  size_t klen, vlen;
} mt_st_meta;

/* A validated header; its strings live in doc. */
typedef struct mt_st_header {
  mt_st_entry *entries; /* in the order of the JSON text */
  int n;
  mt_st_meta *meta; /* the "__metadata__" map, if any */
  int nmeta;
  uint64_t data_start; /* 8 + N: file offset of the data buffer */
  mt_json_doc doc;
} mt_st_header;

/* safetensors code ("F32", ...) of a dtype, and the reverse (-1 if none). */
const char *mt_st_dtype_code(mt_dtype d);
int mt_st_dtype_from_code(const char *code, size_t n);

/* Header length from the 8-byte prefix, checked against the file size. */
mt_status mt_st_header_len(const unsigned char prefix[8], uint64_t file_size, uint64_t *n);
/* Parses and fully validates the header text[0..n) for a data buffer of
 * data_len bytes: dtypes, shapes against byte ranges, ranges contiguous from
 * 0 to data_len without overlap, no duplicate names. On success free h with
 * mt_st_header_free; on failure nothing is left to free. */
mt_status mt_st_parse_header(const char *text, size_t n, uint64_t data_len, mt_st_header *h);
/* The same for a whole file image in memory. */
mt_status mt_st_parse(const unsigned char *buf, size_t len, mt_st_header *h);
void mt_st_header_free(mt_st_header *h);

/* Lays the n entries out back to back in the order given (sets begin/end)
 * and appends the 8-byte length and the JSON header to out, padded with
 * spaces so that the data starts at a multiple of 8. Names must be valid
 * UTF-8, unique and not "__metadata__"; metadata strings valid UTF-8. */
mt_status mt_st_build_header(mt_st_entry *e, int n, const mt_st_meta *meta, int nmeta, mt_buf *out);

/* ---- files (st_file.c) ---- */
typedef struct mt_st_item {
  const char *name;
  size_t name_len;
  const mt_tensor *t; /* any strides; saved as its contiguous content */
} mt_st_item;

/* Writes the tensors to path atomically: a temporary file in the same
 * directory is written, fsync'ed and renamed over path, so path always holds
 * either its old content or the complete new file. */
mt_status mt_st_save(const char *path, const mt_st_item *items, int n, const mt_st_meta *meta, int nmeta);

typedef struct mt_st_file {
  mt_st_header h;
  mt_tensor **tensors; /* h.n tensors, one reference each, owned by the file */
} mt_st_file;

/* Reads and validates a whole file. Free with mt_st_file_free (which
 * releases the tensors not taken: set tensors[i] to NULL to keep one). */
mt_status mt_st_load(const char *path, mt_st_file *f);
void mt_st_file_free(mt_st_file *f);

#endif
