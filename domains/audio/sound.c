/* sound.c -- reading sound files through libsndfile: opening a path or a
 * byte range (virtual IO over memory), torchaudio's metadata, seeking, and
 * reading frames in bounded chunks into any layout of float32/float64 or
 * the raw integer samples. MPEG audio (MP3), which libsndfile would decode
 * through a libmpg123 that prints on stderr, goes to sound_mpeg.c. No Lua
 * and no tensors: the fuzz target links it alone (with tensor/status.c). */
#include <math.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sound.h"
#include "sound_mpeg.h"

#define CHUNK_BYTES ((size_t)1 << 18) /* the interleaved staging buffer */

typedef struct membuf {
  const unsigned char *buf;
  sf_count_t len, pos;
} membuf;

struct mtd_sound {
  SNDFILE *sf;  /* libsndfile's handle, or NULL: */
  mtd_mpeg *mp; /* MPEG audio's */
  SF_INFO sfinfo;
  mtd_sound_info info;
  membuf mem;
  void *stage; /* CHUNK_BYTES, made on the first read that needs it */
};

/* ---- virtual IO over a byte range (sf_open_virtual) ---- */
static sf_count_t vio_len(void *u) { return ((membuf *)u)->len; }

static sf_count_t vio_seek(sf_count_t off, int whence, void *u) {
  membuf *m = u;
  sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->len;
  if ((off < 0 && -off > base) || (off > 0 && off > m->len - base)) return -1; /* before 0 or past the end */
  m->pos = base + off;
  return m->pos;
}

static sf_count_t vio_read(void *dst, sf_count_t n, void *u) {
  membuf *m = u;
  sf_count_t k = m->len - m->pos < n ? m->len - m->pos : n;
  if (k <= 0) return 0;
  memcpy(dst, m->buf + m->pos, (size_t)k);
  m->pos += k;
  return k;
}

static sf_count_t vio_write(const void *src, sf_count_t n, void *u) { return 0; }
static sf_count_t vio_tell(void *u) { return ((membuf *)u)->pos; }

/* ---- torchaudio's metadata ---- */
/* encoding name, bits per sample and the raw dtype of a libsndfile format
 * word, as torchaudio's sox backend reports them */
static void describe(int format, mtd_sound_info *in) {
  int major = format & SF_FORMAT_TYPEMASK, sub = format & SF_FORMAT_SUBMASK;
  int wav = major == SF_FORMAT_WAV || major == SF_FORMAT_WAVEX || major == SF_FORMAT_RF64;
  static const struct {
    int sub;
    const char *enc;
    int bits;
    mt_dtype raw; /* in a WAV file */
  } subs[] = {{SF_FORMAT_PCM_S8, "PCM_S", 8, MT_FLOAT32},      {SF_FORMAT_PCM_16, "PCM_S", 16, MT_INT16},
              {SF_FORMAT_PCM_24, "PCM_S", 24, MT_INT32},       {SF_FORMAT_PCM_32, "PCM_S", 32, MT_INT32},
              {SF_FORMAT_PCM_U8, "PCM_U", 8, MT_UINT8},        {SF_FORMAT_FLOAT, "PCM_F", 32, MT_FLOAT32},
              {SF_FORMAT_DOUBLE, "PCM_F", 64, MT_FLOAT32},     {SF_FORMAT_ULAW, "ULAW", 8, MT_FLOAT32},
              {SF_FORMAT_ALAW, "ALAW", 8, MT_FLOAT32},         {SF_FORMAT_VORBIS, "VORBIS", 0, MT_FLOAT32},
              {SF_FORMAT_OPUS, "OPUS", 0, MT_FLOAT32},         {SF_FORMAT_MPEG_LAYER_I, "MP3", 0, MT_FLOAT32},
              {SF_FORMAT_MPEG_LAYER_II, "MP3", 0, MT_FLOAT32}, {SF_FORMAT_MPEG_LAYER_III, "MP3", 0, MT_FLOAT32},
              {SF_FORMAT_GSM610, "GSM", 0, MT_FLOAT32},        {SF_FORMAT_IMA_ADPCM, "UNKNOWN", 4, MT_FLOAT32},
              {SF_FORMAT_MS_ADPCM, "UNKNOWN", 4, MT_FLOAT32}};
  in->encoding = "UNKNOWN";
  in->bits_per_sample = 0;
  in->raw_dtype = MT_FLOAT32;
  for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++)
    if (subs[k].sub == sub) {
      in->encoding = subs[k].enc;
      in->bits_per_sample = subs[k].bits;
      if (wav) in->raw_dtype = subs[k].raw;
    }
  if (major == SF_FORMAT_FLAC) in->encoding = "FLAC";
}

