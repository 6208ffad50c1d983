/* png_inflate.c -- inflate (RFC 1950 zlib stream of RFC 1951 deflate
 * blocks) for the fast PNG path: the IDAT chunks' data read where it lies
 * and decoded in steps into a buffer that keeps the last 32 KiB (deflate's
 * window) and the step's bytes, so that png_fast.c unfilters each step's
 * rows while they are in cache and no image-sized buffer is touched. Every
 * stream zlib refuses is refused here (the fast path then leaves the file
 * to libpng); nothing is read or written outside the buffers. Not a general
 * zlib: one stream, its size known. */
#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "png_fast.h"

/* Decoding tables: a root table indexed by the next LIT_BITS (DIST_BITS)
 * bits of input, whose entries for longer codes point to subtables. An
 * entry: bits 0-5 the bits it uses up, the code's (at its level) and the
 * extra bits after it, so that one shift consumes both; bits 8-11 the
 * code's length (for E_SUB: the subtable's index bits); flags; the value in
 * bits 16-31 (a literal, a length or distance base, a subtable's start).
 * No flag: a code zlib calls invalid. */
enum { LIT_BITS = 10, DIST_BITS = 8, CL_BITS = 7 };
enum { LIT_SIZE = 2048, DIST_SIZE = 1024 }; /* root + room for subtables (build checks) */
enum { E_LIT = 0x1000, E_MATCH = 0x2000, E_EOB = 0x4000, E_SUB = 0x8000 };
#define E_USED(e) ((e)&63)
#define E_CODE(e) ((e) >> 8 & 15)
#define E_VAL(e) ((e) >> 16)
/* The value of entry e whose bits were taken from `saved`: its base plus
 * the extra bits after the code. */
#define E_PLUS(e, saved) (E_VAL(e) + (uint32_t)(((saved) & ((1ull << E_USED(e)) - 1)) >> E_CODE(e)))

enum { S_HEADER, S_BLOCK, S_STORED, S_HUFF, S_TRAILER, S_DONE };
enum { WINDOW = 32768, OVERSHOOT = 512 }; /* a step may pass its target by a match (258) */

struct mtd_inflate {
  const unsigned char *in, *in_end, *in_begin; /* the IDAT chunk's data being read */
  const unsigned char *chunk;                  /* that chunk's length field */
  size_t chunks_left, read, total;             /* chunks after it; bytes of those before it; in all */
  uint64_t bits;                               /* input bits not yet used, lowest first */
  unsigned nbits;                              /* how many (more may follow: the next bytes) */
  size_t fake;                                 /* zero bytes fed past the end of the data */
  unsigned char *buf, *out, *end;              /* buf[0] is byte `base` of the stream; end: where this step must stop */
  size_t cap, base, m;                         /* buf's size (less the copies' slack); the stream's size */
  size_t summed;                               /* bytes of buf the Adler-32 covers */
  uint32_t adler;
  int state, last;     /* last: the final block has begun */
  int exact, adler_ok; /* at the end: all of the data and no more was used; its Adler-32 matched */
  size_t stored_left;
  const uint32_t *lt, *dt; /* the block's tables: lit, dist or the fixed ones */
  uint32_t lit[LIT_SIZE], dist[DIST_SIZE];
};

static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* ---- tables ---- */

/* The entries of the literal/length and distance alphabets without code
 * lengths (bits 8-11: the extra bits); the symbols past the valid ones
 * (286, 287; 30, 31: only the fixed code has them) get no flag, as zlib
 * marks them invalid. */
static uint32_t lit_entries[288], dist_entries[32], cl_entries[19];
static uint32_t fixed_lit[LIT_SIZE], fixed_dist[DIST_SIZE];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static unsigned reverse(unsigned code, int len) {
  unsigned r = 0;
  for (int i = 0; i < len; i++, code >>= 1) r = r << 1 | (code & 1);
  return r;
}

/* The number of index bits of the subtable that starts with a code of
 * length len (> root): enough for the codes still to place (left[l] of each
 * length l) that share its first root bits. */
