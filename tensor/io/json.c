/* json.c -- a strict, bounded JSON reader (into an arena-allocated tree) and
 * the few writers the file formats need. Input comes from files we do not
 * trust: every byte is checked, nesting is bounded, nothing reads past n.
 * Numbers are converted in the "C" way whatever the process locale is. */
#include "json.h"

#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena: blocks freed together ---- */
typedef struct block {
  struct block *next;
  size_t used, cap;
  _Alignas(16) char mem[];
} block;

/* Returns n bytes (16-aligned) from the arena at *a, or NULL when out of
 * memory. Requests larger than a block get a block of their own, linked
 * behind the current one so that its free space stays in use. */
#define BLOCK_BYTES 65536
static void *arena_alloc(void **a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  block *b = *a;
  if (b && b->cap - b->used >= n) {
    void *p = b->mem + b->used;
    b->used += n;
    return p;
  }
  size_t cap = n > BLOCK_BYTES ? n : BLOCK_BYTES;
  if (cap > SIZE_MAX - sizeof(block)) return NULL;
  block *nb = malloc(sizeof(block) + cap);
  if (!nb) return NULL;
  nb->cap = cap;
  nb->used = n;
  if (b && n > BLOCK_BYTES) {
    nb->next = b->next;
    b->next = nb;
  } else {
    nb->next = b;
    *a = nb;
  }
  return nb->mem;
}

static void arena_free(void *a) {
  for (block *b = a; b;) {
    block *next = b->next;
    free(b);
    b = next;
  }
}

/* ---- UTF-8 ---- */

/* Length of the valid UTF-8 sequence at s (n bytes available), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  unsigned cp, min;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2, cp = c & 0x1F, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3, cp = c & 0x0F, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4, cp = c & 0x07, min = 0x10000;
  else
    return 0;
  if (n < len) return 0;
  for (size_t k = 1; k < len; k++) {
    if ((s[k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[k] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

int mt_utf8_valid(const char *s, size_t n) {
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n;) {
    size_t k = utf8_seq(u + i, n - i);
    if (!k) return 0;
    i += k;
  }
  return 1;
}

/* ---- the parser ---- */
typedef struct parser {
  const char *start, *p, *end;
  void *arena;
  int depth;
} parser;

static mt_status perr(parser *ps, const char *what) {
  return mt_fail(MT_EARG, "invalid JSON at byte %zu: %s", (size_t)(ps->p - ps->start), what);
}

static mt_status oom(void) { return mt_fail(MT_ENOMEM, "out of memory while reading JSON"); }

static void skip_ws(parser *ps) {
  while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static mt_json *new_node(parser *ps, mt_json_type t) {
  mt_json *v = arena_alloc(&ps->arena, sizeof *v);
  if (v) {
    memset(v, 0, sizeof *v);
    v->type = t;
  }
  return v;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Reads 4 hex digits at ps->p into *u. */
static int read_hex4(parser *ps, unsigned *u) {
  if (ps->end - ps->p < 4) return 0;
  *u = 0;
  for (int k = 0; k < 4; k++) {
    int h = hexval(ps->p[k]);
    if (h < 0) return 0;
    *u = (*u << 4) | (unsigned)h;
  }
  ps->p += 4;
  return 1;
}

static size_t put_utf8(char *o, unsigned cp) {
  if (cp < 0x80) return o[0] = (char)cp, 1;
  if (cp < 0x800) return o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F)), 2;
  if (cp < 0x10000) {
    o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[2] = (char)(0x80 | (cp & 0x3F));
    return 3;
  }
  o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
  return 4;
}

#define ESC_FROM "\"\\/bfnrt" /* the one-letter escapes and what they stand for */
#define ESC_TO "\"\\/\b\f\n\r\t"

/* Reads the XXXX of a \\uXXXX escape (ps->p just after the 'u'), and the
 * low half that must follow a high surrogate, into the code point *cp. */
