/* sound.h -- sound files through libsndfile, with no Lua and no tensors:
 * sound.c opens a file or a byte range (virtual IO) and reads frames in
 * chunks into a caller's buffer of a chosen dtype and layout; sound_write.c
 * writes one (through a temporary file renamed into place). The fuzz target
 * links sound.c alone. */
#ifndef MTD_SOUND_H
#define MTD_SOUND_H

#include <stdint.h>

#include "mt.h"

typedef struct mtd_sound mtd_sound; /* an open sound, for reading */

typedef struct mtd_sound_info {
  int64_t frames; /* as the header says; reads may end sooner on a short file */
  int channels, sample_rate;
  int format;           /* libsndfile's SF_FORMAT_* word */
  int bits_per_sample;  /* torchaudio's: 0 for lossy codecs */
  const char *encoding; /* torchaudio's name: "PCM_S", "FLAC", "VORBIS", ... */
  mt_dtype raw_dtype;   /* the dtype of load(normalize=false) */
} mtd_sound_info;

/* Opens the file at path, or the bytes buf[0..len) (path NULL; buf must
 * outlive the handle). Errors say why ("not a sound file (...)"). */
mt_status mtd_sound_open(const char *path, const void *buf, size_t len, mtd_sound **out);
const mtd_sound_info *mtd_sound_info_of(const mtd_sound *s);
void mtd_sound_close(mtd_sound *s);
/* Moves the read position to frame (0 <= frame <= frames). */
mt_status mtd_sound_seek(mtd_sound *s, int64_t frame);

/* Reads up to n frames from the read position into dst, as dtype dt
 * (float32/float64 in [-1, 1]; int16, int32 (24-bit left-justified) or
 * uint8: the raw integer samples). Channel c of frame t goes to
 * dst[c * cstride + t * tstride] (in elements): [C, T] with cstride = T,
 * tstride = 1; [T, C] with cstride = 1, tstride = C. *got < n only at the
 * end of the sound. */
mt_status mtd_sound_read(mtd_sound *s, mt_dtype dt, void *dst, int64_t n, int64_t cstride, int64_t tstride,
                         int64_t *got);

/* The libsndfile format word of torchaudio's save options: format "wav",
 * "flac", "ogg"/"vorbis", "opus" or "mp3"; encoding (NULL: the default)
 * "PCM_S", "PCM_U", "PCM_F", "ULAW", "ALAW"; bits (0: the default); dt
 * the samples' dtype, which picks WAV's default encoding. */
mt_status mtd_sound_format(const char *format, const char *encoding, int bits, mt_dtype dt, int *out);

/* What a write needs besides the samples. */
typedef struct mtd_sound_spec {
  int format; /* SF_FORMAT_* (major | subtype) */
  int channels, sample_rate;
  double compression; /* 0..1, or < 0: the library's default */
} mtd_sound_spec;

/* Writes the frames x frames samples at src (dtype dt: float32, float64,
 * int16, int32 or uint8; layout as in mtd_sound_read) to path: into a
 * temporary file beside it, renamed over path once complete, so a failed
 * write leaves path as it was. Floats beyond [-1, 1] are clipped when the
 * format stores integers. */
mt_status mtd_sound_write(const char *path, const mtd_sound_spec *spec, mt_dtype dt, const void *src, int64_t frames,
                          int64_t cstride, int64_t tstride);

#endif
