/* sound_write.c -- writing sound files through libsndfile: torchaudio's
 * (format, encoding, bits_per_sample) choice as a libsndfile format word,
 * and the write itself, into a temporary file beside the target that is
 * renamed over it only once complete. */
#include <errno.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sound.h"

#define CHUNK_FRAMES 4096

/* the WAV subtype of torchaudio's encoding and bits (0: the default of
 * the encoding, or of the dtype when encoding is NULL too) */
static mt_status wav_subtype(const char *enc, int bits, mt_dtype dt, int *sub) {
  if (!enc && !bits) {
    enc = dt == MT_INT16 || dt == MT_INT32 ? "PCM_S" : dt == MT_UINT8 ? "PCM_U" : "PCM_F";
    bits = dt == MT_INT16 ? 16 : dt == MT_UINT8 ? 8 : 32;
  } else if (!enc) {
    enc = bits == 8 ? "PCM_U" : bits == 64 ? "PCM_F" : "PCM_S";
  }
  static const struct {
    const char *enc;
    int bits, sub;
  } t[] = {{"PCM_S", 32, SF_FORMAT_PCM_32}, {"PCM_S", 16, SF_FORMAT_PCM_16}, {"PCM_S", 24, SF_FORMAT_PCM_24},
           {"PCM_S", 8, SF_FORMAT_PCM_U8},  {"PCM_U", 8, SF_FORMAT_PCM_U8},  {"PCM_F", 32, SF_FORMAT_FLOAT},
           {"PCM_F", 64, SF_FORMAT_DOUBLE}, {"ULAW", 8, SF_FORMAT_ULAW},     {"ALAW", 8, SF_FORMAT_ALAW}};
  int known = 0;
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
    if (strcmp(t[k].enc, enc)) continue;
    known = 1;
    if (!bits || bits == t[k].bits) return *sub = t[k].sub, MT_OK; /* the first row of an encoding: its default */
  }
  if (!known)
    return mt_fail(MT_EARG, "unknown encoding '%s' (expected 'PCM_S', 'PCM_U', 'PCM_F', 'ULAW' or 'ALAW')", enc);
  return mt_fail(MT_EARG, "encoding %s cannot have bits_per_sample=%d in a WAV file", enc, bits);
}

mt_status mtd_sound_format(const char *format, const char *enc, int bits, mt_dtype dt, int *out) {
  int sub = 0;
  if (!strcmp(format, "wav")) {
    mt_status st = wav_subtype(enc, bits, dt, &sub);
    if (st) return st;
    return *out = SF_FORMAT_WAV | sub, MT_OK;
  }
  if (!strcmp(format, "flac")) {
    if (enc && strcmp(enc, "PCM_S") && strcmp(enc, "FLAC"))
      return mt_fail(MT_EARG, "FLAC stores signed integers: encoding '%s' is not possible", enc);
    sub = bits == 0 || bits == 24 ? SF_FORMAT_PCM_24 : bits == 16 ? SF_FORMAT_PCM_16 : bits == 8 ? SF_FORMAT_PCM_S8 : 0;
    if (!sub) return mt_fail(MT_EARG, "FLAC takes bits_per_sample 8, 16 or 24, not %d", bits);
    return *out = SF_FORMAT_FLAC | sub, MT_OK;
  }
  static const struct {
    const char *name, *enc;
    int format;
  } lossy[] = {{"ogg", "VORBIS", SF_FORMAT_OGG | SF_FORMAT_VORBIS},
               {"vorbis", "VORBIS", SF_FORMAT_OGG | SF_FORMAT_VORBIS},
               {"opus", "OPUS", SF_FORMAT_OGG | SF_FORMAT_OPUS},
               {"mp3", "MP3", SF_FORMAT_MPEG | SF_FORMAT_MPEG_LAYER_III}};
  for (size_t k = 0; k < sizeof lossy / sizeof lossy[0]; k++) {
    if (strcmp(format, lossy[k].name)) continue;
    if (enc && strcmp(enc, lossy[k].enc))
      return mt_fail(MT_EARG, "format %s is encoded as %s: encoding '%s' is not possible", format, lossy[k].enc, enc);
    if (bits) return mt_fail(MT_EARG, "format %s is lossy: bits_per_sample=%d has no meaning", format, bits);
    return *out = lossy[k].format, MT_OK;
  }
  return mt_fail(MT_EARG, "unknown format '%s' (expected 'wav', 'flac', 'ogg', 'vorbis', 'opus' or 'mp3')", format);
}

/* writes k frames from t0 of src (any layout) through the interleaving
 * buffer q; returns false on a short write */
