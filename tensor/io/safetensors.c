/* safetensors.c -- parses, validates and builds safetensors headers in
 * memory. Everything in a header is untrusted: each size is checked for
 * overflow, each byte range against the data buffer. No file access and no
 * tensor allocation here (see st_file.c), so the fuzz target links it alone. */
#include "safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* element sizes are kept here so that the fuzz target needs no dtype.c */
static const struct {
  const char *code;
  mt_dtype dtype;
  unsigned size;
} codes[] = {{"F32", MT_FLOAT32, 4}, {"F64", MT_FLOAT64, 8}, {"F16", MT_FLOAT16, 2}, {"BF16", MT_BFLOAT16, 2},
             {"I8", MT_INT8, 1},     {"I16", MT_INT16, 2},   {"I32", MT_INT32, 4},   {"I64", MT_INT64, 8},
             {"U8", MT_UINT8, 1},    {"BOOL", MT_BOOL, 1},   {"U16", MT_UINT16, 2},  {"C64", MT_COMPLEX64, 8}};
#define NCODES (int)(sizeof codes / sizeof codes[0])

/* valid safetensors dtypes that moontorch has no tensor type for */
static const char *const foreign[] = {"U16",     "U32",     "U64", "F8_E4M3", "F8_E5M2", "F8_E8M0",
                                      "F6_E2M3", "F6_E3M2", "F4",  NULL};

const char *mt_st_dtype_code(mt_dtype d) {
  for (int i = 0; i < NCODES; i++)
    if (codes[i].dtype == d) return codes[i].code;
  return NULL;
}

static uint64_t elsize(mt_dtype d) {
  for (int i = 0; i < NCODES; i++)
    if (codes[i].dtype == d) return codes[i].size;
  return 0;
}

/* Byte size of a tensor of entry e's dtype and shape; 0 (false) when a size
 * is negative or the product overflows 64 bits. */
static int byte_size(const mt_st_entry *e, uint64_t *bytes) {
  uint64_t b = elsize(e->dtype);
  for (int i = 0; i < e->ndim; i++) {
    if (e->shape[i] < 0 || (e->shape[i] && b > UINT64_MAX / (uint64_t)e->shape[i])) return 0;
    b *= (uint64_t)e->shape[i];
  }
  *bytes = b;
  return 1;
}

int mt_st_dtype_from_code(const char *code, size_t n) {
  for (int i = 0; i < NCODES; i++)
    if (strlen(codes[i].code) == n && memcmp(codes[i].code, code, n) == 0) return (int)codes[i].dtype;
  return -1;
}

mt_status mt_st_header_len(const unsigned char prefix[8], uint64_t file_size, uint64_t *n) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = (v << 8) | prefix[i];
  if (v > MT_ST_MAX_HEADER)
    return mt_fail(MT_EARG, "header length %llu is larger than the limit of %llu bytes (corrupt file?)",
                   (unsigned long long)v, (unsigned long long)MT_ST_MAX_HEADER);
  if (file_size < 8 || v > file_size - 8)
    return mt_fail(MT_EARG, "header length %llu runs past the end of the file (%llu bytes): truncated or corrupt",
                   (unsigned long long)v, (unsigned long long)file_size);
  if (v < 2) return mt_fail(MT_EARG, "header length %llu is too small to hold a JSON object", (unsigned long long)v);
  *n = v;
  return MT_OK;
}

/* A quoted, length-limited copy of a possibly hostile name for messages. */
static const char *shown(const char *s, size_t n, char *buf, size_t cap) {
  size_t k = 0;
  for (size_t i = 0; i < n && k + 4 < cap; i++) buf[k++] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  if (k + 4 >= cap) buf[k++] = '.', buf[k++] = '.', buf[k++] = '.';
  buf[k] = 0;
  return buf;
}

/* Reads a JSON array of non-negative integers (at most max of them). */
static int read_uints(const mt_json *a, int64_t *out, int max, int *count) {
  if (!a || a->type != MT_JARR || a->len > (size_t)max) return 0;
  int k = 0;
  for (const mt_json *v = a->child; v; v = v->next) {
    if (v->type != MT_JINT || v->i < 0) return 0;
    out[k++] = v->i;
  }
  *count = k;
  return 1;
}

