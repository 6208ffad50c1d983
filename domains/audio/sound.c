/* sound.c -- reading sound files through libsndfile: opening a path or a
 * byte range (virtual IO over memory), torchaudio's metadata, seeking, and
 * reading frames in bounded chunks into any layout of float32/float64 or
 * the raw integer samples. No Lua and no tensors: the fuzz target links it
 * alone (with tensor/status.c). */
#include <sndfile.h>
#include <stdlib.h>
#include <string.h>

#include "sound.h"

#define CHUNK_BYTES ((size_t)1 << 18) /* the interleaved staging buffer */

typedef struct membuf {
  const unsigned char *buf;
  sf_count_t len, pos;
} membuf;

struct mtd_sound {
  SNDFILE *sf;
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
  } subs[] = {{SF_FORMAT_PCM_S8, "PCM_S", 8, MT_FLOAT32},     {SF_FORMAT_PCM_16, "PCM_S", 16, MT_INT16},
              {SF_FORMAT_PCM_24, "PCM_S", 24, MT_INT32},      {SF_FORMAT_PCM_32, "PCM_S", 32, MT_INT32},
              {SF_FORMAT_PCM_U8, "PCM_U", 8, MT_UINT8},       {SF_FORMAT_FLOAT, "PCM_F", 32, MT_FLOAT32},
              {SF_FORMAT_DOUBLE, "PCM_F", 64, MT_FLOAT32},    {SF_FORMAT_ULAW, "ULAW", 8, MT_FLOAT32},
              {SF_FORMAT_ALAW, "ALAW", 8, MT_FLOAT32},        {SF_FORMAT_VORBIS, "VORBIS", 0, MT_FLOAT32},
              {SF_FORMAT_OPUS, "OPUS", 0, MT_FLOAT32},        {SF_FORMAT_MPEG_LAYER_I, "MP3", 0, MT_FLOAT32},
              {SF_FORMAT_MPEG_LAYER_II, "MP3", 0, MT_FLOAT32}, {SF_FORMAT_MPEG_LAYER_III, "MP3", 0, MT_FLOAT32},
              {SF_FORMAT_GSM610, "GSM", 0, MT_FLOAT32},       {SF_FORMAT_IMA_ADPCM, "UNKNOWN", 4, MT_FLOAT32},
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

mt_status mtd_sound_open(const char *path, const void *buf, size_t len, mtd_sound **out) {
  *out = NULL;
  mtd_sound *s = calloc(1, sizeof *s);
  if (!s) return mt_fail(MT_ENOMEM, "out of memory");
  if (path) {
    s->sf = sf_open(path, SFM_READ, &s->sfinfo);
  } else {
    static SF_VIRTUAL_IO vio = {vio_len, vio_seek, vio_read, vio_write, vio_tell};
    s->mem.buf = buf;
    s->mem.len = (sf_count_t)len;
    s->sf = sf_open_virtual(&vio, SFM_READ, &s->sfinfo, &s->mem);
  }
  if (!s->sf) {
    mt_status st = mt_fail(MT_EIO, "not a sound file, or not one libsndfile reads (%s)", sf_strerror(NULL));
    free(s);
    return st;
  }
  if (s->sfinfo.channels <= 0 || s->sfinfo.samplerate <= 0 || s->sfinfo.frames < 0) {
    mtd_sound_close(s);
    return mt_fail(MT_EIO, "the header is invalid (%d channels, sample rate %d)", s->sfinfo.channels,
                   s->sfinfo.samplerate);
  }
  sf_command(s->sf, SFC_SET_SCALE_FLOAT_INT_READ, NULL, SF_TRUE); /* int reads of float data: scaled, not cast */
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
  free(s->stage);
  free(s);
}

mt_status mtd_sound_seek(mtd_sound *s, int64_t frame) {
  if (frame < 0 || frame > s->info.frames)
    return mt_fail(MT_EINDEX, "frame %lld is outside the sound's 0..%lld", (long long)frame,
                   (long long)s->info.frames);
  if (sf_seek(s->sf, frame, SEEK_SET) < 0)
    return mt_fail(MT_EIO, "cannot seek to frame %lld (%s)", (long long)frame, sf_strerror(s->sf));
  return MT_OK;
}

/* ---- reading ---- */
/* reads up to n interleaved frames as dt's libsndfile type (uint8 is read
 * as short); returns the frames read */
static sf_count_t readf(SNDFILE *sf, mt_dtype dt, void *dst, sf_count_t n) {
  switch (dt) {
  case MT_FLOAT64: return sf_readf_double(sf, dst, n);
  case MT_INT32: return sf_readf_int(sf, dst, n);
  case MT_INT16:
  case MT_UINT8: return sf_readf_short(sf, dst, n);
  default: return sf_readf_float(sf, dst, n);
  }
}

/* copies k interleaved frames of C channels from q to frames t0.. of dst */
#define SCATTER(TO, FROM, CONV)                                                                                        \
  do {                                                                                                                 \
    TO *d_ = dst;                                                                                                      \
    const FROM *q_ = q;                                                                                                \
    for (int64_t c = 0; c < C; c++)                                                                                    \
      for (int64_t t = 0; t < k; t++) d_[c * cstride + (t0 + t) * tstride] = CONV(q_[t * C + c]);                      \
  } while (0)
#define SAME(v) (v)
#define U8(v) ((uint8_t)(((v) >> 8) + 128)) /* libsndfile's short of an unsigned 8-bit sample */

static void scatter(mt_dtype dt, const void *q, int64_t C, int64_t k, void *dst, int64_t t0, int64_t cstride,
                    int64_t tstride) {
  switch (dt) {
  case MT_FLOAT64: SCATTER(double, double, SAME); break;
  case MT_INT32: SCATTER(int32_t, int32_t, SAME); break;
  case MT_INT16: SCATTER(int16_t, int16_t, SAME); break;
  case MT_UINT8: SCATTER(uint8_t, int16_t, U8); break;
  default: SCATTER(float, float, SAME); break;
  }
}

mt_status mtd_sound_read(mtd_sound *s, mt_dtype dt, void *dst, int64_t n, int64_t cstride, int64_t tstride,
                         int64_t *got) {
  int64_t C = s->info.channels, done = 0;
  *got = 0;
  if (dt != MT_FLOAT32 && dt != MT_FLOAT64 && dt != MT_INT32 && dt != MT_INT16 && dt != MT_UINT8)
    return mt_fail(MT_EDTYPE, "cannot read samples as dtype %d", (int)dt);
  size_t esize = dt == MT_FLOAT64 ? 8 : dt == MT_INT16 || dt == MT_UINT8 ? 2 : 4;
  if (dt != MT_UINT8 && cstride == 1 && tstride == C) { /* the file's own layout: straight in */
    size_t out = dt == MT_FLOAT64 ? 8 : esize;
    while (done < n) {
      sf_count_t k = readf(s->sf, dt, (char *)dst + (size_t)(done * C) * out, n - done);
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
    sf_count_t k = readf(s->sf, dt, s->stage, n - done < chunk ? n - done : chunk);
    if (k <= 0) break;
    scatter(dt, s->stage, C, k, dst, done, cstride, tstride);
    done += k;
  }
  *got = done;
  return MT_OK;
}
