/* fft_kernels.h -- FFTW behind the engine's three transforms (fft_fftw.c).
 * Buffers are contiguous and row-major; complex data is interleaved
 * (re, im) pairs of the real type. Shapes count complex elements on the
 * complex side and real elements on the real side. */
#ifndef MT_FFT_KERNELS_H
#define MT_FFT_KERNELS_H

#include "fft.h"

/* Runs p from in to out (distinct buffers; c2r's in is overwritten),
 * batches split across the engine's threads. */
mt_status mt_fft_cpu_run(const mt_fft_problem *p, void *in, void *out);

/* How FFTW plans: false FFTW_ESTIMATE (the default), true FFTW_MEASURE
 * (slower first call per shape; planning runs on scratch buffers). */
void mt_fft_set_measure(bool on);
/* Plans held in the cache, and a way to drop them all (tests). */
int mt_fft_plan_count(void);
void mt_fft_clear_plans(void);
#endif
