/* png_fast.c -- the common PNG files decoded without libpng: 8 bits a
 * sample, not interlaced, gray, gray + alpha, RGB, RGBA or palette (with or
 * without tRNS), in the ImageReadModes that only copy, drop or add channels.
 * The IDAT stream is inflated in one call by libdeflate (dlopen'ed at first
 * use where installed; zlib otherwise) and unfiltered here. Anything else,
 * and any file this path finds a fault in, is left to libpng
 * (png_decode.c), whose result or error then stands: a file either passes
 * every check libpng makes, or goes to libpng. */
#include <dlfcn.h>
#include <emmintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "image.h"

#define MAX_SIDE 1000000   /* libpng's default user limit on width and height */
#define MAX_CHUNK 8000000  /* libpng's default limit on a chunk's length (more: its error) */
#define MAX_CHUNKS 500     /* more chunks: libpng decides (its cache of chunks is limited) */

/* ---- libdeflate, when installed (our declarations of its C API) ---- */
static struct {
  void *(*alloc)(void);
  void (*free)(void *d);
  int (*zlib)(void *d, const void *in, size_t n, void *out, size_t avail, size_t *in_used, size_t *out_made);
  uint32_t (*crc32)(uint32_t crc, const void *p, size_t n);
} ld;
static pthread_once_t ld_once = PTHREAD_ONCE_INIT;

static void ld_load(void) {
  void *h = dlopen("libdeflate.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  *(void **)&ld.alloc = dlsym(h, "libdeflate_alloc_decompressor");
  *(void **)&ld.free = dlsym(h, "libdeflate_free_decompressor");
  *(void **)&ld.zlib = dlsym(h, "libdeflate_zlib_decompress_ex");
  *(void **)&ld.crc32 = dlsym(h, "libdeflate_crc32");
  if (!ld.alloc || !ld.free || !ld.zlib || !ld.crc32) memset(&ld, 0, sizeof ld);
}

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Whether the CRC stored after a chunk of len data bytes at p (its length
 * field) matches its type and data. */
static int crc_ok(const unsigned char *p, size_t len) {
#ifdef MTD_FUZZ_NO_CRC /* the fuzz build: libpng ignores them too */
  return (void)p, (void)len, 1;
#endif
  uint32_t c = ld.crc32 ? ld.crc32(0, p + 4, len + 4) : (uint32_t)crc32(0, p + 4, (uInt)(len + 4));
  return c == be32(p + 8 + len);
}

/* What the chunk walk found. */
typedef struct info {
  uint32_t w, h;
  int color, c0, npal, ntrns;
  const unsigned char *plte, *trns, *idat; /* idat: the first IDAT chunk */
  size_t nidat, zlen;                      /* IDAT chunks, their data bytes */
} info;

/* IHDR's fields, accepted only when this path handles them. */
static int read_ihdr(const unsigned char *p, uint32_t len, info *f) {
  static const int chans[7] = {1, 0, 3, 1, 2, 0, 4};
  if (len != 13 || memcmp(p + 4, "IHDR", 4) || !crc_ok(p, len)) return 0;
  const unsigned char *d = p + 8;
  f->w = be32(d), f->h = be32(d + 4), f->color = d[9];
  if (f->w < 1 || f->h < 1 || f->w > MAX_SIDE || f->h > MAX_SIDE || d[8] != 8 || f->color > 6) return 0;
  f->c0 = chans[f->color];
  return f->c0 && d[10] == 0 && d[11] == 0 && d[12] == 0; /* deflate, filter method 0, no interlace */
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
    f->plte = p + 8, f->npal = (int)(len / 3);
    return 1;
  }
  if (!memcmp(t, "tRNS", 4)) { /* this path: palette transparency only */
    if (f->color != 3 || !f->plte || f->trns || f->nidat || len == 0 || len > (uint32_t)f->npal || !crc_ok(p, len))
      return 0;
    f->trns = p + 8, f->ntrns = (int)len;
    return 1;
  }
  if (!memcmp(t, "eXIf", 4) || !(t[0] & 0x20)) return 0; /* unknown critical chunks: libpng's error */
  return 1;                                                 /* other ancillary chunks change no pixel */
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

/* The IDAT data inflated into out (exactly m bytes, the stream ending
 * with the data); 0 on any fault. */
static int inflate_all(const unsigned char *data, size_t n, const info *f, unsigned char *out, size_t m) {
  const unsigned char *z = f->idat + 8;
  unsigned char *joined = NULL;
  if (f->nidat > 1) { /* the chunks' data made contiguous */
    joined = malloc(f->zlen);
    if (!joined) return 0;
    size_t got = 0;
    for (const unsigned char *p = f->idat; got < f->zlen; p += 12 + be32(p)) {
      memcpy(joined + got, p + 8, be32(p));
      got += be32(p);
    }
    z = joined;
  }
  int ok = 0;
  if (ld.zlib) {
    void *d = ld.alloc();
    size_t used = 0, made = 0;
    ok = d && ld.zlib(d, z, f->zlen, out, m, &used, &made) == 0 && used == f->zlen && made == m;
    if (d) ld.free(d);
  } else if (f->zlen <= 0xffffffffu && m <= 0xffffffffu) {
    z_stream s = {0};
    s.next_in = (Bytef *)z, s.avail_in = (uInt)f->zlen, s.next_out = out, s.avail_out = (uInt)m;
    ok = inflateInit(&s) == Z_OK && inflate(&s, Z_FINISH) == Z_STREAM_END && s.avail_in == 0 && s.total_out == m;
    inflateEnd(&s);
  }
  free(joined);
  (void)data, (void)n;
  return ok;
}

static inline unsigned char paeth(int a, int b, int c) {
  int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
  int t = pb <= pc ? b : c;
  return (unsigned char)(((pa <= pb) & (pa <= pc)) ? a : t);
}

static inline __m128i abs16(__m128i v) { return _mm_max_epi16(v, _mm_sub_epi16(_mm_setzero_si128(), v)); }

/* The Paeth filter undone for 3- or 4-byte pixels, one pixel's channels
 * at once in 16-bit lanes (the chain runs pixel to pixel). Reads one byte
 * past a 3-byte pixel (rows are padded), writes only the pixel. */
static void paeth_simd(unsigned char *x, const unsigned char *prev, size_t rb, int bpp) {
  const __m128i zero = _mm_setzero_si128();
  __m128i a = zero, c = zero;
  for (size_t i = 0; i < rb; i += bpp) {
    uint32_t bv, xv;
    memcpy(&bv, prev + i, 4), memcpy(&xv, x + i, 4);
    __m128i b = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)bv), zero);
    __m128i bc = _mm_sub_epi16(b, c), ac = _mm_sub_epi16(a, c);
    __m128i pa = abs16(bc), pb = abs16(ac), pc = abs16(_mm_add_epi16(bc, ac));
    __m128i not_a = _mm_or_si128(_mm_cmpgt_epi16(pa, pb), _mm_cmpgt_epi16(pa, pc)), not_b = _mm_cmpgt_epi16(pb, pc);
    __m128i t = _mm_or_si128(_mm_andnot_si128(not_b, b), _mm_and_si128(not_b, c));
    __m128i pred = _mm_or_si128(_mm_andnot_si128(not_a, a), _mm_and_si128(not_a, t));
    __m128i r = _mm_add_epi8(_mm_packus_epi16(pred, zero), _mm_cvtsi32_si128((int)xv));
    uint32_t out = (uint32_t)_mm_cvtsi128_si32(r);
    memcpy(x + i, &out, bpp);
    a = _mm_unpacklo_epi8(r, zero), c = b;
  }
}