/* Validates one tensor description of the header into e. */
static mt_status parse_entry(const mt_json *m, uint64_t data_len, mt_st_entry *e) {
  char nb[80], sb[128];
  const char *name = shown(m->key, m->klen, nb, sizeof nb);
  e->name = m->key;
  e->name_len = m->klen;
  if (m->type != MT_JOBJ) return mt_fail(MT_EARG, "tensor '%s': description is not a JSON object", name);
  const mt_json *dt = mt_json_get(m, "dtype"), *sh = mt_json_get(m, "shape"), *off = mt_json_get(m, "data_offsets");
  if (!dt || !sh || !off)
    return mt_fail(MT_EARG, "tensor '%s': missing field '%s'", name, !dt ? "dtype" : !sh ? "shape" : "data_offsets");
  if (dt->type != MT_JSTR) return mt_fail(MT_EARG, "tensor '%s': dtype is not a string", name);
  int d = mt_st_dtype_from_code(dt->s, dt->len);
  if (d < 0) {
    for (int i = 0; foreign[i]; i++)
      if (strlen(foreign[i]) == dt->len && memcmp(foreign[i], dt->s, dt->len) == 0)
        return mt_fail(MT_EDTYPE, "tensor '%s': dtype %s is not supported by moontorch", name, foreign[i]);
    return mt_fail(MT_EDTYPE, "tensor '%s': unknown dtype '%s'", name, shown(dt->s, dt->len, sb, sizeof sb));
  }
  e->dtype = (mt_dtype)d;
  if (sh->type == MT_JARR && sh->len > MT_MAXDIM)
    return mt_fail(MT_ESHAPE, "tensor '%s': %zu dimensions, moontorch supports at most %d", name, sh->len, MT_MAXDIM);
  if (!read_uints(sh, e->shape, MT_MAXDIM, &e->ndim))
    return mt_fail(MT_ESHAPE, "tensor '%s': shape must be a list of non-negative integers", name);
  int64_t o[2];
  int no = 0;
  if (!read_uints(off, o, 2, &no) || no != 2)
    return mt_fail(MT_EARG, "tensor '%s': data_offsets must be two non-negative integers [begin, end]", name);
  if (o[1] < o[0])
    return mt_fail(MT_EARG, "tensor '%s': data_offsets [%lld, %lld] end before they begin", name, (long long)o[0],
                   (long long)o[1]);
  uint64_t bytes;
  if (!byte_size(e, &bytes))
    return mt_fail(MT_ESHAPE, "tensor '%s': shape %s is too large (its byte size overflows)", name,
                   mt_shape_str(e->shape, e->ndim, sb, sizeof sb));
  e->begin = (uint64_t)o[0];
  e->end = (uint64_t)o[1];
  if (e->end - e->begin != bytes)
    return mt_fail(MT_ESHAPE, "tensor '%s': data_offsets [%llu, %llu] hold %llu bytes, but shape %s of %s needs %llu",
                   name, (unsigned long long)e->begin, (unsigned long long)e->end,
                   (unsigned long long)(e->end - e->begin), mt_shape_str(e->shape, e->ndim, sb, sizeof sb),
                   mt_st_dtype_code(e->dtype), (unsigned long long)bytes);
  if (e->end > data_len)
    return mt_fail(MT_EARG,
                   "tensor '%s': data_offsets [%llu, %llu] run past the end of the data (%llu bytes): "
                   "truncated or corrupt file",
                   name, (unsigned long long)e->begin, (unsigned long long)e->end, (unsigned long long)data_len);
  return MT_OK;
}

static mt_status parse_meta(const mt_json *m, mt_st_header *h) {
  if (m->type != MT_JOBJ) return mt_fail(MT_EARG, "__metadata__ is not a JSON object");
  h->meta = calloc(m->len ? m->len : 1, sizeof *h->meta);
  if (!h->meta) return mt_fail(MT_ENOMEM, "out of memory reading the header");
  for (const mt_json *v = m->child; v; v = v->next) {
    char nb[80];
    if (v->type != MT_JSTR)
      return mt_fail(MT_EARG, "__metadata__ value of '%s' is not a string", shown(v->key, v->klen, nb, sizeof nb));
    mt_st_meta *x = &h->meta[h->nmeta++];
    x->key = v->key, x->klen = v->klen, x->val = v->s, x->vlen = v->len;
  }
  return MT_OK;
}