static int sub_bits(const int *left, int len, int root, int max) {
  int bits = len - root, room = 1 << bits;
  while (bits + root < max) {
    room -= left[bits + root];
    if (room <= 0) break;
    bits++, room <<= 1;
  }
  return bits;
}

/* The table entry of a symbol's entry for a code of l bits. */
static uint32_t with_length(uint32_t e, int l) {
  return (e & ~0xfffu) | (uint32_t)l << 8 | ((uint32_t)l + (e >> 8 & 15));
}

/* Fills table (cap entries) for the canonical code of lens[0..n) from
 * entry[symbol]. 0 for a code zlib refuses: over-subscribed, or incomplete
 * unless it is empty or one code of one bit and `sparse` allows that
 * (unused entries are then invalid); also 0 if cap is too small. */
static int build(uint32_t *table, int root, int cap, const uint8_t *lens, int n, const uint32_t *entry, int sparse) {
  int count[16] = {0}, left[16], offs[16], max = 0;
  uint16_t sorted[288];
  for (int s = 0; s < n; s++) count[lens[s]]++;
  for (int l = 1; l <= 15; l++)
    if (count[l]) max = l;
  int room = 1;
  for (int l = 1; l <= 15; l++)
    if ((room = 2 * room - count[l]) < 0) return 0;
  if (room > 0 && !(sparse && max <= 1)) return 0;
  if (room > 0)
    for (int i = 0; i < 1 << root; i++) table[i] = 1;
  offs[1] = 0;
  for (int l = 1; l < 15; l++) offs[l + 1] = offs[l] + count[l];
  for (int s = 0; s < n; s++)
    if (lens[s]) sorted[offs[lens[s]]++] = (uint16_t)s;
  memcpy(left, count, sizeof left);
  unsigned code = 0, prefix = ~0u, mask = (1u << root) - 1;
  int k = 0, used = 1 << root, start = 0, bits = 0;
  for (int l = 1; l <= max; l++, code <<= 1)
    for (int i = 0; i < count[l]; i++, k++, code++, left[l]--) {
      unsigned rev = reverse(code, l);
      uint32_t e = entry[sorted[k]];
      if (l <= root) {
        for (unsigned j = rev; j <= mask; j += 1u << l) table[j] = with_length(e, l);
        continue;
      }
      if ((rev & mask) != prefix) { /* a new subtable */
        prefix = rev & mask, bits = sub_bits(left, l, root, max), start = used;
        if ((used += 1 << bits) > cap) return 0;
        table[prefix] = E_SUB | (uint32_t)bits << 8 | (uint32_t)root | (uint32_t)start << 16;
      }
      for (unsigned j = rev >> root; j < 1u << bits; j += 1u << (l - root)) table[start + j] = with_length(e, l - root);
    }
  return 1;
}

