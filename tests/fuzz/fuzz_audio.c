/* fuzz_audio.c -- libFuzzer target for the sound reader (domains/audio/
 * sound.c over libsndfile's virtual IO): opens the input as a sound file's
 * bytes, checks the header's facts, and reads it through every dtype and
 * both layouts, with a seek. Build and run: make fuzz (or make
 * build-fuzz/fuzz_audio). Seeds: tests/fuzz/corpus_audio/ (tiny WAV,
 * FLAC, Ogg and MP3 files written by tests/fuzz/gen_audio_corpus.lua). */
#include <stdint.h>
#include <stdlib.h>

#include "../../domains/audio/sound.h"

#define MAX_FRAMES ((int64_t)1 << 18) /* read at most this much of each input: keep runs fast */
#define CHUNK 1024

/* libsndfile 1.2.0 leaks libvorbis's stream info when an Ogg Vorbis header
 * is corrupt (vorbis_info_init's allocation is never cleared on that error
 * path): a library fault, not ours, so LeakSanitizer is told to skip it. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libvorbis.so\n"; }

static volatile unsigned sink; /* reads of the data must not be optimised away */

/* reads up to MAX_FRAMES frames in chunks as dt, layout [C, CHUNK] or
 * [CHUNK, C]; the buffer is filled only as far as reported */
static void read_all(mtd_sound *s, mt_dtype dt, int channels_first) {
  int64_t C = mtd_sound_info_of(s)->channels, total = 0, got;
  unsigned char *buf = malloc((size_t)(C * CHUNK) * 8);
  if (!buf) return;
  while (total < MAX_FRAMES) {
    if (mtd_sound_read(s, dt, buf, CHUNK, channels_first ? CHUNK : 1, channels_first ? 1 : C, &got) != MT_OK) break;
    if (got < 0 || got > CHUNK) abort();
    size_t esize = dt == MT_FLOAT64 ? 8 : dt == MT_INT16 ? 2 : dt == MT_UINT8 ? 1 : 4;
    if (got)
      sink += buf[(size_t)((C - 1) * (channels_first ? CHUNK : 1) + (got - 1) * (channels_first ? 1 : C)) * esize];
    total += got;
    if (got < CHUNK) break;
  }
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mtd_sound *s;
  if (mtd_sound_open(NULL, data, size, &s) != MT_OK) return 0;
  const mtd_sound_info *in = mtd_sound_info_of(s);
  if (in->channels <= 0 || in->sample_rate <= 0 || in->frames < 0 || !in->encoding) abort();
  static const mt_dtype dts[] = {MT_FLOAT32, MT_FLOAT64, MT_INT32, MT_INT16, MT_UINT8};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    if (mtd_sound_seek(s, k == 2 ? in->frames / 2 : 0) != MT_OK) break;
    read_all(s, dts[k], (int)(k & 1));
  }
  mtd_sound_close(s);
  return 0;
}