/* peeking at a file's bytes before choosing its reader: a path's FILE, or
 * a byte range */
typedef struct peeker {
  FILE *f;
  const unsigned char *buf;
  size_t len;
} peeker;

static bool peek(void *ctx, size_t at, unsigned char *dst, size_t n) {
  peeker *p = ctx;
  if (!p->f) {
    if (at > p->len || n > p->len - at) return false;
    memcpy(dst, p->buf + at, n);
    return true;
  }
  return at <= (size_t)INT64_MAX && fseeko(p->f, (off_t)at, SEEK_SET) == 0 && fread(dst, 1, n, p->f) == n;
}

/* whether the file at path, or buf[0..len), is MPEG audio */
static bool is_mpeg(const char *path, const void *buf, size_t len) {
  peeker p = {path ? fopen(path, "rb") : NULL, buf, len};
  if (path && !p.f) return false;
  bool yes = mtd_mpeg_sniff(peek, &p);
  if (p.f) fclose(p.f);
  return yes;
}

/* opens MPEG audio through sound_mpeg.c, filling s's info as libsndfile would */
static mt_status open_mpeg(mtd_sound *s, const char *path, const void *buf, size_t len) {
  int64_t frames;
  int channels, rate, layer;
  mt_status st = mtd_mpeg_open(path, buf, len, &s->mp, &frames, &channels, &rate, &layer);
  if (st) {
    char why[256];
    snprintf(why, sizeof why, "%s", mt_errmsg());
    return mt_fail(st, "not a sound file, or not one libsndfile reads (%s)", why);
  }
  static const int layers[] = {SF_FORMAT_MPEG_LAYER_I, SF_FORMAT_MPEG_LAYER_II, SF_FORMAT_MPEG_LAYER_III};
  s->sfinfo.frames = frames, s->sfinfo.channels = channels, s->sfinfo.samplerate = rate;
  s->sfinfo.format = SF_FORMAT_MPEG | layers[layer - 1];
  return MT_OK;
}

mt_status mtd_sound_open(const char *path, const void *buf, size_t len, mtd_sound **out) {
  *out = NULL;
  mtd_sound *s = calloc(1, sizeof *s);
  if (!s) return mt_fail(MT_ENOMEM, "out of memory");
  if (is_mpeg(path, buf, len)) {
    mt_status st = open_mpeg(s, path, buf, len);
    if (st) {
      free(s);
      return st;
    }
  } else if (path) {
    s->sf = sf_open(path, SFM_READ, &s->sfinfo);
  } else {
    static SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
    s->mem.buf = buf;
    s->mem.len = (sf_count_t)len;
    s->sf = sf_open_virtual(&vio, SFM_READ, &s->sfinfo, &s->mem);
  }
  if (!s->sf && !s->mp) {
    mt_status st = mt_fail(MT_EIO, "not a sound file, or not one libsndfile reads (%s)", sf_strerror(NULL));
    free(s);
    return st;
  }
  if (s->sfinfo.channels <= 0 || s->sfinfo.samplerate <= 0 || s->sfinfo.frames < 0) {
    mt_status st = mt_fail(MT_EIO, "the header is invalid (%d channels, sample rate %d)", s->sfinfo.channels,
                           s->sfinfo.samplerate);
    mtd_sound_close(s);
    return st;
  }
  s->info.frames = s->sfinfo.frames;
  s->info.channels = s->sfinfo.channels;
  s->info.sample_rate = s->sfinfo.samplerate;
  s->info.format = s->sfinfo.format;
  describe(s->sfinfo.format, &s->info);
  *out = s;
  return MT_OK;
}

const mtd_sound_info *mtd_sound_info_of(const mtd_sound *s) { return &s->info; }

void mtd_sound_close(mtd_sound *s) {
  if (!s) return;
  if (s->sf) sf_close(s->sf);
  mtd_mpeg_close(s->mp);
  free(s->stage);
  free(s);
}

mt_status mtd_sound_seek(mtd_sound *s, int64_t frame) {
  if (frame < 0 || frame > s->info.frames)
    return mt_fail(MT_EINDEX, "frame %lld is outside the sound's 0..%lld", (long long)frame, (long long)s->info.frames);
  if (s->mp) return mtd_mpeg_seek(s->mp, frame);
  if (sf_seek(s->sf, frame, SEEK_SET) < 0)
    return mt_fail(MT_EIO, "cannot seek to frame %lld (%s)", (long long)frame, sf_strerror(s->sf));
  return MT_OK;
}

