/* fuzz_safetensors.c -- libFuzzer target for the safetensors header parser
 * (tensor/io/safetensors.c) and the JSON reader under it. Every accepted
 * input must describe byte ranges inside the input, and rebuilding its
 * header with mt_st_build_header must parse back to the same description.
 * Build and run: make fuzz. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/json.h"
#include "io/safetensors.h"

static int by_begin(const void *a, const void *b) {
  const mt_st_entry *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return (x->end > y->end) - (x->end < y->end);
}

static int same(const mt_st_entry *a, const mt_st_entry *b) {
  return a->name_len == b->name_len && memcmp(a->name, b->name, a->name_len) == 0 && a->dtype == b->dtype &&
         a->ndim == b->ndim && memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) == 0 &&
         a->begin == b->begin && a->end == b->end;
}

static volatile unsigned sink; /* reads of the data must not be optimised away */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mt_st_header h;
  if (mt_st_parse(data, size, &h) != MT_OK) return 0;
  uint64_t data_len = size - h.data_start;

  for (int i = 0; i < h.n; i++) {
    if (h.entries[i].end > data_len) abort();
    for (uint64_t k = h.entries[i].begin; k < h.entries[i].end; k++) sink += data[h.data_start + k];
  }
  for (int i = 0; i < h.nmeta; i++) { /* our structure description is JSON too */
    mt_json_doc d;
    if (mt_json_parse(h.meta[i].val, h.meta[i].vlen, &d) == MT_OK) mt_json_free(&d);
  }
  /* rebuild the header from the parsed description and parse it again */
  mt_st_entry *e = malloc(sizeof *e * (size_t)(h.n ? h.n : 1));
  memcpy(e, h.entries, sizeof *e * (size_t)h.n);
  qsort(e, (size_t)h.n, sizeof *e, by_begin);
  mt_buf out = {0};
  if (mt_st_build_header(e, h.n, h.meta, h.nmeta, &out) != MT_OK) abort();
  mt_st_header h2;
  if (mt_st_parse_header(out.p + 8, out.n - 8, data_len, &h2) != MT_OK) abort();
  if (h2.n != h.n || h2.nmeta != h.nmeta) abort();
  for (int i = 0; i < h.n; i++)
    if (!same(&e[i], &h2.entries[i])) abort();
  for (int i = 0; i < h.nmeta; i++)
    if (h.meta[i].vlen != h2.meta[i].vlen || memcmp(h.meta[i].val, h2.meta[i].val, h.meta[i].vlen) != 0) abort();
  mt_st_header_free(&h2);
  mt_buf_free(&out);
  free(e);
  mt_st_header_free(&h);
  return 0;
}
