/* sound_mpeg.h -- MPEG audio (MP3) for sound.c through libmpg123 itself,
 * set up as libsndfile 1.2.0 sets it up but quiet (see sound_mpeg.c). */
#ifndef MTD_SOUND_MPEG_H
#define MTD_SOUND_MPEG_H

#include <stddef.h>
#include <stdint.h>

#include "mt.h"

typedef struct mtd_mpeg mtd_mpeg;

/* Reads bytes [at, at + n) of a file into dst; false if it is shorter. */
typedef bool (*mtd_peek_fn)(void *ctx, size_t at, unsigned char *dst, size_t n);
/* Whether libsndfile would take the file that peek reads for MPEG audio:
 * an MPEG audio frame header at its start, after any ID3v2 tags. */
bool mtd_mpeg_sniff(mtd_peek_fn peek, void *ctx);

/* Opens the file at path, or the bytes buf[0..len) (path NULL; buf must
 * outlive the handle). *frames, *channels, *rate and *layer (1, 2 or 3)
 * describe it. */
mt_status mtd_mpeg_open(const char *path, const void *buf, size_t len, mtd_mpeg **out, int64_t *frames, int *channels,
                        int *rate, int *layer);
/* Decodes up to n interleaved float frames into dst; returns the frames
 * decoded: fewer than n only at the end, 0 there or where the stream is
 * too damaged to go on. */
int64_t mtd_mpeg_read(mtd_mpeg *m, float *dst, int64_t n);
mt_status mtd_mpeg_seek(mtd_mpeg *m, int64_t frame);
void mtd_mpeg_close(mtd_mpeg *m);

#endif
