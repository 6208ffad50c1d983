/* strbuf.c -- mtj_put: printf into a string buffer that grows as needed. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "strbuf.h"

void mtj_put(mtj_buf *b, const char *fmt, ...) {
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if (b->s && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    size_t cap = (b->cap ? 2 * b->cap : 16384) + (size_t)k;
    char *s = realloc(b->s, cap);
    if (!s) return;
    b->s = s, b->cap = cap;
  }
}
