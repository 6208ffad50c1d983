/* sound_mpeg.c -- MPEG audio (MP3) for sound.c through libmpg123, set up
 * as libsndfile 1.2.0 sets it up for its own MPEG reading (float samples,
 * gapless, no resampling, no "Frankenstein" streams), so the samples are
 * libsndfile's, and quiet: libsndfile's decoder prints libmpg123's
 * complaints about damaged streams on stderr and has no switch to stop it.
 * Reading only (libsndfile writes MP3 files). */
#include <mpg123.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sound_mpeg.h"

struct mtd_mpeg {
  mpg123_handle *mh;
  FILE *f;                  /* a path's file, or NULL: the bytes below */
  const unsigned char *buf; /* the bytes [0, len) */
  int64_t len, pos;
  int channels;
};

/* ---- libmpg123's reader over a FILE or a byte range ---- */
static ssize_t io_read(void *u, void *dst, size_t n) {
  mtd_mpeg *m = u;
  if (m->f) {
    size_t k = fread(dst, 1, n, m->f);
    return k == 0 && ferror(m->f) ? -1 : (ssize_t)k;
  }
  int64_t k = m->len - m->pos < (int64_t)n ? m->len - m->pos : (int64_t)n;
  if (k <= 0) return 0;
  memcpy(dst, m->buf + m->pos, (size_t)k);
  m->pos += k;
  return (ssize_t)k;
}

static off_t io_seek(void *u, off_t off, int whence) {
  mtd_mpeg *m = u;
  if (m->f) return fseeko(m->f, off, whence) ? -1 : ftello(m->f);
  int64_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->len;
  if (base + off < 0 || base + off > m->len) return -1;
  m->pos = base + off;
  return (off_t)m->pos;
}

/* ---- recognising MPEG audio ---- */
/* an MPEG audio frame header at p: the 11-bit sync, and no reserved
 * version, layer, bit rate, sample rate or emphasis */
static bool frame_header(const unsigned char *p) {
  return p[0] == 0xFF && (p[1] & 0xE0) == 0xE0 && (p[1] & 0x18) != 0x08 && (p[1] & 0x06) != 0 &&
         (p[2] & 0xF0) != 0xF0 && (p[2] & 0x0C) != 0x0C && (p[3] & 0x03) != 0x02;
}

bool mtd_mpeg_sniff(mtd_peek_fn peek, void *ctx) {
  unsigned char t[10];
  size_t at = 0;
  /* ID3v2 tags: "ID3", version 2..4, revision, flags, size (4 x 7 bits) [+ a 10-byte footer] */
  while (peek(ctx, at, t, 10) && memcmp(t, "ID3", 3) == 0 && t[3] >= 2 && t[3] <= 4) {
    if ((t[6] | t[7] | t[8] | t[9]) & 0x80) return false;
    at += 10 + (((size_t)t[6] << 21) | ((size_t)t[7] << 14) | ((size_t)t[8] << 7) | t[9]) + ((t[5] & 0x10) ? 10 : 0);
  }
  return peek(ctx, at, t, 4) && frame_header(t);
}

/* ---- the decoder ---- */
void mtd_mpeg_close(mtd_mpeg *m) {
  if (!m) return;
  if (m->mh) {
    mpg123_close(m->mh);
    mpg123_delete(m->mh);
  }
  if (m->f) fclose(m->f);
  free(m);
}

/* the error of a failed open: closes m, says why */
static mt_status open_failed(mtd_mpeg *m, const char *what, int err) {
  const char *why = err == MPG123_DONE           ? "no whole audio frame in it"
                    : err == MPG123_ERR && m->mh ? mpg123_strerror(m->mh)
                                                 : mpg123_plain_strerror(err);
  mt_status st = mt_fail(MT_EIO, "MPEG audio that libmpg123 cannot %s (%s)", what, why);
  mtd_mpeg_close(m);
  return st;
}

mt_status mtd_mpeg_open(const char *path, const void *buf, size_t len, mtd_mpeg **out, int64_t *frames, int *channels,
                        int *rate, int *layer) {
  *out = NULL;
  mtd_mpeg *m = calloc(1, sizeof *m);
  if (!m) return mt_fail(MT_ENOMEM, "out of memory");
  m->buf = buf, m->len = (int64_t)len;
  if (path && !(m->f = fopen(path, "rb"))) {
    free(m);
    return mt_fail(MT_EIO, "cannot open the file");
  }
  int err = MPG123_OK;
  if (mpg123_init() != MPG123_OK || !(m->mh = mpg123_new(NULL, &err))) return open_failed(m, "start", err);
  mpg123_param(m->mh, MPG123_REMOVE_FLAGS, MPG123_AUTO_RESAMPLE, 0);
  mpg123_param(m->mh, MPG123_ADD_FLAGS, MPG123_FORCE_FLOAT | MPG123_GAPLESS | MPG123_NO_FRANKENSTEIN | MPG123_QUIET, 0);
  if ((err = mpg123_replace_reader_handle(m->mh, io_read, io_seek, NULL)) != MPG123_OK ||
      (err = mpg123_open_handle(m->mh, m)) != MPG123_OK)
    return open_failed(m, "open", err);
  long r;
  int enc;
  if ((err = mpg123_getformat(m->mh, &r, &m->channels, &enc)) != MPG123_OK) return open_failed(m, "read", err);
  off_t n = mpg123_length(m->mh);
  if (n <= 0) {
    if ((err = mpg123_scan(m->mh)) != MPG123_OK) return open_failed(m, "scan", err);
    n = mpg123_length(m->mh);
  }
  if (n < 0) return open_failed(m, "measure", MPG123_ERR);
  if (enc != MPG123_ENC_FLOAT_32 && (err = mpg123_format(m->mh, r, m->channels, MPG123_ENC_FLOAT_32)) != MPG123_OK)
    return open_failed(m, "decode as floats", err);
  struct mpg123_frameinfo fi;
  if ((err = mpg123_info(m->mh, &fi)) != MPG123_OK) return open_failed(m, "describe", err);
  if (fi.layer < 1 || fi.layer > 3) return open_failed(m, "name the layer of", MPG123_ERR);
  *frames = n, *channels = m->channels, *rate = (int)r, *layer = fi.layer;
  *out = m;
  return MT_OK;
}

int64_t mtd_mpeg_read(mtd_mpeg *m, float *dst, int64_t n) {
  size_t done = 0;
  int err = mpg123_read(m->mh, (unsigned char *)dst, (size_t)n * (size_t)m->channels * sizeof(float), &done);
  if (err != MPG123_OK && err != MPG123_DONE) return 0;
  return (int64_t)(done / sizeof(float) / (size_t)m->channels);
}

mt_status mtd_mpeg_seek(mtd_mpeg *m, int64_t frame) {
  if (mpg123_seek(m->mh, (off_t)frame, SEEK_SET) < 0)
    return mt_fail(MT_EIO, "cannot seek to frame %lld (%s)", (long long)frame, mpg123_strerror(m->mh));
  return MT_OK;
}