static mt_status read_code_point(parser *ps, unsigned *cp) {
  if (!read_hex4(ps, cp)) return perr(ps, "bad \\u escape");
  if (*cp >= 0xDC00 && *cp <= 0xDFFF) return perr(ps, "unpaired surrogate in \\u escape");
  if (*cp < 0xD800 || *cp > 0xDBFF) return MT_OK;
  unsigned lo;
  if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') return perr(ps, "unpaired surrogate in \\u escape");
  ps->p += 2;
  if (!read_hex4(ps, &lo) || lo < 0xDC00 || lo > 0xDFFF) return perr(ps, "unpaired surrogate in \\u escape");
  *cp = 0x10000 + ((*cp - 0xD800) << 10) + (lo - 0xDC00);
  return MT_OK;
}

/* Parses the string starting at the opening quote; the decoded bytes
 * (never longer than the source) go to a fresh arena copy. */
static mt_status parse_string(parser *ps, const char **out, size_t *outlen) {
  ps->p++; /* opening quote */
  const char *q = ps->p;
  while (q < ps->end && *q != '"') q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
  if (q >= ps->end) return perr(ps, "unterminated string");
  char *o = arena_alloc(&ps->arena, (size_t)(q - ps->p) + 1);
  if (!o) return oom();
  size_t n = 0;
  mt_status st;
  while (ps->p < ps->end) {
    unsigned char c = (unsigned char)*ps->p;
    if (c == '"') {
      ps->p++;
      o[n] = 0;
      *out = o;
      *outlen = n;
      return MT_OK;
    }
    if (c < 0x20) return perr(ps, "control character in string");
    if (c == '\\') {
      ps->p++;
      if (ps->p >= ps->end) break;
      char e = *ps->p++;
      const char *simple = e ? strchr(ESC_FROM, e) : NULL;
      if (simple) {
        o[n++] = ESC_TO[simple - ESC_FROM];
        continue;
      }
      if (e != 'u') {
        ps->p--;
        return perr(ps, "bad escape in string");
      }
      unsigned cp;
      if ((st = read_code_point(ps, &cp))) return st;
      n += put_utf8(o + n, cp); /* at most as long as the escape it replaces */
      continue;
    }
    size_t k = utf8_seq((const unsigned char *)ps->p, (size_t)(ps->end - ps->p));
    if (!k) return perr(ps, "invalid UTF-8 in string");
    memcpy(o + n, ps->p, k);
    n += k;
    ps->p += k;
  }
  return perr(ps, "unterminated string");
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

/* Parses a number by the JSON grammar; integers that fit in int64 stay exact. */
static mt_status parse_number(parser *ps, mt_json *v) {
  const char *s = ps->p, *q = s;
  int neg = 0, isint = 1;
  if (q < ps->end && *q == '-') neg = 1, q++;
  if (q >= ps->end || !is_digit(*q)) return perr(ps, "bad number");
  if (*q == '0')
    q++;
  else
    while (q < ps->end && is_digit(*q)) q++;
  const char *int_end = q;
  if (q < ps->end && *q == '.') {
    isint = 0;
    q++;
    if (q >= ps->end || !is_digit(*q)) return ps->p = q, perr(ps, "bad number (digits expected after '.')");
    while (q < ps->end && is_digit(*q)) q++;
  }
  if (q < ps->end && (*q == 'e' || *q == 'E')) {
    isint = 0;
    q++;
    if (q < ps->end && (*q == '+' || *q == '-')) q++;
    if (q >= ps->end || !is_digit(*q)) return ps->p = q, perr(ps, "bad number (digits expected in exponent)");
    while (q < ps->end && is_digit(*q)) q++;
  }
  if (isint) {
    uint64_t u = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    int fits = 1;
    for (const char *d = s + neg; d < int_end; d++) {
      unsigned dig = (unsigned)(*d - '0');
      if (u > (lim - dig) / 10) {
        fits = 0;
        break;
      }
      u = u * 10 + dig;
    }
    if (fits) {
      v->type = MT_JINT;
      v->i = neg ? (int64_t)(0 - u) : (int64_t)u;
      v->d = (double)v->i;
      ps->p = q;
      return MT_OK;
    }
  }
  size_t len = (size_t)(q - s);
  char *tmp = arena_alloc(&ps->arena, len + 1);
  if (!tmp) return oom();
  memcpy(tmp, s, len);
  tmp[len] = 0;
  char dp = localeconv()->decimal_point[0];
  if (dp != '.')
    for (char *c = tmp; *c; c++)
      if (*c == '.') *c = dp;
  v->type = MT_JNUM;
  v->d = strtod(tmp, NULL);
  ps->p = q;
  return MT_OK;
}

static mt_status parse_value(parser *ps, mt_json **out);

static uint64_t hash_key(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static int same_key(const mt_json *a, const mt_json *b) {
  return a->klen == b->klen && memcmp(a->key, b->key, a->klen) == 0;
}

/* Fails if two members of object o have the same key (hash set for large objects). */
static mt_status check_duplicates(parser *ps, const mt_json *o) {
  if (o->len <= 16) {
    for (const mt_json *a = o->child; a; a = a->next)
      for (const mt_json *b = a->next; b; b = b->next)
        if (same_key(a, b)) return mt_fail(MT_EARG, "invalid JSON: duplicate key \"%.200s\"", a->key);
    return MT_OK;
  }
  size_t cap = 32;
  while (cap < o->len * 2) cap <<= 1;
  const mt_json **set = calloc(cap, sizeof *set);
  if (!set) return oom();
  mt_status st = MT_OK;
  for (const mt_json *a = o->child; a && !st; a = a->next) {
    size_t h = (size_t)hash_key(a->key, a->klen) & (cap - 1);
    while (set[h] && !same_key(set[h], a)) h = (h + 1) & (cap - 1);
    if (set[h]) st = mt_fail(MT_EARG, "invalid JSON: duplicate key \"%.200s\"", a->key);
    set[h] = a;
  }
  free(set);
  (void)ps;
  return st;
}

/* Parses an array or object whose opening bracket is at ps->p. */
static mt_status parse_container(parser *ps, mt_json *v, char close) {
  if (++ps->depth > MT_JSON_MAXDEPTH) return perr(ps, "nesting too deep");
  ps->p++;
  mt_json **tail = &v->child;
  skip_ws(ps);
  if (ps->p < ps->end && *ps->p == close) {
    ps->p++;
    ps->depth--;
    return MT_OK;
  }
  for (;;) {
    const char *key = NULL;
    size_t klen = 0;
    mt_status st;
    skip_ws(ps);
    if (close == '}') {
      if (ps->p >= ps->end || *ps->p != '"') return perr(ps, "object key (a string) expected");
      if ((st = parse_string(ps, &key, &klen))) return st;
      skip_ws(ps);
      if (ps->p >= ps->end || *ps->p != ':') return perr(ps, "':' expected after object key");
      ps->p++;
    }
    mt_json *item;
    if ((st = parse_value(ps, &item))) return st;
    item->key = key;
    item->klen = klen;
    *tail = item;
    tail = &item->next;
    v->len++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == close) {
      ps->p++;
      break;
    }
    return perr(ps, close == '}' ? "',' or '}' expected" : "',' or ']' expected");
  }
  ps->depth--;
  return close == '}' ? check_duplicates(ps, v) : MT_OK;
}

static int literal(parser *ps, const char *word) {
  size_t n = strlen(word);
  if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) return 0;
  ps->p += n;
  return 1;
}

