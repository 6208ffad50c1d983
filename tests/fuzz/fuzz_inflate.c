/* fuzz_inflate.c -- libFuzzer target for the fast PNG path's inflate
 * (domains/vision/png_inflate.c: zlib's streaming inflate fed IDAT chunk by
 * chunk and run in steps) against zlib in one call. The input's first byte
 * chooses how the stream is cut into IDAT chunks, its second how many bytes
 * each step asks for; the rest is a zlib stream. Whatever zlib decodes in
 * one call, the stepped decoder decodes to the same bytes; what zlib
 * refuses, it refuses, at any output size. Build and run: make fuzz. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../../domains/vision/png_fast.h"

#define CAP (1 << 20) /* bytes decoded at most */

static unsigned char ref[CAP], out[CAP];

/* The n bytes at z as IDAT chunks (length, type, data, a CRC left 0) of at
 * most `piece` bytes, and some empty ones: a new buffer, *nch chunks. */
static unsigned char *as_chunks(const uint8_t *z, size_t n, size_t piece, size_t *nch) {
  unsigned char *b = malloc(12 * (2 * n + 2) + n), *p = b;
  size_t at = 0;
  *nch = 0;
  do {
    size_t k = n - at < piece ? n - at : piece;
    if (*nch % 7 == 3) k = 0;
    p[0] = (unsigned char)(k >> 24), p[1] = (unsigned char)(k >> 16), p[2] = (unsigned char)(k >> 8);
    p[3] = (unsigned char)k;
    memcpy(p + 4, "IDAT", 4), memcpy(p + 8, z + at, k), memset(p + 8 + k, 0, 4);
    p += 12 + k, at += k, ++*nch;
  } while (at < n);
  return b;
}

/* zlib's decoding (Adler-32 checked or not) into ref: 1 when the stream
 * ended with the data, 0 when refused, -1 when it makes more than CAP. */
static int zlib_decode(const uint8_t *z, size_t n, int check, size_t *made) {
  z_stream s;
  memset(&s, 0, sizeof s);
  if (inflateInit(&s) != Z_OK) abort();
  if (!check) inflateValidate(&s, 0);
  s.next_in = (Bytef *)z, s.avail_in = (uInt)n, s.next_out = ref, s.avail_out = CAP;
  int r = inflate(&s, Z_FINISH);
  *made = s.total_out;
  int ok = r == Z_STREAM_END && s.avail_in == 0 ? 1 : r == Z_BUF_ERROR && s.avail_out == 0 ? -1 : 0;
  inflateEnd(&s);
  return ok;
}

/* inflate's decoding into out[0, m) in steps of `step` bytes (0: one),
 * each step's bytes copied out of its window: whether it is accepted;
 * *ended: the bytes made when the stream ended before m (else m + 1). */
static int ours(const unsigned char *chunks, size_t nch, size_t n, size_t m, size_t step, int check, size_t *ended) {
  mtd_inflate *s = mtd_inflate_new(chunks, nch, n, m, step ? step : m);
  if (!s) abort();
  size_t got = 0;
  *ended = m + 1;
  while (got < m) {
    size_t want = step && m - got > step ? got + step : m;
    size_t r = mtd_inflate_run(s, want, got);
    if (r == (size_t)-1) break;
    memcpy(out + got, mtd_inflate_at(s, got), r - got);
    if (r < want) {
      *ended = r;
      break;
    }
    got = r;
  }
  int ok = got >= m && mtd_inflate_run(s, m, m) == m && mtd_inflate_done(s, check);
  mtd_inflate_free(s);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 3) return 0;
  size_t piece = data[0] ? (size_t)data[0] * 3 : (size_t)-1, step = (size_t)data[1] * 97, n = size - 2, made, ended;
  const uint8_t *z = data + 2;
  int want = zlib_decode(z, n, 1, &made);
  if (want < 0) return 0;
  size_t nch;
  unsigned char *chunks = as_chunks(z, n, piece, &nch);
  int got = ours(chunks, nch, n, made, step, 1, &ended);
  if (got != want || (got && memcmp(out, ref, made))) abort();
  /* a stream the stepped decoder ends elsewhere than zlib: refused there too */
  if (!want && ours(chunks, nch, n, CAP, step, 1, &ended) == 0 && ended <= CAP &&
      ours(chunks, nch, n, ended, step, 1, &ended))
    abort();
  free(chunks);
  return 0;
}