static int by_range(const void *a, const void *b) {
  const mt_st_entry *x = *(mt_st_entry *const *)a, *y = *(mt_st_entry *const *)b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return 0;
}

/* The byte ranges, sorted, must tile [0, data_len) exactly. */
static mt_status check_layout(const mt_st_header *h, uint64_t data_len) {
  mt_st_entry **s = malloc((h->n > 0 ? (size_t)h->n : 1) * sizeof *s);
  if (!s) return mt_fail(MT_ENOMEM, "out of memory reading the header");
  for (int i = 0; i < h->n; i++) s[i] = &h->entries[i];
  qsort(s, (size_t)h->n, sizeof *s, by_range);
  mt_status st = MT_OK;
  uint64_t at = 0;
  const mt_st_entry *prev = NULL;
  char a[80], b[80];
  for (int i = 0; i < h->n && !st; i++) {
    const mt_st_entry *e = s[i];
    if (e->begin < at)
      st = mt_fail(MT_EARG, "tensors '%s' and '%s' overlap (bytes %llu..%llu)",
                   shown(prev->name, prev->name_len, a, sizeof a), shown(e->name, e->name_len, b, sizeof b),
                   (unsigned long long)e->begin, (unsigned long long)at);
    else if (e->begin > at)
      st = mt_fail(MT_EARG, "bytes %llu..%llu of the data belong to no tensor (a gap before '%s')",
                   (unsigned long long)at, (unsigned long long)e->begin, shown(e->name, e->name_len, b, sizeof b));
    at = e->end;
    prev = e;
  }
  if (!st && at != data_len)
    st = mt_fail(MT_EARG, "%llu bytes of trailing data after the last tensor (corrupt header or garbage appended)",
                 (unsigned long long)(data_len - at));
  free(s);
  return st;
}

mt_status mt_st_parse_header(const char *text, size_t n, uint64_t data_len, mt_st_header *h) {
  memset(h, 0, sizeof *h);
  if (n == 0 || text[0] != '{') return mt_fail(MT_EARG, "the header does not start with '{' (not a safetensors file?)");
  mt_status st = mt_json_parse(text, n, &h->doc);
  if (st) {
    char msg[512];
    snprintf(msg, sizeof msg, "%s", mt_errmsg());
    return mt_fail(st, "header: %s", msg);
  }
  const mt_json *root = h->doc.root;
  if (root->type != MT_JOBJ) st = mt_fail(MT_EARG, "the header is not a JSON object");
  if (!st && root->len > (size_t)INT32_MAX) st = mt_fail(MT_EARG, "too many tensors in the header");
  if (!st) {
    h->entries = calloc(root->len ? root->len : 1, sizeof *h->entries);
    if (!h->entries) st = mt_fail(MT_ENOMEM, "out of memory reading the header");
  }
  for (const mt_json *m = root->child; m && !st; m = m->next) {
    if (m->klen == 12 && memcmp(m->key, "__metadata__", 12) == 0)
      st = parse_meta(m, h);
    else
      st = parse_entry(m, data_len, &h->entries[h->n++]);
  }
  if (!st) st = check_layout(h, data_len);
  if (st) {
    mt_st_header_free(h);
    return st;
  }
  return MT_OK;
}

mt_status mt_st_parse(const unsigned char *buf, size_t len, mt_st_header *h) {
  memset(h, 0, sizeof *h);
  if (len < 8) return mt_fail(MT_EARG, "the file is too short (%zu bytes) to be a safetensors file", len);
  uint64_t n;
  mt_status st = mt_st_header_len(buf, len, &n);
  if (st) return st;
  st = mt_st_parse_header((const char *)buf + 8, (size_t)n, len - 8 - n, h);
  if (!st) h->data_start = 8 + n;
  return st;
}

void mt_st_header_free(mt_st_header *h) {
  free(h->entries);
  free(h->meta);
  mt_json_free(&h->doc);
  memset(h, 0, sizeof *h);
}

static int by_name(const void *a, const void *b) {
  const mt_st_entry *x = *(mt_st_entry *const *)a, *y = *(mt_st_entry *const *)b;
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = memcmp(x->name, y->name, n);
  return c ? c : (x->name_len > y->name_len) - (x->name_len < y->name_len);
}

