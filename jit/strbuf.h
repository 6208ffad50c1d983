/* strbuf.h -- a growing string buffer for generated text (canonical IR,
 * C source). Allocation failures leave the text short, which the callers
 * detect by its hash or by the compiler. */
#ifndef MTJ_STRBUF_H
#define MTJ_STRBUF_H
#include <stddef.h>

typedef struct mtj_buf {
  char *s;
  size_t n, cap;
} mtj_buf;

/* Appends printf-style text to b (b->s stays NUL-terminated). */
void mtj_put(mtj_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#endif