static mt_status parse_value(parser *ps, mt_json **out) {
  skip_ws(ps);
  if (ps->p >= ps->end) return perr(ps, "unexpected end of text");
  mt_json *v = new_node(ps, MT_JNULL);
  if (!v) return oom();
  *out = v;
  char c = *ps->p;
  switch (c) {
  case '{':
    v->type = MT_JOBJ;
    return parse_container(ps, v, '}');
  case '[':
    v->type = MT_JARR;
    return parse_container(ps, v, ']');
  case '"':
    v->type = MT_JSTR;
    return parse_string(ps, &v->s, &v->len);
  case 't':
    v->type = MT_JBOOL, v->b = 1;
    return literal(ps, "true") ? MT_OK : perr(ps, "bad literal");
  case 'f':
    v->type = MT_JBOOL;
    return literal(ps, "false") ? MT_OK : perr(ps, "bad literal");
  case 'n':
    return literal(ps, "null") ? MT_OK : perr(ps, "bad literal");
  default:
    if (c == '-' || is_digit(c)) return parse_number(ps, v);
    return perr(ps, "unexpected character");
  }
}

mt_status mt_json_parse(const char *text, size_t n, mt_json_doc *doc) {
  parser ps = {text, text, text + n, NULL, 0};
  mt_json *root = NULL;
  mt_status st = parse_value(&ps, &root);
  if (!st) {
    skip_ws(&ps);
    if (ps.p != ps.end) st = perr(&ps, "unexpected text after the value");
  }
  if (st) {
    arena_free(ps.arena);
    doc->root = NULL;
    doc->arena = NULL;
    return st;
  }
  doc->root = root;
  doc->arena = ps.arena;
  return MT_OK;
}