/* ---- reading ---- */
/* How samples come out of libsndfile and into the caller's dtype: as the
 * dtype itself, or converted here. Floats from integer PCM are read as the
 * integers and scaled in a loop the compiler vectorizes (libsndfile's own
 * path converts a sample at a time; the values are the same: x / 2^15 of a
 * short, x / 2^31 of a left-justified int, both exact). Integers from
 * float data (float WAV, Vorbis, Opus, MP3) are read as floats and
 * rounded here (x * 2^15 or 2^31, clipped), as FFmpeg converts them:
 * libsndfile would cast them unscaled, or scale by the file's peak. The
 * first four read straight into the caller's buffer when its layout is
 * the file's ([T, C]). */
typedef enum via {
  AS_FLOAT,
  AS_DOUBLE,
  AS_INT,
  AS_SHORT,
  AS_U8,
  FLOAT_OF_SHORT,
  FLOAT_OF_INT,
  DOUBLE_OF_INT,
  SHORT_OF_FLOAT,
  INT_OF_FLOAT,
  U8_OF_FLOAT
} via;

static via route(const mtd_sound *s, mt_dtype dt) {
  int sub = s->info.format & SF_FORMAT_SUBMASK;
  int narrow = sub == SF_FORMAT_PCM_16 || sub == SF_FORMAT_PCM_S8 || sub == SF_FORMAT_PCM_U8;
  int wide = sub == SF_FORMAT_PCM_24 || sub == SF_FORMAT_PCM_32;
  int floating = sub == SF_FORMAT_FLOAT || sub == SF_FORMAT_DOUBLE || sub == SF_FORMAT_VORBIS ||
                 sub == SF_FORMAT_OPUS || sub == SF_FORMAT_MPEG_LAYER_I || sub == SF_FORMAT_MPEG_LAYER_II ||
                 sub == SF_FORMAT_MPEG_LAYER_III;
  switch (dt) {
  case MT_FLOAT64:
    return narrow || wide ? DOUBLE_OF_INT : AS_DOUBLE;
  case MT_INT32:
    return floating ? INT_OF_FLOAT : AS_INT;
  case MT_INT16:
    return floating ? SHORT_OF_FLOAT : AS_SHORT;
  case MT_UINT8:
    return floating ? U8_OF_FLOAT : AS_U8;
  default:
    return narrow ? FLOAT_OF_SHORT : wide ? FLOAT_OF_INT : AS_FLOAT;
  }
}

/* reads up to n interleaved frames in the libsndfile type of v (MPEG
 * audio: floats, the only type routed there); returns the frames read */
static sf_count_t readf(const mtd_sound *s, via v, void *dst, sf_count_t n) {
  SNDFILE *sf = s->sf;
  if (s->mp) return mtd_mpeg_read(s->mp, dst, n);
  switch (v) {
  case AS_DOUBLE:
    return sf_readf_double(sf, dst, n);
  case AS_INT:
  case FLOAT_OF_INT:
  case DOUBLE_OF_INT:
    return sf_readf_int(sf, dst, n);
  case AS_SHORT:
  case AS_U8:
  case FLOAT_OF_SHORT:
    return sf_readf_short(sf, dst, n);
  case SHORT_OF_FLOAT:
  case INT_OF_FLOAT:
  case U8_OF_FLOAT:
  default:
    return sf_readf_float(sf, dst, n);
  }
}

/* copies k interleaved frames of C channels from q to frames t0.. of dst:
 * a flat loop for [T, C], one loop per channel for [C, T] (stereo as
 * one), the general strided one otherwise */
#define SCATTER(TO, FROM, CONV)                                                                                        \
  do {                                                                                                                 \
    TO *d_ = dst;                                                                                                      \
    const FROM *restrict q_ = q;                                                                                       \
    if (cstride == 1 && tstride == C) {                                                                                \
      TO *restrict o_ = d_ + t0 * C;                                                                                   \
      for (int64_t j = 0; j < k * C; j++) o_[j] = CONV(q_[j]);                                                         \
    } else if (tstride == 1 && C == 2) {                                                                               \
      TO *restrict a_ = d_ + t0, *restrict b_ = d_ + cstride + t0;                                                     \
      for (int64_t t = 0; t < k; t++) {                                                                                \
        a_[t] = CONV(q_[2 * t]);                                                                                       \
        b_[t] = CONV(q_[2 * t + 1]);                                                                                   \
      }                                                                                                                \
    } else if (tstride == 1) {                                                                                         \
      for (int64_t c = 0; c < C; c++) {                                                                                \
        TO *restrict o_ = d_ + c * cstride + t0;                                                                       \
        for (int64_t t = 0; t < k; t++) o_[t] = CONV(q_[t * C + c]);                                                   \
      }                                                                                                                \
    } else {                                                                                                           \
      for (int64_t c = 0; c < C; c++)                                                                                  \
        for (int64_t t = 0; t < k; t++) d_[c * cstride + (t0 + t) * tstride] = CONV(q_[t * C + c]);                    \
    }                                                                                                                  \
  } while (0)
