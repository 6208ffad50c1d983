/* cuda_audio.h -- CUDA kernels of the audio ops: resampling (cuda/resample.c,
 * kernels in resample.cu), linear filters (cuda/lfilter.c, kernels in
 * lfilter.cu) and the power spectrogram (cuda/stft_power.c). tensor/resample.c and tensor/lfilter.c check the arguments
 * and hand over contiguous tensors of one floating dtype. */
#ifndef MT_CUDA_AUDIO_H
#define MT_CUDA_AUDIO_H

#include "../cpu/lfilter_kernels.h"
#include "../cpu/resample_kernels.h"
#include "../cpu/stft_kernels.h"

/* out = the filter of p over in (rows of g), or (adjoint) its adjoint:
 * in [rows, out_len] -> out [rows, in_len], as the CPU kernels. */
mt_status mt_cuda_resample(const mt_resample_plan *p, const mt_rsmp_geo *g, bool adjoint, const mt_tensor *in,
                           mt_tensor *out);

/* y = lfilter(x, a, b, zi) (zi may be NULL): a thread per channel. */
mt_status mt_cuda_lfilter(const mt_lf_geo *g, const mt_tensor *x, const mt_tensor *a, const mt_tensor *b,
                          const mt_tensor *zi, mt_tensor *y);
/* out [C, K] = lfilter_corr(w, x): a block per (c, k), reduced in double. */
mt_status mt_cuda_lfilter_corr(const mt_lf_geo *g, const mt_tensor *w, const mt_tensor *x, mt_tensor *out);
/* out [B, nf, K] = |rfft(frame * w)|^power (mt_stft_power). */
mt_status mt_cuda_stft_power(const mt_stft_geo *g, const mt_tensor *x, const mt_tensor *w, mt_tensor *out);

#endif