void mt_json_free(mt_json_doc *doc) {
  arena_free(doc->arena);
  doc->arena = NULL;
  doc->root = NULL;
}

const mt_json *mt_json_get(const mt_json *o, const char *k) {
  if (!o || o->type != MT_JOBJ) return NULL;
  size_t n = strlen(k);
  for (const mt_json *m = o->child; m; m = m->next)
    if (m->klen == n && memcmp(m->key, k, n) == 0) return m;
  return NULL;
}

/* ---- writing ---- */
void mt_buf_put(mt_buf *b, const void *s, size_t n) {
  if (b->oom) return;
  if (b->cap - b->n < n + 1) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->n < n + 1) {
      if (cap > SIZE_MAX / 2) {
        b->oom = 1;
        return;
      }
      cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

void mt_buf_puts(mt_buf *b, const char *s) { mt_buf_put(b, s, strlen(s)); }

void mt_buf_printf(mt_buf *b, const char *fmt, ...) {
  char tmp[256];
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (k < 0) return;
  if ((size_t)k < sizeof tmp) {
    mt_buf_put(b, tmp, (size_t)k);
    return;
  }
  char *big = malloc((size_t)k + 1);
  if (!big) {
    b->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)k + 1, fmt, ap);
  va_end(ap);
  mt_buf_put(b, big, (size_t)k);
  free(big);
}

void mt_buf_json_string(mt_buf *b, const char *s, size_t n) {
  mt_buf_put(b, "\"", 1);
  size_t run = 0; /* bytes copied verbatim in one go */
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    mt_buf_put(b, s + run, i - run);
    run = i + 1;
    if (c == '"')
      mt_buf_puts(b, "\\\"");
    else if (c == '\\')
      mt_buf_puts(b, "\\\\");
    else if (c == '\n')
      mt_buf_puts(b, "\\n");
    else if (c == '\t')
      mt_buf_puts(b, "\\t");
    else if (c == '\r')
      mt_buf_puts(b, "\\r");
    else
      mt_buf_printf(b, "\\u%04x", c);
  }
  mt_buf_put(b, s + run, n - run);
  mt_buf_put(b, "\"", 1);
}

void mt_buf_json_double(mt_buf *b, double d) {
  char tmp[40];
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(tmp, sizeof tmp, "%.*g", prec, d);
    if (strtod(tmp, NULL) == d) break;
  }
  char dp = localeconv()->decimal_point[0];
  int has_mark = 0;
  for (char *c = tmp; *c; c++) {
    if (*c == dp) *c = '.';
    if (*c == '.' || *c == 'e') has_mark = 1;
  }
  mt_buf_puts(b, tmp);
  if (!has_mark) mt_buf_puts(b, ".0");
}

void mt_buf_free(mt_buf *b) {
  free(b->p);
  b->p = NULL;
  b->n = b->cap = 0;
  b->oom = 0;
}
