/* png_fast.c -- the common PNG files decoded without libpng: not
 * interlaced; gray of 1 to 16 bits, palette of 1 to 8 bits (with or without
 * tRNS), gray + alpha, RGB and RGBA of 8 or 16 bits; in the ImageReadModes
 * that only copy, drop or add channels. The IDAT data is inflated
 * (png_inflate.c, libdeflate), and the rows are unfiltered and converted
 * (png_rows.c) a step of rows at a time, while they are in cache. Anything else, and
 * any file this path finds a fault in, is left to libpng (png_decode.c),
 * whose result or error then stands: a file either passes every check
 * libpng makes, or goes to libpng. */
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "png_fast.h"

#define MAX_SIDE 1000000  /* libpng's default user limit on width and height */
#define MAX_CHUNK 8000000 /* libpng's default limit on a chunk's length (more: its error) */
#define MAX_CHUNKS 500    /* more chunks: libpng decides (its cache of chunks is limited) */
#define STEP_BYTES 32768  /* inflated a step at a time: rows unfiltered while in L1/L2 */

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Whether the CRC stored after a chunk of len data bytes at p (its length
 * field) matches its type and data. */
static int crc_ok(const unsigned char *p, size_t len) {
#ifdef MTD_FUZZ_NO_CRC /* the fuzz build: libpng ignores them too */
  return (void)p, (void)len, 1;
#endif
  return libdeflate_crc32(0, p + 4, len + 4) == be32(p + 8 + len);
}

/* What the chunk walk found. */
typedef struct info {
  uint32_t w, h;
  int depth, color, chans, npal, ntrns;
  const unsigned char *plte, *trns, *idat; /* idat: the first IDAT chunk */
  size_t nidat, zlen;                      /* IDAT chunks, their data bytes */
} info;

/* IHDR's fields, accepted only when this path handles them. */
static int read_ihdr(const unsigned char *p, uint32_t len, info *f) {
  static const int chans[7] = {1, 0, 3, 1, 2, 0, 4};
  static const unsigned depths[7] = {0x10116, 0, 0x10100, 0x116, 0x10100, 0, 0x10100}; /* bit d: depth d valid */
  if (len != 13 || memcmp(p + 4, "IHDR", 4) || !crc_ok(p, len)) return 0;
  const unsigned char *d = p + 8;
  f->w = be32(d), f->h = be32(d + 4), f->depth = d[8], f->color = d[9];
  if (f->w < 1 || f->h < 1 || f->w > MAX_SIDE || f->h > MAX_SIDE || f->color > 6 || f->depth > 16 ||
      !(depths[f->color] >> f->depth & 1))
    return 0;
  f->chans = chans[f->color];
  return d[10] == 0 && d[11] == 0 && d[12] == 0; /* deflate, filter method 0, no interlace */
}

/* One chunk after IHDR (p: its length field; k: its index); 1 to go on, 0
 * to leave the file to libpng, 2 at IEND. */
static int read_chunk(const unsigned char *p, uint32_t len, size_t k, size_t *last_idat, info *f) {
  const unsigned char *t = p + 4;
  if (!memcmp(t, "IDAT", 4)) {
    if ((f->nidat && *last_idat != k - 1) || !crc_ok(p, len)) return 0;
    if (!f->nidat) f->idat = p;
    f->nidat++, f->zlen += len, *last_idat = k;
    return 1;
  }
  if (!memcmp(t, "IEND", 4)) return len == 0 && f->nidat && crc_ok(p, len) ? 2 : 0;
  if (!memcmp(t, "PLTE", 4)) {
    if (f->plte || f->nidat || f->trns || f->color == 0 || f->color == 4 || len % 3 || len == 0 || len > 768 ||
        !crc_ok(p, len))
      return 0;
    /* libpng keeps the entries a palette image's bit depth can index */
    int n = (int)(len / 3), most = f->color == 3 ? 1 << f->depth : 256;
    f->plte = p + 8, f->npal = n < most ? n : most;
    return 1;
  }
  if (!memcmp(t, "tRNS", 4)) { /* this path: palette transparency only */
    if (f->color != 3 || !f->plte || f->trns || f->nidat || len == 0 || len > (uint32_t)f->npal || !crc_ok(p, len))
      return 0;
    f->trns = p + 8, f->ntrns = (int)len;
    return 1;
  }
  if (!memcmp(t, "eXIf", 4) || !(t[0] & 0x20)) return 0; /* unknown critical chunks: libpng's error */
  return 1;                                              /* other ancillary chunks change no pixel */
}