/* Undoes the filter of one row of rb bytes in place (prev: the row above,
 * unfiltered; bpp: bytes a pixel); 0 for an unknown filter type. */
static int unfilter(int type, unsigned char *x, const unsigned char *prev, size_t rb, int bpp) {
  switch (type) {
  case 0: return 1;
  case 1:
    for (size_t i = bpp; i < rb; i++) x[i] = (unsigned char)(x[i] + x[i - bpp]);
    return 1;
  case 2:
    for (size_t i = 0; i < rb; i++) x[i] = (unsigned char)(x[i] + prev[i]);
    return 1;
  case 3:
    for (size_t i = 0; i < (size_t)bpp; i++) x[i] = (unsigned char)(x[i] + (prev[i] >> 1));
    for (size_t i = bpp; i < rb; i++) x[i] = (unsigned char)(x[i] + ((x[i - bpp] + prev[i]) >> 1));
    return 1;
  case 4:
    if (bpp >= 3) {
      paeth_simd(x, prev, rb, bpp);
      return 1;
    }
    for (size_t i = 0; i < (size_t)bpp; i++) x[i] = (unsigned char)(x[i] + prev[i]);
    for (size_t i = bpp; i < rb; i++) x[i] = (unsigned char)(x[i] + paeth(x[i - bpp], prev[i], prev[i - bpp]));
    return 1;
  }
  return 0;
}

/* Unfilters every row of the inflated data z (h rows of 1 + rb bytes, in
 * place); palette indices are checked against npal (0: not a palette). */
