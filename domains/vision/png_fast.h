/* png_fast.h -- the parts of the fast PNG path (png_fast.c) that live in
 * files of their own: inflate (png_inflate.c, over libdeflate) and the
 * per-row work of unfiltering and converting
 * pixels (png_rows.c). Internal to domains/vision; image.h is the API. */
#ifndef MTD_PNG_FAST_H
#define MTD_PNG_FAST_H

#include <stddef.h>
#include <stdint.h>

/* ---- png_inflate.c ---- */
/* Bytes readable past the decoder's buffer (copies of matches write whole
 * words; png_rows.c reads a few bytes past a row). */
#define MTD_INFLATE_SLACK 64

typedef struct mtd_inflate mtd_inflate;
/* A decoder of the zlib stream in the data of the `nchunks` consecutive
 * IDAT chunks starting at chunk (its length field; the chunks' lengths and
 * order are checked by the caller), `total` data bytes in all, which must
 * make m bytes; room: the most bytes a step asks for past what it keeps
 * (mtd_inflate_run). NULL when out of memory. */
mtd_inflate *mtd_inflate_new(const unsigned char *chunk, size_t nchunks, size_t total, size_t m, size_t room);
void mtd_inflate_free(mtd_inflate *s);
/* Decodes until at least `until` bytes (counted from the stream's start)
 * are out (more may be: libdeflate makes them all at once) or the stream
 * ends; the bytes before keep may be dropped to make room, until - keep <=
 * room. Returns the bytes out so far, or
 * (size_t)-1 for a stream zlib would refuse or one making more than m. */
size_t mtd_inflate_run(mtd_inflate *s, size_t until, size_t keep);
/* Byte pos of the stream, pos >= the last run's keep and < its result:
 * valid until the next run; MTD_INFLATE_SLACK bytes past the last byte out
 * are readable. */
const unsigned char *mtd_inflate_at(const mtd_inflate *s, size_t pos);
/* Whether the stream has ended exactly with the data after making exactly
 * m bytes, its Adler-32 matching (always checked; check_adler is kept for
 * an inflater that can skip it). */
int mtd_inflate_done(const mtd_inflate *s, int check_adler);

/* ---- png_rows.c ---- */
/* Undoes filter `type` (0..4) of a row of rb bytes: src (filtered) to dst
 * (may be src) given prev, the row above unfiltered (zeros for the first).
 * bpp: bytes a pixel (1 for less than 8 bits). src and prev must be
 * readable for 8 bytes past rb; at most rb bytes of dst are written.
 * Returns 0 for an unknown type. */
int mtd_png_unfilter(int type, unsigned char *dst, const unsigned char *src, const unsigned char *prev, size_t rb,
                     int bpp);

/* How an unfiltered row becomes a row of output pixels. */
typedef struct mtd_png_rowfmt {
  int depth;                /* bits a sample in the file: 1, 2, 4, 8, 16 */
  int c0, cout;             /* channels in the file (palette: 1) and out */
  int npal;                 /* palette entries (0: no palette) */
  const unsigned char *pal; /* 256 entries of 4 bytes, RGBA */
} mtd_png_rowfmt;
/* Writes the w pixels of unfiltered row src as f asks into dst (8 bits:
 * bytes; 16: native uint16); 0 when a palette index is past the palette. */
int mtd_png_convert(unsigned char *dst, const unsigned char *src, size_t w, const mtd_png_rowfmt *f);

#endif