#define GATHER(TYPE, CONV)                                                                                             \
  do {                                                                                                                 \
    const TYPE *s_ = src;                                                                                              \
    for (int64_t c = 0; c < C; c++)                                                                                    \
      for (int64_t t = 0; t < k; t++) q[t * C + c] = CONV(s_[c * cstride + (t0 + t) * tstride]);                       \
  } while (0)
#define SAME(v) (v)
#define FROM_U8(v) ((short)(((int)(v)-128) * 256))

static int write_chunk(SNDFILE *sf, mt_dtype dt, const void *src, int64_t C, int64_t t0, int64_t k, int64_t cstride,
                       int64_t tstride, void *buf) {
  switch (dt) {
  case MT_FLOAT64: {
    double *q = buf;
    GATHER(double, SAME);
    return sf_writef_double(sf, q, k) == k;
  }
  case MT_INT32: {
    int *q = buf;
    GATHER(int32_t, SAME);
    return sf_writef_int(sf, q, k) == k;
  }
  case MT_INT16: {
    short *q = buf;
    GATHER(int16_t, SAME);
    return sf_writef_short(sf, q, k) == k;
  }
  case MT_UINT8: {
    short *q = buf;
    GATHER(uint8_t, FROM_U8);
    return sf_writef_short(sf, q, k) == k;
  }
  default: {
    float *q = buf;
    GATHER(float, SAME);
    return sf_writef_float(sf, q, k) == k;
  }
  }
}

/* opens fd (a new temporary file) for writing spec's format */
static mt_status open_out(int fd, const mtd_sound_spec *spec, SNDFILE **out) {
  SF_INFO info = {.samplerate = spec->sample_rate, .channels = spec->channels, .format = spec->format};
  if (!sf_format_check(&info))
    return mt_fail(MT_EARG, "libsndfile cannot write this format with %d channels at %d Hz", spec->channels,
                   spec->sample_rate);
  SNDFILE *sf = sf_open_fd(fd, SFM_WRITE, &info, 0);
  if (!sf) return mt_fail(MT_EIO, "libsndfile cannot write it (%s)", sf_strerror(NULL));
  sf_command(sf, SFC_SET_CLIPPING, NULL, SF_TRUE);
  double level = spec->compression;
  if (level >= 0 && !sf_command(sf, SFC_SET_COMPRESSION_LEVEL, &level, sizeof level)) {
    sf_close(sf);
    return mt_fail(MT_EARG, "this format takes no compression level");
  }
  *out = sf;
  return MT_OK;
}

/* writes every frame to fd; the caller closes fd */
static mt_status write_all(int fd, const mtd_sound_spec *spec, mt_dtype dt, const void *src, int64_t frames,
                           int64_t cstride, int64_t tstride) {
  SNDFILE *sf = NULL;
  mt_status st = open_out(fd, spec, &sf);
  if (st) return st;
  void *buf = malloc((size_t)CHUNK_FRAMES * (size_t)spec->channels * 8);
  if (!buf) st = mt_fail(MT_ENOMEM, "out of memory");
  for (int64_t t0 = 0; !st && t0 < frames; t0 += CHUNK_FRAMES) {
    int64_t k = frames - t0 < CHUNK_FRAMES ? frames - t0 : CHUNK_FRAMES;
    if (!write_chunk(sf, dt, src, spec->channels, t0, k, cstride, tstride, buf))
      st = mt_fail(MT_EIO, "the write failed (%s)", sf_strerror(sf));
  }
  free(buf);
  if (sf_close(sf) && !st) st = mt_fail(MT_EIO, "the write failed when closing the file");
  return st;
}

mt_status mtd_sound_write(const char *path, const mtd_sound_spec *spec, mt_dtype dt, const void *src, int64_t frames,
                          int64_t cstride, int64_t tstride) {
  size_t n = strlen(path);
  char *tmp = malloc(n + 16);
  if (!tmp) return mt_fail(MT_ENOMEM, "out of memory");
  snprintf(tmp, n + 16, "%s.tmp-XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    mt_status st = mt_fail(MT_EIO, "cannot create a file beside it (%s)", strerror(errno));
    free(tmp);
    return st;
  }
  mode_t mask = umask(0); /* the mode a plain fopen would give */
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  mt_status st = write_all(fd, spec, dt, src, frames, cstride, tstride);
  if (close(fd) && !st) st = mt_fail(MT_EIO, "the write failed (%s)", strerror(errno));
  if (!st && rename(tmp, path))
    st = mt_fail(MT_EIO, "cannot rename the finished file into place (%s)", strerror(errno));
  if (st) unlink(tmp);
  free(tmp);
  return st;
}