static mt_status check_names(mt_st_entry *e, int n) {
  char nb[80];
  for (int i = 0; i < n; i++) {
    if (!mt_utf8_valid(e[i].name, e[i].name_len))
      return mt_fail(MT_EARG, "tensor name '%s' is not valid UTF-8", shown(e[i].name, e[i].name_len, nb, sizeof nb));
    if (e[i].name_len == 12 && memcmp(e[i].name, "__metadata__", 12) == 0)
      return mt_fail(MT_EARG, "'__metadata__' is reserved and cannot name a tensor");
  }
  mt_st_entry **s = malloc((n > 0 ? (size_t)n : 1) * sizeof *s);
  if (!s) return mt_fail(MT_ENOMEM, "out of memory writing the header");
  for (int i = 0; i < n; i++) s[i] = &e[i];
  qsort(s, (size_t)n, sizeof *s, by_name);
  mt_status st = MT_OK;
  for (int i = 1; i < n && !st; i++)
    if (by_name(&s[i - 1], &s[i]) == 0)
      st = mt_fail(MT_EARG, "two tensors are named '%s'", shown(s[i]->name, s[i]->name_len, nb, sizeof nb));
  free(s);
  return st;
}

mt_status mt_st_build_header(mt_st_entry *e, int n, const mt_st_meta *meta, int nmeta, mt_buf *out) {
  mt_status st = check_names(e, n);
  if (st) return st;
  for (int i = 0; i < nmeta; i++)
    if (!mt_utf8_valid(meta[i].key, meta[i].klen) || !mt_utf8_valid(meta[i].val, meta[i].vlen))
      return mt_fail(MT_EARG, "metadata strings must be valid UTF-8");
  mt_buf j = {0};
  mt_buf_put(&j, "{", 1);
  if (nmeta) {
    mt_buf_puts(&j, "\"__metadata__\":{");
    for (int i = 0; i < nmeta; i++) {
      if (i) mt_buf_put(&j, ",", 1);
      mt_buf_json_string(&j, meta[i].key, meta[i].klen);
      mt_buf_put(&j, ":", 1);
      mt_buf_json_string(&j, meta[i].val, meta[i].vlen);
    }
    mt_buf_put(&j, "}", 1);
  }
  uint64_t at = 0;
  for (int i = 0; i < n; i++) {
    uint64_t bytes;
    if (!byte_size(&e[i], &bytes) || bytes > (uint64_t)INT64_MAX - at) {
      mt_buf_free(&j);
      return mt_fail(MT_ESHAPE, "the tensors are too large to save in one file");
    }
    e[i].begin = at;
    e[i].end = at += bytes;
    if (i || nmeta) mt_buf_put(&j, ",", 1);
    mt_buf_json_string(&j, e[i].name, e[i].name_len);
    mt_buf_printf(&j, ":{\"dtype\":\"%s\",\"shape\":[", mt_st_dtype_code(e[i].dtype));
    for (int k = 0; k < e[i].ndim; k++) mt_buf_printf(&j, k ? ",%lld" : "%lld", (long long)e[i].shape[k]);
    mt_buf_printf(&j, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)e[i].begin, (unsigned long long)e[i].end);
  }
  mt_buf_put(&j, "}", 1);
  while ((8 + j.n) % 8) mt_buf_put(&j, " ", 1);
  if (j.oom || j.n > MT_ST_MAX_HEADER) {
    int big = !j.oom;
    mt_buf_free(&j);
    return big ? mt_fail(MT_EARG, "the header would exceed %llu bytes (too many tensors or too much metadata)",
                         (unsigned long long)MT_ST_MAX_HEADER)
               : mt_fail(MT_ENOMEM, "out of memory writing the header");
  }
  unsigned char len[8];
  for (int i = 0; i < 8; i++) len[i] = (unsigned char)((uint64_t)j.n >> (8 * i));
  mt_buf_put(out, len, 8);
  mt_buf_put(out, j.p, j.n);
  mt_buf_free(&j);
  return out->oom ? mt_fail(MT_ENOMEM, "out of memory writing the header") : MT_OK;
}
