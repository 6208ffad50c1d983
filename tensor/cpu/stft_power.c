/* stft_power.c (cpu) -- the power spectrogram of tensor/audio.h on the CPU:
 * frames of the signal (reflect padding read in place) are windowed,
 * transformed by the FFTW runner (fft_kernels.h) and reduced to |X|^power,
 * a block of frames at a time per thread so that the scratch stays in
 * cache; no intermediate tensors. */
#include <math.h>
#include <stdlib.h>

#include "fft_kernels.h"
#include "stft_kernels.h"

enum { BLOCK = 64 }; /* frames framed, transformed and reduced at once by one thread */

typedef struct {
  const mt_stft_geo *g;
  const void *x, *w;
  void *out;
  bool dbl;
  mt_status st; /* the first failure of a worker (written under no lock: any one suffices) */
} job;

/* reflect(t, n): the sample of a signal of n > pad samples that reflect
 * padding puts at position t (t may be < 0 or >= n) */
static inline int64_t reflect(int64_t t, int64_t n) {
  if (t < 0) return -t;
  if (t >= n) return 2 * (n - 1) - t;
  return t;
}

/* frame_T(j, buf, first, n): frames first .. first+n-1 (global: batch row
 * f / nf, frame f % nf) windowed into the n rows of buf; frames that reach
 * into the virtual reflect padding read mirrored samples */
#define FRAME_FN(T)                                                                  \
  static void frame_##T(const job *j, T *buf, int64_t first, int64_t n) {           \
    const mt_stft_geo *g = j->g;                                                     \
    const T *w = j->w;                                                               \
    for (int64_t i = 0; i < n; i++) {                                                \
      int64_t f = first + i, start = (f % g->nf) * g->hop - g->pad;                  \
      const T *row = (const T *)j->x + (f / g->nf) * g->len;                         \
      T *dst = buf + i * g->nfft;                                                    \
      if (start >= 0 && start + g->nfft <= g->len)                                   \
        for (int64_t k = 0; k < g->nfft; k++) dst[k] = row[start + k] * w[k];        \
      else                                                                           \
        for (int64_t k = 0; k < g->nfft; k++) dst[k] = row[reflect(start + k, g->len)] * w[k]; \
    }                                                                                \
  }

/* power_T(j, spec, first, n): the n spectra of spec (interleaved re, im)
 * to |X|^power in the output rows first .. first+n-1 */
#define POWER_FN(T, SQRT, POW)                                                       \
  static void power_##T(const job *j, const T *spec, int64_t first, int64_t n) {    \
    const mt_stft_geo *g = j->g;                                                     \
    T *out = (T *)j->out + first * g->K;                                             \
    T half = (T)(g->power / 2);                                                      \
    for (int64_t i = 0; i < n * g->K; i++) {                                         \
      T re = spec[2 * i], im = spec[2 * i + 1], p = re * re + im * im;               \
      out[i] = g->power == 2 ? p : g->power == 1 ? SQRT(p) : POW(p, half);           \
    }                                                                                \
  }

FRAME_FN(float)
FRAME_FN(double)
POWER_FN(float, sqrtf, powf)
POWER_FN(double, sqrt, pow)

/* range(j, b, e): frames b..e-1, BLOCK at a time through this thread's
 * scratch (the FFT of a block is small enough to run in the calling thread) */
static void range(void *vc, int64_t b, int64_t e) {
  job *j = vc;
  const mt_stft_geo *g = j->g;
  size_t es = j->dbl ? sizeof(double) : sizeof(float);
  void *buf = NULL, *spec = NULL;
  if (posix_memalign(&buf, 64, (size_t)BLOCK * (size_t)g->nfft * es) ||
      posix_memalign(&spec, 64, (size_t)BLOCK * (size_t)g->K * 2 * es)) {
    free(buf);
    j->st = mt_fail(MT_ENOMEM, "stft_power: out of memory for the frame scratch");
    return;
  }
  for (int64_t first = b; first < e && !j->st; first += BLOCK) {
    int64_t n = e - first < BLOCK ? e - first : BLOCK;
    if (j->dbl) frame_double(j, buf, first, n);
    else frame_float(j, buf, first, n);
    mt_fft_problem p = {.kind = MT_FFT_R2C, .dbl = j->dbl, .sign = -1, .ndim = 2, .nt = 1,
                        .ishape = {n, g->nfft}, .oshape = {n, g->K}, .tdims = {1}, .scale = 1.0};
    mt_status st = mt_fft_cpu_run(&p, buf, spec);
    if (st) {
      j->st = st;
      break;
    }
    if (j->dbl) power_double(j, spec, first, n);
    else power_float(j, spec, first, n);
  }
  free(buf);
  free(spec);
}

mt_status mt_cpu_stft_power(mt_dtype dt, const mt_stft_geo *g, const void *x, const void *w, void *out) {
  job j = {.g = g, .x = x, .w = w, .out = out, .dbl = dt == MT_FLOAT64, .st = MT_OK};
  mt_status st = mt_parallel_for(g->B * g->nf, BLOCK, range, &j);
  return st ? st : j.st;
}