static int unfilter_all(unsigned char *z, const info *f, size_t rb, int bpp) {
  unsigned char *zero = calloc(rb + 4, 1);
  if (!zero) return 0;
  int ok = 1;
  for (uint32_t y = 0; y < f->h && ok; y++) {
    unsigned char *row = z + (size_t)y * (rb + 1);
    ok = unfilter(row[0], row + 1, y ? row + 1 - (rb + 1) : zero, rb, bpp);
    for (size_t i = 0; ok && f->npal && f->color == 3 && i < rb; i++) ok = row[1 + i] < f->npal;
  }
  free(zero);
  return ok;
}

/* One unfiltered row of w pixels of c0 channels (or palette indices, with
 * pal: 256 RGBA entries) written as cout channels. */
static void convert_row(unsigned char *dst, const unsigned char *src, size_t w, int c0, int cout,
                        const unsigned char *pal) {
  if (pal && cout == 4) {
    for (size_t x = 0; x < w; x++) memcpy(dst + 4 * x, pal + 4 * src[x], 4);
  } else if (pal) {
    for (size_t x = 0; x < w; x++) {
      const unsigned char *e = pal + 4 * src[x];
      dst[3 * x] = e[0], dst[3 * x + 1] = e[1], dst[3 * x + 2] = e[2];
    }
  } else if (c0 == cout) {
    memcpy(dst, src, w * cout);
  } else {
    int gray = c0 <= 2, alpha_in = c0 == 2 || c0 == 4, color = gray ? 1 : 3;
    for (size_t x = 0; x < w; x++) {
      const unsigned char *s = src + x * c0;
      unsigned char *d = dst + x * cout;
      int k = 0;
      for (; k < (cout <= 2 ? 1 : 3); k++) d[k] = s[gray ? 0 : k];
      if (cout == 2 || cout == 4) d[k] = alpha_in ? s[color] : 255;
    }
  }
}

/* The channels mode makes of c0 (palette: 3, or 4 with tRNS); 0 when the
 * conversion needs libpng (color to gray). */
static int out_channels(int mode, int c0) {
  switch (mode) {
  case MTD_UNCHANGED: return c0;
  case MTD_GRAY: return c0 <= 2 ? 1 : 0;
  case MTD_GRAY_ALPHA: return c0 <= 2 ? 2 : 0;
  case MTD_RGB: return 3;
  default: return 4;
  }
}

/* Writes the unfiltered rows into img's pixels (allocated here). */
static mt_status emit(const unsigned char *z, const info *f, int c0, int cout, size_t rb, mtd_image *img) {
  unsigned char pal[256 * 4];
  memset(pal, 0, sizeof pal);
  for (int i = 0; f->color == 3 && i < f->npal; i++) {
    memcpy(pal + 4 * i, f->plte + 3 * i, 3);
    pal[4 * i + 3] = i < f->ntrns ? f->trns[i] : 255;
  }
  img->h = f->h, img->w = f->w, img->c = cout, img->depth = 8, img->orientation = 1;
  size_t stride = (size_t)f->w * cout;
  if (!mtd_image_pixels(img, stride * f->h))
    return img->alloc ? MT_ENOMEM : mt_fail(MT_ENOMEM, "PNG decoder: out of memory");
  for (uint32_t y = 0; y < f->h; y++)
    convert_row((unsigned char *)img->pix + y * stride, z + (size_t)y * (rb + 1) + 1, f->w, f->color == 3 ? 1 : c0,
                cout, f->color == 3 ? pal : NULL);
  return MT_OK;
}

int mtd_png_fast(const unsigned char *data, size_t n, int mode, size_t max_bytes, mtd_image *img, mt_status *st) {
  pthread_once(&ld_once, ld_load);
  info f;
  if (n < 8 || memcmp(data, "\x89PNG\r\n\x1a\n", 8) || !walk(data, n, &f)) return 0;
  int c0 = f.color == 3 ? (f.trns ? 4 : 3) : f.c0, cout = out_channels(mode, c0), bpp = f.color == 3 ? 1 : c0;
  if (!cout || (uint64_t)f.w * f.h * cout > max_bytes) return 0; /* libpng words the refusal */
  size_t rb = (size_t)f.w * bpp, m = (rb + 1) * f.h;
  if (m / 1032 > f.zlen + 1) return 0; /* more than deflate can make of zlen bytes: a fault */
  unsigned char *z = malloc(m + 4);    /* paeth_simd reads a byte past a row */
  if (!z) return 0;
  if (!inflate_all(data, n, &f, z, m) || !unfilter_all(z, &f, rb, bpp)) {
    free(z);
    return 0;
  }
  mtd_image_reset(img);
  *st = emit(z, &f, c0, cout, rb, img);
  free(z);
  return 1;
}