static void tables_init(void) {
  for (int s = 0; s < 288; s++)
    lit_entries[s] = s < 256    ? E_LIT | (uint32_t)s << 16
                     : s == 256 ? E_EOB
                     : s < 286  ? E_MATCH | (uint32_t)len_extra[s - 257] << 8 | (uint32_t)len_base[s - 257] << 16
                                : 0;
  for (int s = 0; s < 32; s++)
    dist_entries[s] = s < 30 ? E_MATCH | (uint32_t)dist_extra[s] << 8 | (uint32_t)dist_base[s] << 16 : 0;
  for (int s = 0; s < 19; s++) cl_entries[s] = (uint32_t)s << 16;
  uint8_t lens[288];
  for (int s = 0; s < 288; s++) lens[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
  build(fixed_lit, LIT_BITS, LIT_SIZE, lens, 288, lit_entries, 0);
  memset(lens, 5, 32);
  build(fixed_dist, DIST_BITS, DIST_SIZE, lens, 32, dist_entries, 0);
}

/* ---- input ---- */

/* Moves to the next IDAT chunk's data; 0 when there is none. */
static int next_chunk(mtd_inflate *s) {
  while (s->chunks_left) {
    const unsigned char *p = s->chunk;
    s->read += (size_t)(s->in_end - s->in_begin);
    s->chunk = p = p + 12 + ((size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]);
    s->chunks_left--;
    s->in = s->in_begin = p + 8;
    s->in_end = s->in + ((size_t)p[0] << 24 | (size_t)p[1] << 16 | (size_t)p[2] << 8 | p[3]);
    if (s->in < s->in_end) return 1;
  }
  return 0;
}

/* Tops s's bit buffer up to 56 bits or more a byte at a time, across
 * chunks, with zero bytes (counted in fake) past the end of the data. */
static void refill_slow(mtd_inflate *s) {
  s->bits &= (1ull << s->nbits) - 1; /* nbits < 57: drop the look-ahead bytes */
  while (s->nbits <= 56) {
    if (s->in == s->in_end && !next_chunk(s)) {
      s->fake++, s->nbits += 8;
      continue;
    }
    s->bits |= (uint64_t)*s->in++ << s->nbits;
    s->nbits += 8;
  }
}

/* The next n (<= 32) bits of s, used up: for the headers. */
static uint32_t take(mtd_inflate *s, unsigned n) {
  if (s->nbits < n) refill_slow(s);
  uint32_t v = (uint32_t)(s->bits & ((1ull << n) - 1));
  s->bits >>= n, s->nbits -= n;
  return v;
}

/* The Huffman decoder keeps the bit buffer, the input and the output in
 * locals; they go back to s around the slow refill. REFILL8 loads 8 bytes
 * where the chunk has them: the bytes past the ones counted are the next
 * ones, so the next load may overlap them. */
#define SAVE() (s->bits = bits, s->nbits = nbits, s->in = in, s->out = out)
#define LOAD() (bits = s->bits, nbits = s->nbits, in = s->in, in_end = s->in_end)
#define REFILL8()                                                                                                      \
  do {                                                                                                                 \
    uint64_t w_;                                                                                                       \
    memcpy(&w_, in, 8);                                                                                                \
    bits |= w_ << nbits, in += (63 - nbits) >> 3, nbits |= 56;                                                         \
  } while (0)
#define REFILL()                                                                                                       \
  do {                                                                                                                 \
    if (nbits >= 56) break;                                                                                            \
    if (in_end - in >= 8)                                                                                              \
      REFILL8();                                                                                                       \
    else                                                                                                               \
      SAVE(), refill_slow(s), LOAD();                                                                                  \
  } while (0)
#define DROP(n) (bits >>= (n), nbits -= (n))
#define PEEK(n) ((uint32_t)(bits & ((1ull << (n)) - 1)))
/* e: a root entry of table t; resolved through its subtable, and its bits
 * (kept in saved) used up */
#define RESOLVE(e, t)                                                                                                  \
  do {                                                                                                                 \
    if (e & E_SUB) DROP(E_USED(e)), e = t[E_VAL(e) + PEEK(E_CODE(e))];                                                 \
    saved = bits;                                                                                                      \
    DROP(E_USED(e));                                                                                                   \
  } while (0)
#define DECODE(e, t, root)                                                                                             \
  do {                                                                                                                 \
    e = t[PEEK(root)];                                                                                                 \
    RESOLVE(e, t);                                                                                                     \
  } while (0)

/* ---- output ---- */

/* Copies a match of len bytes from dist back (dist <= what is out, len <=
 * the room left; may write up to 31 bytes past len, into the slack). Most
 * matches are short: 8-byte words (a load inside one earlier store is
 * forwarded from it; a wider load across two is not). */
static inline void copy_match(unsigned char *out, size_t dist, size_t len) {
  const unsigned char *src = out - dist;
  uint64_t w;
  if (dist >= 8) {
    memcpy(&w, src, 8), memcpy(out, &w, 8);
    memcpy(&w, src + 8, 8), memcpy(out + 8, &w, 8);
    if (len <= 16) return;
    if (dist >= 32) {
      for (size_t i = 16; i < len; i += 32)
        _mm256_storeu_si256((__m256i *)(out + i), _mm256_loadu_si256((const __m256i *)(src + i)));
      return;
    }
    for (size_t i = 16; i < len; i += 8) memcpy(&w, src + i, 8), memcpy(out + i, &w, 8);
  } else if (dist == 1) {
    __m256i v = _mm256_set1_epi8((char)src[0]);
    for (size_t i = 0; i < len; i += 32) _mm256_storeu_si256((__m256i *)(out + i), v);
  } else { /* the period repeated: bytes first, then 8 at a time from a multiple of dist >= 8 back */
    size_t step = (8 + dist - 1) / dist * dist, i = 0;
    for (; i < step - dist && i < len; i++) out[i] = src[i];
    for (; i < len; i += 8) memcpy(&w, out + i - step, 8), memcpy(out + i, &w, 8);
  }
}

/* ---- blocks ---- */

/* Reads a dynamic block's code lengths and builds s->lit and s->dist;
 * 0 where zlib reports a bad header. */
static int read_dynamic(mtd_inflate *s) {
  static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  uint8_t lens[320] = {0}, cl[19] = {0};
  uint32_t cl_table[1 << CL_BITS];
  int nlit = (int)take(s, 5) + 257, ndist = (int)take(s, 5) + 1, ncl = (int)take(s, 4) + 4;
  if (nlit > 286 || ndist > 30) return 0;
  for (int i = 0; i < ncl; i++) cl[order[i]] = (uint8_t)take(s, 3);
  if (!build(cl_table, CL_BITS, 1 << CL_BITS, cl, 19, cl_entries, 0)) return 0;
  for (int i = 0; i < nlit + ndist;) {
    if (s->nbits < CL_BITS) refill_slow(s);
    uint32_t e = cl_table[s->bits & ((1u << CL_BITS) - 1)];
    take(s, E_USED(e));
    int sym = (int)E_VAL(e), rep, v = 0;
    if (sym < 16) {
      lens[i++] = (uint8_t)sym;
      continue;
    }
    if (sym == 16) {
      if (i == 0) return 0;
      v = lens[i - 1], rep = 3 + (int)take(s, 2);
    } else {
      rep = sym == 17 ? 3 + (int)take(s, 3) : 11 + (int)take(s, 7);
    }
    if (i + rep > nlit + ndist) return 0;
    memset(lens + i, v, (size_t)rep), i += rep;
  }
  return lens[256] && build(s->lit, LIT_BITS, LIT_SIZE, lens, nlit, lit_entries, 1) &&
         build(s->dist, DIST_BITS, DIST_SIZE, lens + nlit, ndist, dist_entries, 1);
}

/* Decodes a Huffman block's symbols until out reaches target or the block
 * ends (state S_BLOCK then); 0 on a fault. While FAST_ROOM bytes of output
 * and 16 of input remain, no bound is checked but the distance's, and the
 * next literal/length entry is looked up before the refill (the bits for
 * it are in the buffer, counted or not), keeping the refill's load off the
 * chain from symbol to symbol; near the ends, one symbol a step with every
 * check. Bits: a refill gives 56; two literals use 30, a length and its
 * distance 48, a literal and a length 35 (then a refill). */
#define FAST_ROOM 320
static int run_huff(mtd_inflate *s, unsigned char *target) {
  uint64_t bits = s->bits, saved;
  unsigned nbits = s->nbits;
  const unsigned char *in = s->in, *in_end = s->in_end;
  unsigned char *out = s->out, *const end = s->end, *const out0 = s->buf; /* all of the window after a slide */
  unsigned char *fast_end = end - out0 > FAST_ROOM ? end - FAST_ROOM : out0;
  if (fast_end > target) fast_end = target;
  const uint32_t *lt = s->lt, *dt = s->dt;
  uint32_t e;
  for (;;) {
    if (out < fast_end && in_end - in >= 16) REFILL8();
    e = lt[PEEK(LIT_BITS)];
    while (out < fast_end && in_end - in >= 16) {
      REFILL8();
      RESOLVE(e, lt);
      if (e & E_LIT) {
        *out++ = (unsigned char)E_VAL(e);
        DECODE(e, lt, LIT_BITS);
        if (e & E_LIT) {
          *out++ = (unsigned char)E_VAL(e);
          e = lt[PEEK(LIT_BITS)];
          continue;
        }
        REFILL8();
      }
      if (!(e & E_MATCH)) goto block_end;
      size_t len = E_PLUS(e, saved);
      DECODE(e, dt, DIST_BITS);
      size_t dist = E_PLUS(e, saved);
      if (!(e & E_MATCH) || dist > (size_t)(out - out0)) goto fail;
      e = lt[PEEK(LIT_BITS)];
      copy_match(out, dist, len);
      out += len;
    }
    if (out >= target) break;
    REFILL();
    DECODE(e, lt, LIT_BITS);
    if (e & E_LIT) {
      if (out == end) goto fail;
      *out++ = (unsigned char)E_VAL(e);
      continue;
    }
    if (!(e & E_MATCH)) goto block_end;
    size_t len = E_PLUS(e, saved);
    REFILL();
    DECODE(e, dt, DIST_BITS);
    size_t dist = E_PLUS(e, saved);
    if (!(e & E_MATCH) || dist > (size_t)(out - out0) || len > (size_t)(end - out)) goto fail;
    copy_match(out, dist, len);
    out += len;
  }
  SAVE();
  return 1;
block_end:
  SAVE();
  if (e & E_EOB) s->state = S_BLOCK;
  return (e & E_EOB) != 0;
fail:
  SAVE();
  return 0;
}

/* Copies a stored block's bytes until out reaches target or the block
 * ends: first those in the bit buffer (byte-aligned here), then from the
 * chunks. */
static int run_stored(mtd_inflate *s, unsigned char *target) {
  while (s->stored_left && s->out < target) {
    if (s->nbits >= 8) {
      *s->out++ = (unsigned char)s->bits;
      s->bits >>= 8, s->nbits -= 8, s->stored_left--;
      continue;
    }
    s->bits = 0;                                        /* its look-ahead bytes are read from the chunk now */
    if (s->in == s->in_end && !next_chunk(s)) return 0; /* the data ends inside the block */
    size_t n = (size_t)(s->in_end - s->in), room = (size_t)(target - s->out);
    if (n > s->stored_left) n = s->stored_left;
    if (n > room) n = room;
    memcpy(s->out, s->in, n);
    s->out += n, s->in += n, s->stored_left -= n;
  }
  if (!s->stored_left) s->state = S_BLOCK;
  return 1;
}

/* Brings the Adler-32 up to the bytes out. */
static void sum_out(mtd_inflate *s) {
  size_t made = (size_t)(s->out - s->buf);
  s->adler = mtd_adler32(s->adler, s->buf + s->summed, made - s->summed);
  s->summed = made;
}

/* Reads a block header (or the trailer); 0 on a fault. */
static int run_header(mtd_inflate *s) {
  if (s->state == S_HEADER) { /* CMF, FLG: deflate, window <= 32K, no preset dictionary, check bits */
    unsigned cmf = take(s, 8), flg = take(s, 8);
    if ((cmf & 15) != 8 || cmf >> 4 > 7 || (flg & 0x20) || (cmf << 8 | flg) % 31) return 0;
    s->state = S_BLOCK;
  } else if (s->state == S_TRAILER) { /* Adler-32, big-endian, at a byte boundary */
    take(s, s->nbits & 7);
    uint32_t a = __builtin_bswap32(take(s, 32));
    /* bytes used: those read, less those still in the buffer (the fake
     * ones last); all of the data and no more */
    size_t used = s->read + (size_t)(s->in - s->in_begin) + s->fake - s->nbits / 8;
    sum_out(s);
    s->state = S_DONE;
    s->exact = used == s->total, s->adler_ok = a == s->adler;
  } else if (s->last) {
    s->state = S_TRAILER;
  } else {
    s->last = (int)take(s, 1);
    int type = (int)take(s, 2);
    if (type == 0) { /* stored: LEN and its complement at the next byte boundary */
      take(s, s->nbits & 7);
      unsigned len = take(s, 16), nlen = take(s, 16);
      if (len != (~nlen & 0xffff)) return 0;
      s->stored_left = len, s->state = S_STORED;
    } else if (type == 1) {
      s->lt = fixed_lit, s->dt = fixed_dist, s->state = S_HUFF;
    } else if (type == 2) {
      if (!read_dynamic(s)) return 0;
      s->lt = s->lit, s->dt = s->dist, s->state = S_HUFF;
    } else {
      return 0;
    }
  }
  return 1;
}

/* ---- the API ---- */

mtd_inflate *mtd_inflate_new(const unsigned char *chunk, size_t nchunks, size_t total, size_t m, size_t room) {
  pthread_once(&tables_once, tables_init);
  size_t cap = (m < WINDOW + room ? m : WINDOW + room) + OVERSHOOT;
  mtd_inflate *s = malloc(sizeof *s + cap + MTD_INFLATE_SLACK);
  if (!s) return NULL;
  s->chunk = chunk, s->chunks_left = nchunks - 1, s->read = 0, s->total = total;
  s->in = s->in_begin = chunk + 8;
  s->in_end = s->in + ((size_t)chunk[0] << 24 | (size_t)chunk[1] << 16 | (size_t)chunk[2] << 8 | chunk[3]);
  s->bits = 0, s->nbits = 0, s->fake = 0;
  s->buf = s->out = (unsigned char *)(s + 1), s->cap = cap, s->base = 0, s->m = m, s->summed = 0, s->adler = 1;
  memset(s->buf + cap, 0, MTD_INFLATE_SLACK); /* read past the last row: defined bytes */
  s->state = S_HEADER, s->last = 0, s->exact = s->adler_ok = 0, s->stored_left = 0;
  return s;
}

void mtd_inflate_free(mtd_inflate *s) { free(s); }

const unsigned char *mtd_inflate_at(const mtd_inflate *s, size_t pos) { return s->buf + (pos - s->base); }

/* Makes room for bytes up to `until`: drops what is before both keep and
 * the window, moving the rest to the start of buf. */
static void slide(mtd_inflate *s, size_t until, size_t keep) {
  size_t made = s->base + (size_t)(s->out - s->buf);
  if (until - s->base + OVERSHOOT <= s->cap || made < WINDOW) return;
  size_t from = keep < made - WINDOW ? keep : made - WINDOW;
  if (from <= s->base) return;
  size_t drop = from - s->base;
  memmove(s->buf, s->buf + drop, made - from);
  s->base = from, s->out -= drop, s->summed -= drop;
}

size_t mtd_inflate_run(mtd_inflate *s, size_t until, size_t keep) {
  slide(s, until, keep);
  size_t stop = s->m - s->base < s->cap - OVERSHOOT / 2 ? s->m - s->base : s->cap - OVERSHOOT / 2;
  s->end = s->buf + stop;
  unsigned char *target = until < s->base + stop ? s->buf + (until - s->base) : s->end;
  int ok = 1;
  while (ok && s->out < target && s->state != S_DONE) {
    if (s->state == S_HUFF)
      ok = run_huff(s, target);
    else if (s->state == S_STORED)
      ok = run_stored(s, target);
    else
      ok = run_header(s);
  }
  /* at the stream's size: what follows must end it (more bytes: a fault) */
  while (ok && s->base + (size_t)(s->out - s->buf) == s->m && s->state != S_DONE) {
    if (s->state == S_HUFF)
      ok = run_huff(s, s->end + 1) && s->state == S_BLOCK;
    else if (s->state == S_STORED)
      ok = run_stored(s, s->end) && s->state == S_BLOCK; /* only an empty one */
    else
      ok = run_header(s);
  }
  sum_out(s);
  return ok ? s->base + (size_t)(s->out - s->buf) : (size_t)-1;
}

int mtd_inflate_done(const mtd_inflate *s, int check_adler) {
  return s->state == S_DONE && s->exact && (s->adler_ok || !check_adler) && s->base + (size_t)(s->out - s->buf) == s->m;
}
