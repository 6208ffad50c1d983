/* png_inflate.c -- the fast PNG path's inflate, through libdeflate: the
 * zlib stream of the IDAT chunks (read where it lies when it is one chunk,
 * gathered otherwise) is inflated in one call into a buffer of the image's
 * filtered rows, which png_fast.c then unfilters step by step (the
 * interface lets a streaming inflater stand here too). libdeflate checks
 * the Adler-32; a stream it refuses, one that makes more or fewer than its m
 * bytes, or data left after its end is a fault (the fast path then leaves
 * the file to libpng). */
#include <libdeflate.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "png_fast.h"

struct mtd_inflate {
  const unsigned char *chunk; /* the first IDAT chunk: its length field */
  size_t nchunks, total, m;
  unsigned char *buf; /* the m bytes, then MTD_INFLATE_SLACK zeros */
  int ran, ok;        /* inflated (once); and it made exactly m bytes of all the data */
};

static size_t be32(const unsigned char *p) { return (size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]; }

/* One decompressor a thread (making one costs ~30 us; DataLoader workers
 * and split decodes use several), freed with the thread. */
static pthread_key_t dec_key;
static pthread_once_t dec_once = PTHREAD_ONCE_INIT;
static void free_dec(void *d) { libdeflate_free_decompressor(d); }
static void make_key(void) { pthread_key_create(&dec_key, free_dec); }

static struct libdeflate_decompressor *decompressor(void) {
  pthread_once(&dec_once, make_key);
  struct libdeflate_decompressor *d = pthread_getspecific(dec_key);
  if (!d && (d = libdeflate_alloc_decompressor())) pthread_setspecific(dec_key, d);
  return d;
}

mtd_inflate *mtd_inflate_new(const unsigned char *chunk, size_t nchunks, size_t total, size_t m, size_t room) {
  (void)room; /* the whole stream is out at once */
  mtd_inflate *s = malloc(sizeof *s + m + MTD_INFLATE_SLACK);
  if (!s) return NULL;
  s->chunk = chunk, s->nchunks = nchunks, s->total = total, s->m = m;
  s->buf = (unsigned char *)(s + 1);
  s->ran = s->ok = 0;
  memset(s->buf + m, 0, MTD_INFLATE_SLACK); /* read past the last row: defined bytes */
  return s;
}

void mtd_inflate_free(mtd_inflate *s) { free(s); }

const unsigned char *mtd_inflate_at(const mtd_inflate *s, size_t pos) { return s->buf + pos; }

/* Inflates the whole stream into s->buf; sets s->ok. */
static void inflate_all(mtd_inflate *s) {
  s->ran = 1;
  struct libdeflate_decompressor *d = decompressor();
  if (!d) return;
  const unsigned char *in = s->chunk + 8;
  unsigned char *gathered = NULL;
  if (s->nchunks > 1) { /* the chunks' data in one piece */
    if (!(gathered = malloc(s->total ? s->total : 1))) return;
    const unsigned char *c = s->chunk;
    size_t at = 0;
    for (size_t k = 0; k < s->nchunks; k++, c += 12 + be32(c)) {
      size_t n = be32(c);
      if (n > s->total - at) { /* the caller counted otherwise: a fault */
        free(gathered);
        return;
      }
      memcpy(gathered + at, c + 8, n);
      at += n;
    }
    in = gathered;
  }
  size_t used = 0, made = 0;
  enum libdeflate_result r = libdeflate_zlib_decompress_ex(d, in, s->total, s->buf, s->m, &used, &made);
  s->ok = r == LIBDEFLATE_SUCCESS && used == s->total && made == s->m;
  memset(s->buf + made, 0, s->m - made < MTD_INFLATE_SLACK ? s->m - made : MTD_INFLATE_SLACK);
  free(gathered);
}

size_t mtd_inflate_run(mtd_inflate *s, size_t until, size_t keep) {
  (void)until, (void)keep;
  if (!s->ran) inflate_all(s);
  return s->ok ? s->m : (size_t)-1;
}

int mtd_inflate_done(const mtd_inflate *s, int check_adler) {
  (void)check_adler; /* libdeflate checks the Adler-32 of a zlib stream */
  return s->ran && s->ok;
}