/* libpng refuses chunk types that are not four ASCII letters. */
static int is_name(const unsigned char *t) {
  for (int i = 0; i < 4; i++)
    if (!((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z'))) return 0;
  return 1;
}

/* Walks the chunks from IHDR to IEND; 0 when libpng should decide. */
static int walk(const unsigned char *data, size_t n, info *f) {
  memset(f, 0, sizeof *f);
  size_t at = 8, last_idat = 0;
  for (size_t k = 0;; k++) {
    if (n - at < 12) return 0;
    uint32_t len = be32(data + at);
    if (len > MAX_CHUNK || n - at - 12 < len || k > MAX_CHUNKS || !is_name(data + at + 4)) return 0;
    int r = k == 0 ? read_ihdr(data + at, len, f) : read_chunk(data + at, len, k, &last_idat, f);
    if (r != 1) return r == 2 && (f->color != 3 || f->plte);
    at += 12 + (size_t)len;
  }
}

/* The channels mode makes of c0 (palette: 3, or 4 with tRNS); 0 when the
 * conversion needs libpng (color to gray). */
static int out_channels(int mode, int c0) {
  switch (mode) {
  case MTD_UNCHANGED:
    return c0;
  case MTD_GRAY:
    return c0 <= 2 ? 1 : 0;
  case MTD_GRAY_ALPHA:
    return c0 <= 2 ? 2 : 0;
  case MTD_RGB:
    return 3;
  default:
    return 4;
  }
}

/* One decoding: the walk's facts, the row geometry and the buffers. */
typedef struct job {
  info f;
  size_t rb, stride; /* bytes of a filtered row (without its filter byte); of an output row */
  int bpp, direct;   /* bytes a pixel for the filters; rows unfiltered straight into the output */
  unsigned char *scratch[2], *zero;
  const unsigned char *prev; /* the last row unfiltered */
  int prev_inflated;         /* ... which is where the inflated data holds it (filter type 0) */
  unsigned char pal[256 * 4];
  mtd_png_rowfmt fmt;
} job;

/* Unfilters and converts rows [y0, y1) of the inflated data into out; 0
 * on a fault (an unknown filter type, a palette index past the palette). */
static int do_rows(job *j, const mtd_inflate *s, unsigned char *out, uint32_t y0, uint32_t y1) {
  size_t row = j->rb + 1;
  if (y0 && j->prev_inflated) j->prev = mtd_inflate_at(s, (y0 - 1) * row + 1); /* the last step may have moved it */
  for (uint32_t y = y0; y < y1; y++) {
    const unsigned char *src = mtd_inflate_at(s, y * row + 1), *prev = y ? j->prev : j->zero;
    unsigned char *row = out + (size_t)y * j->stride;
    int type = src[-1];
    if (j->direct) {
      if (!mtd_png_unfilter(type, row, src, prev, j->rb, j->bpp)) return 0;
      j->prev = row;
      continue;
    }
    unsigned char *u = j->scratch[y & 1];
    if (type && !mtd_png_unfilter(type, u, src, prev, j->rb, j->bpp)) return 0;
    j->prev = type ? u : src, j->prev_inflated = !type; /* filter type 0: the data as it is */
    if (!mtd_png_convert(row, j->prev, j->f.w, &j->fmt)) return 0;
  }
  return 1;
}

/* Inflates the IDAT data a step at a time, each step's rows done at once
 * (the step keeps the last row done: the next one's filter reads it); 1
 * when the stream made every row and ended exactly, with the data. */
static int decode(job *j, unsigned char *out) {
  size_t row = j->rb + 1, m = row * j->f.h;
  uint32_t step = (uint32_t)(STEP_BYTES / row) + 1, done = 0;
  mtd_inflate *s = mtd_inflate_new(j->f.idat, j->f.nidat, j->f.zlen, m, (step + 2) * row);
  int ok = s != NULL;
  while (ok && done < j->f.h) {
    uint32_t want = j->f.h - done < step ? j->f.h : done + step;
    size_t made = mtd_inflate_run(s, (size_t)want * row, done ? (done - 1) * row : 0);
    uint32_t ready = made == (size_t)-1 ? 0 : (uint32_t)(made / row);
    ok = ready >= want && do_rows(j, s, out, done, ready);
    done = ready;
  }
  ok = ok && mtd_inflate_run(s, m, m) == m && mtd_inflate_done(s, 1);
  mtd_inflate_free(s);
  return ok;
}

/* Sets j's row geometry and conversion for mode; 0 when libpng should
 * decode (a conversion this path lacks, an image over max_bytes). */
static int plan(job *j, int mode, size_t max_bytes) {
  info *f = &j->f;
  int pal = f->color == 3, c0 = pal ? (f->trns ? 4 : 3) : f->chans, cout = out_channels(mode, c0);
  int bits = f->depth * f->chans; /* a pixel's bits in the file */
  uint64_t out_bytes = (uint64_t)f->w * f->h * cout * (f->depth == 16 ? 2 : 1);
  if (!cout || out_bytes > max_bytes) return 0; /* libpng words the refusal */
  j->rb = ((size_t)f->w * bits + 7) / 8, j->bpp = bits < 8 ? 1 : bits / 8;
  j->stride = (size_t)f->w * cout * (f->depth == 16 ? 2 : 1);
  j->direct = !pal && f->depth == 8 && c0 == cout;
  j->fmt = (mtd_png_rowfmt){f->depth, pal ? 1 : c0, cout, pal ? f->npal : 0, j->pal};
  memset(j->pal, 0, sizeof j->pal);
  for (int i = 0; pal && i < f->npal; i++) {
    memcpy(j->pal + 4 * i, f->plte + 3 * i, 3);
    j->pal[4 * i + 3] = i < f->ntrns ? f->trns[i] : 255;
  }
  return 1;
}

int mtd_png_fast(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img, mt_status *st) {
  job j;
  if (n < 8 || memcmp(data, "\x89PNG\r\n\x1a\n", 8) || !walk(data, n, &j.f) || !plan(&j, mode, max_bytes)) return 0;
  if ((j.rb + 1) * j.f.h / 1032 > j.f.zlen + 1) return 0; /* more than deflate can make of zlen bytes: a fault */
  unsigned char *rows = malloc(3 * (j.rb + 16));          /* scratch rows and a row of zeros, each read 2 bytes past */
  if (!rows) return 0;
  j.scratch[0] = rows, j.scratch[1] = rows + j.rb + 16, j.zero = rows + 2 * (j.rb + 16), j.prev_inflated = 0;
  memset(j.zero, 0, j.rb + 16);
  mtd_image_reset(img);
  img->h = j.f.h, img->w = j.f.w, img->c = j.fmt.cout, img->depth = j.f.depth == 16 ? 16 : 8, img->orientation = 1;
  int took = 1;
  if (!mtd_image_pixels(img, j.stride * j.f.h)) {
    *st = img->alloc ? MT_ENOMEM : mt_fail(MT_ENOMEM, "PNG decoder: out of memory");
  } else if (decode(&j, img->pix)) {
    *st = MT_OK;
  } else {
    mtd_image_drop(img);
    mtd_image_reset(img);
    took = 0;
  }
  free(rows);
  return took;
}