#define SAME(v) (v)
#define U8(v) ((uint8_t)(((v) >> 8) + 128)) /* libsndfile's short of an unsigned 8-bit sample */
#define F_S(v) ((float)(v)*0x1p-15f)
#define F_I(v) ((float)(v)*0x1p-31f)
#define D_I(v) ((double)(v)*0x1p-31)
#define CLIP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))
#define S_F(v) ((int16_t)CLIP(lrintf((v)*0x1p15f), -32768L, 32767L))
#define I_F(v) ((int32_t)CLIP(llrint((double)(v)*0x1p31), -2147483648LL, 2147483647LL))
#define U8_F(v) ((uint8_t)(CLIP(lrintf((v)*0x1p7f), -128L, 127L) + 128))

/* the hot loop of every conversion: vectorized with GCC's dynamic cost
 * model (-O2's very cheap one leaves these loops scalar; clang, which
 * vectorizes them at -O2, knows no such attribute) */
#if defined(__GNUC__) && !defined(__clang__)
#define VECTORIZE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define VECTORIZE
#endif
VECTORIZE static void scatter(via v, const void *q, int64_t C, int64_t k, void *dst, int64_t t0, int64_t cstride,
                              int64_t tstride) {
  switch (v) {
  case AS_DOUBLE:
    SCATTER(double, double, SAME);
    break;
  case AS_INT:
    SCATTER(int32_t, int32_t, SAME);
    break;
  case AS_SHORT:
    SCATTER(int16_t, int16_t, SAME);
    break;
  case AS_U8:
    SCATTER(uint8_t, int16_t, U8);
    break;
  case FLOAT_OF_SHORT:
    SCATTER(float, int16_t, F_S);
    break;
  case FLOAT_OF_INT:
    SCATTER(float, int32_t, F_I);
    break;
  case DOUBLE_OF_INT:
    SCATTER(double, int32_t, D_I);
    break;
  case SHORT_OF_FLOAT:
    SCATTER(int16_t, float, S_F);
    break;
  case INT_OF_FLOAT:
    SCATTER(int32_t, float, I_F);
    break;
  case U8_OF_FLOAT:
    SCATTER(uint8_t, float, U8_F);
    break;
  default:
    SCATTER(float, float, SAME);
    break;
  }
}

mt_status mtd_sound_read(mtd_sound *s, mt_dtype dt, void *dst, int64_t n, int64_t cstride, int64_t tstride,
                         int64_t *got) {
  int64_t C = s->info.channels, done = 0;
  *got = 0;
  if (dt != MT_FLOAT32 && dt != MT_FLOAT64 && dt != MT_INT32 && dt != MT_INT16 && dt != MT_UINT8)
    return mt_fail(MT_EDTYPE, "cannot read samples as dtype %d", (int)dt);
  via v = route(s, dt);
  size_t esize = v == AS_DOUBLE ? 8 : v == AS_SHORT || v == AS_U8 || v == FLOAT_OF_SHORT ? 2 : 4; /* as read */
  if (v <= AS_SHORT && cstride == 1 && tstride == C) {
    while (done < n) {
      sf_count_t k = readf(s, v, (char *)dst + (size_t)(done * C) * esize, n - done);
      if (k <= 0) break;
      done += k;
    }
    *got = done;
    return MT_OK;
  }
  if (!s->stage && !(s->stage = malloc(CHUNK_BYTES))) return mt_fail(MT_ENOMEM, "out of memory");
  int64_t chunk = (int64_t)(CHUNK_BYTES / esize) / C;
  if (chunk < 1) return mt_fail(MT_EARG, "too many channels (%lld)", (long long)C);
  while (done < n) {
    sf_count_t k = readf(s, v, s->stage, n - done < chunk ? n - done : chunk);
    if (k <= 0) break;
    scatter(v, s->stage, C, k, dst, done, cstride, tstride);
    done += k;
  }
  *got = done;
  return MT_OK;
}
