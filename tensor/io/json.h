/* json.h -- the small JSON reader and writer the file formats need
 * (safetensors headers, moontorch's structure metadata). Not a general JSON
 * library: strict RFC 8259 input, UTF-8 only, bounded nesting. */
#ifndef MT_JSON_H
#define MT_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "mt.h"

typedef enum mt_json_type { MT_JNULL, MT_JBOOL, MT_JINT, MT_JNUM, MT_JSTR, MT_JARR, MT_JOBJ } mt_json_type;

/* A parsed value. Integer literals (no fraction, no exponent) that fit in
 * int64 are MT_JINT (exact value in i, also in d); every other number is
 * MT_JNUM. Strings are NUL-terminated but may also hold NUL bytes (use len).
 * Arrays and objects list their members through child/next; a member of an
 * object carries its key. */
typedef struct mt_json mt_json;
struct mt_json {
  mt_json_type type;
  int b;
  int64_t i;
  double d;
  const char *s;
  size_t len;      /* string length in bytes; member count for arrays/objects */
  const char *key; /* set on object members */
  size_t klen;
  mt_json *child, *next;
};

/* A parsed document: every node and string lives in its arena. */
typedef struct mt_json_doc {
  mt_json *root;
  void *arena;
} mt_json_doc;

#define MT_JSON_MAXDEPTH 512

/* Parses text[0..n) (one value, surrounding whitespace allowed). Duplicate
 * keys in an object, invalid UTF-8 and nesting deeper than MT_JSON_MAXDEPTH
 * are errors. On failure nothing is left to free; the message gives the byte
 * offset. On success free doc with mt_json_free. */
mt_status mt_json_parse(const char *text, size_t n, mt_json_doc *doc);
void mt_json_free(mt_json_doc *doc);
/* The member of object o with key k (NUL-terminated), or NULL. */
const mt_json *mt_json_get(const mt_json *o, const char *k);
/* True if s[0..n) is valid UTF-8 (no overlongs, no surrogates). */
int mt_utf8_valid(const char *s, size_t n);

/* ---- writing: a growable byte buffer ---- */
typedef struct mt_buf {
  char *p;
  size_t n, cap;
  int oom; /* set when an append failed; later appends do nothing */
} mt_buf;

void mt_buf_put(mt_buf *b, const void *s, size_t n);
void mt_buf_puts(mt_buf *b, const char *s);
void mt_buf_printf(mt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0..n) as a quoted JSON string (s must be valid UTF-8). */
void mt_buf_json_string(mt_buf *b, const char *s, size_t n);
/* Appends a finite double as the shortest JSON number that reads back
 * exactly; always with a '.' or exponent, so it reads back as a float. */
void mt_buf_json_double(mt_buf *b, double d);
void mt_buf_free(mt_buf *b);

#endif
