/* stft_kernels.h -- the power spectrogram op of tensor/audio.h
 * (mt_stft_power): its geometry, and the CPU loops (cpu/stft_power.c) over
 * contiguous float32 or float64 operands that tensor/stft_power.c checked.
 * The CUDA side is in cuda/cuda_audio.h. */
#ifndef MT_CPU_STFT_KERNELS_H
#define MT_CPU_STFT_KERNELS_H

#include "../mt.h"

/* B signals of len samples, frames of nfft points every hop samples over
 * the signal reflect-padded by pad on both sides (read in place): nf frames,
 * K = nfft / 2 + 1 bins each. */
typedef struct mt_stft_geo {
  int64_t B, len, nfft, hop, nf, K, pad;
  double power;
} mt_stft_geo;

/* out [B, nf, K] = |rfft(frame * w)|^power of x [B, len], w [nfft]. */
mt_status mt_cpu_stft_power(mt_dtype dt, const mt_stft_geo *g, const void *x, const void *w, void *out);

#endif
